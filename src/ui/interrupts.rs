//! Interrupts pane: every interrupt stored at the selected checkpoint — pending or answered
//! (with the stored answer), its id and its value.

use super::{draw_list, fit, pane_block, theme};
use crate::app::format::preview;
use crate::app::state::{AppState, Pane, TaskStatus};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

pub fn render(s: &AppState, buf: &mut Buffer, area: Rect, focused: bool) {
    let rows = s
        .current
        .as_ref()
        .map(|c| c.interrupts.as_slice())
        .unwrap_or(&[]);
    let pending = rows.iter().filter(|r| r.pending).count();
    let nw = rows
        .iter()
        .map(|r| super::width(&r.node))
        .max()
        .unwrap_or(4)
        .clamp(4, 12);
    let row = |i: usize| -> Line {
        let r = &rows[i];
        let (label, st) = if r.pending {
            ("pending ", theme::status(TaskStatus::Interrupted))
        } else {
            ("answered", theme::status(TaskStatus::Done))
        };
        let mut spans = vec![
            Span::styled(label, st),
            Span::raw(format!(" {} ", fit(&r.node, nw))),
            Span::styled(fit(crate::text::head(&r.id, 8), 8), theme::dim()),
            Span::raw(format!(" {}", super::escape(&r.preview))),
        ];
        if let Some(a) = &r.answer {
            spans.push(Span::styled(format!(" → {}", preview(a, 60)), theme::ok()));
        }
        Line::from(spans)
    };
    draw_list(
        buf,
        area,
        pane_block(
            format!("Interrupts · {pending} pending of {}", rows.len()),
            focused,
        ),
        None,
        rows.len(),
        s.selected(Pane::Interrupts),
        focused,
        |_| false,
        row,
        vec![],
    );
}

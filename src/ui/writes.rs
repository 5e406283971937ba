//! Pending writes pane: task, node, idx, channel, type (INTERRUPT magenta, RESUME green, ERROR
//! red, SCHEDULED blue, WRITE default), value preview. Enter opens the full value.

use super::{draw_list, fit, pane_block, theme};
use crate::app::state::{AppState, Pane};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

pub fn render(s: &AppState, buf: &mut Buffer, area: Rect, focused: bool) {
    let writes = s
        .current
        .as_ref()
        .map(|c| c.writes.as_slice())
        .unwrap_or(&[]);
    let nw = writes
        .iter()
        .map(|w| super::width(&w.node))
        .max()
        .unwrap_or(4)
        .clamp(4, 14);
    let cw = writes
        .iter()
        .map(|w| super::width(&w.channel))
        .max()
        .unwrap_or(7)
        .clamp(7, 20);
    let header = Line::styled(
        format!(
            "  {} {} {:>3} {} {} value",
            fit("task", 8),
            fit("node", nw),
            "idx",
            fit("channel", cw),
            fit("type", 9)
        ),
        theme::dim(),
    );
    let row = |i: usize| -> Line {
        let w = &writes[i];
        Line::from(vec![
            Span::styled(fit(crate::text::head(&w.task_id, 8), 8), theme::dim()),
            Span::raw(format!(
                " {} {:>3} {} ",
                fit(&w.node, nw),
                w.idx,
                fit(&w.channel, cw)
            )),
            Span::styled(fit(w.kind.label(), 9), theme::kind(w.kind)),
            Span::raw(format!(" {}", w.preview)),
        ])
    };
    draw_list(
        buf,
        area,
        pane_block(format!("Pending writes · {}", writes.len()), focused),
        Some(header),
        writes.len(),
        s.selected(Pane::Writes),
        focused,
        |i| s.is_hit(Pane::Writes, i),
        row,
        vec![],
    );
}

//! History pane: the thread's checkpoints newest first as a tree — a fork sits in its own lane
//! and joins (`╯`) the checkpoint it branched from. Each row: step, source, short id, next.

use super::{draw_list, fit, pane_block, theme};
use crate::app::state::{AppState, Pane};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

pub fn render(s: &AppState, buf: &mut Buffer, area: Rect, focused: bool) {
    let title = match &s.thread {
        Some(t) => format!(
            "History · thread {} · {}{}",
            crate::keys::key_label(t),
            s.history.len(),
            if s.history_more { "+ loaded" } else { "" }
        ),
        None => "History".to_string(),
    };
    let lanes_w = s
        .history_graph
        .iter()
        .map(|g| g.chars().count())
        .max()
        .unwrap_or(1);
    let row = |i: usize| -> Line {
        let h = &s.history[i];
        let g = s.history_graph.get(i).map(String::as_str).unwrap_or("●");
        let id_tail = if h.id.chars().count() == 36 {
            crate::text::tail(&h.id, 12)
        } else {
            h.id.as_str()
        };
        let id_tail = super::escape(id_tail);
        let mut spans = vec![
            Span::styled(fit(g, lanes_w), theme::dim()),
            Span::raw(format!(" {:>3} ", h.step)),
            Span::raw(fit(&h.source, 6)),
            Span::styled(format!(" {id_tail} "), theme::dim()),
        ];
        if let Some((n, _)) = h.errored.first() {
            spans.push(Span::styled(
                format!("✗ {}", super::escape(n)),
                theme::status(crate::app::state::TaskStatus::Error),
            ));
        } else if !h.interrupted.is_empty() {
            spans.push(Span::styled(
                format!("⏸ {}", super::escape(&h.interrupted.join(","))),
                theme::status(crate::app::state::TaskStatus::Interrupted),
            ));
        } else if h.next.is_empty() {
            spans.push(Span::styled("end", theme::dim()));
        } else {
            spans.push(Span::raw(super::escape(&h.next.join(",")).into_owned()));
        }
        Line::from(spans)
    };
    let header = Line::styled(
        format!("  {} step source id           next", fit("", lanes_w)),
        theme::dim(),
    );
    draw_list(
        buf,
        area,
        pane_block(title, focused),
        Some(header),
        s.history.len(),
        s.selected(Pane::History),
        focused,
        |i| s.is_hit(Pane::History, i),
        row,
        vec![],
    );
}

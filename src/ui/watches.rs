//! The Watches strip under the History pane: `:break when` and every `:watch` expression with its
//! value at the checkpoint shown (re-evaluated whenever another one is shown).

use super::{pane_block, theme};
use crate::app::state::AppState;
use crate::text::{escape, fit};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

/// Rows the strip takes (borders included); 0 when there is nothing to watch.
pub fn height(s: &AppState) -> u16 {
    let n = s.compare.watches.len() + usize::from(s.compare.break_when.is_some());
    if n == 0 {
        0
    } else {
        (n as u16 + 2).min(8)
    }
}

pub fn render(s: &AppState, buf: &mut Buffer, area: Rect) {
    let step = s
        .current
        .as_ref()
        .map(|c| format!(" · at step {}", c.snapshot.step))
        .unwrap_or_default();
    let block = pane_block(format!("Watches{step}"), false);
    let inner = block.inner(area);
    block.render(area, buf);
    let w = inner.width as usize;
    let ew = s
        .compare
        .watches
        .iter()
        .map(|x| crate::text::width(&escape(&x.expr.text)))
        .max()
        .unwrap_or(0)
        .clamp(8, (w / 2).max(8));
    let mut lines = Vec::new();
    if let Some(b) = &s.compare.break_when {
        lines.push(Line::from(vec![
            Span::styled("break when ", theme::breakpoint()),
            Span::raw(fit(&escape(&b.text), w.saturating_sub(11))),
        ]));
    }
    for (i, x) in s.compare.watches.iter().enumerate() {
        let (text, st) = match &x.value {
            None => ("—".to_string(), theme::dim()),
            Some(Ok(v)) => (escape(&v.repr).into_owned(), Default::default()),
            Some(Err(e)) => {
                // where in the expression matters less than what failed
                let e = e
                    .split_once(": ")
                    .filter(|(c, _)| c.starts_with("column "))
                    .map_or(e.as_str(), |(_, m)| m);
                (format!("error: {}", escape(e)), theme::warn())
            }
        };
        let head = format!("{:>2} {} = ", i + 1, fit(&escape(&x.expr.text), ew));
        let room = w.saturating_sub(crate::text::width(&head));
        lines.push(Line::from(vec![
            Span::styled(head, theme::dim()),
            Span::styled(fit(&text, room), st),
        ]));
    }
    Paragraph::new(lines).render(inner, buf);
}

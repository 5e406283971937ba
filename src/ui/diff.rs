//! The diff of the selected checkpoint against the mark: side by side (key · A · B) when the
//! modal is at least [`SIDE_BY_SIDE`] columns wide, else unified (`a → b`). The rows come from
//! `crate::compare::render`, already escaped.

use super::theme;
use crate::app::compare::DiffView;
use crate::compare::render::{Mark, Row};
use crate::text::fit;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

/// From this inner width the two checkpoints get a column each.
pub const SIDE_BY_SIDE: u16 = 100;

fn style(m: Mark) -> Style {
    match m {
        Mark::Added => Style::default().fg(Color::Green),
        Mark::Removed => Style::default().fg(Color::Red),
        Mark::Changed => Style::default().fg(Color::Yellow),
        Mark::Heading => theme::bold(),
        Mark::Note => theme::dim(),
    }
}

fn line(r: &Row, w: usize, side: bool, label_w: usize) -> Line<'static> {
    let st = style(r.mark);
    if r.mark == Mark::Heading {
        let text = if r.b.is_empty() {
            r.label.clone()
        } else {
            format!("{}: {}", r.label, r.b)
        };
        return Line::styled(fit(&text, w), st);
    }
    let head = format!("{} {} ", r.mark.sign(), fit(&r.label, label_w));
    let room = w.saturating_sub(label_w + 3);
    if side {
        let col = room.saturating_sub(3) / 2;
        let (a, b) = if r.mark == Mark::Note {
            (String::new(), r.b.clone())
        } else {
            (r.a.clone(), r.b.clone())
        };
        return Line::from(vec![
            Span::styled(head, st),
            Span::styled(
                fit(&a, col),
                if r.mark == Mark::Added {
                    theme::dim()
                } else {
                    st
                },
            ),
            Span::styled(" │ ", theme::dim()),
            Span::styled(
                fit(&b, col),
                if r.mark == Mark::Removed {
                    theme::dim()
                } else {
                    st
                },
            ),
        ]);
    }
    let body = match r.mark {
        Mark::Added | Mark::Note => r.b.clone(),
        Mark::Removed => r.a.clone(),
        _ => format!("{} → {}", r.a, r.b),
    };
    Line::from(vec![
        Span::styled(head, st),
        Span::styled(fit(&body, room), st),
    ])
}

pub fn render(d: &DiffView, buf: &mut Buffer, area: Rect) {
    let w = area.width as usize;
    let side = area.width >= SIDE_BY_SIDE;
    let label_w = d
        .rows
        .iter()
        .filter(|r| r.mark != Mark::Heading)
        .map(|r| crate::text::width(&r.label))
        .max()
        .unwrap_or(4)
        .clamp(4, 28);
    let mut lines = Vec::new();
    if side {
        let room = w.saturating_sub(label_w + 3);
        let col = room.saturating_sub(3) / 2;
        lines.push(Line::from(vec![
            Span::raw(" ".repeat(label_w + 3)),
            Span::styled(fit(&format!("A (mark)  {}", d.a), col), theme::bold()),
            Span::styled(" │ ", theme::dim()),
            Span::styled(fit(&format!("B  {}", d.b), col), theme::bold()),
        ]));
    } else {
        lines.push(Line::styled(
            fit(&format!("A (mark)  {}", d.a), w),
            theme::bold(),
        ));
        lines.push(Line::styled(fit(&format!("B  {}", d.b), w), theme::bold()));
    }
    let h = (area.height as usize).saturating_sub(lines.len());
    let start = d.scroll.min(d.rows.len().saturating_sub(h.max(1)));
    for r in d.rows.iter().skip(start).take(h) {
        lines.push(line(r, w, side, label_w));
    }
    Paragraph::new(lines).render(area, buf);
}

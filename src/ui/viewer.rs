//! The value viewer (a modal): the laid-out lines of `app::viewer::Viewer` from its scroll
//! position, the cursor line reversed, search matches marked, the path of the cursor's node and
//! the position in the bottom border, and the `/` prompt while a search is typed.

use super::theme;
use crate::app::viewer::Viewer;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget};

/// Draw `v` in `r` (the modal's outer rectangle).
pub fn render(v: &Viewer, buf: &mut Buffer, r: Rect) {
    Clear.render(r, buf);
    let crumb = v
        .lines
        .get(v.cursor)
        .map(|l| l.crumb.as_str())
        .filter(|c| !c.is_empty())
        .unwrap_or("-");
    let mode = match (v.raw, v.details) {
        (true, _) => " · raw",
        (false, true) => " · ids",
        _ => "",
    };
    let pos = format!(
        "{}/{}{}",
        (v.cursor + 1).min(v.lines.len()),
        v.lines.len(),
        if v.cut { " (cut)" } else { "" }
    );
    let hits = match (&v.query, v.hit_pos()) {
        (Some(q), Some(p)) => format!(" · /{q} {p}/{}", v.hits.len()),
        (Some(q), None) => format!(" · /{q} {}", v.hits.len()),
        _ => String::new(),
    };
    let b = Block::bordered()
        .title(Span::styled(
            format!(" {}{mode} ", crate::text::escape(&v.title)),
            theme::bold(),
        ))
        .title_bottom(Span::styled(
            format!(" {} · {pos}{hits} ", crate::text::escape(crumb)),
            theme::dim(),
        ))
        .border_style(theme::border(true));
    let inner = b.inner(r);
    b.render(r, buf);
    let height = inner.height as usize;
    let rows = if v.find.is_some() {
        height.saturating_sub(1)
    } else {
        height
    };
    let mut lines: Vec<Line> = Vec::with_capacity(rows + 1);
    for (i, l) in v.lines.iter().enumerate().skip(v.scroll).take(rows) {
        let hit = v.hits.binary_search(&i).is_ok();
        let mut spans: Vec<Span> = l
            .spans
            .iter()
            .map(|s| {
                let mut st = theme::ink(s.ink);
                if hit {
                    st = st.patch(theme::hit());
                }
                Span::styled(s.text.clone(), st)
            })
            .collect();
        if i == v.cursor {
            for s in &mut spans {
                s.style = s.style.add_modifier(Modifier::REVERSED);
            }
            if spans.is_empty() {
                spans.push(Span::styled(" ", theme::selected(true)));
            }
        }
        lines.push(Line::from(spans));
    }
    if let Some(f) = &v.find {
        while lines.len() < rows {
            lines.push(Line::raw(""));
        }
        let mut spans = vec![Span::styled("/", theme::bold())];
        spans.extend(super::modal::field(f, true));
        lines.push(Line::from(spans));
    }
    Paragraph::new(lines).render(inner, buf);
}

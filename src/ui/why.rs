//! Provenance of a key: its value and reducer, then every contribution, oldest first — the step
//! and source of the checkpoint that first held it, who wrote it (node, input, Command,
//! update_state), the task and the value written (and the list items it put there).

use super::theme;
use crate::app::compare::WhyView;
use crate::compare::render::contribution_cells;
use crate::present::line;
use crate::text::{escape, fit, short_id};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

pub fn render(v: &WhyView, buf: &mut Buffer, area: Rect) {
    let p = &v.p;
    let w = area.width as usize;
    let mut lines = vec![
        Line::styled(
            fit(
                &format!(
                    "why {}{} · thread {} · {}",
                    escape(&p.key),
                    escape(&p.path),
                    escape(&p.thread_id),
                    short_id(&p.checkpoint_id)
                ),
                w,
            ),
            theme::bold(),
        ),
        Line::raw(fit(
            &format!("value    {}", line(&p.value, w.saturating_sub(9))),
            w,
        )),
        Line::raw(fit(
            &format!(
                "reducer  {}",
                escape(
                    p.reducer
                        .as_deref()
                        .unwrap_or("unknown (open the graph to know it)")
                )
            ),
            w,
        )),
    ];
    if let Some(id) = &p.message_id {
        lines.push(Line::raw(fit(&format!("message  id {}", escape(id)), w)));
    }
    lines.push(Line::styled(
        fit(
            "  step  source  who                 task               written",
            w,
        ),
        theme::dim(),
    ));
    let h = (area.height as usize).saturating_sub(lines.len());
    let start = super::window_start(v.sel, h);
    for (i, c) in p.contributions.iter().enumerate().skip(start).take(h) {
        let step = c.step.map(|s| s.to_string()).unwrap_or_else(|| "?".into());
        let (who, task, what, ix) = contribution_cells(c, w.saturating_sub(60).max(20));
        let text = format!(
            "{}{:>4}  {}  {}  {}  {what}{ix}",
            if i == v.sel { "▸ " } else { "  " },
            step,
            fit(&escape(c.source.as_deref().unwrap_or("?")), 6),
            fit(&who, 18),
            fit(&task, 17),
        );
        let l = Line::from(vec![Span::raw(fit(&text, w))]);
        lines.push(if i == v.sel {
            l.style(theme::selected(true))
        } else {
            l
        });
    }
    if p.contributions.is_empty() {
        lines.push(Line::styled(
            "  (no checkpoint of the lineage holds it)",
            theme::dim(),
        ));
    }
    Paragraph::new(lines).render(area, buf);
}

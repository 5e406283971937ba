//! The status line (mode, db, thread, checkpoint, step, why we are paused), the message line and
//! the footer generated from the keymap.

use super::theme;
use crate::app::format::short_id;
use crate::app::keymap;
use crate::app::state::{AppState, Mode, PauseView};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

pub fn status_line(s: &AppState, buf: &mut Buffer, area: Rect) {
    let mode = match (s.mode, &s.graph_label) {
        (Mode::Debug, _) => format!(" DEBUG {} ", super::escape(&s.graph.name)),
        (Mode::Inspect, _) => " INSPECT read-only ".to_string(),
    };
    // without the graph: the DB-wide limitation, stated here once (the State pane says what)
    let mode = match &s.current {
        Some(c) if !c.snapshot.limitations.is_empty() => format!("{mode}· DB only "),
        _ => mode,
    };
    let mut parts = vec![format!("db {}", super::escape(&s.db_label))];
    parts.push(format!(
        "thread {}",
        crate::keys::key_label(s.thread.as_deref().unwrap_or("-"))
    ));
    if !s.ns.is_empty() {
        parts.push(format!("ns {}", short_ns(&s.ns)));
    }
    if let Some(c) = crate::app::update::apps::context_short(&s.context, 32) {
        parts.push(super::escape(&c).into_owned());
    }
    if let Some(c) = &s.current {
        parts.push(format!(
            "checkpoint {}{}",
            short_id(&c.snapshot.checkpoint_id),
            if c.latest { "" } else { " (older)" }
        ));
        parts.push(format!("step {}", c.snapshot.step));
    }
    if let Some(p) = crate::app::calls::status_part(s.last_calls, s.replay) {
        parts.push(p);
    }
    if s.refreshes > 0 {
        // another process is writing: say the view follows it
        parts.push(format!("live ↻{}", s.refreshes));
    }
    let pause = s.pause();
    let pause_style = match &pause {
        PauseView::Interrupt(_) => theme::status(crate::app::state::TaskStatus::Interrupted),
        PauseView::Error(..) | PauseView::RecursionLimit(_) => theme::error(),
        PauseView::Before(_) | PauseView::After(_) => theme::breakpoint(),
        _ => theme::bold(),
    };
    // narrow terminals: drop the db, then shorten the checkpoint id
    let room = (area.width as usize)
        .saturating_sub(crate::text::width(&mode) + super::width(&pause.describe()) + 6);
    if crate::text::width(&parts.join(" │ ")) > room {
        parts.remove(0);
    }
    if crate::text::width(&parts.join(" │ ")) > room {
        if let Some(c) = &s.current {
            let id = &c.snapshot.checkpoint_id;
            let tail = if id.chars().count() == 36 {
                crate::text::tail(id, 12)
            } else {
                id.as_str()
            };
            let tail = super::escape(tail);
            if let Some(p) = parts.iter_mut().find(|p| p.starts_with("checkpoint ")) {
                *p = format!("cp …{tail}");
            }
        }
    }
    let mut spans = vec![
        Span::styled(
            mode,
            theme::status_bar().add_modifier(ratatui::style::Modifier::BOLD),
        ),
        Span::raw(" "),
        Span::raw(parts.join(" │ ")),
        Span::raw(" │ "),
        Span::styled(super::escape(&pause.describe()).into_owned(), pause_style),
    ];
    if let Some(n) = s.count {
        spans.push(Span::styled(format!("  count {n}"), theme::warn()));
    }
    Paragraph::new(Line::from(spans)).render(area, buf);
}

pub fn message_line(s: &AppState, buf: &mut Buffer, area: Rect) {
    if let Some(r) = &s.running {
        let text = match &s.message {
            // a refusal or the cancel notice stays readable next to the spinner
            Some(m) if r.cancelling || m.level != crate::app::state::Level::Info => format!(
                " {} — {}",
                crate::app::update::running_line(r),
                super::escape(&m.text)
            ),
            _ => format!(" {}", crate::app::update::running_line(r)),
        };
        Paragraph::new(Line::styled(text, theme::warn())).render(area, buf);
        return;
    }
    let Some(m) = &s.message else { return };
    Paragraph::new(Line::styled(
        format!(" {}", super::escape(&m.text)),
        theme::level(m.level),
    ))
    .wrap(ratatui::widgets::Wrap { trim: false })
    .render(area, buf);
}

pub fn footer(s: &AppState, buf: &mut Buffer, area: Rect) {
    let mut spans = Vec::new();
    for (k, label) in keymap::footer(s) {
        spans.push(Span::styled(format!(" {k}"), theme::bold()));
        spans.push(Span::styled(format!(" {label} "), theme::dim()));
    }
    Paragraph::new(Line::from(spans)).render(area, buf);
}

/// A checkpoint namespace with its task ids cut to 8 characters (`interview:1ef0a2b3`), escaped.
pub fn short_ns(ns: &str) -> String {
    let short = ns
        .split('|')
        .map(|seg| match seg.split_once(':') {
            Some((n, id)) => format!("{n}:{}", crate::text::head(id, 8)),
            None => seg.to_string(),
        })
        .collect::<Vec<_>>()
        .join("|");
    super::escape(&short).into_owned()
}

//! Tasks pane: the selected checkpoint's tasks (id, node, status), then the re-execution view of
//! the last engine run: which `interrupt()` calls returned stored answers, which effects ran
//! (counted per execution), and approval-drift warnings.

use super::{draw_list, fit, pane_block, theme};
use crate::app::format::{preview, short_id};
use crate::app::state::{AppState, CallView, Pane, PauseView};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

/// The re-execution lines of the last run.
pub fn run_lines(s: &AppState) -> Vec<Line<'static>> {
    let Some(run) = &s.run else { return vec![] };
    let mut l = vec![Line::styled(
        format!(
            "── last {}{} ──",
            run.what,
            run.pause
                .as_ref()
                .map(|p| format!(" · {}", p.describe()))
                .unwrap_or_default()
        ),
        theme::bold(),
    )];
    // a long continue: the last steps matter (Enter on a task has the full story)
    let skip = run.steps.len().saturating_sub(3);
    if skip > 0 {
        l.push(Line::styled(
            format!("… {skip} earlier step{}", if skip == 1 { "" } else { "s" }),
            theme::dim(),
        ));
    }
    for st in run.steps.iter().skip(skip) {
        let to = match (&st.checkpoint, &st.pause, st.tasks.is_empty()) {
            (Some(c), _, _) => format!("→ {}", short_id(c)),
            (None, Some(PauseView::Before(n)), _) => {
                format!(
                    "paused before {}: nothing ran",
                    super::escape(&n.join(", "))
                )
            }
            (None, Some(PauseView::RecursionLimit(n)), _) => {
                format!("recursion limit {n}: nothing ran")
            }
            (None, _, true) => "no task is triggered".into(),
            (None, _, false) => "→ no checkpoint (paused inside the step)".into(),
        };
        l.push(Line::styled(format!("step {} {to}", st.step), theme::dim()));
        for t in &st.tasks {
            let rerun = if t.execution > 1 {
                format!(" · re-run #{}", t.execution)
            } else {
                String::new()
            };
            let attempts = if t.attempts > 1 {
                format!(" · {} attempts", t.attempts)
            } else {
                String::new()
            };
            l.push(Line::from(vec![
                Span::raw(format!(" {} ", super::escape(&t.name))),
                Span::styled(format!("{}{rerun}{attempts}", t.outcome), theme::dim()),
            ]));
            for c in &t.calls {
                l.push(match c {
                    CallView::Replayed { index, answer } => Line::from(vec![
                        Span::raw(format!("   interrupt #{index} ")),
                        Span::styled("returned stored answer", theme::ok()),
                        Span::raw(format!(" {answer}")),
                    ]),
                    CallView::Resumed { index, answer } => Line::from(vec![
                        Span::raw(format!("   interrupt #{index} ")),
                        Span::styled("returned resume value", theme::ok()),
                        Span::raw(format!(" {answer}")),
                    ]),
                    CallView::Raised { index, id, payload } => Line::from(vec![
                        Span::raw(format!("   interrupt #{index} ")),
                        Span::styled(
                            "raised",
                            theme::status(crate::app::state::TaskStatus::Interrupted),
                        ),
                        Span::raw(format!(
                            " {payload} ({})",
                            super::escape(crate::text::head(id, 8))
                        )),
                    ]),
                });
            }
            for (attempt, stream, text) in &t.output {
                for line in text.lines() {
                    let tag = if t.attempts > 1 {
                        format!("attempt {attempt} ")
                    } else {
                        String::new()
                    };
                    let style = if stream == "stderr" {
                        theme::warn()
                    } else {
                        theme::dim()
                    };
                    l.push(Line::styled(
                        format!("   | {tag}{}", super::escape(line)),
                        style,
                    ));
                }
            }
            for (name, n, total) in &t.effects {
                let mut spans = vec![Span::raw(format!("   effect {} ×{n}", super::escape(name)))];
                if *total > *n {
                    spans.push(Span::styled(
                        format!("  ran again: ×{total} over {} executions", t.execution),
                        theme::warn(),
                    ));
                }
                l.push(Line::from(spans));
            }
            for d in &t.drift {
                l.push(Line::styled(
                    format!(
                        "   ⚠ APPROVAL DRIFT at interrupt #{} (Enter: details)",
                        d.index
                    ),
                    theme::error(),
                ));
                l.push(Line::from(vec![
                    Span::styled("     answered: ", theme::dim()),
                    Span::raw(preview(&d.answered, 200)),
                ]));
                l.push(Line::from(vec![
                    Span::styled("     re-ran:   ", theme::dim()),
                    Span::styled(preview(&d.now, 200), theme::warn()),
                ]));
            }
        }
    }
    if run.steps.is_empty() {
        l.push(Line::styled("no superstep ran", theme::dim()));
    }
    l
}

pub fn render(s: &AppState, buf: &mut Buffer, area: Rect, focused: bool) {
    let tasks = s
        .current
        .as_ref()
        .map(|c| c.tasks.as_slice())
        .unwrap_or(&[]);
    let nw = tasks
        .iter()
        .map(|t| super::width(&t.name))
        .max()
        .unwrap_or(4)
        .clamp(4, 14);
    // as wide as the longest status shown (`done` alone leaves room for the result)
    let sw = tasks
        .iter()
        .map(|t| super::width(t.status.label()))
        .max()
        .unwrap_or(4);
    let row = |i: usize| -> Line {
        let t = &tasks[i];
        let mut spans = vec![
            Span::styled(fit(crate::text::head(&t.id, 8), 8), theme::dim()),
            Span::raw(format!(" {} ", fit(&t.name, nw))),
            Span::styled(fit(t.status.label(), sw), theme::status(t.status)),
        ];
        if t.ns.is_some() {
            spans.push(Span::styled(" ⤷subgraph (s)", theme::bold()));
        }
        spans.push(Span::raw(format!(" {}", super::escape(&t.detail))));
        Line::from(spans)
    };
    let mut footer = run_lines(s);
    if !footer.is_empty() {
        footer.insert(0, Line::raw(""));
    }
    draw_list(
        buf,
        area,
        pane_block(format!("Tasks · {}", tasks.len()), focused),
        None,
        tasks.len(),
        s.selected(Pane::Tasks),
        focused,
        |_| false,
        row,
        footer,
    );
}

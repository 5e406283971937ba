//! Graph pane: nodes in registration order, breakpoint markers before/after (`◆`, red; `■`: compiled
//! into a Python graph, fixed), the next tasks highlighted, badges for interrupted / error / done at the selected checkpoint.

use super::{draw_list, fit, pane_block, theme};
use crate::app::state::{AppState, Mode, Pane, TaskStatus};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

/// The badge of a node at the selected checkpoint.
fn badge(s: &AppState, node: &str) -> Option<(String, ratatui::style::Style)> {
    let cur = s.current.as_ref()?;
    let statuses: Vec<TaskStatus> = cur
        .tasks
        .iter()
        .filter(|t| t.name == node)
        .map(|t| t.status)
        .collect();
    for st in [TaskStatus::Error, TaskStatus::Interrupted] {
        if statuses.contains(&st) {
            return Some((st.label().to_string(), theme::status(st)));
        }
    }
    if !statuses.is_empty() && statuses.iter().all(|x| *x == TaskStatus::Done) {
        return Some(("done".into(), theme::status(TaskStatus::Done)));
    }
    if cur.snapshot.next.iter().any(|n| n == node) {
        return Some(("next".into(), theme::next()));
    }
    None
}

pub fn render(s: &AppState, buf: &mut Buffer, area: Rect, focused: bool) {
    let w = s
        .graph
        .nodes
        .iter()
        .map(|n| super::width(&n.name))
        .max()
        .unwrap_or(4)
        .clamp(4, 18);
    let title = match s.mode {
        Mode::Debug => format!("Graph {}", super::escape(&s.graph.name)),
        Mode::Inspect if s.graph_label.is_some() => {
            format!("Graph {} (--graph)", super::escape(&s.graph.name))
        }
        Mode::Inspect => "Graph (nodes seen in the DB)".to_string(),
    };
    let debug = s.mode == Mode::Debug;
    let header = Line::styled(
        if debug {
            format!("  b {} a  status", fit("node", w))
        } else {
            format!("  {}  status", fit("node", w))
        },
        theme::dim(),
    );
    let mark = |on: bool, fixed: bool| {
        if fixed {
            Span::styled("■", theme::breakpoint())
        } else if on {
            Span::styled("◆", theme::breakpoint())
        } else {
            Span::styled("·", theme::dim())
        }
    };
    let row = |i: usize| -> Line {
        if debug && i == 0 {
            return Line::from(vec![
                mark(s.breaks_before.all, s.graph.fixed_before.all),
                Span::raw(" "),
                Span::raw(fit("*", w)),
                Span::raw(" "),
                mark(s.breaks_after.all, s.graph.fixed_after.all),
                Span::styled("  every node", theme::dim()),
            ]);
        }
        let n = &s.graph.nodes[if debug { i - 1 } else { i }];
        let mut spans = Vec::new();
        if debug {
            spans.push(mark(
                s.breaks_before.matches(&n.name),
                s.graph.fixed_before.matches(&n.name),
            ));
            spans.push(Span::raw(" "));
        }
        spans.push(Span::raw(fit(&n.name, w)));
        if debug {
            spans.push(Span::raw(" "));
            spans.push(mark(
                s.breaks_after.matches(&n.name),
                s.graph.fixed_after.matches(&n.name),
            ));
        }
        spans.push(Span::raw("  "));
        match badge(s, &n.name) {
            Some((b, st)) => spans.push(Span::styled(fit(&b, 11), st)),
            None => spans.push(Span::raw(fit("", 11))),
        }
        if !n.successors.is_empty() {
            spans.push(Span::styled(
                format!(" → {}", super::escape(&n.successors.join(", "))),
                theme::dim(),
            ));
        }
        Line::from(spans)
    };
    draw_list(
        buf,
        area,
        pane_block(title, focused),
        Some(header),
        s.graph_rows(),
        s.selected(Pane::Graph),
        focused,
        |_| false,
        row,
        vec![],
    );
}

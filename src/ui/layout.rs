//! Where each pane goes, chosen by terminal width; below the minimum size, nothing (the "too
//! small" screen is shown instead).

use crate::app::state::Pane;
use ratatui::layout::{Constraint, Direction, Layout, Rect};

pub const MIN_WIDTH: u16 = 60;
pub const MIN_HEIGHT: u16 = 16;
/// From this width every pane is on screen; below it, one pane at a time with a tab bar.
pub const WIDE: u16 = 100;

pub struct Areas {
    pub panes: Vec<(Pane, Rect)>,
    /// The tab bar of the narrow layout.
    pub tabs: Option<Rect>,
    pub status: Rect,
    pub message: Rect,
    pub footer: Rect,
}

/// `message_h`: 1, or 2 for a long message (it wraps).
pub fn areas(area: Rect, focus: Pane, graph_rows: usize, message_h: u16) -> Option<Areas> {
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        return None;
    }
    let [body, status, message, footer] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(message_h.clamp(1, 2)),
        Constraint::Length(1),
    ])
    .areas(area);
    if area.width < WIDE {
        let [tabs, pane] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(body);
        return Some(Areas {
            panes: vec![(focus, pane)],
            tabs: Some(tabs),
            status,
            message,
            footer,
        });
    }
    // Writes across the bottom (they need width); Graph + History left; State, Tasks and
    // Interrupts right.
    let [top, bottom] =
        Layout::vertical([Constraint::Percentage(70), Constraint::Percentage(30)]).areas(body);
    let left_w = (area.width * 36 / 100).clamp(36, 56);
    let [left, right] =
        Layout::horizontal([Constraint::Length(left_w), Constraint::Min(1)]).areas(top);
    let graph_h = ((graph_rows as u16) + 3).clamp(5, (top.height / 2).max(5));
    let [graph, history] =
        Layout::vertical([Constraint::Length(graph_h), Constraint::Min(3)]).areas(left);
    let rows = Layout::default()
        .direction(Direction::Vertical)
        .constraints([Constraint::Percentage(45), Constraint::Percentage(55)])
        .split(right);
    let [tasks, interrupts] =
        Layout::horizontal([Constraint::Percentage(58), Constraint::Percentage(42)]).areas(rows[1]);
    Some(Areas {
        panes: vec![
            (Pane::Graph, graph),
            (Pane::History, history),
            (Pane::State, rows[0]),
            (Pane::Tasks, tasks),
            (Pane::Interrupts, interrupts),
            (Pane::Writes, bottom),
        ],
        tabs: None,
        status,
        message,
        footer,
    })
}

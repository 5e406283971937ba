//! Rendering only: `render(&AppState, &mut Frame)` changes nothing. One file per pane.

pub mod diff;
pub mod graph;
pub mod history;
pub mod interrupts;
pub mod layout;
pub mod modal;
pub mod state;
pub mod status;
pub mod tasks;
pub mod theme;
pub mod viewer;
pub mod watches;
pub mod why;
pub mod writes;

use crate::app::state::{AppState, Pane};
use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget, Wrap};
use ratatui::Frame;

/// Draw the whole screen.
pub fn render(s: &AppState, f: &mut Frame) {
    let area = f.area();
    draw(s, f.buffer_mut(), area);
}

/// Draw the whole screen into a buffer (what `render` does, usable without a terminal).
pub fn draw(s: &AppState, buf: &mut Buffer, area: Rect) {
    let msg_len = s.message.as_ref().map_or(0, |m| width(&m.text) + 1);
    let msg_h = if msg_len > area.width as usize { 2 } else { 1 };
    let Some(a) = layout::areas(area, s.focus, s.graph_rows(), msg_h) else {
        too_small(buf, area);
        return;
    };
    for (p, r) in &a.panes {
        // the Watches strip sits under History (the narrow layout: under the pane shown)
        let wh = watches::height(s);
        let under = *p == Pane::History || a.tabs.is_some();
        if under && wh > 0 && r.height >= wh + 4 {
            let (top, bottom) = (
                Rect::new(r.x, r.y, r.width, r.height - wh),
                Rect::new(r.x, r.y + r.height - wh, r.width, wh),
            );
            render_pane(s, *p, buf, top);
            watches::render(s, buf, bottom);
            continue;
        }
        render_pane(s, *p, buf, *r);
    }
    if let Some(t) = a.tabs {
        tabs(s, buf, t);
    }
    status::status_line(s, buf, a.status);
    status::message_line(s, buf, a.message);
    status::footer(s, buf, a.footer);
    modal::render(s, buf, area);
    scrub(buf);
}

/// Draw one pane (pane tests render these alone).
pub fn render_pane(s: &AppState, p: Pane, buf: &mut Buffer, area: Rect) {
    let focused = s.focus == p;
    match p {
        Pane::Graph => graph::render(s, buf, area, focused),
        Pane::History => history::render(s, buf, area, focused),
        Pane::State => state::render(s, buf, area, focused),
        Pane::Tasks => tasks::render(s, buf, area, focused),
        Pane::Writes => writes::render(s, buf, area, focused),
        Pane::Interrupts => interrupts::render(s, buf, area, focused),
    }
}

fn too_small(buf: &mut Buffer, area: Rect) {
    let text = vec![
        Line::from("terminal too small"),
        Line::from(format!(
            "{}x{} — superstep needs at least {}x{}",
            area.width,
            area.height,
            layout::MIN_WIDTH,
            layout::MIN_HEIGHT
        )),
        Line::from("resize, or press q to quit"),
    ];
    let y = area.y + area.height.saturating_sub(3) / 2;
    let r = Rect::new(area.x, y, area.width, area.height.min(3));
    Paragraph::new(text)
        .alignment(Alignment::Center)
        .wrap(Wrap { trim: true })
        .style(theme::warn())
        .render(r, buf);
}

fn tabs(s: &AppState, buf: &mut Buffer, area: Rect) {
    let mut spans = Vec::new();
    for p in Pane::ALL {
        let style = if p == s.focus {
            theme::selected(true)
        } else {
            theme::dim()
        };
        spans.push(Span::styled(format!(" {} ", p.title()), style));
        spans.push(Span::raw(" "));
    }
    spans.push(Span::styled("Tab: next pane", theme::dim()));
    Paragraph::new(Line::from(spans)).render(area, buf);
}

/// A pane's border and title.
pub fn pane_block(title: String, focused: bool) -> Block<'static> {
    Block::bordered()
        .title(Span::styled(format!(" {title} "), theme::border(focused)))
        .border_style(theme::border(focused))
}

/// The first visible row so that `sel` is on screen.
pub fn window_start(sel: usize, height: usize) -> usize {
    if height == 0 || sel < height {
        0
    } else {
        sel + 1 - height
    }
}

/// Draw a list inside `block`: only the visible rows are built (long histories stay cheap).
/// Selected row: `▸` and the selection style; search hits: a highlighted gutter.
#[allow(clippy::too_many_arguments)]
pub fn draw_list<'a>(
    buf: &mut Buffer,
    area: Rect,
    block: Block<'a>,
    header: Option<Line<'a>>,
    len: usize,
    sel: usize,
    focused: bool,
    is_hit: impl Fn(usize) -> bool,
    row: impl Fn(usize) -> Line<'a>,
    footer: Vec<Line<'a>>,
) {
    let inner = block.inner(area);
    block.render(area, buf);
    let mut lines: Vec<Line> = Vec::new();
    let mut height = inner.height as usize;
    if let Some(h) = header {
        lines.push(h);
        height = height.saturating_sub(1);
    }
    // rows first; the footer (extra lines after the list) gets what is left
    let rows_h = height
        .saturating_sub(footer.len().min(height / 2))
        .max(len.min(height));
    let rows_h = rows_h.min(height);
    let start = window_start(sel, rows_h);
    let end = (start + rows_h).min(len);
    for i in start..end {
        let mut l = row(i);
        let hit = is_hit(i);
        let g = if i == sel {
            "▸ "
        } else if hit {
            "• "
        } else {
            "  "
        };
        let gstyle = if hit {
            theme::hit()
        } else {
            Default::default()
        };
        l.spans.insert(0, Span::styled(g, gstyle));
        if i == sel {
            l = l.style(theme::selected(focused));
        }
        lines.push(l);
    }
    if len == 0 {
        lines.push(Line::styled("  (none)", theme::dim()));
    }
    let left = height.saturating_sub(end - start + usize::from(len == 0));
    lines.extend(footer.into_iter().take(left));
    Paragraph::new(lines).render(inner, buf);
}

/// Escape (see `crate::text::escape`), then pad or cut to exactly `w` columns.
pub fn fit(s: &str, w: usize) -> String {
    crate::text::fit(&escape(s), w)
}

/// A string from the DB or the graph made terminal-safe (control and invisible characters
/// shown as `\e`, `\u{202e}`, …).
pub fn escape(s: &str) -> std::borrow::Cow<'_, str> {
    crate::text::escape(s)
}

/// Display width of `s` once escaped.
pub fn width(s: &str) -> usize {
    crate::text::width(&escape(s))
}

/// The last line of defence: whatever a pane forgot to escape, no cell may carry a control or
/// invisible character to the terminal (ratatui drops C0/C1 controls itself but passes bidi
/// overrides and zero-width characters on, attached to the previous cell).
fn scrub(buf: &mut Buffer) {
    for cell in buf.content.iter_mut() {
        let sym = cell.symbol();
        if crate::text::needs_escape(sym) {
            let clean = crate::text::strip(sym);
            let clean = if clean.is_empty() { " " } else { &clean };
            let clean = clean.to_string();
            cell.set_symbol(&clean);
        }
    }
}

//! Modals: help (generated from the keymap), value viewer, time-travel confirmation, resume
//! editor (validates as you type), update_state editor with its as_node picker, new thread,
//! thread picker, and the `:` / `/` prompts.

use super::{fit, theme};
use crate::app::compare::{DiffView, WhyView};
use crate::app::format::short_id;
use crate::app::state::{check_json, resume_answer, AppState, Modal, ResumeItem, TextInput};
use crate::app::update::help_text;
use crate::app::viewer::Viewer;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget, Wrap};

fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width.saturating_sub(2)).max(10.min(area.width));
    let h = h.min(area.height.saturating_sub(2)).max(3.min(area.height));
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

fn frame(buf: &mut Buffer, r: Rect, title: &str, hint: &str) -> Rect {
    Clear.render(r, buf);
    let b = Block::bordered()
        .title(Span::styled(format!(" {title} "), theme::bold()))
        .title_bottom(Span::styled(format!(" {hint} "), theme::dim()))
        .border_style(theme::border(true));
    let inner = b.inner(r);
    b.render(r, buf);
    inner
}

/// A text field with a visible cursor cell.
pub(super) fn field(t: &TextInput, active: bool) -> Vec<Span<'static>> {
    let chars: Vec<char> = t.text.chars().collect();
    let before: String = chars[..t.cursor.min(chars.len())].iter().collect();
    let at: String = chars
        .get(t.cursor)
        .map(|c| c.to_string())
        .unwrap_or_else(|| " ".into());
    let after: String = chars
        .get(t.cursor + 1..)
        .map(|c| c.iter().collect())
        .unwrap_or_default();
    if !active {
        return vec![Span::raw(t.text.clone())];
    }
    if t.proposed {
        // selected: what typing replaces
        return vec![
            Span::styled(
                t.text.clone(),
                Style::default().add_modifier(ratatui::style::Modifier::REVERSED),
            ),
            Span::raw(" "),
        ];
    }
    vec![
        Span::raw(before),
        Span::styled(
            at,
            Style::default().add_modifier(ratatui::style::Modifier::REVERSED),
        ),
        Span::raw(after),
    ]
}

/// Live validation of a JSON field.
fn validity(text: &str, empty_means: &str) -> Line<'static> {
    match check_json(text) {
        Ok(None) => Line::styled(format!("    {empty_means}"), theme::dim()),
        Ok(Some(_)) => Line::styled("    ✓ valid JSON", theme::ok()),
        Err(e) => Line::styled(format!("    ✗ {e}"), theme::error()),
    }
}

fn scrolled(lines: Vec<Line<'static>>, scroll: usize, height: usize) -> Vec<Line<'static>> {
    let max = lines.len().saturating_sub(height);
    lines
        .into_iter()
        .skip(scroll.min(max))
        .take(height)
        .collect()
}

pub fn render(s: &AppState, buf: &mut Buffer, area: Rect) {
    let Some(m) = &s.modal else { return };
    match m {
        Modal::Help { scroll, commands } => help(s, buf, area, *scroll, *commands),
        Modal::Viewer(v) => viewer(v, buf, area),
        Modal::ConfirmTravel { lines, .. } => confirm_travel(lines, buf, area),
        Modal::Resume { items, sel, error } => resume(items, *sel, error, buf, area),
        Modal::Update {
            label,
            as_nodes,
            as_sel,
            input,
            note,
            error,
            ..
        } => update_state(s, label, as_nodes, *as_sel, input, note, error, buf, area),
        Modal::NewThread {
            name,
            input,
            field: which,
            error,
        } => new_thread(s, name, input, *which, error, buf, area),
        Modal::Turn { input, error } => turn(s, input, error, buf, area),
        Modal::ThreadPicker { sel } => thread_picker(s, *sel, buf, area),
        Modal::Command { input } => prompt(true, input, buf, area),
        Modal::Search { input } => prompt(false, input, buf, area),
        Modal::Diff(d) => diff(d, buf, area),
        Modal::Why(w) => why(w, buf, area),
    }
}

/// `?` every key (generated from the keymap), or `:help` the `:` commands.
fn help(s: &AppState, buf: &mut Buffer, area: Rect, scroll: usize, commands: bool) {
    // as wide as the screen allows: descriptions wrap under their column, never cut
    let r = centered(
        area,
        area.width.saturating_sub(4).max(40),
        area.height.saturating_sub(2),
    );
    let (title, hint) = if commands {
        (
            "Commands — type : then one of these",
            "Esc close · j/k scroll · ? every key",
        )
    } else {
        ("Help — every key", "Esc close · j/k scroll")
    };
    let inner = frame(buf, r, title, hint);
    let width = inner.width as usize;
    let mut lines = vec![];
    if !commands {
        let head = match s.mode {
            crate::app::state::Mode::Debug => format!(
                "debugs {} on {} — each n runs one LangGraph superstep and writes its checkpoint",
                s.graph_label.as_deref().unwrap_or("?"),
                s.db_path
            ),
            crate::app::state::Mode::Inspect => format!(
                "inspects {} read-only (what get_state / get_state_history show)",
                s.db_path
            ),
        };
        for (i, l) in
            crate::conversation::wrap::wrap(&format!("superstep {}", super::escape(&head)), width)
                .into_iter()
                .enumerate()
        {
            lines.push(if i == 0 {
                Line::from(vec![
                    Span::styled("superstep", theme::bold()),
                    Span::raw(l.strip_prefix("superstep").unwrap_or(&l).to_string()),
                ])
            } else {
                Line::raw(l)
            });
        }
    }
    let entries: Vec<(String, String)> = if commands {
        crate::app::update::COMMANDS
            .iter()
            .chain(crate::app::update::COMPARE_COMMANDS)
            .map(|(c, d)| (c.to_string(), d.to_string()))
            .collect()
    } else {
        help_text(s.mode)
    };
    let key_w = 22;
    for (k, d) in entries {
        if k.is_empty() {
            lines.push(Line::raw(""));
            lines.push(Line::styled(d, theme::bold()));
            continue;
        }
        let room = width.saturating_sub(key_w + 2).max(20);
        for (i, part) in crate::conversation::wrap::wrap(&d, room)
            .into_iter()
            .enumerate()
        {
            let key = if i == 0 {
                fit(&k, key_w)
            } else {
                " ".repeat(key_w)
            };
            lines.push(Line::from(vec![
                Span::styled(format!("  {key}"), theme::next()),
                Span::raw(part),
            ]));
        }
    }
    let h = inner.height as usize;
    Paragraph::new(scrolled(lines, scroll, h)).render(inner, buf);
}

/// A full value or a detail page.
fn viewer(v: &Viewer, buf: &mut Buffer, area: Rect) {
    let r = centered(
        area,
        area.width.saturating_sub(8),
        area.height.saturating_sub(4),
    );
    super::viewer::render(v, buf, r);
}

/// Time travel: what replaying from the checkpoint will do.
fn confirm_travel(lines: &[String], buf: &mut Buffer, area: Rect) {
    let r = centered(area, 100, lines.len() as u16 + 4);
    let inner = frame(buf, r, "Time travel?", "y / Enter replay · n / Esc cancel");
    let ls: Vec<Line> = lines
        .iter()
        .map(|l| Line::raw(super::escape(l).into_owned()))
        .collect();
    Paragraph::new(ls)
        .wrap(Wrap { trim: false })
        .render(inner, buf);
}

/// The resume editor: one answer per pending interrupt, validated as you type.
fn resume(items: &[ResumeItem], sel: usize, error: &Option<String>, buf: &mut Buffer, area: Rect) {
    let filled = items
        .iter()
        .filter(|i| !i.input.text.trim().is_empty())
        .count();
    let h = (items.len() * 3 + 6) as u16;
    let r = centered(area, 96, h);
    let inner = frame(
        buf,
        r,
        &format!(
            "Resume — {} pending interrupt{}",
            items.len(),
            if items.len() == 1 { "" } else { "s" }
        ),
        "Enter send and run to the next pause · Tab next interrupt · Esc cancel",
    );
    let mut lines = vec![Line::styled(
        if items.len() == 1 {
            "Command(resume=JSON): the answer becomes interrupt()'s return value when the node re-runs".to_string()
        } else {
            format!(
                "Command(resume={{id: JSON}}): {filled} of {} answered — empty fields stay pending",
                items.len()
            )
        },
        theme::dim(),
    )];
    for (i, it) in items.iter().enumerate() {
        let active = i == sel;
        lines.push(Line::from(vec![
            Span::raw(if active { "▸ " } else { "  " }),
            Span::styled(format!("{} ", super::escape(&it.node)), theme::bold()),
            Span::styled(
                format!("{} ", super::escape(crate::text::head(&it.id, 8))),
                theme::dim(),
            ),
            Span::raw(super::escape(&it.preview).into_owned()),
        ]));
        let mut f = vec![Span::styled("    answer: ", theme::dim())];
        f.extend(field(&it.input, active));
        lines.push(Line::from(f));
        // exactly what Enter sends: JSON as typed, or a bare word as a JSON string
        let t = &it.input.text;
        lines.push(match (resume_answer(t), active) {
            (Ok(Some((v, true))), _) => Line::styled(
                format!(
                    "    ✓ not JSON: Enter sends the string {}",
                    super::escape(&serde_json::to_string(&v).unwrap_or_default())
                ),
                theme::ok(),
            ),
            (_, true) => validity(t, "(empty: this interrupt stays pending)"),
            (Ok(None), false) => Line::styled("    pending", theme::dim()),
            (Ok(Some(_)), false) => Line::styled("    ✓", theme::ok()),
            (Err(_), false) => Line::styled("    ✗ invalid JSON", theme::error()),
        });
    }
    if let Some(e) = error {
        lines.push(Line::styled(
            format!("✗ {}", super::escape(e)),
            theme::error(),
        ));
    }
    Paragraph::new(lines).render(inner, buf);
}

/// update_state: values as if the picked as_node had returned them.
#[allow(clippy::too_many_arguments)]
fn update_state(
    s: &AppState,
    label: &str,
    as_nodes: &[String],
    as_sel: usize,
    input: &TextInput,
    note: &str,
    error: &Option<String>,
    buf: &mut Buffer,
    area: Rect,
) {
    let r = centered(area, 96, 11);
    let inner = frame(
        buf,
        r,
        "Edit state — update_state",
        "Enter apply · ↑/↓ as_node · Esc cancel",
    );
    let mut picker = vec![Span::styled("as_node: ", theme::dim())];
    for (i, n) in as_nodes.iter().enumerate() {
        if i == as_sel {
            picker.push(Span::styled(format!("[{n}]"), theme::selected(true)));
        } else {
            picker.push(Span::styled(format!(" {n} "), theme::dim()));
        }
        picker.push(Span::raw(" "));
    }
    let mut f = vec![Span::styled("values:  ", theme::dim())];
    f.extend(field(input, true));
    let mut lines = vec![
        Line::raw(label.to_string()),
        Line::from(picker),
        Line::styled(
            format!(
                "state keys: {}",
                super::escape(&s.graph.state_keys.join(", "))
            ),
            theme::dim(),
        ),
        Line::from(f),
        validity(&input.text, "(type a JSON object of state keys)"),
    ];
    // what the proposal is, while it is untouched
    if !note.is_empty() && input.proposed {
        lines.push(Line::styled(super::escape(note).into_owned(), theme::dim()));
    }
    if let Some(e) = error {
        lines.push(Line::styled(
            format!("✗ {}", super::escape(e)),
            theme::error(),
        ));
    }
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .render(inner, buf);
}

/// A new thread: its name and its input.
fn new_thread(
    s: &AppState,
    name: &TextInput,
    input: &TextInput,
    which: usize,
    error: &Option<String>,
    buf: &mut Buffer,
    area: Rect,
) {
    let r = centered(area, 90, 9);
    let inner = frame(
        buf,
        r,
        "New thread",
        "Enter create · Tab switch field · Esc cancel",
    );
    let mut n = vec![Span::styled("thread: ", theme::dim())];
    n.extend(field(name, which == 0));
    let mut i = vec![Span::styled("input:  ", theme::dim())];
    i.extend(field(input, which == 1));
    let mut lines = vec![
        Line::from(n),
        Line::from(i),
        if input.proposed && which == 1 {
            Line::styled(
                "    ✓ valid JSON · typing replaces it, ← → edit it",
                theme::ok(),
            )
        } else {
            validity(&input.text, "(type the input as JSON)")
        },
        if s.threads.iter().any(|t| t.id == name.text.trim()) {
            Line::styled(
                format!(
                    "thread {} exists: a new turn on it — graph.invoke(input, {{thread_id}}) writes the turn's input checkpoint; n steps it",
                    super::escape(name.text.trim())
                ),
                theme::dim(),
            )
        } else {
            Line::styled(
                "graph.invoke(input, {thread_id}) — writes the input checkpoint; n steps from it",
                theme::dim(),
            )
        },
    ];
    if let Some(e) = error {
        lines.push(Line::styled(
            format!("✗ {}", super::escape(e)),
            theme::error(),
        ));
    }
    Paragraph::new(lines).render(inner, buf);
}

/// `M`: the next human message of a `messages` graph.
fn turn(s: &AppState, input: &TextInput, error: &Option<String>, buf: &mut Buffer, area: Rect) {
    let r = centered(area, 90, 7);
    let title = format!(
        "Message to thread {}",
        super::escape(s.thread.as_deref().unwrap_or("-"))
    );
    let inner = frame(buf, r, &title, "Enter send · Esc cancel");
    let mut m = vec![Span::styled("you: ", theme::dim())];
    m.extend(field(input, true));
    let mut lines = vec![
        Line::from(m),
        Line::styled(
            "a human message: invoke({\"messages\": [{\"role\": \"user\", \"content\": …}]}, config)",
            theme::dim(),
        ),
        Line::styled(
            "writes the turn's input checkpoint: n steps it, c runs it",
            theme::dim(),
        ),
    ];
    if let Some(e) = error {
        lines.push(Line::styled(
            format!("✗ {}", super::escape(e)),
            theme::error(),
        ));
    }
    Paragraph::new(lines).render(inner, buf);
}

/// The thread picker.
fn thread_picker(s: &AppState, sel: usize, buf: &mut Buffer, area: Rect) {
    let h = (s.threads.len() as u16 + 3).min(area.height.saturating_sub(2));
    let r = centered(area, 80, h);
    let inner = frame(
        buf,
        r,
        &if s.threads_more {
            format!(
                "Threads — first {} by id (more load as you move down; G loads all)",
                s.threads.len()
            )
        } else {
            format!("Threads — {}", s.threads.len())
        },
        "Enter open · j/k move · Esc cancel",
    );
    let height = inner.height as usize;
    let start = super::window_start(sel, height.saturating_sub(1));
    let mut lines = vec![Line::styled(
        format!("  {} {:>11}  latest", fit("thread", 24), "checkpoints"),
        theme::dim(),
    )];
    for (i, t) in s
        .threads
        .iter()
        .enumerate()
        .skip(start)
        .take(height.saturating_sub(1))
    {
        let cur = s.thread.as_deref() == Some(t.id.as_str());
        let l = Line::raw(format!(
            "{}{} {:>11}  {}{}",
            if i == sel { "▸ " } else { "  " },
            crate::text::fit(&crate::keys::key_label(&t.id), 24),
            t.checkpoints,
            short_id(&t.latest),
            if cur { "  (shown)" } else { "" }
        ));
        lines.push(if i == sel {
            l.style(theme::selected(true))
        } else {
            l
        });
    }
    Paragraph::new(lines).render(inner, buf);
}

/// The `:` command line or the `/` search prompt, at the bottom.
fn prompt(command: bool, input: &TextInput, buf: &mut Buffer, area: Rect) {
    let prefix = if command { ":" } else { "/" };
    let r = Rect::new(
        area.x,
        area.y + area.height.saturating_sub(3),
        area.width,
        3.min(area.height),
    );
    let hint = if prefix == ":" {
        "Enter run · Esc cancel · :help lists commands"
    } else {
        "Enter search values and pending writes · Esc cancel"
    };
    let inner = frame(
        buf,
        r,
        if prefix == ":" { "command" } else { "search" },
        hint,
    );
    let mut spans = vec![Span::styled(prefix, theme::bold())];
    spans.extend(field(input, true));
    Paragraph::new(Line::from(spans)).render(inner, buf);
}

/// `d`: the selected checkpoint against the mark.
fn diff(d: &DiffView, buf: &mut Buffer, area: Rect) {
    let r = centered(
        area,
        area.width.saturating_sub(2),
        area.height.saturating_sub(2),
    );
    let inner = frame(buf, r, "diff", "j/k scroll · Esc close");
    super::diff::render(d, buf, inner);
}

/// `w`: the writes that produced a key.
fn why(w: &WhyView, buf: &mut Buffer, area: Rect) {
    let r = centered(
        area,
        area.width.saturating_sub(2),
        area.height.saturating_sub(2),
    );
    let inner = frame(
        buf,
        r,
        "why",
        "j/k move · Enter go to checkpoint · Esc close",
    );
    super::why::render(w, buf, inner);
}

//! Human-readable output: aligned columns, colour only on a TTY and without NO_COLOR.

use crate::conversation::Tone;
use crate::inspect::Thread;
use crate::snapshot::{Snapshot, TaskResult, WriteKind};
use crate::store::{key_label, ThreadSummary};
use crate::text::{escape, pad, short_id};
use crate::value::{to_view, ViewOptions};
use crossterm::style::{Color, Stylize};
use std::io::{IsTerminal, Write};

pub fn color_enabled() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stdout().is_terminal()
}

fn paint(s: &str, c: Color, color: bool) -> String {
    if color {
        s.with(c).to_string()
    } else {
        s.to_string()
    }
}

pub fn bold(s: &str, color: bool) -> String {
    if color {
        s.bold().to_string()
    } else {
        s.to_string()
    }
}

pub fn dim(s: &str, color: bool) -> String {
    if color {
        s.dark_grey().to_string()
    } else {
        s.to_string()
    }
}

/// The colour of each write type (shared with the TUI theme's meaning).
pub fn kind_color(k: WriteKind) -> Color {
    match k {
        WriteKind::Interrupt => Color::Magenta,
        WriteKind::Resume => Color::Green,
        WriteKind::Error => Color::Red,
        WriteKind::Scheduled => Color::Blue,
        WriteKind::Write => Color::Reset,
    }
}

/// One-line preview of a JSON view, escaped and cut at `max` columns: conversations
/// summarised, typed leaves tagged (see [`crate::present`]).
pub fn preview(j: &serde_json::Value, max: usize) -> String {
    crate::present::line(j, max)
}

/// LangGraph's own `get_state` of a checkpoint superstep does not read itself (a pickled one):
/// its values, one key a line, and next.
pub fn live_state(
    values: &serde_json::Value,
    next: &[String],
    color: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(
        out,
        "{}",
        bold(
            "values (LangGraph's get_state, through the bridge: the checkpoint is pickled)",
            color
        )
    )?;
    if let Some(m) = values.as_object() {
        for (k, v) in m {
            writeln!(out, "  {}  {}", escape(k), escape(&v.to_string()))?;
        }
    }
    let next = if next.is_empty() {
        "(none)".to_string()
    } else {
        next.join(", ")
    };
    writeln!(out, "next   {}", escape(&next))
}

/// The THREAD column's width for a table whose (first page of) threads is `threads`: the
/// longest id, at least 24 and at most [`THREAD_COLUMN_MAX`] columns — a longer id is cut with
/// `…` there, so no id (a 10 KB one) pushes the other columns out of line.
pub fn thread_column(threads: &[ThreadSummary]) -> usize {
    threads
        .iter()
        .map(|t| crate::text::width(&key_label(&t.thread_id)))
        .max()
        .unwrap_or(0)
        .clamp(24, THREAD_COLUMN_MAX)
}

pub const THREAD_COLUMN_MAX: usize = 64;

pub fn threads_header(w: usize, color: bool, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "{}",
        bold(
            &format!(
                "{}  {:>11}  {:>9}  {}",
                pad("THREAD", w),
                "CHECKPOINTS",
                "SUBGRAPH",
                "LATEST"
            ),
            color
        )
    )
}

/// One row of the threads table; whether its id had to be cut to fit `w` columns.
pub fn thread_line(
    t: &ThreadSummary,
    w: usize,
    _color: bool,
    out: &mut dyn Write,
) -> std::io::Result<bool> {
    let label = key_label(&t.thread_id);
    let cut = crate::text::width(&label) > w;
    writeln!(
        out,
        "{}  {:>11}  {:>9}  {}",
        crate::text::fit(&label, w),
        t.checkpoints,
        t.subgraph_checkpoints,
        escape(&t.latest_checkpoint_id)
    )?;
    Ok(cut)
}

/// Said under a threads table whose long ids were cut.
pub fn cut_ids_note(n: usize, color: bool, out: &mut dyn Write) -> std::io::Result<()> {
    if n == 0 {
        return Ok(());
    }
    writeln!(
        out,
        "{}",
        dim(
            &format!(
                "note: {n} thread id{} longer than {THREAD_COLUMN_MAX} columns cut with …: `threads --json` lists {} in full",
                if n == 1 { " is" } else { "s are" },
                if n == 1 { "it" } else { "them" }
            ),
            color
        )
    )
}

pub fn history_header(th: &Thread, color: bool, out: &mut dyn Write) -> std::io::Result<()> {
    let limits = th.limitations();
    let ns = if th.ns.is_empty() {
        String::new()
    } else {
        format!("  ns {}", escape(&th.ns))
    };
    writeln!(
        out,
        "{}",
        bold(&format!("thread {}{ns}", key_label(&th.thread_id)), color)
    )?;
    limitations(&limits, color, out)?;
    writeln!(
        out,
        "{}",
        bold(
            &format!(
                "{:>5}  {}  {}  {}  {}  {}",
                "STEP",
                pad("SOURCE", 6),
                pad("CHECKPOINT", 36),
                pad("PARENT", 21),
                pad("NEXT", 16),
                "WRITES / INTERRUPTS"
            ),
            color
        )
    )
}

/// What holds for the whole listing (the DB-wide limitation without the graph), once.
pub fn limitations(
    l: &[crate::snapshot::Warning],
    color: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    for w in l {
        writeln!(out, "{}", dim(&format!("note: {}", w.message), color))?;
    }
    Ok(())
}

pub fn history_line(s: &Snapshot, color: bool, out: &mut dyn Write) -> std::io::Result<()> {
    let source = s
        .metadata
        .get("source")
        .and_then(|v| v.as_str())
        .unwrap_or("?");
    let mut counts: Vec<String> = Vec::new();
    for k in [
        WriteKind::Interrupt,
        WriteKind::Resume,
        WriteKind::Error,
        WriteKind::Write,
    ] {
        let n = s.pending_writes.iter().filter(|w| w.kind == k).count();
        if n > 0 {
            counts.push(paint(&format!("{n} {}", k.label()), kind_color(k), color));
        }
    }
    let next = if s.next.is_empty() {
        "-".to_string()
    } else {
        escape(&s.next.join(",")).into_owned()
    };
    writeln!(
        out,
        "{:>5}  {}  {}  {}  {}  {}",
        s.step,
        pad(&escape(source), 6),
        escape(&s.checkpoint_id),
        pad(
            &s.parent_checkpoint_id
                .as_deref()
                .map(short_id)
                .unwrap_or_else(|| "-".into()),
            21
        ),
        pad(&next, 16),
        counts.join(" ")
    )
}

/// How the human `show` lays values out.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub color: bool,
    /// Columns to wrap conversations at.
    pub width: usize,
    /// Messages of a conversation printed (the newest ones).
    pub messages: usize,
}

impl Layout {
    /// The terminal's width when stdout is one, else 100 columns.
    pub fn for_stdout(color: bool) -> Layout {
        let width = if std::io::stdout().is_terminal() {
            crossterm::terminal::size()
                .map(|(w, _)| w as usize)
                .unwrap_or(100)
        } else {
            100
        };
        Layout {
            color,
            width: width.clamp(40, 200),
            messages: 6,
        }
    }
}

pub fn snapshot(s: &Snapshot, color: bool, out: &mut dyn Write) -> std::io::Result<()> {
    snapshot_with(s, &Layout::for_stdout(color), out)
}

/// The conversation tones in terminal colours (the TUI's theme, as crossterm colours).
fn tone_color(t: Tone) -> Option<Color> {
    Some(match t {
        Tone::Plain => return None,
        Tone::Dim => Color::DarkGrey,
        Tone::Human => Color::Green,
        Tone::Ai => Color::Cyan,
        Tone::Tool => Color::Magenta,
        Tone::System | Tone::OtherRole => Color::Blue,
        Tone::Call => Color::Yellow,
        Tone::Ok => Color::Green,
        Tone::Error => Color::Red,
    })
}

/// A message list under its key: the summary line, then the newest messages as a conversation.
fn conversation_value(
    key: &str,
    w: usize,
    msgs: &[crate::conversation::Message],
    o: &Layout,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let indent = 2 + w + 2;
    writeln!(
        out,
        "  {}  {}",
        pad(key, w),
        crate::conversation::list_line(msgs, o.width.saturating_sub(indent))
    )?;
    let first = msgs.len().saturating_sub(o.messages);
    if first > 0 {
        writeln!(
            out,
            "{}{}",
            " ".repeat(indent),
            dim(
                &format!(
                    "… {first} earlier message{} (--messages all prints every one)",
                    if first == 1 { "" } else { "s" }
                ),
                o.color
            )
        )?;
    }
    let lines = crate::conversation::render(
        &msgs[first..],
        first,
        crate::conversation::Options {
            width: o.width.saturating_sub(indent),
            details: false,
            numbered: true,
        },
    );
    for l in lines {
        let mut text = String::new();
        for sg in &l.segs {
            // escaped when the messages were read (conversation::message)
            match (o.color, tone_color(sg.tone)) {
                (true, Some(c)) => text.push_str(&sg.text.as_str().with(c).to_string()),
                _ => text.push_str(&sg.text),
            }
        }
        writeln!(out, "{}{}", " ".repeat(indent), text.trim_end())?;
    }
    Ok(())
}

pub fn snapshot_with(s: &Snapshot, o: &Layout, out: &mut dyn Write) -> std::io::Result<()> {
    let color = o.color;
    let opts = ViewOptions::default();
    let source = s
        .metadata
        .get("source")
        .and_then(|v| v.as_str())
        .unwrap_or("?");
    let ns = if s.checkpoint_ns.is_empty() {
        String::new()
    } else {
        format!("  ns {}", escape(&s.checkpoint_ns))
    };
    writeln!(
        out,
        "{}",
        bold(
            &format!(
                "thread {}{ns}  checkpoint {}  step {} ({}){}",
                key_label(&s.thread_id),
                escape(&s.checkpoint_id),
                s.step,
                escape(source),
                if s.live { "  [live]" } else { "" }
            ),
            color
        )
    )?;
    writeln!(out, "created  {}", escape(&s.created_at))?;
    if let Some(f) = &s.format {
        writeln!(out, "format   {}", escape(f))?;
    }
    writeln!(
        out,
        "parent   {}",
        escape(s.parent_checkpoint_id.as_deref().unwrap_or("-"))
    )?;
    writeln!(
        out,
        "metadata {}",
        preview(&serde_json::Value::Object(s.metadata.clone()), 2000)
    )?;
    for l in &s.limitations {
        writeln!(out, "{}", dim(&format!("note     {}", l.message), color))?;
    }
    writeln!(out, "{}", bold("values", color))?;
    let w = s
        .values
        .iter()
        .map(|(k, _)| crate::text::width(&escape(k)))
        .max()
        .unwrap_or(0);
    if s.values.is_empty() {
        writeln!(out, "  (none)")?;
    }
    for (k, v) in &s.values {
        let view = to_view(v, opts);
        match crate::conversation::messages_in(&view) {
            Some(msgs) if o.messages > 0 => conversation_value(&escape(k), w, &msgs, o, out)?,
            _ => writeln!(out, "  {}  {}", pad(&escape(k), w), preview(&view, 2000))?,
        }
    }
    let next = if s.next.is_empty() {
        "(none: nothing to run)".to_string()
    } else {
        escape(&s.next.join(", ")).into_owned()
    };
    writeln!(out, "{} {next}", bold("next  ", color))?;
    if !s.tasks.is_empty() {
        writeln!(out, "{}", bold("tasks", color))?;
        let nw = s
            .tasks
            .iter()
            .map(|t| crate::text::width(&escape(&t.name)))
            .max()
            .unwrap_or(4)
            .max(4);
        for t in &s.tasks {
            let status = if t.error.is_some() && !t.finished {
                paint("error", Color::Red, color)
            } else if !t.interrupts.is_empty() && !t.finished {
                paint("interrupted", Color::Magenta, color)
            } else if t.finished {
                paint("done", Color::Green, color)
            } else {
                "pending".to_string()
            };
            let mut extra = String::new();
            if let Some(e) = &t.error {
                extra.push_str(&format!("  error={}", preview(&e.view(opts), 120)));
            }
            // what the task wrote, key by key, messages as messages (`wrote messages: Tool
            // get_weather ✓ "…"`), or what a functional task returned
            match &t.result {
                Some(TaskResult::Return(v)) => {
                    extra.push_str(&format!("  returned {}", preview(&to_view(v, opts), 120)));
                }
                Some(TaskResult::Writes(w)) => {
                    let j = serde_json::Value::Object(
                        w.iter()
                            .map(|(k, v)| (k.clone(), to_view(v, opts)))
                            .collect(),
                    );
                    extra.push_str(&format!(
                        "  wrote {}",
                        crate::present::written_line(&j, 120)
                    ));
                }
                None => {}
            }
            writeln!(
                out,
                "  {}  {}  {}{extra}",
                escape(&t.id),
                pad(&escape(&t.name), nw),
                pad(&status, 11)
            )?;
        }
    }
    let interrupts: Vec<_> = s.interrupts().collect();
    if !interrupts.is_empty() {
        writeln!(out, "{}", bold("interrupts", color))?;
        for i in interrupts {
            writeln!(
                out,
                "  {}  {}",
                paint(
                    if i.id.is_empty() {
                        "(no id)".into()
                    } else {
                        escape(&i.id)
                    }
                    .as_ref(),
                    Color::Magenta,
                    color
                ),
                preview(&to_view(&i.value, opts), 200)
            )?;
        }
    }
    if !s.pending_writes.is_empty() {
        writeln!(out, "{}", bold("pending writes", color))?;
        let cw = s
            .pending_writes
            .iter()
            .map(|p| crate::text::width(&escape(&p.channel)))
            .max()
            .unwrap_or(7);
        for p in &s.pending_writes {
            let node = s
                .tasks
                .iter()
                .find(|t| t.id == p.task_id)
                .map(|t| t.name.clone())
                .unwrap_or_else(|| {
                    if p.task_id == crate::ids::NULL_TASK_ID {
                        "(input)".into()
                    } else {
                        p.task_path.clone()
                    }
                });
            writeln!(
                out,
                "  {}  {}  {:>3}  {}  {}  {}",
                short_id(&p.task_id),
                pad(&escape(&node), 12),
                p.idx,
                pad(&escape(&p.channel), cw),
                paint(&pad(p.kind.label(), 9), kind_color(p.kind), color),
                write_preview(p, s.format.is_some(), opts)
            )?;
        }
    }
    if !s.warnings.is_empty() {
        writeln!(
            out,
            "{}",
            paint("warnings (DB-only derivation)", Color::Yellow, color)
        )?;
        for w in &s.warnings {
            writeln!(out, "  {}: {}", escape(&w.field), escape(&w.message))?;
        }
    }
    Ok(())
}

/// An INTERRUPT write reads better as its questions and ids than as raw Interrupt objects.
fn write_preview(p: &crate::snapshot::PendingWrite, legacy: bool, opts: ViewOptions) -> String {
    if p.kind == WriteKind::Interrupt {
        // LangGraph 0.2 wrote one Interrupt (with no id) per write, 1.x a list
        let items = match p.value.as_value() {
            Some(rmpv::Value::Array(items)) => items.clone(),
            Some(v) => vec![v.clone()],
            None => Vec::new(),
        };
        {
            let parts: Vec<String> = items
                .iter()
                .filter_map(crate::value::Interrupt::from_value)
                .map(|i| match legacy {
                    true => preview(&to_view(&i.value, opts), 60),
                    false => format!(
                        "{} (id {})",
                        preview(&to_view(&i.value, opts), 60),
                        escape(crate::text::head(&i.id, 8))
                    ),
                })
                .collect();
            if parts.len() == items.len() && !parts.is_empty() {
                return parts.join("; ");
            }
        }
    }
    crate::present::written_value(&p.value.view(opts), 100)
}

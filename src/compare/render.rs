//! A [`CheckpointDiff`] as rows: a mark, a label (the key or path), and what each side holds,
//! one line each, escaped for the terminal. The CLI prints them unified (`a → b`); the TUI lays
//! them side by side when the terminal is wide enough.

use super::diff::{CheckpointDiff, KeyChange, SetChange, Side};
use super::jsondiff::{Op, PathChange};
use super::messages::MessageChange;
use crate::conversation::{message_line, Message};
use crate::present::line;
use crate::text::{escape, short_id};
use serde_json::Value as Json;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// A section title (`values`, `next`, ...).
    Heading,
    /// Only the second side has it.
    Added,
    /// Only the first side has it.
    Removed,
    /// Both have it, differently.
    Changed,
    /// A line of context (a message list's counts).
    Note,
}

impl Mark {
    pub fn sign(self) -> &'static str {
        match self {
            Mark::Added => "+",
            Mark::Removed => "-",
            Mark::Changed => "~",
            Mark::Heading | Mark::Note => " ",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub mark: Mark,
    pub label: String,
    pub a: String,
    pub b: String,
}

fn row(mark: Mark, label: impl Into<String>, a: String, b: String) -> Row {
    Row {
        mark,
        label: label.into(),
        a,
        b,
    }
}

/// `t1@3 · step 3 loop · 1f0a…`: one side, for headings.
pub fn side_line(s: &Side) -> String {
    let mut out = escape(&s.thread_id).into_owned();
    if !s.checkpoint_ns.is_empty() {
        out.push_str(&format!(" [{}]", escape(&s.checkpoint_ns)));
    }
    if let Some(step) = s.step {
        out.push_str(&format!(" · step {step}"));
    }
    if let Some(src) = &s.source {
        out.push_str(&format!(" {}", escape(src)));
    }
    out.push_str(&format!(" · {}", short_id(&s.checkpoint_id)));
    out
}

fn path_rows(key: &str, paths: &[PathChange], max: usize, out: &mut Vec<Row>) {
    for p in paths {
        let label = format!("{}{}", escape(key), escape(&p.path));
        let v = |j: &Option<Json>| j.as_ref().map(|j| line(j, max)).unwrap_or_default();
        let mark = match p.op {
            Op::Added => Mark::Added,
            Op::Removed => Mark::Removed,
            Op::Changed => Mark::Changed,
        };
        out.push(row(mark, label, v(&p.a), v(&p.b)));
    }
}

fn msg(j: &Json, max: usize) -> String {
    match Message::from_view(j) {
        Some(m) => message_line(&m, max),
        None => line(j, max),
    }
}

fn call(j: &Json, max: usize) -> String {
    let name = j.get("name").and_then(Json::as_str).unwrap_or("?");
    let args = j.get("args").map(|a| line(a, max)).unwrap_or_default();
    crate::conversation::wrap::cut(&format!("{} {args}", escape(name)), max)
}

fn message_rows(key: &str, changes: &[MessageChange], max: usize, out: &mut Vec<Row>) {
    let (mut add, mut del, mut ed) = (0, 0, 0);
    for c in changes {
        match c {
            MessageChange::Added { .. } => add += 1,
            MessageChange::Removed { .. } => del += 1,
            MessageChange::Edited { .. } => ed += 1,
        }
    }
    let mut counts = Vec::new();
    if add > 0 {
        counts.push(format!("+{add} added"));
    }
    if del > 0 {
        counts.push(format!("-{del} removed"));
    }
    if ed > 0 {
        counts.push(format!("~{ed} edited"));
    }
    out.push(row(
        Mark::Note,
        escape(key),
        String::new(),
        format!("messages: {}", counts.join(", ")),
    ));
    let k = escape(key);
    for c in changes {
        match c {
            MessageChange::Added { index, message } => out.push(row(
                Mark::Added,
                format!("{k}[{index}]"),
                String::new(),
                msg(message, max),
            )),
            MessageChange::Removed { index, message } => out.push(row(
                Mark::Removed,
                format!("{k}[{index}]"),
                msg(message, max),
                String::new(),
            )),
            MessageChange::Edited {
                index_a,
                index_b,
                fields,
                tool_calls,
                a,
                b,
                ..
            } => {
                let at = if index_a == index_b {
                    format!("[{index_b}]")
                } else {
                    format!("[{index_a}→{index_b}]")
                };
                out.push(row(
                    Mark::Changed,
                    format!("{k}{at} {}", escape(&fields.join(","))),
                    msg(a, max),
                    msg(b, max),
                ));
                if let Some(tc) = tool_calls {
                    for c in &tc.removed {
                        out.push(row(
                            Mark::Removed,
                            format!("{k}{at} tool call"),
                            call(c, max),
                            String::new(),
                        ));
                    }
                    for [x, y] in &tc.changed {
                        out.push(row(
                            Mark::Changed,
                            format!("{k}{at} tool call"),
                            call(x, max),
                            call(y, max),
                        ));
                    }
                    for c in &tc.added {
                        out.push(row(
                            Mark::Added,
                            format!("{k}{at} tool call"),
                            String::new(),
                            call(c, max),
                        ));
                    }
                }
            }
        }
    }
}

fn set_rows(label: &str, s: &SetChange, show: impl Fn(&Json) -> String, out: &mut Vec<Row>) {
    for x in &s.removed {
        out.push(row(Mark::Removed, label, show(x), String::new()));
    }
    for x in &s.added {
        out.push(row(Mark::Added, label, String::new(), show(x)));
    }
}

/// Every row of a diff; values are cut at `max` columns.
pub fn rows(d: &CheckpointDiff, max: usize) -> Vec<Row> {
    let mut out = Vec::new();
    if d.same {
        out.push(row(
            Mark::Heading,
            "same",
            String::new(),
            "values, next, tasks, interrupts and pending writes are equal".into(),
        ));
        return out;
    }
    if !d.values.is_empty() {
        out.push(row(Mark::Heading, "values", String::new(), String::new()));
    }
    for c in &d.values {
        match c {
            KeyChange::Added { key, b } => {
                out.push(row(Mark::Added, escape(key), String::new(), line(b, max)))
            }
            KeyChange::Removed { key, a } => {
                out.push(row(Mark::Removed, escape(key), line(a, max), String::new()))
            }
            KeyChange::Changed { key, paths } => path_rows(key, paths, max, &mut out),
            KeyChange::Messages { key, messages } => message_rows(key, messages, max, &mut out),
        }
    }
    if let Some(n) = &d.next {
        let names = |j: &Json| {
            let v: Vec<String> = j
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(Json::as_str)
                        .map(|s| escape(s).into_owned())
                        .collect()
                })
                .unwrap_or_default();
            if v.is_empty() {
                "(none)".to_string()
            } else {
                v.join(", ")
            }
        };
        out.push(row(Mark::Heading, "next", String::new(), String::new()));
        out.push(row(Mark::Changed, "next", names(&n["a"]), names(&n["b"])));
    }
    if !d.tasks.is_empty() {
        out.push(row(Mark::Heading, "tasks", String::new(), String::new()));
        set_rows(
            "task",
            &d.tasks,
            |t| {
                let mut s = escape(t["name"].as_str().unwrap_or("?")).into_owned();
                if t["error"].is_string() || t["error"].is_object() {
                    s.push_str(" (error)");
                }
                if t["interrupts"].as_array().is_some_and(|a| !a.is_empty()) {
                    s.push_str(" (interrupted)");
                }
                if let Some(r) = t.get("result").filter(|r| !r.is_null()) {
                    s.push_str(&format!(" → {}", crate::present::written_line(r, max)));
                }
                s
            },
            &mut out,
        );
    }
    if !d.interrupts.is_empty() {
        out.push(row(
            Mark::Heading,
            "interrupts",
            String::new(),
            String::new(),
        ));
        set_rows("interrupt", &d.interrupts, |v| line(v, max), &mut out);
    }
    if !d.pending_writes.is_empty() {
        out.push(row(
            Mark::Heading,
            "pending writes",
            String::new(),
            String::new(),
        ));
        set_rows(
            "write",
            &d.pending_writes,
            |w| {
                format!(
                    "{} → {} {}",
                    escape(w["node"].as_str().unwrap_or("?")),
                    escape(w["channel"].as_str().unwrap_or("?")),
                    crate::present::written_value(&w["value"], max)
                )
            },
            &mut out,
        );
    }
    out
}

/// One provenance contribution as text cells (escaped): who wrote it (`agent`, `input
/// (__start__)`, `update_state`…), the task (`1f0a…9c3a #0`, or `(no write row)`), the value
/// written cut at `max` columns, and the list items it put there (`  → [3, 4]`, or empty).
pub fn contribution_cells(
    c: &super::why::Contribution,
    max: usize,
) -> (String, String, String, String) {
    let (who, task, what) = match &c.write {
        Some(w) => (
            super::origin::who(w),
            format!("{} #{}", short_id(&w.task_id), w.idx),
            crate::present::written_value(&w.value, max),
        ),
        None => (
            c.origin.label().to_string(),
            "(no write row)".into(),
            format!(
                "the value came with checkpoint {}",
                short_id(&c.checkpoint_id)
            ),
        ),
    };
    let ix = if c.indexes.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = c.indexes.iter().map(|i| i.to_string()).collect();
        format!("  → [{}]", list.join(", "))
    };
    (escape(&who).into_owned(), task, what, ix)
}

/// The rows as unified text lines (the CLI): `~ label  a → b`, `+ label  b`, `- label  a`.
pub fn unified(rows: &[Row]) -> Vec<String> {
    let w = rows
        .iter()
        .filter(|r| r.mark != Mark::Heading)
        .map(|r| crate::text::width(&r.label))
        .max()
        .unwrap_or(0)
        .min(28);
    rows.iter()
        .map(|r| match r.mark {
            Mark::Heading if r.a.is_empty() && r.b.is_empty() => r.label.clone(),
            Mark::Heading => format!("{}: {}", r.label, r.b),
            Mark::Added => format!("  + {}  {}", crate::text::pad(&r.label, w), r.b),
            Mark::Removed => format!("  - {}  {}", crate::text::pad(&r.label, w), r.a),
            Mark::Changed => format!("  ~ {}  {} → {}", crate::text::pad(&r.label, w), r.a, r.b),
            Mark::Note => format!("    {}  {}", crate::text::pad(&r.label, w), r.b),
        })
        .collect()
}

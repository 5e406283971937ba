//! The value viewer: Enter opens it on the selected row of the focused pane — a node, a
//! checkpoint, a value (with its diff against the parent), a task (with its last run), a write,
//! an interrupt — and its keys move, fold, search and copy inside it.

use super::say;
use crate::app::format::preview;
use crate::app::state::*;
use crate::app::viewer::{Section, Viewer};
use serde_json::Value as Json;

/// What the viewer will show, section by section.
#[derive(Default)]
struct Doc {
    sections: Vec<Section>,
}

impl Doc {
    fn line(&mut self, l: String) {
        match self.sections.last_mut() {
            Some(Section::Text(t)) => t.push(l),
            _ => self.sections.push(Section::Text(vec![l])),
        }
    }
    fn lines(&mut self, ls: impl IntoIterator<Item = String>) {
        for l in ls {
            self.line(l);
        }
    }
    fn value(&mut self, label: &str, value: Json) {
        self.sections.push(Section::Value {
            label: label.to_string(),
            value,
        });
    }
}

pub(super) fn open_selected(s: &mut AppState) {
    let p = s.focus;
    let i = s.selected(p);
    let mut doc = Doc::default();
    let title = match p {
        Pane::Graph => {
            let Some(n) = s.selected_node().cloned() else {
                if s.mode == Mode::Debug {
                    let text = format!(
                        "* row: b/B toggle break-before/after on every node (now: before {}, after {})",
                        if s.breaks_before.all { "on" } else { "off" },
                        if s.breaks_after.all { "on" } else { "off" }
                    );
                    say(s, Level::Info, text);
                }
                return;
            };
            doc.lines([
                format!("node {}", n.name),
                format!(
                    "  edges to: {}",
                    if n.successors.is_empty() {
                        "-".into()
                    } else {
                        n.successors.join(", ")
                    }
                ),
                format!(
                    "  break-before: {}   break-after: {}",
                    if s.breaks_before.matches(&n.name) {
                        "on"
                    } else {
                        "off"
                    },
                    if s.breaks_after.matches(&n.name) {
                        "on"
                    } else {
                        "off"
                    }
                ),
            ]);
            if let Some(c) = &s.current {
                for t in c.tasks.iter().filter(|t| t.name == n.name) {
                    doc.line(format!("  task {} {}", t.id, t.status.label()));
                }
            }
            format!("Node {}", n.name)
        }
        Pane::History => {
            let Some(h) = s.history.get(i) else { return };
            doc.lines([
                format!("checkpoint {}", h.id),
                format!("parent     {}", h.parent.as_deref().unwrap_or("-")),
                format!("step       {}", h.step),
                format!("source     {}", h.source),
                format!("created    {}", h.created_at),
                format!(
                    "next       {}",
                    if h.next.is_empty() {
                        "-".to_string()
                    } else {
                        h.next.join(", ")
                    }
                ),
            ]);
            for (id, n, v) in &h.pending {
                doc.line(format!("interrupt  {id} in {n}: {}", preview(v, 200)));
            }
            for (n, e) in &h.errored {
                doc.line(format!("error      in {n}: {e}"));
            }
            format!("Checkpoint step {}", h.step)
        }
        Pane::State => {
            let Some(v) = s.current.as_ref().and_then(|c| c.values.get(i)) else {
                return;
            };
            doc.line(
                match &v.diff {
                    Diff::Same => "unchanged since the parent checkpoint",
                    Diff::Added => "added at this checkpoint",
                    Diff::Changed { delta: Some(d), .. } => d,
                    Diff::Changed { .. } => "changed at this checkpoint",
                    Diff::Removed => "removed at this checkpoint",
                    Diff::NoParent => "first checkpoint (no parent)",
                }
                .to_string(),
            );
            // what may differ from LangGraph's view of this key
            if let Some(c) = &s.current {
                for w in &c.snapshot.warnings {
                    if w.field == format!("values.{}", v.key) || w.field == "values" {
                        doc.line(format!("⚠ {}", w.message));
                    }
                }
            }
            if v.diff != Diff::Removed {
                doc.value(&v.key, v.view.clone());
            }
            if let (Some(w), Diff::Changed { .. } | Diff::Removed) = (&v.was, &v.diff) {
                doc.line(String::new());
                doc.value("was", w.clone());
            }
            format!("Value {}", v.key)
        }
        Pane::Tasks => {
            let Some(t) = s.current.as_ref().and_then(|c| c.tasks.get(i)).cloned() else {
                return;
            };
            doc.lines([
                format!("task   {}", t.id),
                format!("node   {}", t.name),
                format!("status {}", t.status.label()),
            ]);
            if let Some(ns) = &t.ns {
                doc.line(format!("subgraph namespace {ns} (s shows its checkpoints)"));
            }
            if !t.view.is_null() {
                doc.value(
                    match t.status {
                        TaskStatus::Error => "error",
                        TaskStatus::Interrupted => "interrupts",
                        _ => "result",
                    },
                    t.view.clone(),
                );
            }
            if let Some(tb) = super::traceback::of_task(s, &t.id) {
                doc.line(String::new());
                doc.line("traceback (the app's own frame first):".into());
                doc.lines(tb.lines().map(|l| format!("  {l}")));
            }
            if let Some(c) = &s.current {
                doc.lines(crate::app::calls::task_lines(&c.calls, &t.id));
            }
            if let Some(run) = &s.run {
                for st in &run.steps {
                    for tr in st.tasks.iter().filter(|x| x.id == t.id) {
                        doc.line(String::new());
                        doc.line(format!(
                            "last {} · step {}: {}",
                            run.what, st.step, tr.outcome
                        ));
                        doc.lines(run_task_lines(tr));
                        for d in &tr.drift {
                            doc.line(format!(
                                "APPROVAL DRIFT at interrupt #{} ({})",
                                d.index, d.interrupt_id
                            ));
                            doc.line("  the human answered this payload:".into());
                            doc.value("answered", d.answered.clone());
                            doc.line("  the re-executed node produced:".into());
                            doc.value("now", d.now.clone());
                            doc.line(format!(
                                "  and received the answer {}",
                                preview(&d.answer, 200)
                            ));
                        }
                    }
                }
            }
            format!("Task {}", t.name)
        }
        Pane::Writes => {
            let Some(w) = s.current.as_ref().and_then(|c| c.writes.get(i)) else {
                return;
            };
            doc.lines([
                format!("task    {}", w.task_id),
                format!("node    {}", w.node),
                format!("idx     {}", w.idx),
                format!("channel {}", w.channel),
                format!("type    {}", w.kind.label()),
            ]);
            doc.value(&w.channel, w.view.clone());
            format!("Write {} {}", w.kind.label(), w.channel)
        }
        Pane::Interrupts => {
            let Some(r) = s.current.as_ref().and_then(|c| c.interrupts.get(i)) else {
                return;
            };
            doc.lines([
                format!("interrupt {}", r.id),
                format!("node      {}", r.node),
                format!("task      {}", r.task_id),
                format!(
                    "status    {}",
                    if r.pending {
                        "pending (r answers it)"
                    } else {
                        "answered"
                    }
                ),
            ]);
            doc.value("value", r.value.clone());
            if let Some(a) = &r.answer {
                doc.value("answer", a.clone());
            }
            format!("Interrupt in {}", r.node)
        }
    };
    let (w, h) = s.viewer_area();
    let mut v = Viewer::new(title, doc.sections, w, h);
    v.open_at_conversation_end();
    s.modal = Some(Modal::Viewer(Box::new(v)));
}

/// The re-execution lines of one task of the last run.
pub fn run_task_lines(t: &TaskRunView) -> Vec<String> {
    let mut l = Vec::new();
    for c in &t.calls {
        l.push(match c {
            CallView::Replayed { index, answer } => {
                format!("  interrupt #{index} returned the stored answer {answer}")
            }
            CallView::Resumed { index, answer } => {
                format!("  interrupt #{index} returned the resume value {answer}")
            }
            CallView::Raised { index, id, payload } => {
                format!(
                    "  interrupt #{index} raised {payload} (id {})",
                    crate::text::head(id, 8)
                )
            }
        });
    }
    for (attempt, stream, text) in &t.output {
        for line in text.lines() {
            l.push(format!(
                "  {}{}| {line}",
                if t.attempts > 1 {
                    format!("attempt {attempt} ")
                } else {
                    String::new()
                },
                if stream == "stderr" { "! " } else { "" }
            ));
        }
    }
    for (name, n, total) in &t.effects {
        l.push(format!(
            "  effect {name} ×{n}{}",
            if *total > *n {
                format!(" (×{total} over {} executions of this task)", t.execution)
            } else {
                String::new()
            }
        ));
    }
    l
}

fn viewer(s: &mut AppState) -> Option<&mut Viewer> {
    match &mut s.modal {
        Some(Modal::Viewer(v)) => Some(v),
        _ => None,
    }
}

/// The terminal changed size: lay the viewer out for it.
pub(super) fn resize(s: &mut AppState) {
    let (w, h) = s.viewer_area();
    if let Some(v) = viewer(s) {
        v.width = w.max(20);
        v.height = h.max(1);
        v.layout();
    }
}

pub(super) fn toggle(s: &mut AppState) {
    if let Some(v) = viewer(s) {
        if !v.toggle() {
            say(
                s,
                Level::Info,
                "nothing to fold here: a scalar, not an object, array or message",
            );
        }
    }
}

pub(super) fn fold_all(s: &mut AppState, fold: bool) {
    if let Some(v) = viewer(s) {
        v.fold_all(fold);
    }
}

pub(super) fn raw(s: &mut AppState) {
    if let Some(v) = viewer(s) {
        v.raw = !v.raw;
        v.layout();
        let text = if v.raw {
            "raw: every value as its JSON tree (v: readable again)"
        } else {
            "readable: conversations and typed values (v: raw JSON tree)"
        };
        say(s, Level::Info, text);
    }
}

pub(super) fn details(s: &mut AppState) {
    if let Some(v) = viewer(s) {
        v.details = !v.details;
        v.layout();
    }
}

/// `/`: start typing a search.
pub(super) fn find(s: &mut AppState) {
    if let Some(v) = viewer(s) {
        v.find = Some(TextInput::new(v.query.as_deref().unwrap_or("")));
    }
}

/// Esc while typing a search closes the search, not the viewer.
pub(super) fn cancel_find(s: &mut AppState) -> bool {
    match viewer(s) {
        Some(v) if v.find.is_some() => {
            v.find = None;
            true
        }
        _ => false,
    }
}

/// Enter on the search: the matches, the cursor on the first one at or after it.
pub(super) fn submit_find(s: &mut AppState) {
    let Some(v) = viewer(s) else { return };
    let Some(f) = v.find.take() else { return };
    let q = f.text.trim().to_string();
    if q.is_empty() {
        v.query = None;
        v.hits.clear();
        return;
    }
    let n = v.search(&q);
    let text = if n == 0 {
        format!(
            "/{q}: no match in the {} lines shown (folded nodes are not searched: + unfolds all)",
            v.lines.len()
        )
    } else {
        format!(
            "/{q}: match {} of {n} · n next · N previous",
            v.hit_pos().unwrap_or(1)
        )
    };
    say(s, Level::Info, text);
}

pub(super) fn find_step(s: &mut AppState, fwd: bool) {
    let Some(v) = viewer(s) else { return };
    let Some(q) = v.query.clone() else {
        say(s, Level::Info, "no search yet: / searches the value");
        return;
    };
    let n = v.hits.len();
    let text = match v.search_step(fwd) {
        Some(p) => format!("/{q}: match {} of {n}", p + 1),
        None => format!("/{q}: no match"),
    };
    say(s, Level::Info, text);
}

/// `y` / `Y`: the node under the cursor as JSON, or its path, to the clipboard (OSC 52).
pub(super) fn copy(s: &mut AppState, path: bool) {
    let Some(v) = viewer(s) else { return };
    let Some((crumb, value)) = v.current() else {
        say(s, Level::Info, "nothing to copy on this line");
        return;
    };
    let text = if path {
        crumb.clone()
    } else {
        serde_json::to_string_pretty(value).unwrap_or_default()
    };
    let what = if path {
        format!("the path {crumb}")
    } else {
        format!(
            "{} as JSON ({} bytes)",
            if crumb.is_empty() {
                "the value"
            } else {
                &crumb
            },
            text.len()
        )
    };
    s.clipboard = Some(text);
    say(
        s,
        Level::Info,
        format!("copied {what} via OSC 52 (terminals that allow clipboard writes receive it)"),
    );
}

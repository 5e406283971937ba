//! Enter: the viewer on the selected row of the focused pane — a node, a checkpoint, a value
//! (with its diff against the parent), a task (with its last run), a write, an interrupt.

use super::say;
use crate::app::format::{pretty, preview};
use crate::app::state::*;

pub(super) fn open_selected(s: &mut AppState) {
    let p = s.focus;
    let i = s.selected(p);
    let (title, lines) = match p {
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
            let mut l = vec![
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
            ];
            if let Some(c) = &s.current {
                for t in c.tasks.iter().filter(|t| t.name == n.name) {
                    l.push(format!("  task {} {}", t.id, t.status.label()));
                }
            }
            (format!("Node {}", n.name), l)
        }
        Pane::History => {
            let Some(h) = s.history.get(i) else { return };
            let mut l = vec![
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
            ];
            for (id, n, v) in &h.pending {
                l.push(format!("interrupt  {id} in {n}: {}", preview(v, 200)));
            }
            for (n, e) in &h.errored {
                l.push(format!("error      in {n}: {e}"));
            }
            (format!("Checkpoint step {}", h.step), l)
        }
        Pane::State => {
            let Some(v) = s.current.as_ref().and_then(|c| c.values.get(i)) else {
                return;
            };
            let mut l = vec![format!(
                "{}",
                match &v.diff {
                    Diff::Same => "unchanged since the parent checkpoint",
                    Diff::Added => "added at this checkpoint",
                    Diff::Changed { .. } => "changed at this checkpoint",
                    Diff::Removed => "removed at this checkpoint",
                    Diff::NoParent => "first checkpoint (no parent)",
                }
            )];
            if v.diff != Diff::Removed {
                l.extend(pretty(&v.view));
            }
            if let (Some(w), Diff::Changed { .. } | Diff::Removed) = (&v.was, &v.diff) {
                l.push(String::new());
                l.push("was:".into());
                l.extend(pretty(w));
            }
            (format!("Value {}", v.key), l)
        }
        Pane::Tasks => {
            let Some(t) = s.current.as_ref().and_then(|c| c.tasks.get(i)).cloned() else {
                return;
            };
            let mut l = vec![
                format!("task   {}", t.id),
                format!("node   {}", t.name),
                format!("status {}", t.status.label()),
            ];
            if let Some(ns) = &t.ns {
                l.push(format!("subgraph namespace {ns} (s shows its checkpoints)"));
            }
            if !t.view.is_null() {
                l.push(String::new());
                l.extend(pretty(&t.view));
            }
            if let Some(run) = &s.run {
                for st in &run.steps {
                    for tr in st.tasks.iter().filter(|x| x.id == t.id) {
                        l.push(String::new());
                        l.push(format!(
                            "last {} · step {}: {}",
                            run.what, st.step, tr.outcome
                        ));
                        l.extend(run_task_lines(tr));
                        for d in &tr.drift {
                            l.push(format!(
                                "APPROVAL DRIFT at interrupt #{} ({})",
                                d.index, d.interrupt_id
                            ));
                            l.push("  the human answered this payload:".into());
                            l.extend(pretty(&d.answered).into_iter().map(|x| format!("    {x}")));
                            l.push("  the re-executed node produced:".into());
                            l.extend(pretty(&d.now).into_iter().map(|x| format!("    {x}")));
                            l.push(format!(
                                "  and received the answer {}",
                                preview(&d.answer, 200)
                            ));
                        }
                    }
                }
            }
            (format!("Task {}", t.name), l)
        }
        Pane::Writes => {
            let Some(w) = s.current.as_ref().and_then(|c| c.writes.get(i)) else {
                return;
            };
            let mut l = vec![
                format!("task    {}", w.task_id),
                format!("node    {}", w.node),
                format!("idx     {}", w.idx),
                format!("channel {}", w.channel),
                format!("type    {}", w.kind.label()),
                String::new(),
            ];
            l.extend(pretty(&w.view));
            (format!("Write {} {}", w.kind.label(), w.channel), l)
        }
        Pane::Interrupts => {
            let Some(r) = s.current.as_ref().and_then(|c| c.interrupts.get(i)) else {
                return;
            };
            let mut l = vec![
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
                String::new(),
            ];
            l.extend(pretty(&r.value));
            if let Some(a) = &r.answer {
                l.push(String::new());
                l.push("answer:".into());
                l.extend(pretty(a));
            }
            (format!("Interrupt in {}", r.node), l)
        }
    };
    s.modal = Some(Modal::Viewer {
        title,
        lines,
        scroll: 0,
    });
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

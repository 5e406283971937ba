//! View builders: what the panes show, derived once from a snapshot (or an engine report) when
//! it is loaded. Pure; the update and the runtime's search both use them.

use super::action::{CheckpointData, HistoryEntry};
use super::format::{opts, preview, PREVIEW};
use super::state::*;
use crate::conversation::{delta_line, messages_in};
use crate::ids::{interrupt_id, task_ns, NULL_TASK_ID};
use crate::snapshot::{Snapshot, TaskResult, WriteKind};
use crate::source::Pause;
use crate::value::{to_view, Interrupt};
use serde_json::Value as Json;

pub fn history_lanes(entries: &[HistoryEntry]) -> Vec<String> {
    let mut lanes: Vec<Option<String>> = Vec::new();
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        let mine: Vec<usize> = lanes
            .iter()
            .enumerate()
            .filter(|(_, l)| l.as_deref() == Some(e.id.as_str()))
            .map(|(i, _)| i)
            .collect();
        let col = match mine.first() {
            Some(c) => *c,
            None => match lanes.iter().position(Option::is_none) {
                Some(free) => free,
                None => {
                    lanes.push(None);
                    lanes.len() - 1
                }
            },
        };
        let last_merge = mine.iter().copied().max().unwrap_or(col);
        let mut g = String::new();
        for (i, lane) in lanes.iter().enumerate() {
            let ch = if i == col {
                '●'
            } else if mine.contains(&i) {
                '╯'
            } else if i > col && i < last_merge {
                '─'
            } else if lane.is_some() {
                '│'
            } else {
                ' '
            };
            g.push(ch);
            if i + 1 < lanes.len() {
                g.push(if i >= col && i < last_merge {
                    '─'
                } else {
                    ' '
                });
            }
        }
        for m in &mine {
            lanes[*m] = None;
        }
        lanes[col] = e.parent.clone();
        while lanes.last().is_some_and(Option::is_none) {
            lanes.pop();
        }
        out.push(g.trim_end().to_string());
    }
    out
}

fn node_of(snap: &Snapshot, task_id: &str, task_path: &str) -> String {
    snap.tasks
        .iter()
        .find(|t| t.id == task_id)
        .map(|t| t.name.clone())
        .unwrap_or_else(|| {
            if task_id == NULL_TASK_ID {
                "(input)".into()
            } else if task_path.is_empty() {
                "?".into()
            } else {
                task_path.to_string()
            }
        })
}

/// Derive every row the panes show from a snapshot (and its parent's values for the diff).
pub fn checkpoint_view(d: CheckpointData, latest: bool) -> CheckpointView {
    let snap = d.snapshot;
    let o = opts();
    let mut values: Vec<ValueRow> = Vec::new();
    let parent: Vec<(String, Json)> = d
        .parent_values
        .as_ref()
        .map(|p| p.iter().map(|(k, v)| (k.clone(), to_view(v, o))).collect())
        .unwrap_or_default();
    let by_key: std::collections::HashMap<&str, &Json> =
        parent.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let keys: std::collections::HashSet<&str> =
        snap.values.iter().map(|(k, _)| k.as_str()).collect();
    for (k, v) in &snap.values {
        let view = to_view(v, o);
        let was = by_key.get(k.as_str()).map(|v| (*v).clone());
        let diff = match (&d.parent_values, &was) {
            (None, _) => Diff::NoParent,
            (Some(_), None) => Diff::Added,
            (Some(_), Some(w)) if *w == view => Diff::Same,
            (Some(_), Some(w)) => Diff::Changed {
                was: preview(w, PREVIEW),
                delta: match (messages_in(w), messages_in(&view)) {
                    (Some(a), Some(b)) => delta_line(&a, &b),
                    (None, Some(b)) if w.as_array().is_some_and(Vec::is_empty) => {
                        delta_line(&[], &b)
                    }
                    _ => None,
                },
            },
        };
        values.push(ValueRow {
            key: k.clone(),
            preview: preview(&view, PREVIEW),
            view,
            diff,
            was,
        });
    }
    for (k, w) in &parent {
        if !keys.contains(k.as_str()) {
            values.push(ValueRow {
                key: k.clone(),
                view: Json::Null,
                preview: String::new(),
                diff: Diff::Removed,
                was: Some(w.clone()),
            });
        }
    }
    let tasks = snap
        .tasks
        .iter()
        .map(|t| {
            let status = if t.error.is_some() && !t.finished {
                TaskStatus::Error
            } else if !t.interrupts.is_empty() && !t.finished {
                TaskStatus::Interrupted
            } else if t.finished {
                TaskStatus::Done
            } else {
                TaskStatus::Pending
            };
            let view = if let Some(e) = &t.error {
                e.view(o)
            } else if let Some(r) = &t.result {
                match r {
                    TaskResult::Return(v) => to_view(v, o),
                    TaskResult::Writes(w) => {
                        Json::Object(w.iter().map(|(k, v)| (k.clone(), to_view(v, o))).collect())
                    }
                }
            } else if !t.interrupts.is_empty() {
                Json::Array(t.interrupts.iter().map(|i| to_view(&i.value, o)).collect())
            } else {
                Json::Null
            };
            let detail = if view.is_null() {
                String::new()
            } else if t.error.is_none() && t.result.is_some() {
                crate::present::written_line(&view, PREVIEW)
            } else if let (None, None, [first, ..]) = (
                &t.error,
                &t.result,
                view.as_array().map(Vec::as_slice).unwrap_or_default(),
            ) {
                // what the interrupt asks, key by key: `question: "Approve this refund?" …`
                let n = t.interrupts.len();
                let head = if n > 1 {
                    format!("{n} interrupts · ")
                } else {
                    String::new()
                };
                format!("{head}{}", crate::present::written_line(first, PREVIEW))
            } else {
                preview(&view, PREVIEW)
            };
            TaskRow {
                id: t.id.clone(),
                name: t.name.clone(),
                status,
                detail,
                view,
                ns: t.state_ns.clone(),
            }
        })
        .collect();
    let pending_ids: Vec<&str> = snap
        .tasks
        .iter()
        .filter(|t| !t.finished)
        .flat_map(|t| t.interrupts.iter().map(|i| i.id.as_str()))
        .collect();
    let mut writes = Vec::new();
    let mut interrupts = Vec::new();
    for p in &snap.pending_writes {
        let node = node_of(&snap, &p.task_id, &p.task_path);
        let view = p.value.view(o);
        let mut pv = crate::present::written_value(&view, PREVIEW);
        if p.kind == WriteKind::Interrupt {
            // LangGraph 0.2 wrote one Interrupt per write (no id), 1.x a list
            let items = match p.value.as_value() {
                Some(rmpv::Value::Array(items)) => Some(items.clone()),
                Some(v) if Interrupt::from_value(v).is_some() => Some(vec![v.clone()]),
                _ => None,
            };
            if let Some(items) = items {
                let mut parsed: Vec<Interrupt> =
                    items.iter().filter_map(Interrupt::from_value).collect();
                if snap.format.is_some() {
                    for i in &mut parsed {
                        i.id.clear();
                    }
                }
                if !parsed.is_empty() {
                    pv = parsed
                        .iter()
                        .map(|i| {
                            format!(
                                "{} (id {})",
                                preview(&to_view(&i.value, o), 80),
                                crate::text::head(&i.id, 8)
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("; ");
                }
                for i in parsed {
                    let answers = snap
                        .pending_writes
                        .iter()
                        .find(|w| w.task_id == p.task_id && w.kind == WriteKind::Resume)
                        .and_then(|w| match w.value.as_value() {
                            Some(rmpv::Value::Array(a)) => Some(a.clone()),
                            Some(v) => Some(vec![v.clone()]),
                            None => None,
                        })
                        .unwrap_or_default();
                    let tns = task_ns(&snap.checkpoint_ns, &node, &p.task_id);
                    let answer = (0..answers.len())
                        .find(|k| interrupt_id(&tns, *k) == i.id)
                        .map(|k| to_view(&answers[k], o));
                    let value = to_view(&i.value, o);
                    interrupts.push(InterruptRow {
                        id: i.id.clone(),
                        node: node.clone(),
                        task_id: p.task_id.clone(),
                        preview: crate::present::written_line(&value, PREVIEW),
                        value,
                        pending: pending_ids.contains(&i.id.as_str()),
                        answer,
                    });
                }
            }
        }
        writes.push(WriteView {
            task_id: p.task_id.clone(),
            node,
            idx: p.idx,
            channel: p.channel.clone(),
            kind: p.kind,
            preview: pv,
            view,
        });
    }
    // pending interrupts without a stored write (e.g. derived) still show
    for t in &snap.tasks {
        for i in &t.interrupts {
            if !interrupts.iter().any(|r| r.id == i.id) {
                let value = to_view(&i.value, o);
                interrupts.push(InterruptRow {
                    id: i.id.clone(),
                    node: t.name.clone(),
                    task_id: t.id.clone(),
                    preview: crate::present::written_line(&value, PREVIEW),
                    value,
                    pending: !t.finished,
                    answer: None,
                });
            }
        }
    }
    CheckpointView {
        snapshot: snap,
        latest,
        values,
        tasks,
        writes,
        interrupts,
        calls: d.calls,
    }
}

/// What the history pane needs from a snapshot.
pub fn history_entry(snap: &Snapshot) -> HistoryEntry {
    let o = opts();
    let mut pending = Vec::new();
    let mut interrupted = Vec::new();
    let mut errored = Vec::new();
    for t in &snap.tasks {
        if t.finished {
            continue;
        }
        for i in &t.interrupts {
            pending.push((i.id.clone(), t.name.clone(), to_view(&i.value, o)));
        }
        if !t.interrupts.is_empty() && !interrupted.contains(&t.name) {
            interrupted.push(t.name.clone());
        }
        if let Some(e) = &t.error {
            let msg = match e.view(o) {
                Json::String(s) => s,
                other => preview(&other, 120),
            };
            errored.push((t.name.clone(), msg));
        }
    }
    HistoryEntry {
        id: snap.checkpoint_id.clone(),
        parent: snap.parent_checkpoint_id.clone(),
        step: snap.step,
        source: snap
            .metadata
            .get("source")
            .and_then(|v| v.as_str())
            .unwrap_or("?")
            .to_string(),
        next: snap.next.clone(),
        pending,
        interrupted,
        errored,
        created_at: snap.created_at.clone(),
    }
}

/// How the run view names where the engine stopped.
pub fn pause_view(p: &Pause) -> PauseView {
    match p {
        Pause::Done => PauseView::Done,
        Pause::Before(n) => PauseView::Before(n.clone()),
        Pause::After(n) => PauseView::After(n.clone()),
        Pause::Interrupt(list) => {
            let mut nodes: Vec<String> = Vec::new();
            for (n, _) in list {
                if !nodes.contains(n) {
                    nodes.push(n.clone());
                }
            }
            PauseView::Interrupt(nodes)
        }
        Pause::Error(n, e) => PauseView::Error(n.clone(), e.clone()),
        Pause::RecursionLimit(n) => PauseView::RecursionLimit(*n),
    }
}

//! Two checkpoints → what differs between them, as LangGraph's `get_state` shows each: values
//! (message lists message by message, anything else path by path: [`super::jsondiff`],
//! [`super::messages`]), next, tasks, interrupts and pending writes. The checkpoints may be in
//! one thread, on two branches of it, in two threads, or in namespaces.
//!
//! Tasks, interrupts and pending writes carry ids derived from their checkpoint, so they are
//! compared by what they are, not by id: a task by `{name, path, error, interrupts, result}`,
//! an interrupt by its value, a pending write by `{node, channel, value}` (`node`: the name of
//! the task that wrote it, or its task id when no task of the checkpoint has it — the null task
//! of a `Command` input; an interrupt's id is left out of the value, see [`comparable`]). Each
//! is a multiset: `removed` lists what only the first has, `added`
//! what only the second has.

use super::address::{source_of, step_of};
use super::jsondiff::{self, PathChange};
use super::messages::{self, MessageChange};
use crate::snapshot::{Snapshot, TaskResult};
use crate::store::CheckpointRow;
use crate::value::{to_view, ViewOptions};
use serde::Serialize;
use serde_json::{json, Value as Json};

/// Which checkpoint one side of a diff is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Side {
    pub thread_id: String,
    pub checkpoint_ns: String,
    pub checkpoint_id: String,
    pub step: Option<i64>,
    pub source: Option<String>,
}

impl Side {
    pub fn of(row: &CheckpointRow) -> Side {
        Side {
            thread_id: row.thread_id.clone(),
            checkpoint_ns: row.checkpoint_ns.clone(),
            checkpoint_id: row.checkpoint_id.clone(),
            step: step_of(row),
            source: source_of(row),
        }
    }

    pub fn of_snapshot(s: &Snapshot) -> Side {
        Side {
            thread_id: s.thread_id.clone(),
            checkpoint_ns: s.checkpoint_ns.clone(),
            checkpoint_id: s.checkpoint_id.clone(),
            step: Some(s.step),
            source: s
                .metadata
                .get("source")
                .and_then(Json::as_str)
                .map(str::to_string),
        }
    }
}

/// How one state key differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "change", rename_all = "lowercase")]
pub enum KeyChange {
    /// Only the second checkpoint has the key.
    Added { key: String, b: Json },
    /// Only the first has it.
    Removed { key: String, a: Json },
    /// Both have it, and it is not a message list: the paths that differ.
    Changed { key: String, paths: Vec<PathChange> },
    /// Both are message lists.
    Messages {
        key: String,
        messages: Vec<MessageChange>,
    },
}

impl KeyChange {
    pub fn key(&self) -> &str {
        match self {
            KeyChange::Added { key, .. }
            | KeyChange::Removed { key, .. }
            | KeyChange::Changed { key, .. }
            | KeyChange::Messages { key, .. } => key,
        }
    }
}

/// What only one side has.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SetChange {
    pub removed: Vec<Json>,
    pub added: Vec<Json>,
}

impl SetChange {
    pub fn is_empty(&self) -> bool {
        self.removed.is_empty() && self.added.is_empty()
    }
}

/// `superstep diff --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckpointDiff {
    pub a: Side,
    pub b: Side,
    /// Nothing below differs.
    pub same: bool,
    pub values: Vec<KeyChange>,
    /// `{"a": [...], "b": [...]}` when the next nodes differ.
    pub next: Option<Json>,
    pub tasks: SetChange,
    pub interrupts: SetChange,
    pub pending_writes: SetChange,
}

const OPTS: ViewOptions = ViewOptions {
    max_bytes: usize::MAX,
};

/// The state values of a snapshot as `(key, view)`; a `__root__` graph's bare value is key `""`.
pub fn value_views(s: &Snapshot) -> Vec<(String, Json)> {
    s.values
        .iter()
        .map(|(k, v)| {
            let k = if s.root_value {
                String::new()
            } else {
                k.clone()
            };
            (k, to_view(v, OPTS))
        })
        .collect()
}

/// How a key's value differs between two views (`None`: it does not).
pub fn key_change(key: &str, a: Option<&Json>, b: Option<&Json>) -> Option<KeyChange> {
    let key = key.to_string();
    match (a, b) {
        (None, None) => None,
        (Some(a), None) => Some(KeyChange::Removed { key, a: a.clone() }),
        (None, Some(b)) => Some(KeyChange::Added { key, b: b.clone() }),
        (Some(a), Some(b)) if a == b => None,
        (Some(a), Some(b)) if messages::both_message_lists(a, b) => Some(KeyChange::Messages {
            key,
            messages: messages::diff(a.as_array().unwrap(), b.as_array().unwrap()),
        }),
        (Some(a), Some(b)) => Some(KeyChange::Changed {
            key,
            paths: jsondiff::diff(a, b),
        }),
    }
}

/// Every key whose value differs: the first side's keys in order, then the second's new ones.
pub fn values_diff(a: &[(String, Json)], b: &[(String, Json)]) -> Vec<KeyChange> {
    fn get<'a>(l: &'a [(String, Json)], k: &str) -> Option<&'a Json> {
        l.iter().find(|(x, _)| x == k).map(|(_, v)| v)
    }
    let mut out = Vec::new();
    for (k, v) in a {
        out.extend(key_change(k, Some(v), get(b, k)));
    }
    for (k, v) in b {
        if get(a, k).is_none() {
            out.extend(key_change(k, None, Some(v)));
        }
    }
    out
}

fn task_items(s: &Snapshot) -> Vec<Json> {
    s.tasks
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "path": t.path,
                "error": t.error.as_ref().map(|e| e.view(OPTS)),
                "interrupts": t.interrupts.iter().map(|i| to_view(&i.value, OPTS)).collect::<Vec<_>>(),
                "result": t.result.as_ref().map(|r| match r {
                    TaskResult::Return(v) => to_view(v, OPTS),
                    TaskResult::Writes(w) => Json::Object(w.iter().map(|(k, v)| (k.clone(), to_view(v, OPTS))).collect()),
                }),
            })
        })
        .collect()
}

fn write_items(s: &Snapshot) -> Vec<Json> {
    s.pending_writes
        .iter()
        .map(|w| {
            let node = s
                .tasks
                .iter()
                .find(|t| t.id == w.task_id)
                .map(|t| t.name.clone())
                .unwrap_or_else(|| w.task_id.clone());
            json!({"node": node, "channel": w.channel, "value": comparable(&w.value.view(OPTS))})
        })
        .collect()
}

/// `j` without what is derived from the checkpoint it was read from: an `Interrupt`'s id (a
/// hash of the checkpoint namespace and task), so that the same interrupt raised in two runs
/// compares equal.
pub fn comparable(j: &Json) -> Json {
    match j {
        Json::Object(o) => {
            let interrupt = o
                .get("__type__")
                .and_then(Json::as_str)
                .is_some_and(|t| t.ends_with(".Interrupt"));
            Json::Object(
                o.iter()
                    .filter(|(k, _)| !(interrupt && k.as_str() == "id"))
                    .map(|(k, v)| (k.clone(), comparable(v)))
                    .collect(),
            )
        }
        Json::Array(a) => Json::Array(a.iter().map(comparable).collect()),
        other => other.clone(),
    }
}

/// Multiset difference, each side in its own order.
pub fn set_change(a: Vec<Json>, b: Vec<Json>) -> SetChange {
    let mut unmatched: Vec<Option<Json>> = b.into_iter().map(Some).collect();
    let mut removed = Vec::new();
    for x in a {
        match unmatched.iter_mut().find(|y| y.as_ref() == Some(&x)) {
            Some(slot) => *slot = None,
            None => removed.push(x),
        }
    }
    SetChange {
        removed,
        added: unmatched.into_iter().flatten().collect(),
    }
}

/// The diff of two snapshots.
pub fn diff(a: &Snapshot, b: &Snapshot) -> CheckpointDiff {
    let values = values_diff(&value_views(a), &value_views(b));
    let next = (a.next != b.next).then(|| json!({"a": a.next, "b": b.next}));
    let tasks = set_change(task_items(a), task_items(b));
    let interrupts = set_change(
        a.interrupts().map(|i| to_view(&i.value, OPTS)).collect(),
        b.interrupts().map(|i| to_view(&i.value, OPTS)).collect(),
    );
    let pending_writes = set_change(write_items(a), write_items(b));
    let same = values.is_empty()
        && next.is_none()
        && tasks.is_empty()
        && interrupts.is_empty()
        && pending_writes.is_empty();
    CheckpointDiff {
        a: Side::of_snapshot(a),
        b: Side::of_snapshot(b),
        same,
        values,
        next,
        tasks,
        interrupts,
        pending_writes,
    }
}

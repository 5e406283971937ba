//! Checkpoint + pending writes (+ topology) -> LangGraph's `StateSnapshot` (spec §11), the way
//! `Pregel._prepare_state_snapshot` builds it. Pure: the caller reads the store.

pub mod delta;
pub mod langgraph;
pub mod legacy;
mod reducers;
pub mod topology;

mod derive;
mod plan;
mod row_warnings;
mod tasks;
mod triggers;
mod values;

pub use derive::derive;

use crate::ids::PathPart;
use crate::store::{Checkpoint, CheckpointRow, WriteRow};
use crate::value::{to_view, Interrupt, Typed, ViewOptions};
use rmpv::Value;
use serde_json::{json, Map, Value as Json};
use topology::Topology;

pub use reducers::{apply_reducer, evidence, Learned};

/// Channels whose writes describe what happened to a task rather than what it produced.
pub const CONTROL_WRITES: [&str; 4] = [
    "__error__",
    "__error_source_node__",
    "__interrupt__",
    "__resume__",
];

/// Warning field for state keys a DB-only derivation cannot see (unwritten reducer defaults).
pub const UNWRITTEN_KEYS: &str = "values.(unwritten)";

/// What no DB-only snapshot can know, whatever the checkpoint: a reducer key never written on
/// the thread has no row at all, yet LangGraph shows its default (`[]`, `0`, `""`). It holds for
/// the whole DB, so it is stated once (the CLI's header, `show --json`'s `limitations`, a note on
/// stderr for `history --json`, the TUI's status line) — never repeated in every snapshot, where
/// it would drown the warnings that are about that snapshot.
pub fn db_only_limitation() -> Warning {
    Warning {
        field: UNWRITTEN_KEYS.into(),
        message: "without the graph, state keys never written on this thread are not in the DB: \
                  LangGraph shows a reducer key still at its default (e.g. []) where superstep \
                  shows nothing (pass the graph to be exact)"
            .into(),
    }
}

/// The likely default of a reducer key, from the kind of value it holds elsewhere on the thread.
pub fn likely_default(v: &Value) -> Option<&'static str> {
    Some(match v {
        Value::Array(_) => "[]",
        Value::String(_) => "\"\"",
        Value::Integer(_) => "0",
        Value::F32(_) | Value::F64(_) => "0.0",
        Value::Map(_) => "{}",
        _ => return None,
    })
}

/// The kind of a pending write, as the debugger labels it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum WriteKind {
    Interrupt,
    Resume,
    Error,
    Scheduled,
    Write,
}

impl WriteKind {
    pub fn of(channel: &str) -> WriteKind {
        match channel {
            "__interrupt__" => WriteKind::Interrupt,
            "__resume__" => WriteKind::Resume,
            "__error__" => WriteKind::Error,
            "__scheduled__" => WriteKind::Scheduled,
            _ => WriteKind::Write,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            WriteKind::Interrupt => "INTERRUPT",
            WriteKind::Resume => "RESUME",
            WriteKind::Error => "ERROR",
            WriteKind::Scheduled => "SCHEDULED",
            WriteKind::Write => "WRITE",
        }
    }
}

/// Where a field of the snapshot could not be determined exactly.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Warning {
    /// The snapshot field concerned: `values.<key>`, `next`, `tasks.id`, ...
    pub field: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TaskSnapshot {
    pub id: String,
    pub name: String,
    pub path: Vec<PathPart>,
    pub error: Option<Typed>,
    pub interrupts: Vec<Interrupt>,
    /// `None` unless the task finished; finished tasks map state keys to their writes.
    pub result: Option<TaskResult>,
    /// For subgraph nodes: the namespace holding the subgraph's checkpoints.
    pub state_ns: Option<String>,
    pub finished: bool,
    /// Whether the id was read from this checkpoint's writes (true) or recomputed.
    pub id_confirmed: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TaskResult {
    /// `__return__` value of a functional task.
    Return(Value),
    /// State key -> value, or `{"$writes": [...]}` for repeated writes, in write order.
    Writes(Vec<(String, Value)>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct PendingWrite {
    pub task_id: String,
    pub task_path: String,
    pub idx: i64,
    pub channel: String,
    pub kind: WriteKind,
    pub value: Typed,
}

/// LangGraph's `StateSnapshot` plus the pending writes and what could not be determined.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub thread_id: String,
    pub checkpoint_ns: String,
    pub checkpoint_id: String,
    pub parent_checkpoint_id: Option<String>,
    /// `metadata.parents` (non-empty for subgraph checkpoints).
    pub parents: Map<String, Json>,
    pub created_at: String,
    pub metadata: Map<String, Json>,
    pub step: i64,
    /// State values: key -> value, or the bare value of a `__root__` graph.
    pub values: Vec<(String, Value)>,
    pub root_value: bool,
    pub next: Vec<String>,
    pub tasks: Vec<TaskSnapshot>,
    pub pending_writes: Vec<PendingWrite>,
    /// Fields of this snapshot that may differ from LangGraph's.
    pub warnings: Vec<Warning>,
    /// What holds for every snapshot derived this way ([`db_only_limitation`] without the
    /// graph): the caller states it once, it is not part of [`Snapshot::to_json`].
    pub limitations: Vec<Warning>,
    pub live: bool,
    /// An older checkpoint format read as its LangGraph version shows it (`None`: the current
    /// one), named for humans: `LangGraph 0.2 checkpoint format (v1, …)`.
    pub format: Option<String>,
}

/// Everything `derive` needs about one checkpoint.
pub struct Input<'a> {
    pub row: &'a CheckpointRow,
    pub checkpoint: &'a Checkpoint,
    /// Pending writes of the checkpoint, sorted by `(task_path, task_id, idx)`.
    pub writes: &'a [WriteRow],
    /// The graph's topology, when a spec is known.
    pub topology: Option<&'a Topology>,
    /// Channel names seen on this thread (e.g. the latest checkpoint's `channel_versions`):
    /// used without a topology to find waiting-edge triggers and known state keys.
    pub catalogue: &'a [String],
    /// Without a topology: the likely default of each key the thread's newest checkpoint holds
    /// ([`likely_default`] of its value there), said when a key is missing here.
    pub defaults: &'a [(String, &'static str)],
    /// Without a topology: how keys combine writes, learned from the thread's checkpoints
    /// ([`evidence`]).
    pub learned: &'a [(String, Learned)],
    /// Namespaces of this thread that hold checkpoints (to spot subgraph tasks without a spec).
    pub namespaces: &'a [String],
    /// Nodes that ran on this thread and the trigger channels they saw (the newest checkpoint's
    /// `versions_seen`): LangGraph 0.2's plain edges are named only by who they triggered.
    pub seen_nodes: &'a [(String, Vec<String>)],
    /// `get_state` without a checkpoint id (true) vs a history item / addressed checkpoint.
    pub live: bool,
    /// The store keeps the saver's channel order (SQLite's msgpack blob does; Postgres's JSONB
    /// does not), from which the order of `next` is guessed without a graph.
    pub channel_order: bool,
    /// DeltaChannel keys this checkpoint stores no value for: their ancestors' history
    /// ([`delta::history`] of [`delta::keys_to_replay`]).
    pub delta: &'a [delta::DeltaHistory],
}

impl Snapshot {
    fn config(&self, checkpoint_id: &str) -> Json {
        let mut conf = json!({
            "thread_id": self.thread_id,
            "checkpoint_ns": self.checkpoint_ns,
            "checkpoint_id": checkpoint_id,
        });
        if !self.parents.is_empty() {
            let mut map = self.parents.clone();
            map.insert(self.checkpoint_ns.clone(), Json::from(checkpoint_id));
            conf["checkpoint_map"] = Json::Object(map);
        }
        json!({ "configurable": conf })
    }

    /// The StateSnapshot-shaped JSON (see README): LangGraph's fields, then `pending_writes` and
    /// `warnings`.
    pub fn to_json(&self, opts: ViewOptions) -> Json {
        let mut j = serde_json::Map::new();
        for (k, v) in self.head_json(opts) {
            j.insert(k.into(), v);
        }
        j.insert(
            "pending_writes".into(),
            Json::Array(
                self.pending_writes
                    .iter()
                    .map(|w| w.to_json(opts))
                    .collect(),
            ),
        );
        j.insert("warnings".into(), json!(self.warnings));
        Json::Object(j)
    }

    /// The same JSON, serialized as it is made: `pending_writes` (a page may hold a million)
    /// write by write, never as one tree. `extra` fields follow `warnings`.
    pub fn json_out(&self, opts: ViewOptions, extra: Vec<(&'static str, Json)>) -> JsonOut<'_> {
        JsonOut {
            snap: self,
            opts,
            extra,
        }
    }

    /// The JSON fields before `pending_writes`.
    fn head_json(&self, opts: ViewOptions) -> Vec<(&'static str, Json)> {
        let values = if self.root_value {
            self.values
                .first()
                .map(|(_, v)| to_view(v, opts))
                .unwrap_or(Json::Null)
        } else {
            Json::Object(
                self.values
                    .iter()
                    .map(|(k, v)| (k.clone(), to_view(v, opts)))
                    .collect(),
            )
        };
        // LangGraph 0.2's interrupts have no id (read with an empty one)
        let interrupt_json = |i: &Interrupt| json!({"value": to_view(&i.value, opts), "id": (!i.id.is_empty()).then_some(&i.id)});
        let tasks: Vec<Json> = self
            .tasks
            .iter()
            .map(|t| {
                json!({
                    "id": t.id,
                    "name": t.name,
                    "path": t.path,
                    "error": t.error.as_ref().map(|e| e.view(opts)),
                    "interrupts": t.interrupts.iter().map(interrupt_json).collect::<Vec<_>>(),
                    "result": t.result.as_ref().map(|r| match r {
                        TaskResult::Return(v) => to_view(v, opts),
                        TaskResult::Writes(w) => Json::Object(w.iter().map(|(k, v)| (k.clone(), to_view(v, opts))).collect()),
                    }),
                    "state": t.state_ns.as_ref().map(|ns| json!({"configurable": {"thread_id": self.thread_id, "checkpoint_ns": ns}})),
                })
            })
            .collect();
        let interrupts: Vec<Json> = self.interrupts().map(interrupt_json).collect();
        vec![
            ("config", self.config(&self.checkpoint_id)),
            (
                "parent_config",
                json!(self.parent_checkpoint_id.as_deref().map(|p| self.config(p))),
            ),
            ("created_at", json!(self.created_at)),
            ("metadata", Json::Object(self.metadata.clone())),
            ("values", values),
            ("next", json!(self.next)),
            ("tasks", Json::Array(tasks)),
            ("interrupts", Json::Array(interrupts)),
        ]
    }

    /// Interrupts of all tasks, in task order.
    pub fn interrupts(&self) -> impl Iterator<Item = &Interrupt> {
        self.tasks.iter().flat_map(|t| t.interrupts.iter())
    }
}

impl PendingWrite {
    fn to_json(&self, opts: ViewOptions) -> Json {
        json!({
            "task_id": self.task_id,
            "task_path": self.task_path,
            "idx": self.idx,
            "channel": self.channel,
            "type": self.kind.label(),
            "value": self.value.view(opts),
        })
    }
}

/// [`Snapshot::json_out`]: serializes like [`Snapshot::to_json`] (same fields, same order)
/// without building the `pending_writes` array.
pub struct JsonOut<'a> {
    snap: &'a Snapshot,
    opts: ViewOptions,
    extra: Vec<(&'static str, Json)>,
}

impl serde::Serialize for JsonOut<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        struct Writes<'a>(&'a [PendingWrite], ViewOptions);
        impl serde::Serialize for Writes<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_seq(self.0.iter().map(|w| w.to_json(self.1)))
            }
        }
        let mut m = s.serialize_map(None)?;
        for (k, v) in self.snap.head_json(self.opts) {
            m.serialize_entry(k, &v)?;
        }
        m.serialize_entry(
            "pending_writes",
            &Writes(&self.snap.pending_writes, self.opts),
        )?;
        m.serialize_entry("warnings", &self.snap.warnings)?;
        for (k, v) in &self.extra {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

//! Checkpoint + pending writes (+ topology) -> LangGraph's `StateSnapshot` (spec §11), the way
//! `Pregel._prepare_state_snapshot` builds it. Pure: the caller reads the store.

pub mod delta;
pub mod legacy;
mod reducers;
pub mod topology;

use crate::ids::{self, PathPart, NULL_TASK_ID};
use crate::store::{Checkpoint, CheckpointRow, Version, WriteRow};
use crate::value::{to_view, Interrupt, Send, Typed, ViewOptions};
use rmpv::Value;
use serde_json::{json, Map, Value as Json};
use topology::{is_reserved_channel, Topology};

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

struct PlannedTask {
    id: String,
    id_confirmed: bool,
    name: String,
    path: Vec<PathPart>,
    /// Index in channel_values of the trigger that fired (for DB-only ordering).
    order_key: Option<usize>,
    join_only: bool,
}

/// Availability of a channel from its checkpointed value (spec §2.3).
fn available(ch: &str, cp: &Checkpoint) -> bool {
    let Some(v) = cp.value(ch) else { return false };
    let names = |ch: &str| -> Vec<String> {
        ch.strip_prefix("join:")
            .and_then(|rest| rest.rsplit_once(':'))
            .map(|(starts, _)| starts.split('+').map(str::to_string).collect())
            .unwrap_or_default()
    };
    let set_items = crate::value::ext::set_items;
    let same_set = |mut a: Vec<String>, mut b: Vec<String>| {
        a.sort();
        a.dedup();
        b.sort();
        b.dedup();
        a == b
    };
    if ch.starts_with("join:") {
        return match v {
            // NamedBarrierValueAfterFinish: [seen, finished]
            Value::Array(a) if a.len() == 2 && a[1].as_bool().is_some() => {
                a[1].as_bool() == Some(true) && same_set(set_items(&a[0]), names(ch))
            }
            _ => same_set(set_items(v), names(ch)),
        };
    }
    if ch == "__pregel_tasks" {
        return matches!(v, Value::Array(a) if !a.is_empty());
    }
    if ch.starts_with("branch:to:") {
        // LastValueAfterFinish (deferred node): [value, finished]
        if let Value::Array(a) = v {
            if a.len() == 2 && a[1].as_bool().is_some() {
                return a[1].as_bool() == Some(true);
            }
        }
    }
    true
}

fn triggered(node: &str, triggers: &[String], cp: &Checkpoint) -> Option<(usize, bool)> {
    let seen = cp.seen(node);
    let mut first: Option<(usize, bool)> = None;
    for ch in triggers {
        if !available(ch, cp) {
            continue;
        }
        let cur = cp.version(ch);
        let fires = match seen {
            None => true,
            Some(seen) => {
                let s = seen.iter().find(|(k, _)| k == ch).map(|(_, v)| v);
                Version::gt(cur, s)
            }
        };
        if fires {
            let pos = cp
                .channel_values
                .iter()
                .position(|(k, _)| k == ch)
                .unwrap_or(usize::MAX);
            let is_join = ch.starts_with("join:");
            first = Some(match first {
                None => (pos, is_join),
                Some((p, j)) => (p.min(pos), j && is_join),
            });
        }
    }
    first
}

/// The triggers of `node` that fire at this checkpoint (LangGraph 0.2 hashes them into the id).
fn fired_triggers(node: &str, triggers: &[String], cp: &Checkpoint) -> Vec<String> {
    let seen = cp.seen(node);
    triggers
        .iter()
        .filter(|ch| available(ch, cp))
        .filter(|ch| {
            let s = seen.and_then(|s| s.iter().find(|(k, _)| k == *ch).map(|(_, v)| v));
            Version::gt(cp.version(ch), s)
        })
        .cloned()
        .collect()
}

/// Build the snapshot LangGraph's `get_state` / `get_state_history` would return.
pub fn derive(input: &Input) -> Snapshot {
    let cp = input.checkpoint;
    let row = input.row;
    let step = row
        .metadata
        .get("step")
        .and_then(Json::as_i64)
        .unwrap_or(-1);
    let task_step = step + 1;
    let ns = row.checkpoint_ns.as_str();
    let mut warnings = Vec::new();
    if let Some(len) = row.preview_of {
        warnings.push(Warning {
            field: "values".into(),
            message: format!(
                "the checkpoint blob is {len} bytes, more than the {} bytes or {} values superstep loads whole: values are a preview (strings over 64 KiB and lists over 1,000 items cut, marked \"… [cut by superstep …]\")",
                crate::store::PREVIEW_OVER,
                crate::store::DENSE_OVER
            ),
        });
    }
    if let Some(len) = row.metadata_preview_of {
        warnings.push(Warning {
            field: "metadata".into(),
            message: format!(
                "the metadata is {len} bytes, over the {} superstep parses whole: it is a preview (strings over 64 KiB and lists over 1,000 items cut, marked \"… [cut by superstep …]\")",
                crate::store::META_OVER
            ),
        });
    }
    // EncryptedSerializer's envelopes: opaque, said once per snapshot
    let mut ciphers = Vec::new();
    for (_, v) in &cp.channel_values {
        crate::value::encrypted_ciphers(v, &mut ciphers);
    }
    for w in input.writes.iter() {
        if let Some(v) = w.value.as_value() {
            crate::value::encrypted_ciphers(v, &mut ciphers);
        }
    }
    if !ciphers.is_empty() {
        warnings.push(Warning {
            field: "values".into(),
            message: format!(
                "values written by LangGraph's EncryptedSerializer ({}) are shown opaque (__type__ \"encrypted\"): superstep has no key to decrypt them",
                ciphers.join(", ")
            ),
        });
    }
    for w in input.writes.iter().filter(|w| w.cut.is_some()) {
        warnings.push(Warning {
            field: "pending_writes".into(),
            message: format!(
                "the {} write of task {} (idx {}) is {} bytes: its value is a preview (superstep loads whole at most {} bytes and {} values)",
                w.channel,
                w.task_id,
                w.idx,
                w.cut.unwrap_or(0),
                crate::store::PREVIEW_OVER,
                crate::store::DENSE_OVER
            ),
        });
    }
    let cid = uuid::Uuid::try_parse(&row.checkpoint_id).ok();
    let legacy = legacy::is_legacy(cp);
    if cid.is_none() {
        // LangGraph hashes the id's hex bytes into every task id: its own get_state raises
        // ValueError on such a checkpoint (binascii.unhexlify)
        warnings.push(Warning {
            field: "tasks.id".into(),
            message: format!(
                "checkpoint id {:?} is not a hex uuid: task ids cannot be computed (LangGraph's get_state raises ValueError on it)",
                row.checkpoint_id
            ),
        });
    }

    // ---- tasks: PUSH (Send packets) then PULL (triggered nodes)
    let mut planned: Vec<PlannedTask> = Vec::new();
    if let Some(Value::Array(sends)) = cp.value("__pregel_tasks") {
        for (idx, packet) in sends.iter().enumerate() {
            let Some(send) = Send::from_value(packet) else {
                continue;
            };
            if let Some(t) = input.topology {
                if t.node(&send.node).is_none() {
                    continue;
                }
            }
            let id = cid
                .map(|c| match legacy {
                    true => ids::legacy_push_task_id(&c, ns, task_step, &send.node, idx),
                    false => ids::push_task_id(&c, ns, task_step, &send.node, idx),
                })
                .unwrap_or_default();
            let mut path = vec![
                PathPart::Str("__pregel_push".into()),
                PathPart::Int(idx as i64),
            ];
            if !legacy {
                path.push(PathPart::Bool(false));
            }
            planned.push(PlannedTask {
                id,
                id_confirmed: true,
                name: send.node,
                path,
                order_key: None,
                join_only: false,
            });
        }
    }
    let n_push = planned.len();
    if !cp.channel_versions.is_empty() {
        let nodes: Vec<(String, Vec<String>)> = match input.topology {
            Some(t) => t
                .nodes
                .iter()
                .map(|n| (n.name.clone(), n.triggers.clone()))
                .collect(),
            None if legacy => legacy::inferred_nodes(cp, input.catalogue, input.seen_nodes),
            None => inferred_nodes(cp, input.catalogue),
        };
        for (name, triggers) in &nodes {
            let Some((pos, join_only)) = triggered(name, triggers, cp) else {
                continue;
            };
            let path_str = format!("~__pregel_pull, {name}");
            let from_writes = input
                .writes
                .iter()
                .find(|w| w.task_path == path_str && w.task_id != NULL_TASK_ID)
                .map(|w| w.task_id.clone());
            let computed = cid.map(|c| match legacy {
                true => ids::legacy_pull_task_id(
                    &c,
                    ns,
                    task_step,
                    name,
                    &fired_triggers(name, triggers, cp),
                ),
                false => ids::pull_task_id(&c, ns, task_step, name, triggers),
            });
            // With the graph the formula is exact (§5.2); from the DB alone a task's own writes
            // are the authority and the formula is a fallback that may miss unseen join triggers.
            // (0.2's writes name no task path: a write with the computed id confirms it.)
            let legacy_confirmed = legacy
                && computed
                    .as_ref()
                    .is_some_and(|c| input.writes.iter().any(|w| &w.task_id == c));
            let (id, id_confirmed) = match (input.topology, from_writes) {
                (Some(_), _) => (computed.unwrap_or_default(), true),
                (None, Some(w)) => (w, true),
                (None, None) => (computed.unwrap_or_default(), legacy_confirmed),
            };
            planned.push(PlannedTask {
                id,
                id_confirmed,
                name: name.clone(),
                path: vec![
                    PathPart::Str("__pregel_pull".into()),
                    PathPart::Str(name.clone()),
                ],
                order_key: Some(pos),
                join_only,
            });
        }
        if legacy && input.topology.is_none() {
            unnamed_legacy_tasks(input, cid, task_step, &nodes, &mut planned, &mut warnings);
        }
        if input.topology.is_none() {
            let pull = &mut planned[n_push..];
            if pull.len() > 1 && pull.iter().any(|t| t.join_only) {
                warnings.push(Warning {
                    field: "next".into(),
                    message: format!(
                        "order of {} is a guess: LangGraph orders tasks by node registration, which the DB shows only for edge-triggered nodes (pass the graph to be exact)",
                        pull.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", ")
                    ),
                });
            } else if pull.len() > 1 && !input.channel_order {
                warnings.push(Warning {
                    field: "next".into(),
                    message: format!(
                        "order of {} is a guess: LangGraph orders tasks by node registration, and this store keeps no channel order (JSONB) to show it (pass the graph to be exact)",
                        pull.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", ")
                    ),
                });
            }
            pull.sort_by_key(|t| t.order_key);
        }
    }
    let unconfirmed: Vec<&str> = planned
        .iter()
        .filter(|t| !t.id_confirmed)
        .map(|t| t.name.as_str())
        .collect();
    if !unconfirmed.is_empty() {
        warnings.push(Warning {
            field: "tasks.id".into(),
            message: format!(
                "id of {} recomputed from its StateGraph triggers; no write on this checkpoint confirms it (pass the graph to be exact)",
                unconfirmed.join(", ")
            ),
        });
    }

    // ---- task statuses from pending writes (read_task_statuses)
    struct Status {
        output: Vec<(String, Value)>,
        interrupts: Vec<Interrupt>,
        error: Option<Typed>,
    }
    let status_of = |tid: &str| -> Status {
        let mut st = Status {
            output: Vec::new(),
            interrupts: Vec::new(),
            error: None,
        };
        for w in input.writes.iter().filter(|w| w.task_id == tid) {
            match w.channel.as_str() {
                "__interrupt__" => {
                    let from = st.interrupts.len();
                    match &w.value {
                        Typed::Value(Value::Array(items)) => st
                            .interrupts
                            .extend(items.iter().filter_map(Interrupt::from_value)),
                        Typed::Value(v) => st.interrupts.extend(Interrupt::from_value(v)),
                        _ => {}
                    }
                    if legacy {
                        // LangGraph 0.2's Interrupt has no id
                        for i in &mut st.interrupts[from..] {
                            i.id.clear();
                        }
                    }
                }
                "__error__" => {
                    if st.error.is_none() {
                        st.error = Some(w.value.clone());
                    }
                }
                c if CONTROL_WRITES.contains(&c) => {}
                c => st
                    .output
                    .push((c.to_string(), w.value.clone().into_value())),
            }
        }
        st
    };

    // LangGraph 0.2: a channel named after a node is that node's edge channel, not state (a
    // state key may not share a node's name)
    let node_names: Vec<String> = if legacy && input.topology.is_none() {
        legacy::inferred_nodes(cp, input.catalogue, input.seen_nodes)
            .into_iter()
            .map(|(n, _)| n)
            .chain(planned.iter().map(|t| t.name.clone()))
            .collect()
    } else {
        Vec::new()
    };
    let state_keys: Vec<String> = match input.topology {
        Some(t) => t.state_keys.iter().map(|k| k.name.clone()).collect(),
        None => {
            // a key no checkpoint of the thread has written yet may still be in this
            // checkpoint's pending writes (a finished task's result): a StateGraph node writes
            // nothing but state keys outside the reserved channels
            let mut keys: Vec<String> = cp
                .channel_values
                .iter()
                .map(|(k, _)| k.clone())
                .chain(input.catalogue.iter().cloned())
                .chain(input.writes.iter().map(|w| w.channel.clone()))
                .filter(|k| !is_reserved_channel(k))
                .filter(|k| !node_names.contains(k))
                .collect();
            let mut seen = std::collections::HashSet::new();
            keys.retain(|k| seen.insert(k.clone()));
            keys
        }
    };
    let is_state_key = |k: &str| state_keys.iter().any(|s| s == k);

    let mut tasks = Vec::new();
    for p in planned {
        let st = status_of(&p.id);
        let finished = !st.output.is_empty();
        // LangGraph 0.2.20 (checkpoint v1): PregelTask has no result
        let result = (finished && cp.v > 1).then(|| {
            if let Some((_, v)) = st.output.iter().find(|(c, _)| c == "__return__") {
                return TaskResult::Return(v.clone());
            }
            let mut out: Vec<(String, Value)> = Vec::new();
            for (c, v) in st.output.iter().filter(|(c, _)| is_state_key(c)) {
                match out.iter_mut().find(|(k, _)| k == c) {
                    Some((_, existing)) if !existing.is_nil() => {
                        // appended in place: a task with 1 M writes to one key took minutes
                        // when the list was copied for each
                        if let Value::Map(m) = existing {
                            if let [(k, Value::Array(list))] = m.as_mut_slice() {
                                if k.as_str() == Some("$writes") {
                                    list.push(v.clone());
                                    continue;
                                }
                            }
                        }
                        let first = std::mem::replace(existing, Value::Nil);
                        *existing = Value::Map(vec![(
                            Value::from("$writes"),
                            Value::Array(vec![first, v.clone()]),
                        )]);
                    }
                    Some((_, existing)) => *existing = v.clone(),
                    None => out.push((c.clone(), v.clone())),
                }
            }
            TaskResult::Writes(out)
        });
        let interrupts = if input.live && finished {
            Vec::new()
        } else {
            st.interrupts
        };
        let subgraph = match input.topology {
            Some(t) => t.node(&p.name).is_some_and(|n| n.subgraph),
            None => {
                let tns = ids::task_ns(ns, &p.name, &p.id);
                input
                    .namespaces
                    .iter()
                    .any(|n| n == &tns || n.starts_with(&format!("{tns}|")))
            }
        };
        tasks.push(TaskSnapshot {
            state_ns: subgraph.then(|| ids::task_ns(ns, &p.name, &p.id)),
            id: p.id,
            id_confirmed: p.id_confirmed,
            name: p.name,
            path: p.path,
            error: st.error,
            interrupts,
            result,
            finished,
        });
    }
    // LangGraph 0.2.20 (v1) lists every prepared task in `next`, finished or not
    let next = tasks
        .iter()
        .filter(|t| cp.v <= 1 || !(input.live && t.finished))
        .map(|t| t.name.clone())
        .collect();

    // ---- values: channel values (+ reducer defaults) + NULL writes (+ live: finished outputs)
    let mut values: Vec<(String, Value)> = Vec::new();
    for k in &state_keys {
        if let Some(v) = cp.value(k) {
            // a DeltaChannel's snapshot blob holds the value itself
            values.push((
                k.clone(),
                delta::snapshot_content(v).unwrap_or_else(|| v.clone()),
            ));
        } else if let Some(h) = input.delta.iter().find(|h| h.key == *k) {
            let default = input
                .topology
                .and_then(|t| t.key(k))
                .and_then(|k| k.default.clone());
            let (v, w) = delta::rebuild(h, input.topology, default);
            values.push((k.clone(), v));
            warnings.extend(w);
        } else if let Some(d) = input
            .topology
            .and_then(|t| t.key(k))
            .and_then(|k| k.default.clone())
        {
            values.push((k.clone(), d));
        }
    }
    let mut groups: Vec<(String, Vec<Value>)> = Vec::new();
    let mut push_write = |c: &str, v: Value| match groups.iter_mut().find(|(k, _)| k == c) {
        Some((_, vs)) => vs.push(v),
        None => groups.push((c.to_string(), vec![v])),
    };
    // LangGraph 0.2.20 (v1) applies no pending writes to the values
    // a write that is a preview (too big to load) is not applied: the value would be made up
    let mut unapplied: Vec<(String, String)> = Vec::new();
    for w in input
        .writes
        .iter()
        .filter(|w| w.task_id == NULL_TASK_ID && cp.v > 1)
    {
        if is_state_key(&w.channel) {
            if w.cut.is_some() {
                unapplied.push((w.channel.clone(), "an update_state".into()));
                continue;
            }
            push_write(&w.channel, w.value.clone().into_value());
        }
    }
    reducers::apply_groups(
        &mut values,
        std::mem::take(&mut groups),
        input.topology,
        input.learned,
        &mut warnings,
    );
    if input.live && cp.v > 1 {
        let mut finished: Vec<&TaskSnapshot> = tasks.iter().filter(|t| t.finished).collect();
        finished.sort_by_key(|t| ids::task_path_str(&t.path));
        let mut groups: Vec<(String, Vec<Value>)> = Vec::new();
        let cut_writes: Vec<(&str, &str)> = input
            .writes
            .iter()
            .filter(|w| w.cut.is_some())
            .map(|w| (w.task_id.as_str(), w.channel.as_str()))
            .collect();
        for t in finished {
            let st = status_of(&t.id);
            for (c, v) in st.output {
                let cut = cut_writes.contains(&(t.id.as_str(), c.as_str()));
                if cut && is_state_key(&c) {
                    unapplied.push((c, format!("task {}'s", t.name)));
                    continue;
                }
                if is_state_key(&c) {
                    match groups.iter_mut().find(|(k, _)| *k == c) {
                        Some((_, vs)) => vs.push(v),
                        None => groups.push((c, vec![v])),
                    }
                }
            }
        }
        reducers::apply_groups(
            &mut values,
            groups,
            input.topology,
            input.learned,
            &mut warnings,
        );
    }
    unapplied.dedup();
    for (k, whose) in unapplied {
        warnings.push(Warning {
            field: format!("values.{k}"),
            message: format!(
                "'{k}' is shown without {whose} write to it: that write is a preview (too big to load whole), applying it would show made-up values"
            ),
        });
    }
    if input.topology.is_none() {
        // keys other checkpoints of the thread hold but this one lacks: LangGraph shows a reducer
        // key's default here, a last-value key not at all
        let last_value = |k: &str| {
            input
                .learned
                .iter()
                .any(|(l, r)| l == k && *r == Learned::LastValue)
        };
        for k in state_keys
            .iter()
            .filter(|k| !values.iter().any(|(v, _)| v == *k))
            // a last-value key not written yet is absent in LangGraph's view too
            .filter(|k| !last_value(k))
        {
            let default = input.defaults.iter().find(|(e, _)| e == k).map(|(_, d)| *d);
            warnings.push(Warning {
                field: format!("values.{k}"),
                message: match default {
                    Some(d) => format!(
                        "'{k}' has no value at this checkpoint though the thread writes it: if it has a reducer, LangGraph shows its default here (likely {d}); a last-value key is absent, as here (pass the graph to be exact)"
                    ),
                    None => format!(
                        "'{k}' has no value at this checkpoint though the thread writes it: if it has a reducer, LangGraph shows its default here; a last-value key is absent, as here (pass the graph to be exact)"
                    ),
                },
            });
        }
    }
    let root_value = state_keys.len() == 1 && state_keys[0] == "__root__";

    let pending_writes = input
        .writes
        .iter()
        .map(|w| PendingWrite {
            task_id: w.task_id.clone(),
            task_path: w.task_path.clone(),
            idx: w.idx,
            channel: w.channel.clone(),
            kind: WriteKind::of(&w.channel),
            value: w.value.clone(),
        })
        .collect();

    Snapshot {
        thread_id: row.thread_id.clone(),
        checkpoint_ns: row.checkpoint_ns.clone(),
        checkpoint_id: row.checkpoint_id.clone(),
        parent_checkpoint_id: row.parent_checkpoint_id.clone(),
        parents: row
            .metadata
            .get("parents")
            .and_then(Json::as_object)
            .cloned()
            .unwrap_or_default(),
        created_at: cp.ts.clone(),
        metadata: row.metadata.clone(),
        step,
        values,
        root_value,
        next,
        tasks,
        pending_writes,
        warnings,
        limitations: if input.topology.is_none() {
            vec![db_only_limitation()]
        } else {
            Vec::new()
        },
        live: input.live,
        format: legacy.then(|| legacy::format_name(cp)),
    }
}

/// LangGraph 0.2, from the DB alone: writes of a task no known node explains (its node never ran
/// on this thread, so nothing names the plain edge that triggers it). The task is named by its
/// interrupt's `ns` (0.2.6x+), or by matching its id against every known node name and every
/// node channel that fired; otherwise it is shown as `?` with its writes, and a warning says
/// what the format does not record. A node channel that fired with no known node listening to
/// it is warned about too (the edge may lead to END, or to a node never seen here).
fn unnamed_legacy_tasks(
    input: &Input,
    cid: Option<uuid::Uuid>,
    task_step: i64,
    nodes: &[(String, Vec<String>)],
    planned: &mut Vec<PlannedTask>,
    warnings: &mut Vec<Warning>,
) {
    let cp = input.checkpoint;
    let ns = input.row.checkpoint_ns.as_str();
    let names: Vec<&str> = nodes.iter().map(|(n, _)| n.as_str()).collect();
    // node channels written at this checkpoint: a node name, available, newer than what any
    // known listener saw
    let fresh: Vec<(usize, &str)> = cp
        .channel_values
        .iter()
        .enumerate()
        .filter(|(_, (k, _))| names.contains(&k.as_str()) && available(k, cp))
        .map(|(i, (k, _))| (i, k.as_str()))
        .collect();
    let mut unexplained: Vec<&str> = Vec::new();
    for w in input.writes {
        if w.task_id != NULL_TASK_ID
            && !planned.iter().any(|t| t.id == w.task_id)
            && !unexplained.contains(&w.task_id.as_str())
        {
            unexplained.push(&w.task_id);
        }
    }
    let mut unnamed = Vec::new();
    let any_extra = !unexplained.is_empty();
    for tid in unexplained {
        let from_ns = input
            .writes
            .iter()
            .filter(|w| w.task_id == tid && w.channel == "__interrupt__")
            .filter_map(|w| match &w.value {
                Typed::Value(Value::Array(a)) => a.first().and_then(Interrupt::ns_of),
                Typed::Value(v) => Interrupt::ns_of(v),
                _ => None,
            })
            .find_map(|parts| {
                let last = parts.last()?;
                let (name, id) = last.rsplit_once(':')?;
                (id == tid).then(|| name.to_string())
            });
        let by_id = || {
            let c = cid?;
            names.iter().find_map(|name| {
                fresh.iter().find_map(|(pos, ch)| {
                    let fired = vec![ch.to_string()];
                    (ids::legacy_pull_task_id(&c, ns, task_step, name, &fired) == tid)
                        .then(|| (name.to_string(), Some(*pos)))
                })
            })
        };
        let (name, pos) = match from_ns {
            Some(n) => {
                let pos = fresh.first().map(|(p, _)| *p);
                (n, pos)
            }
            None => match by_id() {
                Some(x) => x,
                None => {
                    unnamed.push(tid.to_string());
                    ("?".to_string(), fresh.first().map(|(p, _)| *p))
                }
            },
        };
        planned.push(PlannedTask {
            id: tid.to_string(),
            id_confirmed: true,
            path: vec![
                PathPart::Str("__pregel_pull".into()),
                PathPart::Str(name.clone()),
            ],
            name,
            order_key: pos,
            join_only: false,
        });
    }
    let format = legacy::format_name(cp);
    if !unnamed.is_empty() {
        let via = fresh.iter().map(|(_, c)| *c).collect::<Vec<_>>().join(", ");
        {
            warnings.push(Warning {
                field: "tasks".into(),
                message: format!(
                    "task {} has writes here but its node is not named in the DB: in the {format} a plain edge{} leads to a node named only in the graph, and that node never ran on this thread (pass --topology to name it)",
                    unnamed.join(", "),
                    if via.is_empty() { String::new() } else { format!(" from {via}") },
                ),
            });
        }
    } else if !any_extra {
        let listened: Vec<&str> = nodes
            .iter()
            .flat_map(|(_, t)| t.iter().map(String::as_str))
            .collect();
        let open: Vec<&str> = fresh
            .iter()
            .map(|(_, c)| *c)
            .filter(|c| !listened.contains(c))
            .filter(|c| !planned.iter().any(|t| t.name == *c))
            .collect();
        if !open.is_empty() {
            warnings.push(Warning {
                field: "tasks".into(),
                message: format!(
                    "{} wrote {}: in the {format} a plain edge from a node leads to a node named only in the graph — here to END, or to a node that never ran on this thread and would be next (pass --topology to know)",
                    open.join(", "),
                    if open.len() == 1 { "its edge channel" } else { "their edge channels" },
                ),
            });
        }
    }
}

/// Nodes of a StateGraph as far as the DB shows them: `__start__`, every `branch:to:X` target and
/// every waiting-edge target, with triggers `branch:to:X` plus the `join:...:X` channels seen.
fn inferred_nodes(cp: &Checkpoint, catalogue: &[String]) -> Vec<(String, Vec<String>)> {
    let mut channels: Vec<&str> = cp
        .channel_versions
        .iter()
        .map(|(k, _)| k.as_str())
        .collect();
    channels.extend(cp.channel_values.iter().map(|(k, _)| k.as_str()));
    channels.extend(catalogue.iter().map(String::as_str));
    let mut nodes: Vec<(String, Vec<String>)> = Vec::new();
    let mut add = |name: &str, trig: &str| match nodes.iter_mut().find(|(n, _)| n == name) {
        Some((_, t)) => {
            if !t.iter().any(|x| x == trig) {
                t.push(trig.to_string())
            }
        }
        None => nodes.push((name.to_string(), vec![trig.to_string()])),
    };
    for ch in &channels {
        if *ch == "__start__" {
            add("__start__", "__start__");
        } else if let Some(n) = ch.strip_prefix("branch:to:") {
            add(n, ch);
        } else if let Some(rest) = ch.strip_prefix("join:") {
            if let Some((_, target)) = rest.rsplit_once(':') {
                add(target, &format!("branch:to:{target}"));
                add(target, ch);
            }
        }
    }
    nodes
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

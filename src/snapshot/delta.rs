//! DeltaChannel state keys (LangGraph 1.2, beta): a checkpoint stores a delta key's value only as
//! a `_DeltaSnapshot` (msgpack ext 7) every `snapshot_frequency` updates, and nothing in between.
//! LangGraph rebuilds the value at a checkpoint with `get_delta_channel_history`: walk the parent
//! chain from the checkpoint's parent, collect each ancestor's pending writes to the key (in
//! `writes_sort_key` order, oldest ancestor first) until an ancestor holds a value for it (the
//! seed), then `DeltaChannel.replay_writes`: the last `Overwrite` resets the base, the writes
//! after it go through the reducer in one batch. This module does the walk over the store and the
//! rebuild where superstep knows the reducer.

use super::reducers::delta_reduce;
use super::topology::{ChannelKind, ReducerId, Topology};
use super::Warning;
use crate::store::{Checkpoint, CheckpointRow, Store, StoreError};
use crate::value::ext::{overwrite_value, Ext, EXT_DELTA_SNAPSHOT};
use rmpv::Value;
use serde_json::Value as Json;

/// What `get_delta_channel_history` returns for one channel, plus where its seed was found.
#[derive(Debug, Clone, PartialEq)]
pub struct DeltaHistory {
    pub key: String,
    /// The nearest ancestor's stored value (a `_DeltaSnapshot`'s content, or a plain value left
    /// by a `BinaryOperatorAggregate` before the key became a delta channel); `None`: the walk
    /// reached the thread's first checkpoint (LangGraph starts from `typ()`).
    pub seed: Option<Value>,
    /// The checkpoint holding the seed.
    pub seed_at: Option<String>,
    /// The ancestors' writes to the key, oldest first.
    pub writes: Vec<Value>,
}

/// The content of a `_DeltaSnapshot` blob; `None` for any other value.
pub fn snapshot_content(v: &Value) -> Option<Value> {
    match v {
        Value::Ext(code, data) if *code == EXT_DELTA_SNAPSHOT => match Ext::parse(*code, data) {
            Ext::DeltaSnapshot(inner) => Some(inner),
            _ => None,
        },
        _ => None,
    }
}

/// The keys of this checkpoint whose value LangGraph rebuilds from the ancestors
/// (`_delta_channels_to_replay`): delta channels with a version and nothing stored. Without the
/// graph, a key is known to be a delta channel by the checkpoint's own
/// `counters_since_delta_snapshot` metadata (LangGraph keeps a counter for every delta key that
/// is not at a snapshot here).
pub fn keys_to_replay(
    row: &CheckpointRow,
    cp: &Checkpoint,
    topology: Option<&Topology>,
    state_keys: &[String],
) -> Vec<String> {
    let counters = row
        .metadata
        .get("counters_since_delta_snapshot")
        .and_then(Json::as_object);
    state_keys
        .iter()
        .filter(|k| cp.version(k).is_some() && cp.value(k).is_none())
        .filter(|k| match topology {
            Some(t) => t.key(k).is_some_and(|s| s.is_delta()),
            None => counters.is_some_and(|c| c.contains_key(k.as_str())),
        })
        .cloned()
        .collect()
}

/// `get_delta_channel_history` for `keys` at checkpoint `row`: one walk up the parent chain for
/// all of them. Reads only (the store is opened for inspection).
pub fn history(
    store: &Store,
    row: &CheckpointRow,
    keys: &[String],
) -> Result<Vec<DeltaHistory>, StoreError> {
    let mut out: Vec<DeltaHistory> = keys
        .iter()
        .map(|k| DeltaHistory {
            key: k.clone(),
            seed: None,
            seed_at: None,
            writes: Vec::new(),
        })
        .collect();
    // per key: the ancestors' write batches, newest ancestor first
    let mut batches: Vec<Vec<Vec<Value>>> = vec![Vec::new(); keys.len()];
    let mut remaining: Vec<bool> = vec![true; keys.len()];
    let mut cursor = row.parent_checkpoint_id.clone();
    let mut seen = std::collections::HashSet::new();
    while let Some(id) = cursor.take() {
        if !remaining.iter().any(|r| *r) || !seen.insert(id.clone()) {
            break;
        }
        let Some(anc) = store.checkpoint(&row.thread_id, &row.checkpoint_ns, Some(&id))? else {
            break;
        };
        let cp = store.decode(&anc)?;
        let writes = store.writes(&row.thread_id, &row.checkpoint_ns, &id)?;
        for (i, k) in keys.iter().enumerate() {
            if !remaining[i] {
                continue;
            }
            batches[i].push(
                writes
                    .iter()
                    .filter(|w| w.channel == *k)
                    .map(|w| w.value.clone().into_value())
                    .collect(),
            );
            if let Some(v) = cp.value(k) {
                out[i].seed = Some(snapshot_content(v).unwrap_or_else(|| v.clone()));
                out[i].seed_at = Some(id.clone());
                remaining[i] = false;
            }
        }
        cursor = anc.parent_checkpoint_id.clone();
    }
    for (h, b) in out.iter_mut().zip(batches) {
        h.writes = b.into_iter().rev().flatten().collect();
    }
    Ok(out)
}

/// The value LangGraph shows for a delta key rebuilt from `h`, when superstep knows the reducer
/// (`operator.add`, `_messages_delta_reducer`); otherwise the seed and the writes since, as
/// `{"$snapshot": seed, "$writes": [...]}`, with a warning that says so.
pub fn rebuild(
    h: &DeltaHistory,
    topology: Option<&Topology>,
    default: Option<Value>,
) -> (Value, Option<Warning>) {
    let kind = topology.and_then(|t| t.key(&h.key)).map(|k| &k.kind);
    let reducer: Option<&ReducerId> = match kind {
        Some(ChannelKind::DeltaChannel { reducer, .. }) => Some(reducer),
        _ => None,
    };
    // DeltaChannel.from_checkpoint(MISSING) starts at typ() (a list for every key superstep
    // rebuilds; the topology's default says so)
    let empty = default.unwrap_or(Value::Array(Vec::new()));
    let mut base = h.seed.clone().unwrap_or(empty.clone());
    let mut rest: &[Value] = &h.writes;
    if let Some(i) = h.writes.iter().rposition(|w| overwrite_value(w).is_some()) {
        base = match overwrite_value(&h.writes[i]) {
            Some(Value::Nil) | None => empty,
            Some(v) => v,
        };
        rest = &h.writes[i + 1..];
    }
    let why = match reducer {
        Some(r) => match match (r, topology.and_then(|t| t.code.as_ref())) {
            (ReducerId::Starlark(f), Some(code)) => {
                code.0.reduce(f, &base, &Value::Array(rest.to_vec()))
            }
            _ => delta_reduce(r, &base, rest),
        } {
            Ok(v) => return (v, None),
            Err(why) => format!("reducer {}: {why}", r.display()),
        },
        None if topology.is_some() => "the graph does not say its reducer".to_string(),
        None => {
            "its reducer is unknown without the graph: pass --topology or the graph".to_string()
        }
    };
    let seed_note = match (&h.seed, &h.seed_at) {
        (Some(_), Some(at)) => format!("the snapshot at checkpoint {at}"),
        _ => "no snapshot (the thread's first checkpoint is reached: LangGraph starts from an empty value)"
            .to_string(),
    };
    let shown = Value::Map(vec![
        (
            Value::from("$snapshot"),
            h.seed.clone().unwrap_or(Value::Nil),
        ),
        (Value::from("$writes"), Value::Array(h.writes.clone())),
    ]);
    let warning = Warning {
        field: format!("values.{}", h.key),
        message: format!(
            "'{}' is a DeltaChannel: this checkpoint stores no value for it. LangGraph rebuilds it from {seed_note} plus the {} write(s) since, through its reducer; superstep cannot here ({why}), so it shows {{\"$snapshot\", \"$writes\"}}",
            h.key,
            h.writes.len()
        ),
    };
    (shown, Some(warning))
}

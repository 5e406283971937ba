//! DeltaChannel bookkeeping at save time (LangGraph 1.2.24 `_loop._put_checkpoint`,
//! `pregel/_checkpoint.py`): the `counters_since_delta_snapshot` metadata, the snapshot cadence,
//! and the version bump a snapshot of an unwritten channel needs (`_mark_bumps_seen`).
//!
//! Each delta channel keeps `(updates, supersteps)` since its last snapshot in the checkpoint's
//! metadata (only the non-zero pairs, as `[u, s]`). Every save bumps `supersteps`, and `updates`
//! when the step wrote the channel; a channel snapshots (a `_DeltaSnapshot(value)` blob, counters
//! back to `(0, 0)`) when `updates >= snapshot_frequency` or `supersteps >= 5000`, or when it is
//! forced (an `Overwrite`, or a new branch whose starting checkpoint has pending writes to it).

use super::channels::ChannelKind;
use super::checkpoint::State;
use super::graph::Graph;
use crate::store::Version;
use serde_json::{json, Map, Value as Json};

/// `DELTA_MAX_SUPERSTEPS_SINCE_SNAPSHOT` (LangGraph's default; its env override is not read).
pub const MAX_SUPERSTEPS_SINCE_SNAPSHOT: i64 = 5000;

const SNAPSHOT_BUMPS: &str = "__snapshot_bumps__";

/// The delta channels of a graph with their `snapshot_frequency`, in channel order.
pub fn delta_channels(graph: &Graph) -> impl Iterator<Item = (&str, u32)> {
    graph.channels.iter().filter_map(|(n, k)| match k {
        ChannelKind::Delta {
            snapshot_frequency, ..
        } => Some((n.as_str(), *snapshot_frequency)),
        _ => None,
    })
}

pub fn is_delta(graph: &Graph, channel: &str) -> bool {
    delta_channels(graph).any(|(n, _)| n == channel)
}

/// `counters_since_delta_snapshot` of a checkpoint's metadata.
pub fn counters_of(md: &Map<String, Json>) -> Vec<(String, (i64, i64))> {
    md.get("counters_since_delta_snapshot")
        .and_then(Json::as_object)
        .map(|o| {
            o.iter()
                .map(|(k, v)| {
                    let n = |i: usize| v.get(i).and_then(Json::as_i64).unwrap_or(0);
                    (k.clone(), (n(0), n(1)))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The per-superstep bump (`_put_checkpoint`, and `create_metadata_for_update_state_api`).
pub fn bumped(
    graph: &Graph,
    prev: &Map<String, Json>,
    updated: &[String],
) -> Vec<(String, (i64, i64))> {
    let prev = counters_of(prev);
    delta_channels(graph)
        .map(|(name, _)| {
            let (u, s) = prev
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, c)| *c)
                .unwrap_or((0, 0));
            let u = if updated.iter().any(|c| c == name) {
                u + 1
            } else {
                u
            };
            (name.to_string(), (u, s + 1))
        })
        .collect()
}

/// `delta_channels_to_snapshot` (plus the forced ones): channels with a value and a version
/// whose counters reached the cadence.
pub fn to_snapshot(
    graph: &Graph,
    state: &State,
    counters: &[(String, (i64, i64))],
    forced: &[String],
) -> Vec<String> {
    delta_channels(graph)
        .filter(|(name, freq)| {
            if forced.iter().any(|f| f == name) {
                return true;
            }
            if state.version(name).is_none() {
                return false;
            }
            let (u, s) = counters
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, c)| *c)
                .unwrap_or((0, 0));
            u >= *freq as i64 || s >= MAX_SUPERSTEPS_SINCE_SNAPSHOT
        })
        .map(|(n, _)| n.to_string())
        .collect()
}

/// Reset the snapshotted channels' counters and write the non-zero ones into `md`.
pub fn finish_metadata(
    md: &mut Map<String, Json>,
    mut counters: Vec<(String, (i64, i64))>,
    snapshot: &[String],
) {
    for (k, c) in counters.iter_mut() {
        if snapshot.contains(k) {
            *c = (0, 0);
        }
    }
    let non_zero: Map<String, Json> = counters
        .into_iter()
        .filter(|(_, c)| *c != (0, 0))
        .map(|(k, (u, s))| (k, json!([u, s])))
        .collect();
    if non_zero.is_empty() {
        md.remove("counters_since_delta_snapshot");
    } else {
        md.insert(
            "counters_since_delta_snapshot".into(),
            Json::Object(non_zero),
        );
    }
}

/// `create_checkpoint`'s bump: a snapshotted channel must have a version that moved since the
/// last stored checkpoint (`put` stores blobs only for those) — a never-written one gets its
/// first version, an unchanged one the next — and whoever had seen the old version is advanced
/// (`_mark_bumps_seen`, with the `__snapshot_bumps__` marks). `next` is `get_next_version`.
pub fn bump_versions(
    graph: &Graph,
    state: &mut State,
    stored: &[(String, Version)],
    next: &mut dyn FnMut(Option<&Version>) -> Version,
) {
    let mut bumps: Vec<(String, Option<Version>, Version)> = Vec::new();
    for name in state.snapshot.clone() {
        if state.channel(&name).is_none_or(|c| !c.is_available()) {
            continue;
        }
        let old = state.version(&name).cloned();
        let stored_v = stored.iter().find(|(k, _)| *k == name).map(|(_, v)| v);
        let needs = match &old {
            None => true,
            Some(v) => Some(v) == stored_v,
        };
        if needs {
            let new = next(old.as_ref());
            state.set_version(&name, new.clone());
            bumps.push((name, old, new));
        }
    }
    if bumps.is_empty() {
        return;
    }
    for (k, old, _) in &bumps {
        if old.is_none() {
            if let Some(nodes) = graph.trigger_to_nodes.get(k) {
                for n in nodes {
                    state.seen_mut(n);
                }
            }
        }
    }
    let mut marks: Vec<(String, Version)> = state.seen(SNAPSHOT_BUMPS).cloned().unwrap_or_default();
    let mark = |marks: &mut Vec<(String, Version)>, k: String, v: Version| match marks
        .iter_mut()
        .find(|(x, _)| *x == k)
    {
        Some((_, o)) => *o = v,
        None => marks.push((k, v)),
    };
    let nodes: Vec<String> = state
        .versions_seen
        .iter()
        .map(|(n, _)| n.clone())
        .filter(|n| n != SNAPSHOT_BUMPS)
        .collect();
    for node in nodes {
        for (k, old, new) in &bumps {
            let seen = state
                .seen(&node)
                .and_then(|s| s.iter().find(|(x, _)| x == k).map(|(_, v)| v.clone()));
            if seen.as_ref() != old.as_ref() {
                continue;
            }
            let advanced = format!("{node}|{k}");
            let read = format!("{node}:{k}");
            if let Some(o) = old {
                let prev_mark = marks.iter().find(|(x, _)| *x == advanced).map(|(_, v)| v);
                if prev_mark != Some(o) {
                    mark(&mut marks, read, o.clone());
                }
            }
            mark(&mut marks, advanced, new.clone());
            let s = state.seen_mut(&node);
            match s.iter_mut().find(|(x, _)| x == k) {
                Some((_, v)) => *v = new.clone(),
                None => s.push((k.clone(), new.clone())),
            }
        }
    }
    if !marks.is_empty() {
        *state.seen_mut(SNAPSHOT_BUMPS) = marks;
    }
}

/// `create_checkpoint_plan_for_update_state_api` plus `create_checkpoint`'s bump, for an
/// `update_state` head: sets `state.snapshot` and returns the counters its metadata carries
/// (`None` on a fresh thread, whose metadata has none).
pub fn plan_update(
    graph: &Graph,
    state: &mut State,
    saved_md: Option<&Map<String, Json>>,
    updated: &[String],
    fork: &[String],
    stored: &[(String, Version)],
    next: &mut dyn FnMut(Option<&Version>) -> Version,
) -> Option<Vec<(String, (i64, i64))>> {
    let counters = match saved_md {
        None => {
            // a fresh thread snapshots the delta channels it wrote
            state.snapshot = delta_channels(graph)
                .filter(|(k, _)| state.version(k).is_some())
                .map(|(k, _)| k.to_string())
                .collect();
            None
        }
        Some(md) => {
            let c = bumped(graph, md, updated);
            state.snapshot = to_snapshot(graph, state, &c, fork);
            Some(c)
        }
    };
    if !state.snapshot.is_empty() {
        bump_versions(graph, state, stored, next);
    }
    counters
}

//! `apply_writes` (spec §4.2): one call per superstep (and for input / NULL writes).

use super::channels::ReduceWith;
use super::checkpoint::State;
use super::graph::Graph;
use super::versions::{max_version, next_version};
use super::EngineError;
use crate::ids::{task_path_str, PathPart, NULL_TASK_ID};
use crate::store::Version;
use rmpv::Value;

/// Writes of one task as `apply_writes` sees them.
pub struct TaskWrites<'a> {
    pub name: &'a str,
    pub path: &'a [PathPart],
    pub triggers: &'a [String],
    pub writes: &'a [(String, Value)],
}

impl<'a> TaskWrites<'a> {
    /// Input or NULL_TASK_ID writes: `PregelTaskWrites((), "__input__", writes, [])`.
    pub fn input(writes: &'a [(String, Value)]) -> Self {
        TaskWrites {
            name: "__input__",
            path: &[],
            triggers: &[],
            writes,
        }
    }
}

/// The `(channel, value)` writes stored under NULL_TASK_ID among pending `(task_id, channel, value)` rows.
pub fn null_task_writes<'p>(
    pending: impl IntoIterator<Item = &'p (String, String, Value)>,
) -> Vec<(String, Value)> {
    pending
        .into_iter()
        .filter(|(t, _, _)| t == NULL_TASK_ID)
        .map(|(_, c, v)| (c.clone(), v.clone()))
        .collect()
}

impl<'a> From<&'a super::tasks::Task> for TaskWrites<'a> {
    fn from(t: &'a super::tasks::Task) -> Self {
        TaskWrites {
            name: &t.name,
            path: &t.path,
            triggers: &t.triggers,
            writes: &t.writes,
        }
    }
}

const SKIPPED: [&str; 7] = [
    "__no_writes__",
    "__pregel_push",
    "__resume__",
    "__interrupt__",
    "__return__",
    "__error__",
    "__error_source_node__",
];

const RESERVED: [&str; 4] = ["__interrupt__", "__resume__", "__error__", "__pregel_push"];

/// Apply the writes; returns the sorted `updated_channels`.
pub fn apply_writes(
    state: &mut State,
    graph: &Graph,
    tasks: &mut [TaskWrites],
    fraction: f64,
    code: Option<&dyn ReduceWith>,
) -> Result<Vec<String>, EngineError> {
    tasks.sort_by_cached_key(|t| task_path_str(t.path));
    let bump_step = tasks.iter().any(|t| !t.triggers.is_empty());
    for t in tasks.iter() {
        let updates: Vec<(String, Version)> = t
            .triggers
            .iter()
            .filter_map(|c| state.version(c).map(|v| (c.clone(), v.clone())))
            .collect();
        let seen = state.seen_mut(t.name);
        for (c, v) in updates {
            match seen.iter_mut().find(|(k, _)| *k == c) {
                Some((_, old)) => *old = v,
                None => seen.push((c, v)),
            }
        }
    }
    let next = next_version(
        max_version(state.channel_versions.iter().map(|(_, v)| v)),
        fraction,
    );
    // consume the channels that were read
    let mut consumed: Vec<&str> = Vec::new();
    for t in tasks.iter() {
        for c in t.triggers {
            if !RESERVED.contains(&c.as_str()) && !consumed.contains(&c.as_str()) {
                consumed.push(c);
            }
        }
    }
    for c in consumed {
        if let Some(ch) = state.channel_mut(c) {
            if ch.consume() {
                state.set_version(c, next.clone());
            }
        }
    }
    // group writes by channel, first occurrence first
    let mut by_channel: Vec<(&str, Vec<Value>)> = Vec::new();
    for t in tasks.iter() {
        for (c, v) in t.writes {
            if SKIPPED.contains(&c.as_str()) || state.channel(c).is_none() {
                continue;
            }
            match by_channel.iter_mut().find(|(k, _)| *k == c) {
                Some((_, vs)) => vs.push(v.clone()),
                None => by_channel.push((c, vec![v.clone()])),
            }
        }
    }
    let mut updated: Vec<String> = Vec::new();
    for (c, vals) in by_channel {
        let ch = state.channel_mut(c).unwrap();
        if ch.update(&vals, code)? {
            let avail = ch.is_available();
            state.set_version(c, next.clone());
            if avail {
                updated.push(c.to_string());
            }
        }
    }
    if bump_step {
        let names: Vec<String> = state.channels.iter().map(|c| c.name.clone()).collect();
        for c in names {
            let ch = state.channel_mut(&c).unwrap();
            if ch.is_available() && !updated.contains(&c) && ch.update(&[], code)? {
                let avail = ch.is_available();
                state.set_version(&c, next.clone());
                if avail {
                    updated.push(c);
                }
            }
        }
        // (tentatively) the last superstep: notify every channel of finish (deferred nodes)
        let triggers_a_node = |c: &str| {
            graph
                .nodes
                .iter()
                .any(|n| n.triggers.iter().any(|t| t == c))
        };
        if !updated.iter().any(|c| triggers_a_node(c)) {
            let mut finished: Vec<(String, bool)> = Vec::new();
            for ch in state.channels.iter_mut() {
                if ch.finish() {
                    finished.push((ch.name.clone(), ch.is_available()));
                }
            }
            for (name, avail) in finished {
                state.set_version(&name, next.clone());
                if avail && !updated.contains(&name) {
                    updated.push(name);
                }
            }
        }
    }
    updated.sort();
    Ok(updated)
}

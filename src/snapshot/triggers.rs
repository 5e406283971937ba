//! The trigger rule from the checkpoint alone: which channels are available and which nodes
//! they trigger (LangGraph's `_triggers` over a checkpoint's values and `versions_seen`).

use crate::store::{Checkpoint, Version};
use rmpv::Value;

/// Availability of a channel from its checkpointed value (spec §2.3).
pub(super) fn available(ch: &str, cp: &Checkpoint) -> bool {
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

pub(super) fn triggered(node: &str, triggers: &[String], cp: &Checkpoint) -> Option<(usize, bool)> {
    let seen = cp.seen(node).map(Vec::as_slice);
    let mut first: Option<(usize, bool)> = None;
    for ch in triggers {
        if !available(ch, cp) {
            continue;
        }
        if Version::triggers(cp.version(ch), seen, ch) {
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
pub(super) fn fired_triggers(node: &str, triggers: &[String], cp: &Checkpoint) -> Vec<String> {
    let seen = cp.seen(node);
    triggers
        .iter()
        .filter(|ch| available(ch, cp))
        // LangGraph 0.2 compares with the null version when the node never ran
        .filter(|ch| Version::gt(cp.version(ch), seen.and_then(|s| Version::seen(s, ch))))
        .cloned()
        .collect()
}

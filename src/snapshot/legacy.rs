//! LangGraph 0.2's checkpoint format (checkpoint `v` 1 and 2, written by langgraph 0.2.x with
//! langgraph-checkpoint-sqlite 1.x / 2.0.x), read the way that version's `get_state` shows it.
//!
//! What differs from 1.x (read from langgraph 0.2.20 and 0.2.76's own source):
//! - every node writes a channel named after itself (an `EphemeralValue` holding its name); the
//!   targets of its plain edges are triggered by that channel. Edges from START use
//!   `start:<node>`, conditional edges `branch:<source>:<path>:<node>` (0.2.76 adds
//!   `branch:<source>:__self__:<node>` for `Command(goto)`), waiting edges
//!   `join:<a>+<b>:<node>`. A plain edge's target is therefore named only in the graph: from the
//!   DB alone it is known once it ran on the thread (`versions_seen` keeps its triggers);
//! - task ids are `_uuid5_str`: SHA-1 over the checkpoint id and the parts, hashing only the
//!   triggers that fired; a Send's path is `("__pregel_push", idx)`;
//! - Send packets live in the checkpoint's `pending_sends` (the store moves them into
//!   `__pregel_tasks`, as LangGraph 1.x does on load);
//! - interrupts carry no id; checkpoint-sqlite 1.x's `writes` table has no `task_path`;
//! - v1 (0.2.20): `next` lists every prepared task, finished or not; tasks have no `result`;
//!   pending writes are never applied to the values. v2 (0.2.76) behaves like 1.x there.

use crate::store::Checkpoint;

/// Whether a checkpoint is in LangGraph 0.2's format.
pub fn is_legacy(cp: &Checkpoint) -> bool {
    cp.v <= 2
}

/// How warnings name the format.
pub fn format_name(cp: &Checkpoint) -> String {
    let example = if cp.v <= 1 { "0.2.20" } else { "0.2.76" };
    format!(
        "LangGraph 0.2 checkpoint format (v{}, e.g. langgraph {example})",
        cp.v
    )
}

/// The node a 0.2 trigger channel leads to: `start:X`, `branch:S:P:X`, `join:A+B:X`.
pub fn channel_target(ch: &str) -> Option<&str> {
    if let Some(x) = ch.strip_prefix("start:") {
        return Some(x);
    }
    if let Some(rest) = ch.strip_prefix("branch:") {
        // `branch:S:P::then` is a `then` barrier, not an edge to a node
        let (head, x) = rest.rsplit_once(':')?;
        return (!head.ends_with(':') && head.contains(':') && !x.is_empty()).then_some(x);
    }
    if let Some(rest) = ch.strip_prefix("join:") {
        return rest.rsplit_once(':').map(|(_, x)| x);
    }
    None
}

/// Nodes and their triggers as far as the DB shows them: `__start__`, the targets of the
/// channels above, and every node that ran on the thread with the triggers it saw
/// (`versions_seen`, of this checkpoint and of the thread's newest: `learned`).
pub fn inferred_nodes(
    cp: &Checkpoint,
    catalogue: &[String],
    learned: &[(String, Vec<String>)],
) -> Vec<(String, Vec<String>)> {
    fn add(nodes: &mut Vec<(String, Vec<String>)>, name: &str, trig: Option<&str>) {
        let i = match nodes.iter().position(|(n, _)| n == name) {
            Some(i) => i,
            None => {
                nodes.push((name.to_string(), Vec::new()));
                nodes.len() - 1
            }
        };
        if let Some(trig) = trig {
            if !nodes[i].1.iter().any(|x| x == trig) {
                nodes[i].1.push(trig.to_string());
            }
        }
    }
    let mut nodes: Vec<(String, Vec<String>)> = Vec::new();
    let channels = cp
        .channel_versions
        .iter()
        .map(|(k, _)| k.as_str())
        .chain(cp.channel_values.iter().map(|(k, _)| k.as_str()))
        .chain(catalogue.iter().map(String::as_str));
    for ch in channels {
        if ch == "__start__" {
            add(&mut nodes, "__start__", Some("__start__"));
        } else if let Some(x) = channel_target(ch) {
            add(&mut nodes, x, Some(ch));
        }
    }
    let seen = cp.versions_seen.iter().map(|(n, v)| {
        (
            n.as_str(),
            v.iter().map(|(c, _)| c.as_str()).collect::<Vec<_>>(),
        )
    });
    let learned = learned
        .iter()
        .map(|(n, v)| (n.as_str(), v.iter().map(String::as_str).collect::<Vec<_>>()));
    for (node, triggers) in seen.chain(learned) {
        // `__input__` / `__interrupt__` keep bookkeeping versions, they are not nodes
        if node.starts_with("__") && node != "__start__" {
            continue;
        }
        // a node that ran only from Send packets saw no trigger channel: a name all the same
        add(&mut nodes, node, None);
        for t in triggers {
            add(&mut nodes, node, Some(t));
        }
    }
    nodes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigger_channels_name_their_target() {
        assert_eq!(channel_target("start:write_draft"), Some("write_draft"));
        assert_eq!(channel_target("branch:fan:condition:left"), Some("left"));
        assert_eq!(channel_target("branch:a:__self__:b"), Some("b"));
        assert_eq!(channel_target("branch:fan:condition::then"), None);
        assert_eq!(channel_target("join:left+right:joined"), Some("joined"));
        assert_eq!(channel_target("write_draft"), None);
        assert_eq!(channel_target("branch:to:x"), None);
    }
}

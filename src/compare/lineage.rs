//! A checkpoint's lineage: the checkpoint and its ancestors through `parent_checkpoint_id`,
//! oldest first — the branch a run (or a fork) followed to get there, as `get_state_history`
//! would list it with the other branches left out.

use super::CompareError;
use crate::store::{CheckpointRow, Store};

/// Ancestors are read one row at a time; a parent chain longer than this (or a cycle a
/// hand-edited file could hold) is an error, not a hang.
pub const MAX_DEPTH: usize = 1_000_000;

/// `head` and its ancestors, oldest first. A parent that is not in the store ends the chain
/// (LangGraph's own history then ends there too).
pub fn lineage(store: &Store, head: &CheckpointRow) -> Result<Vec<CheckpointRow>, CompareError> {
    let mut out = vec![head.clone()];
    let mut seen = std::collections::HashSet::new();
    seen.insert(head.checkpoint_id.clone());
    while let Some(pid) = out.last().and_then(|r| r.parent_checkpoint_id.clone()) {
        if !seen.insert(pid.clone()) || out.len() >= MAX_DEPTH {
            return Err(CompareError::msg(format!(
                "{}: thread {:?}: the parent chain of checkpoint {} loops or is longer than {MAX_DEPTH}",
                store.label(),
                head.thread_id,
                head.checkpoint_id
            )));
        }
        match store.checkpoint(&head.thread_id, &head.checkpoint_ns, Some(&pid))? {
            Some(p) => out.push(p),
            None => break,
        }
    }
    out.reverse();
    Ok(out)
}

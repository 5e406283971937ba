//! Checkpoint addresses on the command line (and the TUI's `:diff`):
//!
//! | form | means |
//! |---|---|
//! | `THREAD` | the thread's newest checkpoint (its live head) |
//! | `THREAD@STEP` | the checkpoint with `metadata.step == STEP` on the thread's current branch (the newest checkpoint and its ancestors); a step only another branch has: that branch's newest checkpoint with it |
//! | `THREAD@ID` | checkpoint `ID` of the thread |
//! | `ID` | checkpoint `ID`, in whichever thread holds it (an error if several do) |
//!
//! Every form is looked up in one namespace (`--ns`, default the root graph's `""`). A thread id
//! that itself contains `@` is found whole when the split form names nothing.

use super::lineage;
use super::CompareError;
use crate::store::{CheckpointRow, Store};

/// A resolved address: one checkpoint row.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub row: CheckpointRow,
    /// How the user wrote it (for messages and headings).
    pub written: String,
}

/// `metadata.step` of a row (`None` when the metadata has none).
pub fn step_of(row: &CheckpointRow) -> Option<i64> {
    row.metadata.get("step").and_then(|s| s.as_i64())
}

/// `metadata.source` of a row.
pub fn source_of(row: &CheckpointRow) -> Option<String> {
    row.metadata
        .get("source")
        .and_then(|s| s.as_str())
        .map(str::to_string)
}

const PAGE: usize = 200;

fn ns_note(ns: &str) -> String {
    if ns.is_empty() {
        String::new()
    } else {
        format!(" in namespace {ns:?}")
    }
}

/// Resolve `text` in namespace `ns` of `store`.
pub fn resolve(store: &Store, text: &str, ns: &str) -> Result<Resolved, CompareError> {
    let done = |row| {
        Ok(Resolved {
            row,
            written: text.to_string(),
        })
    };
    if text.is_empty() {
        return Err(CompareError::msg(
            "empty checkpoint address (expected THREAD, THREAD@STEP, THREAD@ID or ID)",
        ));
    }
    if let Some((thread, at)) = text.rsplit_once('@') {
        if let Some(row) = at_in_thread(store, thread, at, ns)? {
            return done(row);
        }
        // a thread id with `@` in it
        if let Some(row) = store.checkpoint(text, ns, None)? {
            return done(row);
        }
        if store.checkpoint(thread, ns, None)?.is_none() {
            return Err(CompareError::msg(format!(
                "{}: {text:?}: no thread {thread:?}{} (superstep threads lists them)",
                store.label(),
                ns_note(ns)
            )));
        }
        let what = if at.parse::<i64>().is_ok() {
            format!("no checkpoint at step {at}")
        } else {
            format!("no checkpoint {at}")
        };
        return Err(CompareError::msg(format!(
            "{}: {text:?}: thread {thread:?}{} has {what} (superstep history -t {thread} lists them)",
            store.label(),
            ns_note(ns)
        )));
    }
    if let Some(row) = store.checkpoint(text, ns, None)? {
        return done(row);
    }
    // a bare checkpoint id: whichever thread holds it
    let mut found: Vec<CheckpointRow> = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = store.threads(after.as_deref(), PAGE)?;
        for t in &page {
            if let Some(row) = store.checkpoint(&t.thread_id, ns, Some(text))? {
                found.push(row);
            }
        }
        if page.len() < PAGE {
            break;
        }
        after = page.last().map(|t| t.thread_id.clone());
    }
    match found.len() {
        1 => done(found.remove(0)),
        0 => Err(CompareError::msg(format!(
            "{}: {text:?} is neither a thread nor a checkpoint id{} (expected THREAD, THREAD@STEP, THREAD@ID or ID)",
            store.label(),
            ns_note(ns)
        ))),
        _ => Err(CompareError::msg(format!(
            "{}: checkpoint {text:?} is in several threads ({}): write THREAD@{text}",
            store.label(),
            found
                .iter()
                .map(|r| format!("{:?}", r.thread_id))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// `THREAD@STEP` / `THREAD@ID`, or `None` when that names nothing.
fn at_in_thread(
    store: &Store,
    thread: &str,
    at: &str,
    ns: &str,
) -> Result<Option<CheckpointRow>, CompareError> {
    let Some(head) = store.checkpoint(thread, ns, None)? else {
        return Ok(None);
    };
    let Ok(step) = at.parse::<i64>() else {
        return Ok(store.checkpoint(thread, ns, Some(at))?);
    };
    // the current branch first
    for row in lineage::lineage(store, &head)?.into_iter().rev() {
        if step_of(&row) == Some(step) {
            return Ok(Some(row));
        }
    }
    // another branch's: the newest checkpoint with that step
    let mut before: Option<String> = None;
    loop {
        let page = store.history(thread, ns, before.as_deref(), PAGE)?;
        if let Some(row) = page.iter().find(|r| step_of(r) == Some(step)) {
            return Ok(Some(row.clone()));
        }
        if page.len() < PAGE {
            return Ok(None);
        }
        before = page.last().map(|r| r.checkpoint_id.clone());
    }
}

//! `prune` execution: plan every thread ([`super::plan`]) and, when asked (`--yes`), delete the
//! planned rows in one transaction on a store opened for it ([`Mode::Maintain`]), refused while
//! another process writes the store; `VACUUM` after, if asked. A dry run opens the store
//! read-only and changes nothing (the file and its directory stay byte-identical).

use super::plan::{plan_thread, Policy, ThreadPlan};
use crate::inspect::{InspectError, Thread};
use crate::store::sizes::{CheckpointSize, Deleted, Space};
use crate::store::{Mode, Store, StoreError};
use serde::Serialize;
use std::path::Path;

#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Totals {
    pub threads: u64,
    pub checkpoints: u64,
    pub threads_pruned: u64,
    pub threads_deleted: u64,
    pub threads_refused: u64,
    pub checkpoints_dropped: u64,
    pub writes_dropped: u64,
    pub blobs_dropped: u64,
    pub bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub store: String,
    pub kind: String,
    pub dry_run: bool,
    pub policy: String,
    pub totals: Totals,
    /// Threads with something dropped or a deletion refused.
    pub threads: Vec<ThreadPlan>,
    /// Rows deleted (`--yes`).
    pub deleted: Option<Deleted>,
    pub space_before: Space,
    pub space_after: Option<Space>,
    pub vacuumed: bool,
}

/// Whether a checkpoint has work left — pending tasks (an interrupt, a breakpoint pause, an
/// error to retry) — as `get_state` would show it: `next` or an interrupt.
pub fn paused(store: &Store, thread_id: &str, cp: &CheckpointSize) -> Result<bool, InspectError> {
    let thread = Thread::open(store, thread_id, &cp.ns, None)?;
    let snap = thread.show(Some(&cp.id))?;
    Ok(!snap.next.is_empty() || snap.interrupts().next().is_some())
}

/// Plan every thread of an open store (inside the prune's transaction when writing).
fn plan_all(
    store: &Store,
    policy: &Policy,
    totals: &mut Totals,
) -> Result<Vec<ThreadPlan>, InspectError> {
    let mut plans = Vec::new();
    let as_store = |e: InspectError| match e {
        InspectError::Store(s) => s,
        other => StoreError::Server {
            path: store.label().to_string(),
            detail: other.to_string(),
        },
    };
    store.scan_sizes(&|_| true, &mut |t| {
        totals.threads += 1;
        totals.checkpoints += t.checkpoints.len() as u64;
        let mut ask = |cp: &CheckpointSize| paused(store, &t.thread_id, cp);
        match plan_thread(&t, policy, &mut ask).map_err(as_store)? {
            Some(p) if p.action != "keep" || p.refused.is_some() => plans.push(p),
            _ => {}
        }
        Ok(())
    })?;
    for p in &plans {
        match (p.action, p.refused.is_some()) {
            ("delete", _) => totals.threads_deleted += 1,
            ("prune", _) => totals.threads_pruned += 1,
            (_, true) => totals.threads_refused += 1,
            _ => {}
        }
        totals.checkpoints_dropped += p.dropped;
        totals.writes_dropped += p.dropped_writes;
        totals.blobs_dropped += p.dropped_blobs;
        totals.bytes += p.bytes;
    }
    Ok(plans)
}

/// Plan, and with `yes` delete; `vacuum` after a deletion.
pub fn run(path: &Path, policy: &Policy, yes: bool, vacuum: bool) -> Result<Report, InspectError> {
    let mode = if yes { Mode::Maintain } else { Mode::ReadOnly };
    let store = Store::open(path, mode)?;
    let space_before = store.space(false)?;
    let mut totals = Totals::default();
    let mut report = Report {
        store: store.label().to_string(),
        kind: store.kind().to_string(),
        dry_run: !yes,
        policy: policy.describe(),
        totals: Totals::default(),
        threads: Vec::new(),
        deleted: None,
        space_before,
        space_after: None,
        vacuumed: false,
    };
    if !yes {
        report.threads = plan_all(&store, policy, &mut totals)?;
        report.totals = totals;
        return Ok(report);
    }
    store.begin_prune()?;
    let done = plan_all(&store, policy, &mut totals).and_then(|plans| {
        let mut deleted = Deleted::default();
        for p in &plans {
            if p.action != "keep" {
                deleted += store.remove(&p.removal)?;
            }
        }
        Ok((plans, deleted))
    });
    let (plans, deleted) = match done {
        Ok(x) => x,
        Err(e) => {
            store.rollback_write();
            return Err(e);
        }
    };
    store.commit_write()?;
    if vacuum {
        store.vacuum()?;
        report.vacuumed = true;
    }
    report.space_after = Some(store.space(false)?);
    report.threads = plans;
    report.totals = totals;
    report.deleted = Some(deleted);
    Ok(report)
}

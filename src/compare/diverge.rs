//! Where two runs diverged: the bisect a user does by hand. Each run is a lineage (a head
//! checkpoint and its ancestors, [`super::lineage`]); the n-th checkpoint of one is set against
//! the n-th of the other, from the root. Checkpoints both lineages share (a fork and its
//! original, in one thread) are passed over; the first pair whose values or next nodes differ
//! is the divergence. Its cause is in the checkpoints just before: the tasks (matched by task
//! path: `~__pregel_pull, agent`, a `Send`'s push index, an `update_state`) whose pending writes
//! differ (an interrupt's id left out: [`super::diff::comparable`]), and the two checkpoints'
//! sources (`loop`, `input`, `update`, `fork`).
//!
//! tests/oracle/gen_compare.py computes the same over `get_state_history`.

use super::diff::{comparable, value_views, values_diff, KeyChange, Side};
use super::lineage::lineage;
use super::origin::{self, WriteRef};
use super::CompareError;
use crate::inspect::Thread;
use crate::snapshot::Snapshot;
use crate::store::{CheckpointRow, Store};
use serde::Serialize;
use serde_json::{json, Value as Json};

/// The writes one task left on the checkpoint before the divergence, on each side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskWrites {
    pub task_path: String,
    /// The node (or `update_state`, `Command`, `input (__start__)`).
    pub who: String,
    pub a: Vec<Json>,
    pub b: Vec<Json>,
}

/// `superstep diverge --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Divergence {
    pub a: Side,
    pub b: Side,
    /// The newest checkpoint both lineages share (a fork point in one thread).
    pub common: Option<Side>,
    pub diverged: bool,
    /// Position (0 = the oldest checkpoint) of the first pair that differs.
    pub index: Option<usize>,
    /// The first checkpoints that differ (`None` on a side whose run ended before).
    pub at_a: Option<Side>,
    pub at_b: Option<Side>,
    /// `values`, `next`, `length` (one run ended).
    pub differs: Vec<String>,
    pub values: Vec<KeyChange>,
    pub next: Option<Json>,
    /// The checkpoints just before (`None` when the runs differ from their first checkpoint).
    pub before_a: Option<Side>,
    pub before_b: Option<Side>,
    /// Tasks of those checkpoints whose writes differ, by task path.
    pub tasks: Vec<TaskWrites>,
}

fn same_row(x: &CheckpointRow, y: &CheckpointRow) -> bool {
    x.thread_id == y.thread_id
        && x.checkpoint_ns == y.checkpoint_ns
        && x.checkpoint_id == y.checkpoint_id
}

fn named_writes(
    store: &Store,
    row: &CheckpointRow,
    snap: &Snapshot,
) -> Result<Vec<WriteRef>, CompareError> {
    Ok(store
        .writes(&row.thread_id, &row.checkpoint_ns, &row.checkpoint_id)?
        .iter()
        .map(|w| origin::name(w, snap))
        .collect())
}

/// Tasks (by task path) whose writes differ between two checkpoints' rows.
fn task_diffs(a: &[WriteRef], b: &[WriteRef]) -> Vec<TaskWrites> {
    let mut paths: Vec<&str> = Vec::new();
    for w in a.iter().chain(b) {
        if !paths.contains(&w.task_path.as_str()) {
            paths.push(&w.task_path);
        }
    }
    let of = |l: &[WriteRef], p: &str| -> Vec<Json> {
        l.iter()
            .filter(|w| w.task_path == p)
            .map(|w| json!({"channel": w.channel, "value": comparable(&w.value)}))
            .collect()
    };
    paths
        .into_iter()
        .filter_map(|p| {
            let (x, y) = (of(a, p), of(b, p));
            if x == y {
                return None;
            }
            let who = a
                .iter()
                .chain(b)
                .find(|w| w.task_path == p)
                .map(origin::who)
                .unwrap_or_default();
            Some(TaskWrites {
                task_path: p.to_string(),
                who,
                a: x,
                b: y,
            })
        })
        .collect()
}

/// Compare the lineages of `a_head` (read through `ta`) and `b_head` (through `tb`).
pub fn diverge(
    store: &Store,
    ta: &Thread,
    a_head: &CheckpointRow,
    tb: &Thread,
    b_head: &CheckpointRow,
) -> Result<Divergence, CompareError> {
    let la = lineage(store, a_head)?;
    let lb = lineage(store, b_head)?;
    let mut out = Divergence {
        a: Side::of(a_head),
        b: Side::of(b_head),
        common: None,
        diverged: false,
        index: None,
        at_a: None,
        at_b: None,
        differs: Vec::new(),
        values: Vec::new(),
        next: None,
        before_a: None,
        before_b: None,
        tasks: Vec::new(),
    };
    let mut prev: Option<(Snapshot, Snapshot)> = None;
    for i in 0..la.len().max(lb.len()) {
        let (x, y) = (la.get(i), lb.get(i));
        let (Some(x), Some(y)) = (x, y) else {
            out.diverged = true;
            out.index = Some(i);
            out.at_a = x.map(Side::of);
            out.at_b = y.map(Side::of);
            out.differs.push("length".into());
            break;
        };
        if same_row(x, y) {
            out.common = Some(Side::of(x));
            prev = None;
            continue;
        }
        let (sx, sy) = (ta.snapshot_of(x, false)?, tb.snapshot_of(y, false)?);
        let values = values_diff(&value_views(&sx), &value_views(&sy));
        let next_differs = sx.next != sy.next;
        if values.is_empty() && !next_differs {
            prev = Some((sx, sy));
            continue;
        }
        out.diverged = true;
        out.index = Some(i);
        out.at_a = Some(Side::of(x));
        out.at_b = Some(Side::of(y));
        if !values.is_empty() {
            out.differs.push("values".into());
        }
        if next_differs {
            out.differs.push("next".into());
            out.next = Some(json!({"a": sx.next, "b": sy.next}));
        }
        out.values = values;
        if i > 0 {
            let (pa, pb) = (&la[i - 1], &lb[i - 1]);
            out.before_a = Some(Side::of(pa));
            out.before_b = Some(Side::of(pb));
            let (spa, spb) = match prev.take() {
                Some(p) => p,
                None => (ta.snapshot_of(pa, false)?, tb.snapshot_of(pb, false)?),
            };
            if !same_row(pa, pb) {
                out.tasks = task_diffs(
                    &named_writes(store, pa, &spa)?,
                    &named_writes(store, pb, &spb)?,
                );
            }
        }
        break;
    }
    Ok(out)
}

/// For `diverge A` alone: the head of the branch `head`'s thread forked from — the newest
/// checkpoint of the thread (and namespace) that is not in `head`'s lineage (always a leaf).
pub fn other_branch(
    store: &Store,
    head: &CheckpointRow,
) -> Result<Option<CheckpointRow>, CompareError> {
    let mine: std::collections::HashSet<String> = lineage(store, head)?
        .into_iter()
        .map(|r| r.checkpoint_id)
        .collect();
    let mut before: Option<String> = None;
    loop {
        let page = store.history(&head.thread_id, &head.checkpoint_ns, before.as_deref(), 200)?;
        if let Some(r) = page.iter().find(|r| !mine.contains(&r.checkpoint_id)) {
            return Ok(Some(r.clone()));
        }
        if page.len() < 200 {
            return Ok(None);
        }
        before = page.last().map(|r| r.checkpoint_id.clone());
    }
}

/// `step 3`, or `position 4` when the checkpoint has no step.
pub fn where_(s: &Side) -> String {
    match s.step {
        Some(n) => format!("step {n}"),
        None => "a checkpoint without step".into(),
    }
}

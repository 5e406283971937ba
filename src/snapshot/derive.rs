//! `derive`: the snapshot LangGraph's `get_state` / `get_state_history` returns for one
//! checkpoint, step by step — row warnings, planned tasks, task statuses, values.

use super::plan::plan_tasks;
use super::row_warnings::row_warnings;
use super::tasks::{state_keys, task_snapshots};
use super::values::values;
use super::{db_only_limitation, legacy, Input, PendingWrite, Snapshot, WriteKind};
use serde_json::Value as Json;

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
    let cid = uuid::Uuid::try_parse(&row.checkpoint_id).ok();
    let legacy = legacy::is_legacy(cp);
    let mut warnings = row_warnings(input, cid);
    let planned = plan_tasks(input, cid, legacy, task_step, &mut warnings);
    let state_keys = state_keys(input, legacy, &planned);
    let tasks = task_snapshots(input, planned, &state_keys, legacy);
    // LangGraph 0.2.20 (v1) lists every prepared task in `next`, finished or not
    let next = tasks
        .iter()
        .filter(|t| cp.v <= 1 || !(input.live && t.finished))
        .map(|t| t.name.clone())
        .collect();
    let values = values(input, &tasks, &state_keys, legacy, &mut warnings);
    let root_value = input.topology.is_some_and(|t| t.root_value)
        || (state_keys.len() == 1 && state_keys[0] == "__root__");

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

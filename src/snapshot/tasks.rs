//! `derive`, step 3: each planned task's status from the pending writes (`read_task_statuses`),
//! the state keys, and the task list of the snapshot.

use super::plan::PlannedTask;
use super::topology::is_reserved_channel;
use super::{legacy, Input, TaskResult, TaskSnapshot, CONTROL_WRITES};
use crate::ids;
use crate::value::{Interrupt, Typed};
use rmpv::Value;

pub(super) struct Status {
    pub(super) output: Vec<(String, Value)>,
    pub(super) interrupts: Vec<Interrupt>,
    pub(super) error: Option<Typed>,
}
/// `read_task_statuses`: a task's outputs, interrupts and error from the pending writes.
pub(super) fn status_of(input: &Input, legacy: bool, tid: &str) -> Status {
    let mut st = Status {
        output: Vec::new(),
        interrupts: Vec::new(),
        error: None,
    };
    for w in input.writes.iter().filter(|w| w.task_id == tid) {
        match w.channel.as_str() {
            "__interrupt__" => {
                let from = st.interrupts.len();
                match &w.value {
                    Typed::Value(Value::Array(items)) => st
                        .interrupts
                        .extend(items.iter().filter_map(Interrupt::from_value)),
                    Typed::Value(v) => st.interrupts.extend(Interrupt::from_value(v)),
                    _ => {}
                }
                if legacy {
                    // LangGraph 0.2's Interrupt has no id
                    for i in &mut st.interrupts[from..] {
                        i.id.clear();
                    }
                }
            }
            "__error__" => {
                if st.error.is_none() {
                    st.error = Some(w.value.clone());
                }
            }
            c if CONTROL_WRITES.contains(&c) => {}
            c => st
                .output
                .push((c.to_string(), w.value.clone().into_value())),
        }
    }
    st
}

/// The state keys: the topology's, or without it every non-reserved channel the thread shows.
pub(super) fn state_keys(input: &Input, legacy: bool, planned: &[PlannedTask]) -> Vec<String> {
    let cp = input.checkpoint;
    // LangGraph 0.2: a channel named after a node is that node's edge channel, not state (a
    // state key may not share a node's name)
    let node_names: Vec<String> = if legacy && input.topology.is_none() {
        legacy::inferred_nodes(cp, input.catalogue, input.seen_nodes)
            .into_iter()
            .map(|(n, _)| n)
            .chain(planned.iter().map(|t| t.name.clone()))
            .collect()
    } else {
        Vec::new()
    };
    let state_keys: Vec<String> = match input.topology {
        Some(t) => t.state_keys.iter().map(|k| k.name.clone()).collect(),
        None => {
            // a key no checkpoint of the thread has written yet may still be in this
            // checkpoint's pending writes (a finished task's result): a StateGraph node writes
            // nothing but state keys outside the reserved channels
            let mut keys: Vec<String> = cp
                .channel_values
                .iter()
                .map(|(k, _)| k.clone())
                .chain(input.catalogue.iter().cloned())
                .chain(input.writes.iter().map(|w| w.channel.clone()))
                .filter(|k| !is_reserved_channel(k))
                .filter(|k| !node_names.contains(k))
                .collect();
            let mut seen = std::collections::HashSet::new();
            keys.retain(|k| seen.insert(k.clone()));
            keys
        }
    };
    state_keys
}

/// The snapshot's tasks: id, path, result, interrupts, error, subgraph namespace.
pub(super) fn task_snapshots(
    input: &Input,
    planned: Vec<PlannedTask>,
    state_keys: &[String],
    legacy: bool,
) -> Vec<TaskSnapshot> {
    let cp = input.checkpoint;
    let ns = input.row.checkpoint_ns.as_str();
    let is_state_key = |k: &str| state_keys.iter().any(|s| s == k);

    let mut tasks = Vec::new();
    for p in planned {
        let st = status_of(input, legacy, &p.id);
        let finished = !st.output.is_empty();
        // LangGraph 0.2.20 (checkpoint v1): PregelTask has no result
        let result = (finished && cp.v > 1).then(|| {
            if let Some((_, v)) = st.output.iter().find(|(c, _)| c == "__return__") {
                return TaskResult::Return(v.clone());
            }
            let mut out: Vec<(String, Value)> = Vec::new();
            for (c, v) in st.output.iter().filter(|(c, _)| is_state_key(c)) {
                match out.iter_mut().find(|(k, _)| k == c) {
                    Some((_, existing)) if !existing.is_nil() => {
                        // appended in place: a task with 1 M writes to one key took minutes
                        // when the list was copied for each
                        if let Value::Map(m) = existing {
                            if let [(k, Value::Array(list))] = m.as_mut_slice() {
                                if k.as_str() == Some("$writes") {
                                    list.push(v.clone());
                                    continue;
                                }
                            }
                        }
                        let first = std::mem::replace(existing, Value::Nil);
                        *existing = Value::Map(vec![(
                            Value::from("$writes"),
                            Value::Array(vec![first, v.clone()]),
                        )]);
                    }
                    Some((_, existing)) => *existing = v.clone(),
                    None => out.push((c.clone(), v.clone())),
                }
            }
            TaskResult::Writes(out)
        });
        let interrupts = if input.live && finished {
            Vec::new()
        } else {
            st.interrupts
        };
        let subgraph = match input.topology {
            Some(t) => t.node(&p.name).is_some_and(|n| n.subgraph),
            None => {
                let tns = ids::task_ns(ns, &p.name, &p.id);
                input
                    .namespaces
                    .iter()
                    .any(|n| n == &tns || n.starts_with(&format!("{tns}|")))
            }
        };
        tasks.push(TaskSnapshot {
            state_ns: subgraph.then(|| ids::task_ns(ns, &p.name, &p.id)),
            id: p.id,
            id_confirmed: p.id_confirmed,
            name: p.name,
            path: p.path,
            error: st.error,
            interrupts,
            result,
            finished,
        });
    }
    tasks
}

//! `derive`, step 2: the tasks a checkpoint prepares — PUSH (Send packets) then PULL (triggered
//! nodes) — with their ids, from the graph's topology or, without it, from what the DB shows.

use super::triggers::{available, fired_triggers, triggered};
use super::{legacy, Input, Warning};
use crate::ids::{self, PathPart, NULL_TASK_ID};
use crate::store::Checkpoint;
use crate::value::{Interrupt, Send, Typed};
use rmpv::Value;

pub(super) struct PlannedTask {
    pub(super) id: String,
    pub(super) id_confirmed: bool,
    pub(super) name: String,
    pub(super) path: Vec<PathPart>,
    /// Index in channel_values of the trigger that fired (for DB-only ordering).
    pub(super) order_key: Option<usize>,
    pub(super) join_only: bool,
}

/// The tasks the checkpoint prepares, in LangGraph's order (warnings say where the order or an
/// id is a guess).
pub(super) fn plan_tasks(
    input: &Input,
    cid: Option<uuid::Uuid>,
    legacy: bool,
    task_step: i64,
    warnings: &mut Vec<Warning>,
) -> Vec<PlannedTask> {
    let cp = input.checkpoint;
    let ns = input.row.checkpoint_ns.as_str();
    let mut planned: Vec<PlannedTask> = Vec::new();
    if let Some(Value::Array(sends)) = cp.value("__pregel_tasks") {
        for (idx, packet) in sends.iter().enumerate() {
            let Some(send) = Send::from_value(packet) else {
                continue;
            };
            if let Some(t) = input.topology {
                if t.node(&send.node).is_none() {
                    continue;
                }
            }
            let id = cid
                .map(|c| match legacy {
                    true => ids::legacy_push_task_id(&c, ns, task_step, &send.node, idx),
                    false => ids::push_task_id(&c, ns, task_step, &send.node, idx),
                })
                .unwrap_or_default();
            let mut path = vec![
                PathPart::Str("__pregel_push".into()),
                PathPart::Int(idx as i64),
            ];
            if !legacy {
                path.push(PathPart::Bool(false));
            }
            planned.push(PlannedTask {
                id,
                id_confirmed: true,
                name: send.node,
                path,
                order_key: None,
                join_only: false,
            });
        }
    }
    let n_push = planned.len();
    if !cp.channel_versions.is_empty() {
        let nodes: Vec<(String, Vec<String>)> = match input.topology {
            Some(t) => t
                .nodes
                .iter()
                .map(|n| (n.name.clone(), n.triggers.clone()))
                .collect(),
            None if legacy => legacy::inferred_nodes(cp, input.catalogue, input.seen_nodes),
            None => inferred_nodes(cp, input.catalogue),
        };
        for (name, triggers) in &nodes {
            let Some((pos, join_only)) = triggered(name, triggers, cp) else {
                continue;
            };
            let path_str = format!("~__pregel_pull, {name}");
            let from_writes = input
                .writes
                .iter()
                .find(|w| w.task_path == path_str && w.task_id != NULL_TASK_ID)
                .map(|w| w.task_id.clone());
            let computed = cid.map(|c| match legacy {
                true => ids::legacy_pull_task_id(
                    &c,
                    ns,
                    task_step,
                    name,
                    &fired_triggers(name, triggers, cp),
                ),
                false => ids::pull_task_id(&c, ns, task_step, name, triggers),
            });
            // With the graph the formula is exact (§5.2); from the DB alone a task's own writes
            // are the authority and the formula is a fallback that may miss unseen join triggers.
            // (0.2's writes name no task path: a write with the computed id confirms it.)
            let legacy_confirmed = legacy
                && computed
                    .as_ref()
                    .is_some_and(|c| input.writes.iter().any(|w| &w.task_id == c));
            let (id, id_confirmed) = match (input.topology, from_writes) {
                (Some(_), _) => (computed.unwrap_or_default(), true),
                (None, Some(w)) => (w, true),
                (None, None) => (computed.unwrap_or_default(), legacy_confirmed),
            };
            planned.push(PlannedTask {
                id,
                id_confirmed,
                name: name.clone(),
                path: vec![
                    PathPart::Str("__pregel_pull".into()),
                    PathPart::Str(name.clone()),
                ],
                order_key: Some(pos),
                join_only,
            });
        }
        if legacy && input.topology.is_none() {
            unnamed_legacy_tasks(input, cid, task_step, &nodes, &mut planned, warnings);
        }
        if input.topology.is_none() {
            let pull = &mut planned[n_push..];
            if pull.len() > 1 && pull.iter().any(|t| t.join_only) {
                warnings.push(Warning {
                    field: "next".into(),
                    message: format!(
                        "order of {} is a guess: LangGraph orders tasks by node registration, which the DB shows only for edge-triggered nodes (pass the graph to be exact)",
                        pull.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", ")
                    ),
                });
            } else if pull.len() > 1 && !input.channel_order {
                warnings.push(Warning {
                    field: "next".into(),
                    message: format!(
                        "order of {} is a guess: LangGraph orders tasks by node registration, and this store keeps no channel order (JSONB) to show it (pass the graph to be exact)",
                        pull.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", ")
                    ),
                });
            }
            pull.sort_by_key(|t| t.order_key);
        }
    }
    let unconfirmed: Vec<&str> = planned
        .iter()
        .filter(|t| !t.id_confirmed)
        .map(|t| t.name.as_str())
        .collect();
    if !unconfirmed.is_empty() {
        warnings.push(Warning {
            field: "tasks.id".into(),
            message: format!(
                "id of {} recomputed from its StateGraph triggers; no write on this checkpoint confirms it (pass the graph to be exact)",
                unconfirmed.join(", ")
            ),
        });
    }
    planned
}

/// LangGraph 0.2, from the DB alone: writes of a task no known node explains (its node never ran
/// on this thread, so nothing names the plain edge that triggers it). The task is named by its
/// interrupt's `ns` (0.2.6x+), or by matching its id against every known node name and every
/// node channel that fired; otherwise it is shown as `?` with its writes, and a warning says
/// what the format does not record. A node channel that fired with no known node listening to
/// it is warned about too (the edge may lead to END, or to a node never seen here).
fn unnamed_legacy_tasks(
    input: &Input,
    cid: Option<uuid::Uuid>,
    task_step: i64,
    nodes: &[(String, Vec<String>)],
    planned: &mut Vec<PlannedTask>,
    warnings: &mut Vec<Warning>,
) {
    let cp = input.checkpoint;
    let ns = input.row.checkpoint_ns.as_str();
    let names: Vec<&str> = nodes.iter().map(|(n, _)| n.as_str()).collect();
    // node channels written at this checkpoint: a node name, available, newer than what any
    // known listener saw
    let fresh: Vec<(usize, &str)> = cp
        .channel_values
        .iter()
        .enumerate()
        .filter(|(_, (k, _))| names.contains(&k.as_str()) && available(k, cp))
        .map(|(i, (k, _))| (i, k.as_str()))
        .collect();
    let mut unexplained: Vec<&str> = Vec::new();
    for w in input.writes {
        if w.task_id != NULL_TASK_ID
            && !planned.iter().any(|t| t.id == w.task_id)
            && !unexplained.contains(&w.task_id.as_str())
        {
            unexplained.push(&w.task_id);
        }
    }
    let mut unnamed = Vec::new();
    let any_extra = !unexplained.is_empty();
    for tid in unexplained {
        let from_ns = input
            .writes
            .iter()
            .filter(|w| w.task_id == tid && w.channel == "__interrupt__")
            .filter_map(|w| match &w.value {
                Typed::Value(Value::Array(a)) => a.first().and_then(Interrupt::ns_of),
                Typed::Value(v) => Interrupt::ns_of(v),
                _ => None,
            })
            .find_map(|parts| {
                let last = parts.last()?;
                let (name, id) = last.rsplit_once(':')?;
                (id == tid).then(|| name.to_string())
            });
        let by_id = || {
            let c = cid?;
            names.iter().find_map(|name| {
                fresh.iter().find_map(|(pos, ch)| {
                    let fired = vec![ch.to_string()];
                    (ids::legacy_pull_task_id(&c, ns, task_step, name, &fired) == tid)
                        .then(|| (name.to_string(), Some(*pos)))
                })
            })
        };
        let (name, pos) = match from_ns {
            Some(n) => {
                let pos = fresh.first().map(|(p, _)| *p);
                (n, pos)
            }
            None => match by_id() {
                Some(x) => x,
                None => {
                    unnamed.push(tid.to_string());
                    ("?".to_string(), fresh.first().map(|(p, _)| *p))
                }
            },
        };
        planned.push(PlannedTask {
            id: tid.to_string(),
            id_confirmed: true,
            path: vec![
                PathPart::Str("__pregel_pull".into()),
                PathPart::Str(name.clone()),
            ],
            name,
            order_key: pos,
            join_only: false,
        });
    }
    let format = legacy::format_name(cp);
    if !unnamed.is_empty() {
        let via = fresh.iter().map(|(_, c)| *c).collect::<Vec<_>>().join(", ");
        {
            warnings.push(Warning {
                field: "tasks".into(),
                message: format!(
                    "task {} has writes here but its node is not named in the DB: in the {format} a plain edge{} leads to a node named only in the graph, and that node never ran on this thread (pass --topology to name it)",
                    unnamed.join(", "),
                    if via.is_empty() { String::new() } else { format!(" from {via}") },
                ),
            });
        }
    } else if !any_extra {
        let listened: Vec<&str> = nodes
            .iter()
            .flat_map(|(_, t)| t.iter().map(String::as_str))
            .collect();
        let open: Vec<&str> = fresh
            .iter()
            .map(|(_, c)| *c)
            .filter(|c| !listened.contains(c))
            .filter(|c| !planned.iter().any(|t| t.name == *c))
            .collect();
        if !open.is_empty() {
            warnings.push(Warning {
                field: "tasks".into(),
                message: format!(
                    "{} wrote {}: in the {format} a plain edge from a node leads to a node named only in the graph — here to END, or to a node that never ran on this thread and would be next (pass --topology to know)",
                    open.join(", "),
                    if open.len() == 1 { "its edge channel" } else { "their edge channels" },
                ),
            });
        }
    }
}

/// Nodes of a StateGraph as far as the DB shows them: `__start__`, every `branch:to:X` target and
/// every waiting-edge target, with triggers `branch:to:X` plus the `join:...:X` channels seen.
fn inferred_nodes(cp: &Checkpoint, catalogue: &[String]) -> Vec<(String, Vec<String>)> {
    let mut channels: Vec<&str> = cp
        .channel_versions
        .iter()
        .map(|(k, _)| k.as_str())
        .collect();
    channels.extend(cp.channel_values.iter().map(|(k, _)| k.as_str()));
    channels.extend(catalogue.iter().map(String::as_str));
    let mut nodes: Vec<(String, Vec<String>)> = Vec::new();
    let mut add = |name: &str, trig: &str| match nodes.iter_mut().find(|(n, _)| n == name) {
        Some((_, t)) => {
            if !t.iter().any(|x| x == trig) {
                t.push(trig.to_string())
            }
        }
        None => nodes.push((name.to_string(), vec![trig.to_string()])),
    };
    for ch in &channels {
        if *ch == "__start__" {
            add("__start__", "__start__");
        } else if let Some(n) = ch.strip_prefix("branch:to:") {
            add(n, ch);
        } else if let Some(rest) = ch.strip_prefix("join:") {
            if let Some((_, target)) = rest.rsplit_once(':') {
                add(target, &format!("branch:to:{target}"));
                add(target, ch);
            }
        }
    }
    nodes
}

//! `prepare_next_tasks` (spec §6.3, §5.2): PUSH tasks from `Send` packets, then PULL tasks for
//! every node whose trigger channel moved past what it has seen.

use super::checkpoint::State;
use super::graph::Graph;
use super::NodeInput;
use crate::ids::{self, PathPart};
use crate::store::Version;
use crate::value::Send;
use rmpv::Value;

#[derive(Debug, Clone)]
pub struct Task {
    pub id: String,
    pub name: String,
    pub path: Vec<PathPart>,
    /// `["__pregel_push"]` for PUSH tasks, the node's triggers for PULL tasks.
    pub triggers: Vec<String>,
    /// The node's input: the `Send` argument (PUSH) or the raw input (`__start__`); `None` for
    /// PULL tasks, which read the state when they run.
    pub input: Option<Value>,
    /// `node:task_id` (nested: `parent|node:task_id`).
    pub task_ns: String,
    pub writes: Vec<(String, Value)>,
}

impl Task {
    pub fn path_str(&self) -> String {
        ids::task_path_str(&self.path)
    }

    /// What the node is called with.
    pub fn node_input<'a>(&'a self, state: &'a State, graph: &'a Graph) -> NodeInput<'a> {
        match &self.input {
            Some(v) => NodeInput::Value(v),
            None => state.read_state(graph),
        }
    }
}

fn triggered(state: &State, node: &str, triggers: &[String]) -> bool {
    let seen = state.seen(node).map(Vec::as_slice);
    triggers.iter().any(|ch| {
        state.channel(ch).is_some_and(|c| c.is_available())
            && Version::triggers(state.version(ch), seen, ch)
    })
}

/// Tasks of the next step, in LangGraph's order. `updated_channels` (from the previous step)
/// narrows the candidates and makes their order sorted by name, as the loop does.
pub fn prepare_next_tasks(
    state: &State,
    graph: &Graph,
    ns: &str,
    step: i64,
    updated_channels: Option<&[String]>,
) -> Vec<Task> {
    let cid = uuid::Uuid::try_parse(&state.id).expect("engine checkpoint ids are uuids");
    let mut tasks = Vec::new();
    if let Some(ch) = state.channel("__pregel_tasks").filter(|c| c.is_available()) {
        if let Some(Value::Array(sends)) = ch.get() {
            for (idx, packet) in sends.iter().enumerate() {
                let Some(send) = Send::from_value(packet) else {
                    continue;
                };
                if graph.node(&send.node).is_none() {
                    continue;
                }
                let id = ids::push_task_id(&cid, ns, step, &send.node, idx);
                tasks.push(Task {
                    task_ns: ids::task_ns(ns, &send.node, &id),
                    id,
                    name: send.node.clone(),
                    path: vec![
                        PathPart::Str("__pregel_push".into()),
                        PathPart::Int(idx as i64),
                        PathPart::Bool(false),
                    ],
                    triggers: vec!["__pregel_push".into()],
                    input: Some(send.arg.clone()),
                    writes: Vec::new(),
                });
            }
        }
    }
    let candidates: Vec<&str> = match updated_channels {
        Some(u) if !u.is_empty() => {
            let mut c: Vec<&str> = u
                .iter()
                .filter_map(|ch| graph.trigger_to_nodes.get(ch))
                .flatten()
                .map(String::as_str)
                .collect();
            c.sort_unstable();
            c.dedup();
            c
        }
        _ if state.channel_versions.is_empty() => Vec::new(),
        _ => graph.nodes.iter().map(|n| n.name.as_str()).collect(),
    };
    for name in candidates {
        let node = graph
            .node(name)
            .expect("trigger_to_nodes names graph nodes");
        if !triggered(state, name, &node.triggers) {
            continue;
        }
        let input = if node.func.is_none() {
            match state.channel("__start__").and_then(|c| c.get()) {
                Some(v) => Some(v),
                None => continue,
            }
        } else {
            None
        };
        let id = ids::pull_task_id(&cid, ns, step, name, &node.triggers);
        tasks.push(Task {
            task_ns: ids::task_ns(ns, name, &id),
            id,
            name: name.to_string(),
            path: vec![
                PathPart::Str("__pregel_pull".into()),
                PathPart::Str(name.to_string()),
            ],
            triggers: node.triggers.clone(),
            input,
            writes: Vec::new(),
        });
    }
    tasks
}

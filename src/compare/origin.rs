//! Who wrote a pending-write row: the task of its checkpoint that has its id (a node, or
//! `__start__` — the input), LangGraph's null task (a `Command` input's `update` / `resume`),
//! or an `update_state` (whose task path starts with `~__interrupt__`).

use crate::ids::NULL_TASK_ID;
use crate::snapshot::Snapshot;
use crate::store::WriteRow;
use crate::value::ViewOptions;
use serde::Serialize;
use serde_json::Value as Json;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// A node's task.
    Node,
    /// The `__start__` task: the run's input.
    Input,
    /// `update_state(values, as_node)`.
    UpdateState,
    /// A `Command(update=…, resume=…)` input (LangGraph's null task).
    Command,
    /// No write row explains it: the value came with the checkpoint (a fork, an `update_state`
    /// whose writes were not stored, a row the saver pruned).
    Checkpoint,
}

impl Origin {
    pub fn label(self) -> &'static str {
        match self {
            Origin::Node => "node",
            Origin::Input => "input",
            Origin::UpdateState => "update_state",
            Origin::Command => "Command",
            Origin::Checkpoint => "checkpoint",
        }
    }
}

/// One write row, named.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WriteRef {
    pub task_id: String,
    pub task_path: String,
    pub idx: i64,
    pub channel: String,
    /// The task's node (`__start__` for the input; empty when no task has the id).
    pub node: String,
    pub origin: Origin,
    pub value: Json,
}

/// Name a write row of the checkpoint `at` (whose tasks are the ones that wrote its rows).
pub fn name(w: &WriteRow, at: &Snapshot) -> WriteRef {
    let task = at.tasks.iter().find(|t| t.id == w.task_id);
    let from_path = w
        .task_path
        .strip_prefix("~__pregel_pull, ")
        .map(str::to_string);
    let node = task
        .map(|t| t.name.clone())
        .or(from_path)
        .unwrap_or_default();
    let origin = if w.task_id == NULL_TASK_ID {
        Origin::Command
    } else if w.task_path.starts_with("~__interrupt__") {
        Origin::UpdateState
    } else if node == "__start__" {
        Origin::Input
    } else {
        Origin::Node
    };
    WriteRef {
        task_id: w.task_id.clone(),
        task_path: w.task_path.clone(),
        idx: w.idx,
        channel: w.channel.clone(),
        node,
        origin,
        value: w.value.view(ViewOptions::default()),
    }
}

/// `agent`, `input`, `update_state`, `Command`: who, in a word.
pub fn who(w: &WriteRef) -> String {
    match w.origin {
        Origin::Node => w.node.clone(),
        Origin::Input => "input (__start__)".into(),
        o => o.label().to_string(),
    }
}

//! The graph-source interface's own types: what a run is fed ([`Input`], [`Resume`], as the
//! user's JSON), where it stops ([`Breakpoints`], [`Pause`]) and what each superstep reports
//! ([`StepReport`], [`TaskReport`], [`TaskOutcome`]). The spec engine and the Python bridge both
//! speak these (`engine::source`, `bridge::source`); neither's own types cross the seam.

use crate::value::Interrupt;
use rmpv::Value;
use serde_json::Value as Json;

/// LangGraph's `START` and `END` node names.
pub const START: &str = "__start__";
pub const END: &str = "__end__";

/// What to feed a run (`graph.invoke(input, config)`), values as the user gave them (JSON): the
/// bridge hands them to Python as they are; the spec engine converts them to its values.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// New input: written to `__start__`, tasks pending at the checkpoint are discarded.
    Value(Json),
    /// `invoke(None)`: continue / resume past a breakpoint or error, or replay at a checkpoint.
    Continue,
    /// `Command(update=..., goto=..., resume=...)`.
    Command {
        update: Option<Json>,
        goto: Vec<String>,
        resume: Option<Resume>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Resume {
    /// `Command(resume=v)`.
    Plain(Json),
    /// `Command(resume={interrupt_id: v, ...})`.
    Map(Vec<(String, Json)>),
}

impl Input {
    pub fn resume(v: Json) -> Input {
        Input::Command {
            update: None,
            goto: Vec::new(),
            resume: Some(Resume::Plain(v)),
        }
    }
    pub fn resume_map(m: Vec<(String, Json)>) -> Input {
        Input::Command {
            update: None,
            goto: Vec::new(),
            resume: Some(Resume::Map(m)),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Breakpoints {
    None,
    All,
    Nodes(Vec<String>),
}

impl Breakpoints {
    pub fn matches(&self, node: &str) -> bool {
        match self {
            Breakpoints::None => false,
            Breakpoints::All => node != START,
            Breakpoints::Nodes(n) => n.iter().any(|x| x == node),
        }
    }
    pub fn is_empty(&self) -> bool {
        matches!(self, Breakpoints::None) || matches!(self, Breakpoints::Nodes(n) if n.is_empty())
    }
}

/// `as_node` of an update.
#[derive(Debug, Clone, PartialEq)]
pub enum AsNode {
    /// Inferred from `versions_seen` (the node that wrote last).
    Infer,
    Node(String),
    /// `__input__`: a new input checkpoint.
    Input,
    /// `__copy__`: a fork copying the checkpoint.
    Copy,
    /// `END` with `values=None`: finish every pending task with its stored writes.
    End,
}

impl AsNode {
    pub fn parse(s: Option<&str>) -> AsNode {
        match s {
            None => AsNode::Infer,
            Some("__input__") => AsNode::Input,
            Some("__copy__") => AsNode::Copy,
            Some(e) if e == END || e == "END" => AsNode::End,
            Some(n) => AsNode::Node(n.to_string()),
        }
    }
}

/// Why the run stopped (`None` in a report means it can go on).
#[derive(Debug, Clone, PartialEq)]
pub enum Pause {
    /// No task is triggered: the run is finished.
    Done,
    /// Static breakpoint before these nodes (nothing was run in this step).
    Before(Vec<String>),
    /// Static breakpoint after these nodes (their step's checkpoint is saved).
    After(Vec<String>),
    /// `interrupt()` in these tasks; the step has no checkpoint yet.
    Interrupt(Vec<(String, Interrupt)>),
    /// A node raised (after retries): `(node, repr)`; the step has no checkpoint.
    Error(String, String),
    /// `GraphRecursionError`.
    RecursionLimit(i64),
}

#[derive(Debug, Clone, PartialEq)]
pub enum TaskOutcome {
    /// Ran to completion with these writes.
    Done,
    /// A finished task from before a resume: its stored writes were reapplied, it did not run.
    Reused,
    Interrupted(Interrupt),
    Error(String),
}

#[derive(Debug, Clone)]
pub struct TaskReport {
    pub id: String,
    pub name: String,
    /// LangGraph's task path (`["__pregel_pull", "b"]`), as the snapshot's `tasks[].path`.
    pub path: Vec<crate::ids::PathPart>,
    /// For a task that raised: where (the app's own frame first) and the traceback.
    pub traceback: Option<String>,
    pub outcome: TaskOutcome,
    pub writes: Vec<(String, Value)>,
    pub attempts: u32,
    pub calls: Vec<InterruptCall>,
    pub effects: Vec<Effect>,
}

/// What one `step()` did.
#[derive(Debug, Clone)]
pub struct StepReport {
    pub step: i64,
    pub tasks: Vec<TaskReport>,
    /// The checkpoint written by this step, if any.
    pub checkpoint: Option<String>,
    pub pause: Option<Pause>,
}

/// A side effect a node recorded with `effect(name, data)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Effect {
    pub name: String,
    pub data: Value,
    /// 1-based attempt within this execution (retries).
    pub attempt: u32,
}

/// What one `interrupt()` call did.
#[derive(Debug, Clone, PartialEq)]
pub enum InterruptCall {
    /// Returned an answer the task already held (a re-execution replaying an earlier answer).
    Replayed {
        index: usize,
        payload: Value,
        answer: Value,
    },
    /// Consumed the step's plain `Command(resume=...)` value.
    Resumed {
        index: usize,
        payload: Value,
        answer: Value,
    },
    /// Raised: the node pauses here.
    Raised { index: usize, interrupt: Interrupt },
}

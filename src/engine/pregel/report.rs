//! What a run is fed (`Input`, `Resume`) and what a step reports (`StepReport`, `TaskReport`,
//! `TaskOutcome`, `Pause`).

use crate::engine::interrupts::{Effect, InterruptCall};
use crate::value::Interrupt;
use rmpv::Value;

/// What to feed a run (`graph.invoke(input, config)`).
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// New input: written to `__start__`, tasks pending at the checkpoint are discarded.
    Value(Value),
    /// `invoke(None)`: continue / resume past a breakpoint or error, or replay at a checkpoint.
    Continue,
    /// `Command(update=..., goto=..., resume=...)`.
    Command {
        update: Option<Value>,
        goto: Vec<Value>,
        resume: Option<Resume>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Resume {
    /// `Command(resume=v)`.
    Plain(Value),
    /// `Command(resume={interrupt_id: v, ...})`.
    Map(Vec<(String, Value)>),
}

impl Input {
    pub fn resume(v: Value) -> Input {
        Input::Command {
            update: None,
            goto: Vec::new(),
            resume: Some(Resume::Plain(v)),
        }
    }
    pub fn resume_map(m: Vec<(String, Value)>) -> Input {
        Input::Command {
            update: None,
            goto: Vec::new(),
            resume: Some(Resume::Map(m)),
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

//! What the engine's run is fed (`Input`, `Resume`: the engine's values; the graph-source
//! interface's are JSON, converted in `engine::source`). What a step reports is the interface's
//! (`crate::source::types`).

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

//! The Pregel runtime: a spec stepped superstep by superstep, leaving in the SQLite file the rows
//! LangGraph 1.2.x leaves. One LangGraph concept per file:
//!
//! | file | LangGraph |
//! |---|---|
//! | `channels.rs` | `langgraph.channels.*` |
//! | `versions.rs` | `SqliteSaver.get_next_version` |
//! | `clock.rs` | `checkpoint.base.id.uuid6`, `ts` |
//! | `graph.rs` | `StateGraph.compile` (channels, triggers, writers) |
//! | `tasks.rs` | `_algo.prepare_next_tasks` (trigger rule, task ids) |
//! | `apply.rs` | `_algo.apply_writes` |
//! | `interrupts.rs` | `types.interrupt`, `_algo._scratchpad`, resume validation |
//! | `breakpoints.rs` | `_algo.should_interrupt` |
//! | `runner.rs` | `PregelRunner` + node writers (`_get_updates`, `_control_branch`, branches), retries |
//! | `loaded.rs` | a spec loaded with its Starlark code and compiled (`StateGraph.compile`) |
//! | `starlark.rs` | the spec's node, path and reducer functions, run in Starlark |
//! | `saver.rs` | `SqliteSaver.put` / `put_writes` (one transaction per superstep) |
//! | `pregel/` | `SyncPregelLoop` (`_first`, `tick`, `after_tick`, `_put_checkpoint`) |
//! | `update_state.rs` | `Pregel.bulk_update_state` |

pub mod apply;
pub mod breakpoints;
pub mod channels;
pub mod checkpoint;
pub mod clock;
pub mod delta;
pub mod graph;
pub mod interrupts;
pub mod loaded;
pub mod pregel;
mod py_printable;
pub mod runner;
pub mod saver;
pub mod source;
pub mod starlark;
pub mod tasks;
pub mod update_state;
pub mod versions;

pub use interrupts::TaskContext;
pub use pregel::{Engine, Input, Pause, Resume, StepReport, TaskOutcome, TaskReport};

use rmpv::Value;

/// Errors that stop a run (they are user-visible; the DB is left as LangGraph would leave it).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// Python's `str(exc)`, which may run over lines (LangGraph's troubleshooting link); shown
    /// on one line.
    #[error("InvalidUpdateError: {}", .0.replace('\n', " "))]
    InvalidUpdate(String),
    #[error("reducer of '{key}' failed: {message}")]
    Reducer { key: String, message: String },
    #[error("RuntimeError: When there are multiple pending interrupts, you must specify the interrupt id when resuming. Docs: https://docs.langchain.com/oss/python/langgraph/interrupts#handling-multiple-interrupts.")]
    MultiplePendingInterrupts { pending: Vec<String> },
    #[error("EmptyInputError: {0}")]
    EmptyInput(String),
    #[error("unknown interrupt id {id} (pending: {pending})")]
    UnknownInterrupt { id: String, pending: String },
    #[error("{0}")]
    Store(#[from] crate::store::StoreError),
    #[error("{0}")]
    Value(#[from] crate::value::ValueError),
    #[error("no checkpoint {0} on this thread")]
    UnknownCheckpoint(String),
    #[error("InvalidUpdateError: {0}")]
    Update(String),
    #[error("thread {thread:?} moved on while this step ran: another writer committed checkpoint {found} (this step started from {expected}); nothing was written — reload the thread and step again")]
    ThreadMoved {
        thread: String,
        expected: String,
        found: String,
    },
    /// An exception raised by the graph's code outside a task (a node's writers run by
    /// `update_state`): its `repr`.
    #[error("{}", .0.headline())]
    Raised(Failure),
    #[error("{0}")]
    Other(String),
}

impl EngineError {
    /// The exception a parent task sees when a subgraph run raises this error.
    pub fn as_failure(&self) -> Failure {
        match self {
            EngineError::InvalidUpdate(m) | EngineError::Update(m) => {
                Failure::new("InvalidUpdateError", m)
            }
            EngineError::EmptyInput(m) => Failure::new("EmptyInputError", m),
            EngineError::Raised(f) => f.clone(),
            other => Failure::new("RuntimeError", &other.to_string()),
        }
    }
}

/// A node failed: Python's exception class name (for `retry_on`) and `repr(exc)` (what LangGraph
/// stores in the ERROR write).
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub kind: String,
    pub repr: String,
}

impl Failure {
    /// `Kind: args` (the repr's arguments after the class name), the way a traceback's last
    /// line names the exception.
    pub fn headline(&self) -> String {
        let args = self
            .repr
            .strip_prefix(self.kind.as_str())
            .and_then(|r| r.strip_prefix('('))
            .and_then(|r| r.strip_suffix(')'))
            .unwrap_or(&self.repr);
        format!("{}: {args}", self.kind)
    }

    pub fn new(kind: &str, message: &str) -> Failure {
        Failure {
            kind: kind.to_string(),
            repr: format!("{kind}({})", py_repr_str(message)),
        }
    }
}

/// Why a node stopped early.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeError {
    /// `interrupt()` raised GraphInterrupt; the payload is in the task context.
    Interrupt,
    Failed(Failure),
    /// The node returned `Command(graph=PARENT, ...)`: LangGraph's `ParentCommand` bubbles up to
    /// the parent graph's task, which applies the command as its own return value. Carries the
    /// command with `graph` cleared.
    ParentCommand(rmpv::Value),
}

/// One state value handed to node code without copying the channel's content.
#[derive(Debug, Clone)]
pub enum Arg<'a> {
    Ref(&'a Value),
    Owned(Value),
    /// A list followed by more items (an `add` reducer's pending append, seen by a conditional
    /// edge's fresh read) without building the concatenation.
    Concat(&'a [Value], Vec<Value>),
}

impl Arg<'_> {
    pub fn to_value(&self) -> Value {
        match self {
            Arg::Ref(v) => (*v).clone(),
            Arg::Owned(v) => v.clone(),
            Arg::Concat(a, b) => Value::Array(a.iter().chain(b.iter()).cloned().collect()),
        }
    }
}

/// What a node (or path function) is called with.
#[derive(Debug, Clone)]
pub enum NodeInput<'a> {
    /// The state dict: available state keys in spec order.
    State(Vec<(&'a str, Arg<'a>)>),
    /// Any other value (a `Send` argument, the raw input of `__start__`).
    Value(&'a Value),
}

impl NodeInput<'_> {
    pub fn to_value(&self) -> Value {
        match self {
            NodeInput::Value(v) => (*v).clone(),
            NodeInput::State(entries) => Value::Map(
                entries
                    .iter()
                    .map(|(k, a)| (Value::from(*k), a.to_value()))
                    .collect(),
            ),
        }
    }
}

/// The graph's code: node functions, path functions, custom reducers.
pub trait NodeCode {
    fn call_node(
        &self,
        func: &str,
        input: &NodeInput,
        cx: &mut TaskContext,
    ) -> Result<Value, NodeError>;
    fn call_path(
        &self,
        func: &str,
        input: &NodeInput,
        cx: &mut TaskContext,
    ) -> Result<Value, NodeError>;
    fn reduce(&self, func: &str, current: &Value, update: &Value) -> Result<Value, String>;
}

/// `langgraph.errors.create_error_message`: the message and its troubleshooting link.
pub fn error_message(message: &str, error_code: &str) -> String {
    format!("{message}\nFor troubleshooting, visit: https://docs.langchain.com/oss/python/langgraph/errors/{error_code}")
}

/// Python's `str.isprintable()` for one character.
pub fn py_printable(c: char) -> bool {
    let c = c as u32;
    py_printable::NOT_PRINTABLE
        .binary_search_by(|&(a, b)| {
            if b < c {
                std::cmp::Ordering::Less
            } else if a > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_err()
}

/// Python's `repr(str)`: single quotes unless the text has `'` and no `"`; `\\`, `\t`, `\n`,
/// `\r`, the quote, and every character `str.isprintable()` rejects escaped (`\xhh`, `\uhhhh`,
/// `\Uhhhhhhhh`).
pub fn py_repr_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c)
            }
            c if py_printable(c) => out.push(c),
            c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push(quote);
    out
}

/// Python's `str(v)` (what an f-string shows): a string as it is, anything else as `repr`.
pub fn py_str(v: &Value) -> String {
    match v {
        Value::String(s) => String::from_utf8_lossy(s.as_bytes()).into_owned(),
        other => py_repr(other),
    }
}

/// An approximation of Python's `repr()` for msgpack values (error messages).
pub fn py_repr(v: &Value) -> String {
    match v {
        Value::Nil => "None".into(),
        Value::Boolean(b) => {
            if *b {
                "True".into()
            } else {
                "False".into()
            }
        }
        Value::Integer(i) => i.to_string(),
        Value::F32(f) => versions::python_float_repr(*f as f64),
        Value::F64(f) => versions::python_float_repr(*f),
        Value::String(s) => py_repr_str(&String::from_utf8_lossy(s.as_bytes())),
        Value::Binary(b) => format!("b{}", py_repr_str(&String::from_utf8_lossy(b))),
        Value::Array(a) => format!("[{}]", a.iter().map(py_repr).collect::<Vec<_>>().join(", ")),
        Value::Map(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{}: {}", py_repr(k), py_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Ext(code, data) => ext_repr(*code, data).unwrap_or_else(|| {
            let j = crate::value::to_view(v, crate::value::ViewOptions::default());
            match j.get("__type__").and_then(|t| t.as_str()) {
                Some(t) => format!("{}(...)", t.rsplit('.').next().unwrap_or(t)),
                None => j.to_string(),
            }
        }),
    }
}

/// `repr()` of the LangGraph objects node code returns: `Send(node='w', arg={...})`,
/// `Command(...)` (truthy fields), `Interrupt(value=..., id='...')`.
fn ext_repr(code: i8, data: &[u8]) -> Option<String> {
    use crate::value::ext::Ext;
    let Ext::Constructor {
        module, name, arg, ..
    } = Ext::parse(code, data)
    else {
        return None;
    };
    if module != "langgraph.types" {
        return None;
    }
    let field = |m: &[(Value, Value)], k: &str| {
        m.iter()
            .find(|(f, _)| f.as_str() == Some(k))
            .map(|(_, v)| v.clone())
            .unwrap_or(Value::Nil)
    };
    match (name.as_str(), &arg) {
        ("Send", Value::Array(a)) if a.len() == 2 => Some(format!(
            "Send(node={}, arg={})",
            py_repr(&a[0]),
            py_repr(&a[1])
        )),
        ("Send", Value::Map(m)) => Some(format!(
            "Send(node={}, arg={})",
            py_repr(&field(m, "node")),
            py_repr(&field(m, "arg"))
        )),
        ("Command", Value::Map(_)) => Some(runner::command_repr(&Value::Ext(code, data.to_vec()))),
        ("Interrupt", Value::Map(m)) => Some(format!(
            "Interrupt(value={}, id={})",
            py_repr(&field(m, "value")),
            py_repr(&field(m, "id"))
        )),
        _ => None,
    }
}

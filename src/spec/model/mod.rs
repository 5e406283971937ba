//! The graph spec: JSON (one file per graph in `graphs/`) with node code in Starlark. Parsed by
//! hand from `serde_json::Value` so every error names its key path.
//!
//! ```json
//! {
//!   "name": "approval",
//!   "code": "approval.star",                  // or "code_inline": "def a(state): ..."
//!   "state": {
//!     "request": {},                           // last value (LangGraph: a plain key)
//!     "log": {"reducer": "add", "type": "list"},   // Annotated[list, operator.add]
//!     "scores": {"reducer": "merge", "default": {}}, // Starlark def merge(current, update)
//!     "history": {"reducer": "add", "type": "list", "delta": {"snapshot_frequency": 50}}
//!                                              // Annotated[list, DeltaChannel(operator.add, snapshot_frequency=50)]
//!   },
//!   "nodes": ["draft", {"name": "review", "retry": {"max_attempts": 3}}, {"name": "sub", "subgraph": "child.json"},
//!             {"name": "route", "destinations": ["draft", "__end__"]}],   // where its Command(goto=) may lead
//!   "edges": [["__start__", "draft"], ["draft", "review"], [["a", "b"], "c"]],
//!   "conditional_edges": [{"source": "review", "path": "route", "path_map": {"ok": "send", "no": "__end__"}}],
//!   "interrupt_before": ["send"], "interrupt_after": [],
//!   "input": {"request": "write a haiku"}
//! }
//! ```

use serde_json::Value as Json;

mod edges;
mod nodes;
mod parse;
mod state;

pub use crate::source::types::{Breakpoints, END, START};

/// A spec error: the file, the key path, and what was expected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}: {path}: {message}")]
pub struct SpecError {
    pub file: String,
    pub path: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ReducerSpec {
    LastValue,
    Add,
    Code(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct KeySpec {
    pub name: String,
    pub reducer: ReducerSpec,
    /// Initial value of a reducer key (from `default`, or `type`'s empty value).
    pub default: Option<Json>,
    /// `DeltaChannel(reducer, snapshot_frequency=N)` (LangGraph 1.2, beta): `Some(N)`. The
    /// reducer then takes the step's writes as one batch (`reducer(state, [w1, w2])`).
    pub delta: Option<u32>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RetrySpec {
    pub max_attempts: u32,
    pub initial_interval: f64,
    pub backoff_factor: f64,
    pub max_interval: f64,
    pub jitter: bool,
    /// Python exception names that are retried; `None` = LangGraph's `default_retry_on`.
    pub retry_on: Option<Vec<String>>,
}

impl Default for RetrySpec {
    fn default() -> Self {
        RetrySpec {
            max_attempts: 3,
            initial_interval: 0.5,
            backoff_factor: 2.0,
            max_interval: 128.0,
            jitter: true,
            retry_on: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct NodeSpec {
    pub name: String,
    /// Starlark function name (defaults to the node name).
    pub func: String,
    pub retry: Option<RetrySpec>,
    /// Path of a child spec, for subgraph nodes.
    pub subgraph: Option<String>,
    /// `add_node(..., defer=True)`: runs only when nothing else is left to run.
    pub defer: bool,
    /// Where a `Command(goto=...)` it returns may lead, with an optional edge label: what
    /// LangGraph reads from a `Command[Literal["a", "b"]]` return hint or
    /// `add_node(..., destinations=...)`. Drawing only (the graph, Mermaid, the TUI's Graph pane);
    /// it does not restrict where the node may go.
    pub destinations: Option<Vec<(String, Option<String>)>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EdgeSpec {
    /// One source, or several for a waiting edge `[a, b] -> c`.
    pub sources: Vec<String>,
    pub waiting: bool,
    pub target: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BranchSpec {
    pub source: String,
    pub path: String,
    /// Path result -> destination node (or END).
    pub path_map: Option<Vec<(Json, String)>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GraphSpec {
    pub file: String,
    pub name: String,
    pub description: String,
    /// `code` file (relative to the spec) or `None` when inline / no code.
    pub code_file: Option<String>,
    pub code_inline: Option<String>,
    pub state: Vec<KeySpec>,
    pub nodes: Vec<NodeSpec>,
    pub edges: Vec<EdgeSpec>,
    pub branches: Vec<BranchSpec>,
    pub interrupt_before: Breakpoints,
    pub interrupt_after: Breakpoints,
    pub input: Option<Json>,
}

//! The Python bridge: the user's own LangGraph graph, run by LangGraph in the user's interpreter,
//! driven through the graph-source seam (`crate::source`).
//!
//! * `reference` — what the user names: `app.py:graph`, `pkg.module:graph`, `langgraph.json [ID]`;
//! * `interpreter` — which Python runs it (`--python`, `$VIRTUAL_ENV`, `./.venv`, ...);
//! * `protocol` — the versioned, typed JSON-lines protocol;
//! * `process` — the child process and its socket (stdout/stderr stay the user code's);
//! * `source` — `PythonSource`, the `GraphSource` implementation;
//! * `calls` — recorded replay's settings and where the recorder keeps its rows (`crate::replay`);
//! * `revive` — the store doctor's question to the graph's serializer (`superstep check`);
//! * `bridge.py` — the Python side, shipped inside the binary.
//!
//! superstep writes no row for a Python graph: LangGraph's SqliteSaver (PostgresSaver on a
//! Postgres `--db`) does. See `bridge.py` for
//! how a run is held between supersteps so that a stepped thread leaves the rows of a straight run.

mod calls;
pub mod interpreter;
mod live_state;
pub mod process;
pub mod protocol;
pub mod reference;
mod revive;
pub mod source;

pub use interpreter::Interpreter;
pub use reference::{GraphRef, PythonRef};
pub use source::PythonSource;

//! `--graph app.py:graph` on `history` / `show`: the Python graph's topology, and LangGraph's own
//! reading of the thread's checkpoints (`get_state_history` through the bridge, the database
//! opened read-only) — taken wherever it differs from what the rows alone give: values a reducer
//! of the app's own makes (a DeltaChannel with a user batch reducer), next for checkpoints an older
//! LangGraph wrote. A spec's graph needs no such help: superstep runs its reducers itself.

use super::engine::{graph_topology, open_python, GraphOpts};
use super::CliError;
use crate::bridge::GraphRef;
use crate::snapshot::langgraph::LangGraphState;
use crate::snapshot::topology::Topology;
use crate::snapshot::Snapshot;
use crate::store::{Mode, Store};
use std::collections::HashMap;
use std::path::Path;

/// LangGraph's snapshots by checkpoint id (empty: none asked for).
#[derive(Debug, Default)]
pub struct Exact(HashMap<String, LangGraphState>);

impl Exact {
    /// Take LangGraph's values and next for this snapshot's checkpoint, if it has them.
    pub fn apply(&self, s: &mut Snapshot) {
        if let Some(lg) = self.0.get(&s.checkpoint_id) {
            s.take_langgraph(lg);
        }
    }
}

/// The graph `--graph` names, for reading `(thread, ns)` of `db`: its topology, and with a
/// Python graph LangGraph's own snapshots of (at most `limit` of) the thread's checkpoints.
pub fn graph_view(
    r: Option<&str>,
    db: &Path,
    thread: &str,
    ns: &str,
    limit: Option<usize>,
    opts: &GraphOpts,
) -> Result<(Option<Topology>, Exact), CliError> {
    let Some(flag) = r else {
        return Ok((None, Exact::default()));
    };
    let GraphRef::Python(pr) = GraphRef::parse_flag(flag).map_err(CliError)? else {
        return Ok((graph_topology(r, ns, opts)?, Exact::default()));
    };
    // the database's own errors first (no such file, not a checkpoint DB), as without --graph
    drop(Store::open(db, Mode::ReadOnly)?);
    let mut src = open_python(pr, opts, None)?;
    let Some(topology) = crate::source::GraphSource::topology(&src, ns) else {
        return Err(CliError(format!(
            "--graph {flag}: the graph has no subgraph for namespace {ns:?}"
        )));
    };
    let states = src.langgraph_states(db, thread, ns, limit).map_err(|e| {
        CliError(format!(
            "--graph {flag}: LangGraph could not read the thread: {e}"
        ))
    })?;
    let exact = Exact(
        states
            .into_iter()
            .map(|s| (s.checkpoint_id.clone(), s))
            .collect(),
    );
    Ok((Some(topology), exact))
}

//! The graph-source seam: one interface the TUI (`app::effects`) and the CLI (`commands::engine`)
//! drive, whatever runs the graph. A graph spec is stepped by superstep's own engine
//! (`engine::source::SpecSource`); a Python graph is run by LangGraph itself through the bridge
//! (`crate::bridge`). Neither caller knows which one it holds.
//!
//! A run is LangGraph's `invoke(input, config)` cut into supersteps: [`RunRequest`] says what
//! to start it with (or to go on with the run in progress), how many supersteps to take and with
//! which breakpoints; [`RunOutcome`] reports every superstep. `begin` / `poll` / `cancel` let the
//! TUI keep answering keys while a step runs; `run` is the blocking form the CLI uses.

pub mod graph_text;
pub mod input_form;
pub mod settings;
pub mod types;

pub use settings::{ContextInUse, RunSettings};
pub use types::{
    AsNode, Breakpoints, Input, Pause, Resume, StepReport, TaskOutcome, TaskReport, END, START,
};

use crate::snapshot::topology::Topology;
use serde_json::Value as Json;

/// What a TUI / CLI needs to know about a graph to show and drive it.
#[derive(Debug, Clone)]
pub struct Shape {
    /// The graph's name (spec `name`, Python: the graph's `name` or the variable).
    pub name: String,
    /// Where it came from, as the user named it (`graphs/approval.json`, `app.py:graph`).
    pub label: String,
    /// Nodes in registration order (no `__start__`), each with where its edges lead.
    pub nodes: Vec<ShapeNode>,
    pub state_keys: Vec<String>,
    /// Input for a new thread (the spec's `input`); `None`: ask for one.
    pub input: Option<Json>,
    /// What `N` proposes when there is no `input`: built from the graph's input schema
    /// ([`input_form`]).
    pub input_form: Option<Json>,
    /// Breakpoints a run starts with (the spec's lists; a Python graph's compiled-in ones).
    pub interrupt_before: Breakpoints,
    pub interrupt_after: Breakpoints,
    /// Breakpoints compiled into the graph that no runtime setting switches off (shown fixed);
    /// those compiled into a subgraph are named by [`inner_name`].
    pub fixed_before: Breakpoints,
    pub fixed_after: Breakpoints,
    /// The nodes of the graph's subgraphs, named by [`inner_name`] (`inner|ask`), each subgraph's
    /// after its own: a breakpoint on one of them is set inside the subgraph. Empty for a graph
    /// without subgraphs or a source that cannot break inside them.
    pub inner_nodes: Vec<ShapeNode>,
    /// The source can re-import the graph's code ([`GraphSource::reload`]).
    pub reloadable: bool,
    /// State keys whose writes go through a reducer (not plain last values).
    pub reducer_keys: Vec<String>,
}

/// The name a breakpoint uses for node `node` of the subgraph at `path` (`inner`,
/// `inner|child` — LangGraph's `get_subgraphs(recurse=True)` names): `inner|ask`. `|` cannot
/// occur in a LangGraph node name, so the name is unambiguous. `node` `*`: every node of it.
pub fn inner_name(path: &str, node: &str) -> String {
    format!("{path}|{node}")
}

/// Breakpoints split into the root graph's and each subgraph's (by subgraph path), undoing
/// [`inner_name`]. `*` stays the root's: LangGraph's runtime `*` does not reach subgraphs.
pub fn split_inner(
    b: &Breakpoints,
) -> (Breakpoints, std::collections::BTreeMap<String, Breakpoints>) {
    let mut inner: std::collections::BTreeMap<String, Breakpoints> = Default::default();
    let Breakpoints::Nodes(names) = b else {
        return (b.clone(), inner);
    };
    let mut root = Vec::new();
    for n in names {
        match n.rsplit_once('|') {
            None => root.push(n.clone()),
            Some((path, node)) => {
                let e = inner.entry(path.to_string()).or_insert(Breakpoints::None);
                *e = match (std::mem::replace(e, Breakpoints::None), node) {
                    (Breakpoints::All, _) | (_, "*") => Breakpoints::All,
                    (Breakpoints::None, n) => Breakpoints::Nodes(vec![n.to_string()]),
                    (Breakpoints::Nodes(mut v), n) => {
                        if !v.iter().any(|x| x == n) {
                            v.push(n.to_string());
                        }
                        Breakpoints::Nodes(v)
                    }
                };
            }
        }
    }
    let root = if root.is_empty() {
        Breakpoints::None
    } else {
        Breakpoints::Nodes(root)
    };
    (root, inner)
}

#[derive(Debug, Clone, PartialEq)]
pub struct ShapeNode {
    pub name: String,
    /// Targets of its edges, branches (`?` when a path function may go anywhere) and
    /// `Command` destinations, in that order, without duplicates.
    pub successors: Vec<String>,
}

impl Default for Shape {
    fn default() -> Self {
        Shape {
            name: String::new(),
            label: String::new(),
            nodes: Vec::new(),
            state_keys: Vec::new(),
            input: None,
            input_form: None,
            interrupt_before: Breakpoints::None,
            interrupt_after: Breakpoints::None,
            fixed_before: Breakpoints::None,
            fixed_after: Breakpoints::None,
            inner_nodes: Vec::new(),
            reloadable: false,
            reducer_keys: Vec::new(),
        }
    }
}

impl Shape {
    pub fn has_node(&self, name: &str) -> bool {
        self.nodes.iter().any(|n| n.name == name)
    }

    /// A breakpoint name inside a subgraph (`inner|ask`, or `inner|*`) this graph has.
    pub fn has_inner_node(&self, name: &str) -> bool {
        match name.rsplit_once('|') {
            Some((path, "*")) => self
                .inner_nodes
                .iter()
                .any(|n| n.name.rsplit_once('|').map(|(p, _)| p) == Some(path)),
            Some(_) => self.inner_nodes.iter().any(|n| n.name == name),
            None => false,
        }
    }

    /// The subgraph paths (`inner`, `inner|child`) whose nodes are in `inner_nodes`.
    pub fn subgraph_paths(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for n in &self.inner_nodes {
            if let Some((p, _)) = n.name.rsplit_once('|') {
                if !out.iter().any(|x| x == p) {
                    out.push(p.to_string());
                }
            }
        }
        out
    }

    /// `a, b, c`: for error messages.
    pub fn node_names(&self) -> String {
        self.nodes
            .iter()
            .map(|n| n.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// How a run begins.
#[derive(Debug, Clone, PartialEq)]
pub enum Start {
    /// Go on with the run in progress on this thread, or, if there is none, start one with
    /// `invoke(None)` (past a breakpoint, an error or an answered interrupt).
    Continue,
    /// A new run: `invoke(input, config)`, at `checkpoint` (time travel / an addressed resume)
    /// or the thread's latest.
    Fresh {
        input: Input,
        checkpoint: Option<String>,
    },
}

/// One run of a graph on a thread.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRequest {
    pub thread: String,
    pub start: Start,
    /// Supersteps to take at most (`Some(0)`: only start the run — LangGraph's `_first`,
    /// which writes an input or fork checkpoint); `None`: until the run pauses.
    pub steps: Option<usize>,
    /// Runtime breakpoints (`invoke(..., interrupt_before=..., interrupt_after=...)`).
    pub before: Breakpoints,
    pub after: Breakpoints,
}

/// What a node printed or logged while it ran (Python graphs).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskOutput {
    pub task_id: String,
    pub node: String,
    /// Checkpoint namespace of the task's graph (`""`: the root graph).
    pub ns: String,
    /// 1-based attempt (retries run the node again).
    pub attempt: u32,
    /// `stdout`, `stderr` or `log`.
    pub stream: String,
    pub text: String,
}

/// What a run did, superstep by superstep.
#[derive(Debug, Default)]
pub struct RunOutcome {
    pub reports: Vec<StepReport>,
    /// The checkpoint the run is at when it returned (a time travel's fork).
    pub checkpoint: Option<String>,
    /// The error that stopped it (a rejected input, a store error, the bridge going away); the
    /// reports before it still happened.
    pub error: Option<SourceError>,
    pub output: Vec<TaskOutput>,
    /// The model and tool calls the run's tasks made (Python graphs), in step order.
    pub calls: Vec<crate::replay::Call>,
}

/// An error from a graph source, with what it means for the user.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// A request refused (a rejected input, a bad reference, the bridge gone; a file that cannot
    /// be opened), with a hint.
    #[error("{message}")]
    Message { message: String, hint: String },
    /// The graph's own code or LangGraph raised while the run went on (InvalidUpdateError, a
    /// reducer's or a node's exception outside a task): the supersteps before it are committed
    /// and reported.
    #[error("{message}")]
    Graph {
        message: String,
        hint: String,
        /// `at FILE:LINE in FUNC` (the app's own frame) and the traceback.
        traceback: Option<String>,
    },
}

impl SourceError {
    pub fn message(message: impl Into<String>, hint: impl Into<String>) -> SourceError {
        SourceError::Message {
            message: message.into(),
            hint: hint.into(),
        }
    }

    /// Whether the run ended on an error of the graph (its code or LangGraph raised while it
    /// ran), rather than a request refused before anything ran: the CLI's exit code 3, not 2.
    pub fn ends_run(&self) -> bool {
        matches!(self, SourceError::Graph { .. })
    }

    /// Where it was raised and the traceback (Python graphs).
    pub fn traceback(&self) -> Option<&str> {
        match self {
            SourceError::Graph { traceback, .. } => traceback.as_deref(),
            _ => None,
        }
    }

    /// What to do about it (empty when the message says it all).
    pub fn hint(&self) -> String {
        match self {
            SourceError::Message { hint, .. } | SourceError::Graph { hint, .. } => hint.clone(),
        }
    }
}

/// A graph the TUI and the CLI can step: superstep's engine on a spec, or LangGraph through the
/// bridge. Every row in the checkpoint file is written by the source (the engine, or LangGraph);
/// callers only read the file.
pub trait GraphSource {
    fn shape(&self) -> &Shape;

    /// The topology of the graph whose checkpoints live in namespace `ns` (`""`: the root;
    /// `a:id|b:id`: child `a`'s child `b`); `None` for a namespace the graph does not know.
    fn topology(&self, ns: &str) -> Option<Topology>;

    /// Run (blocking): start or go on, take up to `steps` supersteps.
    fn run(&mut self, req: RunRequest) -> RunOutcome;

    /// `update_state(config, values, as_node)` on `checkpoint` (default: the latest); returns
    /// the new checkpoint id. A run in progress on the thread is abandoned first.
    fn update_state(
        &mut self,
        thread: &str,
        checkpoint: Option<&str>,
        values: Option<Json>,
        as_node: AsNode,
    ) -> Result<String, SourceError>;

    /// `update_state` with a subgraph's config (`checkpoint_ns` = `ns`, `node:<task id>`, nested
    /// `a:<id>|b:<id>`): LangGraph hands it to that subgraph, which writes its next checkpoint
    /// in `ns`. `""` is [`GraphSource::update_state`]. Default: only the root is addressable.
    fn update_state_in(
        &mut self,
        thread: &str,
        ns: &str,
        checkpoint: Option<&str>,
        values: Option<Json>,
        as_node: AsNode,
    ) -> Result<String, SourceError> {
        if ns.is_empty() {
            return self.update_state(thread, checkpoint, values, as_node);
        }
        Err(not_addressable(ns))
    }

    /// A run started from a subgraph checkpoint's config (`req.start` is `Fresh` with the
    /// checkpoint id in namespace `ns`): LangGraph's `invoke(input, config)` with that
    /// checkpoint's `checkpoint_map` — the root starts from its root checkpoint, the subgraph
    /// task of `ns` from the checkpoint. `""` is [`GraphSource::run`]. Default: only the root.
    fn run_in(&mut self, req: RunRequest, ns: &str) -> RunOutcome {
        if ns.is_empty() {
            return self.run(req);
        }
        RunOutcome {
            error: Some(not_addressable(ns)),
            ..RunOutcome::default()
        }
    }

    /// Abandon the run in progress (the next step starts afresh with `invoke(None)`).
    fn reset(&mut self);

    /// Start a run without waiting for it (the TUI polls); a source that runs in-process may
    /// finish it right here.
    fn begin(&mut self, req: RunRequest);

    /// The outcome of the run `begin` started, once it is there.
    fn poll(&mut self) -> Option<RunOutcome>;

    /// [`GraphSource::begin`] from a subgraph checkpoint's config ([`GraphSource::run_in`]'s
    /// request): `Some` when the outcome is already there (nothing to poll — an in-process source,
    /// or a request refused before it started), `None` when the TUI polls for it. Default: `""`
    /// is `begin`; any other namespace runs `run_in` right here.
    fn begin_in(&mut self, req: RunRequest, ns: &str) -> Option<RunOutcome> {
        if ns.is_empty() {
            self.begin(req);
            None
        } else {
            Some(self.run_in(req, ns))
        }
    }

    /// Ask the run in progress to stop (a hung node): the file keeps its last committed
    /// checkpoint. Default: nothing runs in the background, nothing to stop.
    fn cancel(&mut self) {}

    /// [`GraphSource::poll`], waiting up to `timeout` for the outcome (the CLI prints each
    /// superstep as it commits between two waits). Default: a source that finished in `begin`.
    fn poll_wait(&mut self, _timeout: std::time::Duration) -> Option<RunOutcome> {
        self.poll()
    }

    /// What the run in progress has reported so far (its committed supersteps, what its nodes
    /// printed); `None` when none is in progress.
    fn progress(&self) -> Option<&RunOutcome> {
        None
    }

    /// The nodes of the superstep running now (the spinner names them); empty when unknown.
    fn running_nodes(&self) -> Vec<String> {
        Vec::new()
    }

    /// Import the graph's code again (after an edit), keeping every thread: the next step runs
    /// the new code. `Ok`: what was reloaded, for the user. Default: a source read once.
    fn reload(&mut self) -> Result<String, SourceError> {
        Err(SourceError::message(
            "this graph's code is read once: restart superstep to load an edit",
            "",
        ))
    }

    /// Whether a file of the graph's code changed on disk since it was (re)loaded (`--watch`).
    fn code_changed(&mut self) -> bool {
        false
    }

    /// How later runs answer model and tool calls from the recording (`--replay`), and whether
    /// they record. Default: a source whose nodes make no such calls ignores it.
    fn set_replay(&mut self, _mode: crate::replay::ReplayMode, _record: bool) {}

    /// The replay mode later runs use.
    fn replay_mode(&self) -> crate::replay::ReplayMode {
        crate::replay::ReplayMode::Off
    }

    /// `superstep graph`: the graph as text (Mermaid or a plain listing).
    fn graph_text(&self, mermaid: bool) -> String;

    /// Whether the source's runs read checkpoints superstep itself does not (pickled ones:
    /// LangGraph unpickles them with the app's own serializer). Default: no.
    fn reads_pickled_checkpoints(&self) -> bool {
        false
    }

    /// LangGraph's own view of a checkpoint (`get_state`): its values (JSON view) and next nodes,
    /// for a checkpoint superstep cannot read itself (a pickled one). `None`: the source has no
    /// such view. `checkpoint` `None`: the thread's latest.
    fn live_state(
        &mut self,
        _thread: &str,
        _checkpoint: Option<&str>,
    ) -> Option<Result<(Json, Vec<String>), SourceError>> {
        None
    }

    /// When the source cannot step any more (the bridge died): why. The TUI then stays open
    /// read-only.
    fn gone(&self) -> Option<String> {
        None
    }

    /// Set what every later run, resume, replay and update is given besides its input: the
    /// `RunnableConfig` fields the user set and the runtime context (checked against the graph's
    /// `context_schema` before anything runs). Returns notes for the user (a context built from
    /// the schema's defaults). Default (a spec): only `recursion_limit`, and no context.
    fn configure(&mut self, settings: &RunSettings) -> Result<Vec<String>, SourceError> {
        settings::spec_only(settings)?;
        Ok(Vec::new())
    }

    /// Whether a thread an older LangGraph (0.2) wrote may be continued: LangGraph itself
    /// migrates such a checkpoint as it reads it; superstep's engine writes 1.2's format and
    /// would mix the two on one thread. Default: no.
    fn continues_older_formats(&self) -> bool {
        false
    }

    /// The context runs get (`None`: the graph has none); `Err`: why runs are refused until one
    /// is given.
    fn context_in_use(&self) -> Option<Result<ContextInUse, String>> {
        None
    }

    /// The store doctor (`superstep check`): for each stored msgpack extension naming a class
    /// (`(code, payload)` as stored), why this graph's serializer would not give back an
    /// instance of that class (`None`: it would). Nothing is run. Default: a graph whose values
    /// are plain data (a spec) revives every one.
    fn revive_classes(
        &mut self,
        classes: &[(i8, Vec<u8>)],
    ) -> Result<Vec<Option<String>>, SourceError> {
        Ok(vec![None; classes.len()])
    }
}

/// The error of a source that cannot address a subgraph's checkpoints.
fn not_addressable(ns: &str) -> SourceError {
    SourceError::message(
        format!(
            "namespace {}: this graph source addresses only the root graph's checkpoints",
            crate::text::escape(ns)
        ),
        "address the root's checkpoint instead (history lists them)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inner_breakpoint_names_split_by_subgraph_path() {
        let b = Breakpoints::Nodes(vec![
            "a".into(),
            inner_name("inner", "ask"),
            inner_name("inner|child", "x"),
            inner_name("inner|child", "*"),
            inner_name("inner", "prepare"),
        ]);
        let (root, inner) = split_inner(&b);
        assert_eq!(root, Breakpoints::Nodes(vec!["a".into()]));
        assert_eq!(
            inner["inner"],
            Breakpoints::Nodes(vec!["ask".into(), "prepare".into()])
        );
        assert_eq!(inner["inner|child"], Breakpoints::All);
        let (root, inner) = split_inner(&Breakpoints::All);
        assert_eq!((root, inner.len()), (Breakpoints::All, 0));
        let (root, inner) = split_inner(&Breakpoints::Nodes(vec!["s|*".into()]));
        assert_eq!(
            (root, inner["s"].clone()),
            (Breakpoints::None, Breakpoints::All)
        );
    }
}

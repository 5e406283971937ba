//! The spec engine as a graph source: a graph spec (JSON + Starlark) stepped by
//! `engine::Engine`, which writes LangGraph's rows itself. The interface's values (the user's
//! JSON) become the engine's here, and the engine's errors the interface's.

use super::clock::{IdSource, SystemIds};
use super::graph::Writer;
use super::loaded::LoadedGraph;
use super::{Engine, EngineError};
use crate::snapshot::topology::Topology;
use crate::source::graph_text::{GraphText, NodeText};
use crate::source::{
    AsNode, Breakpoints, GraphSource, Input, Resume, RunOutcome, RunRequest, Shape, ShapeNode,
    SourceError, Start,
};
use crate::store::{Mode, Store};
use crate::value::{from_view, to_view, ViewOptions};
use serde_json::Value as Json;
use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// One clock and id stream shared by every engine a session creates (a new engine per thread
/// must not restart the clock: checkpoint ids are time-ordered).
#[derive(Clone)]
pub struct SharedIds(Rc<RefCell<Box<dyn IdSource>>>);

impl SharedIds {
    pub fn new(ids: Box<dyn IdSource>) -> Self {
        SharedIds(Rc::new(RefCell::new(ids)))
    }
}

impl IdSource for SharedIds {
    fn now_ns(&mut self) -> u128 {
        self.0.borrow_mut().now_ns()
    }
    fn node_bits(&mut self) -> u64 {
        self.0.borrow_mut().node_bits()
    }
    fn fraction(&mut self) -> f64 {
        self.0.borrow_mut().fraction()
    }
}

/// A loaded spec bound to a checkpoint file; one engine at a time, for the thread last driven.
pub struct SpecSource<'g> {
    lg: &'g LoadedGraph,
    db: PathBuf,
    shape: Shape,
    ids: SharedIds,
    pub seed: u64,
    pub recursion_limit: i64,
    engine: Option<Engine<'g>>,
    finished: Option<RunOutcome>,
    /// `run_in` set the engine's checkpoint map for the run it starts.
    addressed: bool,
}

impl<'g> SpecSource<'g> {
    /// The file is opened for writing on the first run (so a rejected command leaves it alone).
    pub fn new(lg: &'g LoadedGraph, db: &Path) -> Self {
        SpecSource {
            lg,
            db: db.to_path_buf(),
            shape: shape(lg),
            ids: SharedIds::new(Box::new(SystemIds::default())),
            seed: 0,
            recursion_limit: 25,
            engine: None,
            finished: None,
            addressed: false,
        }
    }

    pub fn with_ids(mut self, ids: Box<dyn IdSource>) -> Self {
        self.ids = SharedIds::new(ids);
        self
    }

    pub fn graph(&self) -> &'g LoadedGraph {
        self.lg
    }

    fn engine_for(&mut self, thread: &str) -> Result<&mut Engine<'g>, SourceError> {
        let fresh = self.engine.as_ref().is_none_or(|e| e.thread_id != thread);
        if fresh {
            let store = Store::open(&self.db, Mode::ReadWrite)
                .map_err(|e| SourceError::message(e.to_string(), ""))?;
            let mut e =
                Engine::for_graph(self.lg, store, thread).with_ids(Box::new(self.ids.clone()));
            e.seed = self.seed;
            e.recursion_limit = self.recursion_limit;
            self.engine = Some(e);
        }
        Ok(self.engine.as_mut().unwrap())
    }
}

impl GraphSource for SpecSource<'_> {
    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn configure(
        &mut self,
        settings: &crate::source::RunSettings,
    ) -> Result<Vec<String>, SourceError> {
        crate::source::settings::spec_only(settings)?;
        if let Some(n) = settings.recursion_limit() {
            self.recursion_limit = n;
        }
        Ok(Vec::new())
    }

    fn topology(&self, ns: &str) -> Option<Topology> {
        let mut lg = self.lg;
        if !ns.is_empty() {
            for seg in ns.split('|') {
                let name = seg.split(':').next().unwrap_or(seg);
                lg = lg.children.get(name)?;
            }
        }
        let mut t = lg.graph.topology();
        // the inspector may run the spec's reducers (a DeltaChannel key's Starlark reducer)
        t.code = Some(crate::snapshot::topology::GraphCode(std::sync::Arc::new(
            lg.code.clone(),
        )));
        Some(t)
    }

    fn run(&mut self, req: RunRequest) -> RunOutcome {
        let mut out = RunOutcome::default();
        let addressed = self.addressed;
        let e = match self.engine_for(&req.thread) {
            Ok(e) => e,
            Err(err) => {
                out.error = Some(err);
                return out;
            }
        };
        e.interrupt_before = req.before;
        e.interrupt_after = req.after;
        if matches!(req.start, Start::Fresh { .. }) && !addressed {
            // a checkpoint map is one run's config (a subgraph checkpoint's, `run_in`)
            e.checkpoint_map.clear();
        }
        let started = match req.start {
            Start::Fresh { input, checkpoint } => match engine_input(input) {
                Ok(input) => e
                    .start(input, checkpoint.as_deref())
                    .map_err(SourceError::from),
                Err(err) => Err(err),
            },
            Start::Continue if !e.active() => e
                .start(super::Input::Continue, None)
                .map_err(SourceError::from),
            Start::Continue => Ok(()),
        };
        if let Err(err) = started {
            out.error = Some(err);
            return out;
        }
        let limit = req.steps.unwrap_or(usize::MAX);
        while out.reports.len() < limit {
            match e.step() {
                Ok(r) => {
                    let stop = r.pause.is_some();
                    out.reports.push(r);
                    if stop {
                        break;
                    }
                }
                Err(err) => {
                    out.error = Some(err.into());
                    break;
                }
            }
        }
        out.checkpoint = e.current_checkpoint().map(str::to_string);
        out
    }

    fn update_state(
        &mut self,
        thread: &str,
        checkpoint: Option<&str>,
        values: Option<Json>,
        as_node: AsNode,
    ) -> Result<String, SourceError> {
        let values = values.map(|v| engine_value(&v)).transpose()?;
        let r = self
            .engine_for(thread)?
            .update_state(checkpoint, values, as_node);
        // a run in progress is stale after an update: the next step starts afresh
        self.engine = None;
        Ok(r?)
    }

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
        let values = values.map(|v| engine_value(&v)).transpose()?;
        // a run in progress is stale after an update: the next step starts afresh
        self.engine = None;
        let store = Store::open(&self.db, Mode::ReadWrite)
            .map_err(|e| SourceError::message(e.to_string(), ""))?;
        let mut e = Engine::for_namespace(self.lg, store, thread, ns).ok_or_else(|| {
            // LangGraph: ValueError: Subgraph <name> not found
            SourceError::message(
                format!(
                    "ValueError: Subgraph {} not found (namespace {})",
                    crate::text::escape(
                        ns.rsplit('|')
                            .next()
                            .unwrap_or(ns)
                            .split(':')
                            .next()
                            .unwrap_or(ns)
                    ),
                    crate::text::escape(ns)
                ),
                "the namespace's node is not a subgraph of this spec",
            )
        })?;
        e = e.with_ids(Box::new(self.ids.clone()));
        e.seed = self.seed;
        e.recursion_limit = self.recursion_limit;
        Ok(e.update_state(checkpoint, values, as_node)?)
    }

    fn run_in(&mut self, mut req: RunRequest, ns: &str) -> RunOutcome {
        if let (
            false,
            Start::Fresh {
                checkpoint: Some(cp),
                ..
            },
        ) = (ns.is_empty(), &mut req.start)
        {
            let addressed = self
                .engine_for(&req.thread)
                .and_then(|e| e.address_subgraph(ns, cp).map_err(SourceError::from));
            match addressed {
                Ok(root) => *cp = root,
                Err(err) => {
                    return RunOutcome {
                        error: Some(err),
                        ..RunOutcome::default()
                    }
                }
            }
        }
        // without a checkpoint LangGraph drops the namespace: an ordinary run of the root
        self.addressed = true;
        let out = self.run(req);
        self.addressed = false;
        out
    }

    fn reset(&mut self) {
        self.engine = None;
    }

    fn begin(&mut self, req: RunRequest) {
        self.finished = Some(self.run(req));
    }

    fn poll(&mut self) -> Option<RunOutcome> {
        self.finished.take()
    }

    fn graph_text(&self, mermaid: bool) -> String {
        let mut out = Vec::new();
        let _ = write_graph(self.lg, mermaid, &mut out);
        String::from_utf8_lossy(&out).into_owned()
    }
}

/// The TUI's and the CLI's view of a spec: nodes in registration order and where their edges
/// lead, breakpoints (none fixed: a spec's lists are defaults the TUI may switch off).
pub fn shape(lg: &LoadedGraph) -> Shape {
    let spec = &lg.spec;
    let nodes = lg
        .graph
        .nodes
        .iter()
        .filter(|n| !n.hidden())
        .map(|n| {
            let mut successors: Vec<String> = Vec::new();
            for w in &n.writers {
                match w {
                    Writer::Edge(c) => {
                        successors.push(c.trim_start_matches("branch:to:").to_string())
                    }
                    Writer::Join(c) => {
                        successors.push(c.rsplit(':').next().unwrap_or(c).to_string())
                    }
                    Writer::Branch { path_map, .. } => match path_map {
                        Some(m) => {
                            for (_, d) in m {
                                if !successors.contains(d) {
                                    successors.push(d.clone());
                                }
                            }
                        }
                        None => successors.push("?".into()),
                    },
                }
            }
            if spec
                .edges
                .iter()
                .any(|e| e.target == "__end__" && e.sources.iter().any(|x| x == &n.name))
            {
                successors.push("__end__".into());
            }
            match command_routes(lg, &n.name) {
                CommandRoutes::Declared(d) => {
                    for (t, _) in d {
                        if !successors.contains(t) {
                            successors.push(t.clone());
                        }
                    }
                }
                CommandRoutes::Dynamic if !successors.iter().any(|x| x == "?") => {
                    successors.push("?".into())
                }
                _ => {}
            }
            ShapeNode {
                name: n.name.clone(),
                successors,
            }
        })
        .collect();
    Shape {
        name: spec.name.clone(),
        label: lg.path.display().to_string(),
        nodes,
        state_keys: lg.graph.state_keys.clone(),
        input: lg
            .graph
            .input
            .as_ref()
            .map(|v| to_view(v, ViewOptions::default())),
        input_form: None,
        interrupt_before: lg.graph.interrupt_before.clone(),
        interrupt_after: lg.graph.interrupt_after.clone(),
        fixed_before: Breakpoints::None,
        fixed_after: Breakpoints::None,
        inner_nodes: Vec::new(),
        reloadable: false,
        reducer_keys: lg
            .graph
            .channels
            .iter()
            .filter(|(k, kind)| {
                lg.graph.state_keys.contains(k)
                    && !matches!(kind, crate::engine::channels::ChannelKind::LastValue)
            })
            .map(|(k, _)| k.clone())
            .collect(),
    }
}

/// Where a node's `Command(goto=...)` may lead, as far as the spec says.
enum CommandRoutes<'a> {
    /// The node's `"destinations"` (LangGraph's `Command[Literal[...]]` hint).
    Declared(&'a [(String, Option<String>)]),
    /// No declaration, and its code returns a `Command`: it routes where its code decides.
    Dynamic,
    None,
}

fn command_routes<'a>(lg: &'a LoadedGraph, node: &str) -> CommandRoutes<'a> {
    let Some(n) = lg.spec.node(node) else {
        return CommandRoutes::None;
    };
    match &n.destinations {
        Some(d) => CommandRoutes::Declared(d),
        None if returns_command(&lg.code_source, &n.func) => CommandRoutes::Dynamic,
        None => CommandRoutes::None,
    }
}

/// Whether the Starlark function `func` builds a `Command(...)` in its own body (the text
/// from its `def` to the next top-level line). Read from the source, so a Command built by a
/// helper is not seen: such a node is drawn as having no Command routes.
fn returns_command(code: &str, func: &str) -> bool {
    let head = format!("def {func}(");
    let mut lines = code.lines().skip_while(|l| !l.starts_with(&head));
    if lines.next().is_none() {
        return false;
    }
    lines
        .take_while(|l| l.is_empty() || l.starts_with([' ', '\t', '#']))
        .any(|l| {
            let code = l.split('#').next().unwrap_or("");
            code.contains("Command(") && code.contains("goto")
        })
}

/// `superstep graph` for a spec: Mermaid, or the plain listing.
fn write_graph(lg: &LoadedGraph, mermaid: bool, out: &mut dyn Write) -> std::io::Result<()> {
    let s = &lg.spec;
    if mermaid {
        writeln!(
            out,
            "---\nconfig:\n  flowchart:\n    curve: linear\n---\ngraph TD;"
        )?;
        writeln!(out, "\t__start__([<p>__start__</p>]):::first")?;
        for n in &s.nodes {
            let mut label = n.name.clone();
            if s.interrupt_before.matches(&n.name) {
                label.push_str("<hr/><small><em>__interrupt = before</em></small>");
            }
            if s.interrupt_after.matches(&n.name) {
                label.push_str("<hr/><small><em>__interrupt = after</em></small>");
            }
            writeln!(out, "\t{}({})", n.name, label)?;
        }
        writeln!(out, "\t__end__([<p>__end__</p>]):::last")?;
        for e in &s.edges {
            for src in &e.sources {
                writeln!(out, "\t{src} --> {};", e.target)?;
            }
        }
        for b in &s.branches {
            match &b.path_map {
                Some(m) => {
                    for (k, d) in m {
                        // LangGraph labels an edge only when the label is not its destination
                        match k.as_str().unwrap_or("?") {
                            l if l == d => writeln!(out, "\t{} -.-> {d};", b.source)?,
                            l => writeln!(out, "\t{} -. &nbsp;{l}&nbsp; .-> {d};", b.source)?,
                        }
                    }
                }
                None => writeln!(out, "\t{} -.-> {}_path[[{}]];", b.source, b.source, b.path)?,
            }
        }
        // Command(goto=...) destinations, drawn as LangGraph draws a Command[Literal[...]] hint
        for n in &s.nodes {
            match command_routes(lg, &n.name) {
                CommandRoutes::Declared(d) => {
                    for (t, label) in d {
                        match label {
                            Some(l) if l != t => {
                                writeln!(out, "\t{} -. &nbsp;{l}&nbsp; .-> {t};", n.name)?
                            }
                            _ => writeln!(out, "\t{} -.-> {t};", n.name)?,
                        }
                    }
                }
                CommandRoutes::Dynamic => writeln!(
                    out,
                    "\t%% {} routes dynamically by Command(goto=...): declare its \"destinations\" in the spec to draw them",
                    n.name
                )?,
                CommandRoutes::None => {}
            }
        }
        writeln!(out, "\tclassDef default fill:#f2f0ff,line-height:1.2\n\tclassDef first fill-opacity:0\n\tclassDef last fill:#bfb6fc")?;
        return Ok(());
    }
    let mut text = GraphText {
        title: format!("{}  ({})", s.name, lg.path.display()),
        about: (!s.description.is_empty())
            .then(|| s.description.clone())
            .into_iter()
            .collect(),
        ..GraphText::default()
    };
    for k in &s.state {
        let r = match &k.reducer {
            crate::spec::model::ReducerSpec::LastValue => "last value".to_string(),
            crate::spec::model::ReducerSpec::Add => "add".to_string(),
            crate::spec::model::ReducerSpec::Code(f) => format!("reducer {f}()"),
        };
        text.state.push((k.name.clone(), r));
    }
    for n in &lg.graph.nodes {
        let mut marks = Vec::new();
        if s.interrupt_before.matches(&n.name) {
            marks.push("break-before".to_string());
        }
        if s.interrupt_after.matches(&n.name) {
            marks.push("break-after".to_string());
        }
        let mut edges: Vec<String> = Vec::new();
        for w in &n.writers {
            match w {
                Writer::Edge(c) => edges.push(c.trim_start_matches("branch:to:").to_string()),
                Writer::Join(c) => {
                    edges.push(format!("(waits) {}", c.rsplit(':').next().unwrap_or(c)))
                }
                Writer::Branch { path, path_map } => edges.push(match path_map {
                    Some(m) => format!(
                        "{path}() ? {}",
                        m.iter()
                            .map(|(k, d)| format!("{}->{d}", k.as_str().unwrap_or("?")))
                            .collect::<Vec<_>>()
                            .join(" | ")
                    ),
                    None => format!("{path}() ? any"),
                }),
            }
        }
        let ends_here = s
            .edges
            .iter()
            .any(|e| e.target == "__end__" && e.sources.iter().any(|x| x == &n.name));
        if ends_here {
            edges.push("__end__".into());
        }
        match command_routes(lg, &n.name) {
            CommandRoutes::Declared(d) => edges.push(format!(
                "Command(goto) ? {}",
                d.iter()
                    .map(|(t, l)| match l {
                        Some(l) => format!("{l}->{t}"),
                        None => t.clone(),
                    })
                    .collect::<Vec<_>>()
                    .join(" | ")
            )),
            CommandRoutes::Dynamic => edges.push(
                "Command(goto) ? routes dynamically (declare \"destinations\" in the spec to list them)"
                    .into(),
            ),
            CommandRoutes::None => {}
        }
        text.nodes.push(NodeText {
            name: n.name.clone(),
            edges,
            marks,
        });
    }
    write!(out, "{text}")
}

/// A value the user gave (JSON, as the interface carries it) as the engine stores it.
fn engine_value(j: &Json) -> Result<rmpv::Value, SourceError> {
    from_view(j).map_err(|e| SourceError::message(format!("value cannot be stored: {e}"), ""))
}

/// The interface's input as the engine's.
fn engine_input(input: Input) -> Result<super::Input, SourceError> {
    Ok(match input {
        Input::Value(v) => super::Input::Value(engine_value(&v)?),
        Input::Continue => super::Input::Continue,
        Input::Command {
            update,
            goto,
            resume,
        } => super::Input::Command {
            update: update.as_ref().map(engine_value).transpose()?,
            goto: goto.iter().map(|g| rmpv::Value::from(g.as_str())).collect(),
            resume: match resume {
                None => None,
                Some(Resume::Plain(v)) => Some(super::Resume::Plain(engine_value(&v)?)),
                Some(Resume::Map(m)) => Some(super::Resume::Map(
                    m.iter()
                        .map(|(k, v)| Ok((k.clone(), engine_value(v)?)))
                        .collect::<Result<_, SourceError>>()?,
                )),
            },
        },
    })
}

/// An engine error as the interface reports it: an error of the graph (it ends the run: the
/// CLI's exit 3) or a refused request, with what to do about it.
impl From<EngineError> for SourceError {
    fn from(e: EngineError) -> SourceError {
        let message = e.to_string();
        let hint = match &e {
            EngineError::MultiplePendingInterrupts { pending } => format!(
                "{} interrupts are pending ({}): LangGraph needs each answer keyed by interrupt id — press r and answer them one by one, or :resume ID=JSON",
                pending.len(),
                pending
                    .iter()
                    .map(|p| crate::text::head(p, 8).to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            EngineError::EmptyInput(_) => {
                "there is nothing to run with this input (no pending task and no new input)".into()
            }
            EngineError::UnknownInterrupt { .. } => {
                "that interrupt is not pending any more: check the Interrupts pane".into()
            }
            EngineError::UnknownCheckpoint(_) => "pick a checkpoint listed in History".into(),
            EngineError::InvalidUpdate(_) | EngineError::Update(_) => {
                "the update does not fit the graph: pick as_node explicitly (u, then ↑/↓) or check the keys".into()
            }
            EngineError::Reducer { .. } => "a reducer rejected the value: check its type".into(),
            EngineError::Store(_) => "the checkpoint file could not be read or written".into(),
            _ => String::new(),
        };
        match e {
            EngineError::InvalidUpdate(_)
            | EngineError::Reducer { .. }
            | EngineError::Raised(_) => SourceError::Graph {
                message,
                hint,
                traceback: None,
            },
            _ => SourceError::Message { message, hint },
        }
    }
}

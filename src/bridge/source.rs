//! A Python graph as a graph source: LangGraph runs it (through the bridge) and writes every row;
//! superstep only reads the file.

use super::interpreter::Interpreter;
use super::process::{last_line, Incoming, Process};
use super::protocol::{
    Event, Output, Request, WireBreaks, WireError, WireInnerBreaks, WireInput, WireRef, WireResume,
    WireStart,
};
use super::reference::{PythonRef, Target};
use crate::engine::update_state::AsNode;
use crate::engine::{Input, Resume};
use crate::snapshot::topology::Topology;
use crate::source::{
    inner_name, split_inner, GraphSource, RunOutcome, RunRequest, Shape, ShapeNode, SourceError,
    Start, TaskOutput,
};
use crate::spec::model::Breakpoints;
use crate::value::{to_view, ViewOptions};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a cancelled step may take to stop before the bridge is killed.
pub const CANCEL_GRACE: Duration = Duration::from_secs(3);

/// What `load` reported about the graph.
#[derive(Debug, Clone)]
pub struct LoadInfo {
    pub name: String,
    pub is_async: bool,
    /// `StateGraph`, `CompiledStateGraph`, `function` (a factory) ...
    pub kind: String,
    /// The checkpointer the app compiled with (replaced by the bridge's SqliteSaver).
    pub had_checkpointer: Option<String>,
    pub topology: Json,
}

/// A run begun and not finished.
struct Pending {
    id: u64,
    out: RunOutcome,
    cancel_at: Option<Instant>,
}

pub struct PythonSource {
    reference: PythonRef,
    interpreter: Interpreter,
    db: Option<PathBuf>,
    proc: Option<Process>,
    pub info: LoadInfo,
    shape: Shape,
    topology: Option<Topology>,
    pending: Option<Pending>,
    finished: Option<RunOutcome>,
    gone: Option<String>,
    pub recursion_limit: i64,
    /// Printed while the module was imported (and anything else outside a task).
    pub loose_output: Vec<TaskOutput>,
    /// Warnings for the user (a LangGraph version outside 1.2.x).
    pub warnings: Vec<String>,
}

fn message(reference: &PythonRef, py: &Interpreter, e: &str, frame: Option<&str>) -> String {
    let at = frame.map(|f| format!(" (at {f})")).unwrap_or_default();
    format!(
        "{}: {e}{at}; interpreter {} ({}) — choose another with --python PATH",
        reference.label,
        py.path.display(),
        py.why
    )
}

fn task_output(o: Output) -> TaskOutput {
    TaskOutput {
        task_id: o.task_id.unwrap_or_default(),
        node: o.node.unwrap_or_default(),
        ns: o.ns.unwrap_or_default(),
        attempt: o.attempt.unwrap_or(0),
        stream: o.stream,
        text: o.text,
    }
}

fn wire_error(e: &WireError, hint: &str) -> SourceError {
    let at = e
        .frame
        .as_deref()
        .map(|f| format!(" (at {f})"))
        .unwrap_or_default();
    SourceError::message(format!("{}{at}", e.message), hint)
}

impl PythonSource {
    /// Start the bridge, import the graph and read its shape. `db` is the checkpoint file (not
    /// opened until the first run; `None` for `superstep graph`).
    pub fn open(
        reference: PythonRef,
        interpreter: Interpreter,
        db: Option<&Path>,
    ) -> Result<PythonSource, String> {
        let (proc, info, loose) = Self::start(&reference, &interpreter, db)?;
        let mut warnings = Vec::new();
        if let Some(v) = &proc.hello.langgraph {
            if !v.starts_with("1.2.") {
                warnings.push(format!(
                    "langgraph {v} in {}: superstep's fidelity promise is for LangGraph 1.2.x",
                    interpreter.path.display()
                ));
            }
        }
        if let Some(cp) = &info.had_checkpointer {
            let on = if db.is_some_and(crate::store::Store::is_server) {
                "PostgresSaver on the chosen database"
            } else {
                "SqliteSaver on the chosen file"
            };
            warnings.push(format!(
                "{}: the graph was compiled with its own checkpointer ({cp}); superstep runs it with LangGraph's {on} instead (as langgraph dev does)",
                reference.label
            ));
        }
        let topology = Topology::from_oracle_json(&info.topology).ok();
        let shape = shape_of(&info, &reference.label);
        Ok(PythonSource {
            reference,
            interpreter,
            db: db.map(Path::to_path_buf),
            proc: Some(proc),
            info,
            shape,
            topology,
            pending: None,
            finished: None,
            gone: None,
            recursion_limit: 25,
            loose_output: loose,
            warnings,
        })
    }

    fn start(
        reference: &PythonRef,
        py: &Interpreter,
        db: Option<&Path>,
    ) -> Result<(Process, LoadInfo, Vec<TaskOutput>), String> {
        let mut proc = Process::spawn(py)?;
        let id = proc.id();
        let (file, module) = match &reference.target {
            Target::File(p) => (Some(p.display().to_string()), None),
            Target::Module(m) => (None, Some(m.clone())),
        };
        let abs = |p: &Path| {
            std::path::absolute(p)
                .unwrap_or_else(|_| p.to_path_buf())
                .display()
                .to_string()
        };
        proc.send(&Request::Load {
            id,
            target: WireRef {
                file: file.map(|f| abs(Path::new(&f))),
                module,
                attr: reference.attr.clone(),
            },
            // a Postgres URL goes to PostgresSaver (psycopg, libpq's rules) as the user wrote it
            db: db.map(|d| {
                if crate::store::Store::is_server(d) {
                    d.display().to_string()
                } else {
                    abs(d)
                }
            }),
            env: reference.env.iter().cloned().collect(),
            paths: reference.paths.iter().map(|p| abs(p)).collect(),
        })
        .map_err(|e| message(reference, py, &e, None))?;
        let mut loose = Vec::new();
        loop {
            match proc.recv(None) {
                Some(Incoming::Event(Event::Loaded {
                    name,
                    is_async,
                    kind,
                    topology,
                    had_checkpointer,
                    ..
                })) => {
                    // LangGraph names every graph "LangGraph" unless told otherwise: the graph id
                    // or the variable says more
                    let name = match name {
                        Some(n) if n != "LangGraph" => n,
                        _ => reference.graph_id.clone().unwrap_or_else(|| {
                            let place = match &reference.target {
                                Target::File(p) => p
                                    .file_name()
                                    .map(|f| f.to_string_lossy().into_owned())
                                    .unwrap_or_default(),
                                Target::Module(m) => m.clone(),
                            };
                            format!("{place}:{}", reference.attr)
                        }),
                    };
                    let info = LoadInfo {
                        name,
                        is_async,
                        kind,
                        had_checkpointer,
                        topology,
                    };
                    return Ok((proc, info, loose));
                }
                Some(Incoming::Event(Event::Output(o))) => loose.push(task_output(o)),
                Some(Incoming::Event(Event::Error {
                    message: m, frame, ..
                })) => {
                    return Err(message(reference, py, &m, frame.as_deref()));
                }
                Some(Incoming::Closed) | None => {
                    let tail = proc.tail();
                    return Err(message(
                        reference,
                        py,
                        &format!(
                            "the bridge exited while loading the graph: {}",
                            last_line(&tail)
                        ),
                        None,
                    ));
                }
                Some(other) => {
                    return Err(message(
                        reference,
                        py,
                        &format!("unexpected message while loading: {other:?}"),
                        None,
                    ))
                }
            }
        }
    }

    pub fn interpreter(&self) -> &Interpreter {
        &self.interpreter
    }

    /// LangGraph's version in the interpreter.
    pub fn langgraph_version(&self) -> Option<String> {
        self.proc.as_ref().and_then(|p| p.hello.langgraph.clone())
    }

    /// The bridge's process id (tests kill it to check what happens then).
    pub fn bridge_pid(&self) -> Option<u32> {
        self.proc.as_ref().map(Process::pid)
    }

    /// The bridge, started again when a cancel took the last one down.
    fn ensure(&mut self) -> Result<&mut Process, SourceError> {
        if let Some(why) = &self.gone {
            return Err(SourceError::message(why.clone(), ""));
        }
        if self.proc.is_none() {
            let (p, _, loose) = Self::start(&self.reference, &self.interpreter, self.db.as_deref())
                .map_err(|e| SourceError::message(e, ""))?;
            self.loose_output.extend(loose);
            self.proc = Some(p);
        }
        Ok(self.proc.as_mut().unwrap())
    }

    /// Create LangGraph's SqliteSaver (and the file's schema) now: the TUI reads the file from
    /// the start.
    pub fn open_db(&mut self) -> Result<(), SourceError> {
        let p = self.ensure()?;
        let id = p.id();
        p.send(&Request::Open { id })
            .map_err(|e| SourceError::message(e, ""))?;
        self.wait_simple(id).map(|_| ())
    }

    /// Wait for the answer to a simple request (not a run).
    fn wait_simple(&mut self, id: u64) -> Result<Event, SourceError> {
        loop {
            let p = self.proc.as_mut().expect("bridge");
            match p.recv(None) {
                Some(Incoming::Event(Event::Output(o))) => self.loose_output.push(task_output(o)),
                Some(Incoming::Event(Event::Error {
                    re,
                    message,
                    hint,
                    frame,
                    ..
                })) if re == Some(id) || re.is_none() => {
                    let at = frame.map(|f| format!(" (at {f})")).unwrap_or_default();
                    return Err(SourceError::message(format!("{message}{at}"), hint));
                }
                Some(Incoming::Event(e)) if event_re(&e) == Some(id) => return Ok(e),
                Some(Incoming::Event(_)) => {}
                Some(Incoming::Garbled(g)) => return Err(SourceError::message(g, "")),
                Some(Incoming::Closed) | None => return Err(self.died()),
            }
        }
    }

    /// The bridge went away unexpectedly: say so, and stay read-only from now on.
    fn died(&mut self) -> SourceError {
        let tail = self.proc.as_ref().map(Process::tail).unwrap_or_default();
        let status = self
            .proc
            .as_mut()
            .and_then(Process::exited)
            .map(|s| s.to_string())
            .unwrap_or_else(|| "gone".into());
        self.proc = None;
        let why = format!(
            "the Python bridge exited ({status}){}",
            if tail.is_empty() {
                String::new()
            } else {
                format!(": {}", last_line(&tail))
            }
        );
        self.gone = Some(why.clone());
        SourceError::message(
            why,
            "the file keeps what LangGraph committed; superstep stays open read-only",
        )
    }

    fn wire_breaks(user: &Breakpoints, fixed: &Breakpoints) -> Option<WireBreaks> {
        // LangGraph: `interrupt_before or compiled` — a runtime list replaces the compiled one, so
        // the compiled-in breakpoints are added to it (they cannot be switched off).
        match (user, fixed) {
            (Breakpoints::None, _) => None,
            (Breakpoints::All, _) | (_, Breakpoints::All) => Some(WireBreaks::All("*".into())),
            (Breakpoints::Nodes(u), Breakpoints::None) => Some(WireBreaks::Nodes(u.clone())),
            (Breakpoints::Nodes(u), Breakpoints::Nodes(f)) => {
                let mut all = f.clone();
                all.extend(u.iter().filter(|n| !f.contains(n)).cloned());
                Some(WireBreaks::Nodes(all))
            }
        }
    }

    /// Take what arrived for the pending run; the outcome when it is finished.
    fn pump(&mut self, block: bool) -> Option<RunOutcome> {
        let pending = self.pending.as_ref()?;
        let id = pending.id;
        loop {
            if let Some(at) = self.pending.as_ref().and_then(|p| p.cancel_at) {
                if at.elapsed() > CANCEL_GRACE {
                    if let Some(p) = self.proc.as_mut() {
                        p.kill();
                    }
                    self.proc = None;
                    let mut out = self.pending.take().unwrap().out;
                    out.error = Some(SourceError::message(
                        format!(
                            "cancelled: the node did not stop within {} s, so the Python bridge was killed",
                            CANCEL_GRACE.as_secs()
                        ),
                        "the file keeps the last checkpoint LangGraph committed; the next step starts the bridge again",
                    ));
                    return Some(out);
                }
            }
            let Some(proc) = self.proc.as_ref() else {
                let mut out = self.pending.take().unwrap().out;
                out.error = Some(SourceError::message("the Python bridge is not running", ""));
                return Some(out);
            };
            let msg = if block {
                match proc.recv(Some(Duration::from_millis(100))) {
                    Some(m) => m,
                    None => continue,
                }
            } else {
                proc.try_recv()?
            };
            let pend = self.pending.as_mut().unwrap();
            match msg {
                Incoming::Event(Event::Output(o)) => pend.out.output.push(task_output(o)),
                Incoming::Event(Event::Step { re, report }) if re == id => {
                    match report.to_step_report() {
                        Ok(r) => pend.out.reports.push(r),
                        Err(e) => pend.out.error = Some(SourceError::message(e, "")),
                    }
                }
                Incoming::Event(Event::Done {
                    re,
                    checkpoint,
                    error,
                    ..
                }) if re == id => {
                    let mut out = self.pending.take().unwrap().out;
                    out.checkpoint = checkpoint;
                    if let Some(e) = error {
                        out.error = Some(wire_error(&e, &hint_for(&e.kind)));
                    }
                    return Some(out);
                }
                Incoming::Event(Event::Error {
                    re,
                    kind,
                    message,
                    hint,
                    frame,
                }) if re == Some(id) || re.is_none() => {
                    let mut out = self.pending.take().unwrap().out;
                    out.error = Some(wire_error(
                        &WireError {
                            kind: kind.clone(),
                            message,
                            frame,
                        },
                        &hint,
                    ));
                    if kind == "cancelled" {
                        // the bridge exits after a cancel; the next operation starts a new one
                        if let Some(mut p) = self.proc.take() {
                            let deadline = Instant::now() + Duration::from_secs(1);
                            while p.exited().is_none() && Instant::now() < deadline {
                                std::thread::sleep(Duration::from_millis(5));
                            }
                            p.kill();
                        }
                    }
                    return Some(out);
                }
                Incoming::Event(_) => {}
                Incoming::Garbled(g) => pend.out.error = Some(SourceError::message(g, "")),
                Incoming::Closed => {
                    let cancelled = pend.cancel_at.is_some();
                    let mut out = self.pending.take().unwrap().out;
                    if cancelled {
                        self.proc = None;
                        out.error = Some(SourceError::message(
                            "cancelled: the Python bridge stopped",
                            "the file keeps the last checkpoint LangGraph committed; the next step starts the bridge again",
                        ));
                    } else {
                        out.error = Some(self.died());
                    }
                    return Some(out);
                }
            }
        }
    }
}

fn hint_for(kind: &str) -> String {
    match kind {
        "EmptyInputError" => {
            "there is nothing to run with this input (no pending task and no new input)".into()
        }
        "RuntimeError" => "several interrupts are pending: answer them by id".into(),
        "InvalidUpdateError" => {
            "the update does not fit the graph: check as_node and the keys".into()
        }
        _ => String::new(),
    }
}

fn event_re(e: &Event) -> Option<u64> {
    match e {
        Event::Loaded { re, .. }
        | Event::Step { re, .. }
        | Event::Done { re, .. }
        | Event::Updated { re, .. }
        | Event::State { re, .. }
        | Event::Ok { re }
        | Event::Bye { re } => Some(*re),
        Event::Error { re, .. } => *re,
        Event::Hello(_) | Event::Output(_) => None,
    }
}

fn wire_input(input: &Input) -> WireInput {
    let o = ViewOptions::default();
    match input {
        Input::Value(v) => WireInput::Value {
            value: to_view(v, o),
        },
        Input::Continue => WireInput::Continue,
        Input::Command {
            update,
            goto,
            resume,
        } => WireInput::Command {
            update: update.as_ref().map(|u| to_view(u, o)),
            goto: goto
                .iter()
                .map(|g| {
                    g.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| g.to_string())
                })
                .collect(),
            resume: resume.as_ref().map(|r| match r {
                Resume::Plain(v) => WireResume::Value {
                    value: to_view(v, o),
                },
                Resume::Map(m) => WireResume::Map {
                    map: m.iter().map(|(k, v)| (k.clone(), to_view(v, o))).collect(),
                },
            }),
        },
    }
}

fn breakpoints_of(j: &Json) -> Breakpoints {
    match j {
        Json::String(s) if s == "*" => Breakpoints::All,
        Json::Array(a) if !a.is_empty() => Breakpoints::Nodes(
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect(),
        ),
        _ => Breakpoints::None,
    }
}

/// The TUI's / CLI's view of a Python graph, from the topology the bridge read off it.
pub fn shape_of(info: &LoadInfo, label: &str) -> Shape {
    let t = &info.topology;
    let edges = t["edges"].as_array().cloned().unwrap_or_default();
    let nodes = t["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n["name"].as_str())
        .filter(|n| *n != "__start__")
        .map(|name| {
            let mut successors: Vec<String> = Vec::new();
            for e in &edges {
                if e["source"].as_str() == Some(name) {
                    if let Some(tgt) = e["target"].as_str() {
                        if !successors.iter().any(|s| s == tgt) {
                            successors.push(tgt.to_string());
                        }
                    }
                }
            }
            ShapeNode {
                name: name.to_string(),
                successors,
            }
        })
        .collect();
    let state_keys = t["state_keys"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|k| k.as_str().map(str::to_string))
        .collect();
    let before = breakpoints_of(&t["interrupt_before"]);
    let after = breakpoints_of(&t["interrupt_after"]);
    let mut inner = Inner::default();
    inner.walk(t, "");
    Shape {
        name: info.name.clone(),
        label: label.to_string(),
        nodes,
        state_keys,
        input: None,
        interrupt_before: before.clone(),
        interrupt_after: after.clone(),
        fixed_before: with_inner(before, inner.fixed_before),
        fixed_after: with_inner(after, inner.fixed_after),
        inner_nodes: inner.nodes,
    }
}

/// The nodes and compiled-in breakpoints of a graph's subgraphs, named by `inner_name`.
#[derive(Default)]
struct Inner {
    nodes: Vec<ShapeNode>,
    fixed_before: Vec<String>,
    fixed_after: Vec<String>,
}

impl Inner {
    /// `t`'s subgraphs (the topology's `subgraph_topologies`, by node name), depth first;
    /// `prefix` is `t`'s own path (`""`: the root).
    fn walk(&mut self, t: &Json, prefix: &str) {
        let Some(subs) = t["subgraph_topologies"].as_object() else {
            return;
        };
        for (node, sub) in subs {
            let path = if prefix.is_empty() {
                node.clone()
            } else {
                format!("{prefix}|{node}")
            };
            let edges = sub["edges"].as_array().cloned().unwrap_or_default();
            for n in sub["nodes"].as_array().into_iter().flatten() {
                let Some(name) = n["name"].as_str().filter(|n| *n != "__start__") else {
                    continue;
                };
                let successors = edges
                    .iter()
                    .filter(|e| e["source"].as_str() == Some(name))
                    .filter_map(|e| e["target"].as_str())
                    .fold(Vec::<String>::new(), |mut v, x| {
                        if !v.iter().any(|y| y == x) {
                            v.push(x.to_string());
                        }
                        v
                    });
                self.nodes.push(ShapeNode {
                    name: inner_name(&path, name),
                    successors,
                });
            }
            for (key, out) in [
                ("interrupt_before", &mut self.fixed_before),
                ("interrupt_after", &mut self.fixed_after),
            ] {
                match breakpoints_of(&sub[key]) {
                    Breakpoints::All => out.push(inner_name(&path, "*")),
                    Breakpoints::Nodes(v) => out.extend(v.iter().map(|n| inner_name(&path, n))),
                    Breakpoints::None => {}
                }
            }
            self.walk(sub, &path);
        }
    }
}

/// Root breakpoints plus those compiled into subgraphs (`inner|ask`).
fn with_inner(root: Breakpoints, inner: Vec<String>) -> Breakpoints {
    if inner.is_empty() {
        return root;
    }
    match root {
        Breakpoints::All => Breakpoints::All,
        Breakpoints::None => Breakpoints::Nodes(inner),
        Breakpoints::Nodes(mut v) => {
            v.extend(inner);
            Breakpoints::Nodes(v)
        }
    }
}

/// What the bridge is told about breakpoints inside subgraphs (names from `split_inner`).
fn wire_inner(
    before: BTreeMap<String, Breakpoints>,
    after: BTreeMap<String, Breakpoints>,
) -> BTreeMap<String, WireInnerBreaks> {
    let wire = |b: &Breakpoints| match b {
        Breakpoints::None => None,
        Breakpoints::All => Some(WireBreaks::All("*".into())),
        Breakpoints::Nodes(v) => Some(WireBreaks::Nodes(v.clone())),
    };
    let mut out: BTreeMap<String, WireInnerBreaks> = BTreeMap::new();
    for (p, b) in &before {
        out.entry(p.clone()).or_default().before = wire(b);
    }
    for (p, b) in &after {
        out.entry(p.clone()).or_default().after = wire(b);
    }
    out
}

impl GraphSource for PythonSource {
    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn topology(&self, ns: &str) -> Option<Topology> {
        if ns.is_empty() {
            return self.topology.clone();
        }
        let mut t = &self.info.topology;
        for seg in ns.split('|') {
            let name = seg.split(':').next().unwrap_or(seg);
            t = t["subgraph_topologies"].get(name)?;
        }
        Topology::from_oracle_json(t).ok()
    }

    fn run(&mut self, req: RunRequest) -> RunOutcome {
        self.begin(req);
        loop {
            if let Some(out) = self.poll_blocking() {
                return out;
            }
        }
    }

    fn update_state(
        &mut self,
        thread: &str,
        checkpoint: Option<&str>,
        values: Option<rmpv::Value>,
        as_node: AsNode,
    ) -> Result<String, SourceError> {
        self.update_state_in(thread, "", checkpoint, values, as_node)
    }

    /// LangGraph's `update_state` with a subgraph's config: `{thread_id, checkpoint_ns}`, or the
    /// config of the addressed checkpoint's own snapshot (its `checkpoint_map` included, the
    /// `__pregel_*` objects dropped) — LangGraph hands it to that subgraph.
    fn update_state_in(
        &mut self,
        thread: &str,
        ns: &str,
        checkpoint: Option<&str>,
        values: Option<rmpv::Value>,
        as_node: AsNode,
    ) -> Result<String, SourceError> {
        let p = self.ensure()?;
        let id = p.id();
        let as_node = match as_node {
            AsNode::Infer => None,
            AsNode::Node(n) => Some(n),
            AsNode::Input => Some("__input__".to_string()),
            AsNode::Copy => Some("__copy__".to_string()),
            AsNode::End => Some("__end__".to_string()),
        };
        p.send(&Request::UpdateState {
            id,
            thread: thread.to_string(),
            ns: ns.to_string(),
            checkpoint: checkpoint.map(str::to_string),
            values: values
                .map(|v| to_view(&v, ViewOptions::default()))
                .unwrap_or(Json::Null),
            as_node,
        })
        .map_err(|e| SourceError::message(e, ""))?;
        match self.wait_simple(id)? {
            Event::Updated { checkpoint, .. } => Ok(checkpoint),
            other => Err(SourceError::message(
                format!("unexpected answer to update_state: {other:?}"),
                "",
            )),
        }
    }

    fn reset(&mut self) {
        if let Some(p) = self.proc.as_mut() {
            let id = p.id();
            if p.send(&Request::Reset { id }).is_ok() {
                let _ = self.wait_simple(id);
            }
        }
    }

    /// A run from a subgraph checkpoint's config: `invoke(input, config)` with the config of that
    /// checkpoint's own snapshot (LangGraph starts the root from the checkpoint its
    /// `checkpoint_map` names, and the subgraph task of `ns` from the addressed checkpoint).
    fn run_in(&mut self, req: RunRequest, ns: &str) -> RunOutcome {
        if let Some(out) = GraphSource::begin_in(self, req, ns) {
            return out;
        }
        loop {
            if let Some(out) = self.poll_blocking() {
                return out;
            }
        }
    }

    /// A run from a subgraph checkpoint's config, begun like any other: the TUI polls it (spinner,
    /// Esc cancels a hung node) — only a request LangGraph would not address is answered at once.
    fn begin_in(&mut self, req: RunRequest, ns: &str) -> Option<RunOutcome> {
        if !ns.is_empty()
            && !matches!(
                req.start,
                Start::Fresh {
                    checkpoint: Some(_),
                    ..
                }
            )
        {
            // LangGraph's invoke drops a namespace given without a checkpoint id
            return Some(RunOutcome {
                error: Some(SourceError::message(
                    format!(
                        "namespace {}: a run in a subgraph namespace starts from one of its checkpoints",
                        crate::text::escape(ns)
                    ),
                    "name the checkpoint (--checkpoint ID; history --ns lists them)",
                )),
                ..RunOutcome::default()
            });
        }
        self.send_run(req, ns);
        None
    }

    fn begin(&mut self, req: RunRequest) {
        self.send_run(req, "")
    }

    fn poll(&mut self) -> Option<RunOutcome> {
        if let Some(out) = self.finished.take() {
            return Some(out);
        }
        self.pump(false)
    }

    fn cancel(&mut self) {
        let Some(p) = self.pending.as_mut() else {
            return;
        };
        if p.cancel_at.is_none() {
            p.cancel_at = Some(Instant::now());
            if let Some(proc) = self.proc.as_mut() {
                let _ = proc.send(&Request::Cancel);
            }
        }
    }

    fn graph_text(&self, mermaid: bool) -> String {
        let t = &self.info.topology;
        if mermaid {
            return t["mermaid"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| "(LangGraph could not draw this graph)\n".into());
        }
        let mut out = format!("graph {}  ({})\n", self.info.name, self.reference.label);
        out.push_str(&format!(
            "  Python {}: {} ({}{})\n",
            self.info.kind,
            self.interpreter.path.display(),
            self.langgraph_version()
                .map(|v| format!("langgraph {v}"))
                .unwrap_or_default(),
            if self.info.is_async { ", async" } else { "" }
        ));
        out.push_str("state:\n");
        for k in &self.shape.state_keys {
            let ch = &t["channels"][k];
            let kind = ch["kind"].as_str().unwrap_or("?");
            let r = match (kind, ch["reducer_qualname"].as_str()) {
                ("LastValue", _) => "last value".to_string(),
                (k, Some(q)) => format!("{k}({q})"),
                (k, None) => k.to_string(),
            };
            out.push_str(&format!("  {k:<16} {r}\n"));
        }
        out.push_str("nodes:\n");
        for n in &self.shape.nodes {
            let mut marks = Vec::new();
            if self.shape.fixed_before.matches(&n.name) {
                marks.push("break-before (compiled in)");
            }
            if self.shape.fixed_after.matches(&n.name) {
                marks.push("break-after (compiled in)");
            }
            if t["subgraphs"]
                .as_array()
                .is_some_and(|s| s.iter().any(|x| x == n.name.as_str()))
            {
                marks.push("subgraph");
            }
            out.push_str(&format!(
                "  {:<16} -> {}{}\n",
                n.name,
                if n.successors.is_empty() {
                    "(end)".to_string()
                } else {
                    n.successors.join(", ")
                },
                if marks.is_empty() {
                    String::new()
                } else {
                    format!("   [{}]", marks.join(", "))
                }
            ));
        }
        out
    }

    fn gone(&self) -> Option<String> {
        self.gone.clone()
    }
}

impl PythonSource {
    fn poll_blocking(&mut self) -> Option<RunOutcome> {
        if let Some(out) = self.finished.take() {
            return Some(out);
        }
        if self.pending.is_none() {
            return Some(RunOutcome::default());
        }
        self.pump(true)
    }
}

impl PythonSource {
    /// Send a run request (the namespace of a fresh run's checkpoint; `""`: the root) and leave
    /// it pending, or its failure in `finished`.
    fn send_run(&mut self, req: RunRequest, ns: &str) {
        let recursion_limit = self.recursion_limit;
        // a subgraph's compiled-in breakpoints are the bridge's to keep (it sets the runtime
        // ones on the subgraph objects next to them)
        let fixed_before = split_inner(&self.shape.fixed_before).0;
        let fixed_after = split_inner(&self.shape.fixed_after).0;
        let (before, inner_before) = split_inner(&req.before);
        let (after, inner_after) = split_inner(&req.after);
        let proc = match self.ensure() {
            Ok(p) => p,
            Err(e) => {
                self.finished = Some(RunOutcome {
                    error: Some(e),
                    ..RunOutcome::default()
                });
                return;
            }
        };
        let id = proc.id();
        let start = match &req.start {
            Start::Continue => WireStart::Continue,
            Start::Fresh { input, checkpoint } => WireStart::Fresh {
                input: wire_input(input),
                checkpoint: checkpoint.clone(),
                ns: ns.to_string(),
            },
        };
        let sent = proc.send(&Request::Run {
            id,
            thread: req.thread.clone(),
            start,
            steps: req.steps,
            before: Self::wire_breaks(&before, &fixed_before),
            after: Self::wire_breaks(&after, &fixed_after),
            recursion_limit,
            inner: wire_inner(inner_before, inner_after),
        });
        match sent {
            Ok(()) => {
                // what was printed outside any node so far (the module's import) goes with it
                let out = RunOutcome {
                    output: std::mem::take(&mut self.loose_output),
                    ..RunOutcome::default()
                };
                self.pending = Some(Pending {
                    id,
                    out,
                    cancel_at: None,
                })
            }
            Err(_) => {
                let e = self.died();
                self.finished = Some(RunOutcome {
                    error: Some(e),
                    ..RunOutcome::default()
                });
            }
        }
    }
}

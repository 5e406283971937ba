//! A Python graph as a graph source: LangGraph runs it (through the bridge) and writes every row;
//! superstep only reads the file.

use super::interpreter::Interpreter;
use super::process::{last_line, status_text, Incoming, Process};
use super::protocol::{
    Event, Output, Request, WireBreaks, WireError, WireInnerBreaks, WireInput, WireRef, WireResume,
    WireStart,
};
use super::reference::{PythonRef, Target};
use crate::snapshot::topology::Topology;
use crate::source::{
    inner_name, split_inner, AsNode, Breakpoints, GraphSource, Input, Resume, RunOutcome,
    RunRequest, Shape, ShapeNode, SourceError, Start, TaskOutput,
};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod errors;
mod exact;
mod graph_source;
mod run;
mod wire;
use errors::*;
use wire::*;
/// Reloading the graph's code (`R`, `--watch`).
mod reload;
mod settings;

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
    /// The store the app compiled with (replaced by LangGraph's own on the database).
    pub had_store: Option<String>,
    pub topology: Json,
    /// The graph's `context_schema`: `{name, kind, fields: [{name, type, required}]}`.
    pub context_schema: Option<Json>,
    /// The app's own module files the load imported (`--watch` watches them).
    pub files: Vec<String>,
}

/// A run begun and not finished.
struct Pending {
    id: u64,
    out: RunOutcome,
    cancel_at: Option<Instant>,
    /// The nodes of the superstep running now.
    running: Vec<String>,
}

/// How long `pump` waits for the bridge.
#[derive(Clone, Copy)]
enum Wait {
    /// Only what has arrived.
    No,
    Until(Instant),
    /// Until the run is over.
    Done,
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
    /// What every run and update is given besides its input (`configure`).
    settings: crate::source::RunSettings,
    /// The context runs get, as the bridge checked it.
    context: Option<Result<crate::source::ContextInUse, String>>,
    /// Printed while the module was imported (and anything else outside a task).
    pub loose_output: Vec<TaskOutput>,
    /// Warnings for the user (a LangGraph version outside 1.2.x).
    pub warnings: Vec<String>,
    /// The app's files as they were when the graph was loaded (`--watch`).
    stamps: reload::Stamps,
    pub calls: super::calls::CallSettings,
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
        if let Some(w) = settings::store_warning(&reference, &info, db) {
            warnings.push(w);
        }
        let topology = Topology::from_oracle_json(&info.topology).ok();
        let shape = shape_of(&info, &reference.label);
        let stamps = reload::Stamps::of(&info.files);
        let mut src = PythonSource {
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
            settings: Default::default(),
            context: None,
            loose_output: loose,
            warnings,
            stamps,
            calls: Default::default(),
        };
        // a graph with a context_schema gets its defaults until told otherwise (langgraph dev)
        src.check_default_context().map_err(|e| e.to_string())?;
        Ok(src)
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
            env: reference
                .env_to_set(|k| std::env::var_os(k).is_some())
                .into_iter()
                .collect(),
            paths: reference.paths.iter().map(|p| abs(p)).collect(),
            store: reference.store.clone(),
            recordings: super::calls::recordings(db),
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
                    context_schema,
                    files,
                    had_store,
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
                        had_store,
                        topology,
                        context_schema,
                        files,
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
                    let status = proc.wait_exit(EXIT_WAIT);
                    let tail = proc.tail();
                    return Err(message(
                        reference,
                        py,
                        &format!(
                            "the bridge exited while loading the graph ({}){}",
                            status_text(status),
                            printed(&loose, &tail)
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
    pub(super) fn ensure(&mut self) -> Result<&mut Process, SourceError> {
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
    pub(super) fn wait_simple(&mut self, id: u64) -> Result<Event, SourceError> {
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
        let status = self.proc.as_mut().and_then(|p| p.wait_exit(EXIT_WAIT));
        let tail = self.proc.as_ref().map(Process::tail).unwrap_or_default();
        self.proc = None;
        let why = format!(
            "the Python bridge exited ({}){}",
            status_text(status),
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
    fn pump(&mut self, wait: Wait) -> Option<RunOutcome> {
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
            let tick = Duration::from_millis(100);
            let msg = match wait {
                Wait::No => proc.try_recv()?,
                Wait::Done => match proc.recv(Some(tick)) {
                    Some(m) => m,
                    None => continue,
                },
                Wait::Until(at) => {
                    let left = at.checked_duration_since(Instant::now())?;
                    match proc.recv(Some(left.min(tick))) {
                        Some(m) => m,
                        None => continue,
                    }
                }
            };
            let pend = self.pending.as_mut().unwrap();
            match msg {
                Incoming::Event(Event::Output(o)) => pend.out.output.push(task_output(o)),
                Incoming::Event(Event::Running { re, nodes }) if re == id => pend.running = nodes,
                Incoming::Event(Event::Step { re, report }) if re == id => {
                    super::calls::collect(&mut pend.out.calls, &report);
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
                        out.error = Some(if is_save_failure(&e) {
                            // a failed save: the bridge says what became of the step; the
                            // store failed (or another writer moved the thread on), not the graph
                            wire_error(&e, &e.hint)
                        } else {
                            run_error(&e)
                        });
                    }
                    return Some(out);
                }
                Incoming::Event(Event::Error {
                    re,
                    kind,
                    message,
                    hint,
                    frame,
                    traceback,
                }) if re == Some(id) || re.is_none() => {
                    let mut out = self.pending.take().unwrap().out;
                    out.error = Some(wire_error(
                        &WireError {
                            kind: kind.clone(),
                            message,
                            frame,
                            hint: String::new(),
                            traceback,
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

//! The one place Effects run: the store is read through the inspector (`inspect::Thread`), the
//! graph is stepped through the engine (`engine::pregel::Engine`), and every result comes back
//! as Actions for `update`.

use super::action::{
    Action, Breaks, CheckpointData, Effect, HistoryEntry, ResumeArg, RunKind, RunResult,
    ThreadData, ThreadHit,
};
use super::state::ThreadRow;
use super::update::{checkpoint_view, history_entry, hit_label, hits_in};
use crate::engine::clock::{IdSource, SystemIds};
use crate::engine::update_state::AsNode;
use crate::engine::{Engine, EngineError, Input, StepReport};
use crate::inspect::{InspectError, Thread};
use crate::snapshot::topology::Topology;
use crate::spec::LoadedGraph;
use crate::store::{Mode, Stamp, Store};
use crate::value::from_view;
use serde_json::Value as Json;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Checkpoints loaded per history page (newest first); older pages load as the selection nears
/// the end of what is loaded (or all at once on `G`).
pub const HISTORY_PAGE: usize = 200;
/// Threads listed at most.
pub const THREAD_LIMIT: usize = 10_000;

/// One clock and id stream shared by every engine the session creates (a new engine per thread
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

pub struct Runtime<'g> {
    db: PathBuf,
    graph: Option<&'g LoadedGraph>,
    topology: Option<Topology>,
    /// Reads (a second connection in debug mode; read-only in inspect mode).
    store: Store,
    engine: Option<Engine<'g>>,
    ids: SharedIds,
    pub seed: u64,
    /// The DB as of the last look: changes since then came from another process.
    stamp: Option<Stamp>,
}

fn engine_error(e: &EngineError) -> Action {
    let hint = match e {
        EngineError::MultiplePendingInterrupts { pending } => format!(
            "{} interrupts are pending ({}): LangGraph needs each answer keyed by interrupt id — press r and answer them one by one, or :resume ID=JSON",
            pending.len(),
            pending
                .iter()
                .map(|p| p[..p.len().min(8)].to_string())
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
        EngineError::Store(_) | EngineError::Sqlite(_) => {
            "the checkpoint file could not be read or written".into()
        }
        _ => String::new(),
    };
    let error = e.to_string();
    // the docs link does not fit a status line
    let error = match error.split_once(" Docs: ") {
        Some((head, _)) => head.to_string(),
        None => error,
    };
    Action::Failed { error, hint }
}

fn inspect_error(e: InspectError) -> Action {
    Action::Failed {
        error: e.to_string(),
        hint: String::new(),
    }
}

fn json_value(j: &Json) -> Result<rmpv::Value, Action> {
    from_view(j).map_err(|e| Action::Failed {
        error: format!("value cannot be stored: {e}"),
        hint: String::new(),
    })
}

impl<'g> Runtime<'g> {
    /// Read-only: any SqliteSaver file.
    pub fn inspect(db: &Path) -> Result<Self, String> {
        let store = Store::open(db, Mode::ReadOnly).map_err(|e| e.to_string())?;
        Ok(Runtime {
            db: db.to_path_buf(),
            graph: None,
            topology: None,
            store,
            engine: None,
            ids: SharedIds::new(Box::new(SystemIds::default())),
            seed: 0,
            stamp: None,
        })
    }

    /// A graph spec stepped on `db` (created when missing).
    pub fn debug(
        db: &Path,
        graph: &'g LoadedGraph,
        ids: Box<dyn IdSource>,
    ) -> Result<Self, String> {
        if db.exists() {
            // refuse a file that is not a checkpoint DB before opening it for writing
            Store::open(db, Mode::ReadOnly).map_err(|e| e.to_string())?;
        }
        let store = Store::open(db, Mode::ReadWrite).map_err(|e| e.to_string())?;
        Ok(Runtime {
            db: db.to_path_buf(),
            graph: Some(graph),
            topology: Some(graph.graph.topology()),
            store,
            engine: None,
            ids: SharedIds::new(ids),
            seed: 0,
            stamp: None,
        })
    }

    pub fn db(&self) -> &Path {
        &self.db
    }

    /// Every thread of the root namespace.
    pub fn threads(&self) -> Result<Vec<ThreadRow>, String> {
        let mut out = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let page = self
                .store
                .threads(after.as_deref(), 1000)
                .map_err(|e| e.to_string())?;
            let n = page.len();
            for t in page {
                if t.checkpoints > 0 {
                    out.push(ThreadRow {
                        id: t.thread_id.clone(),
                        checkpoints: t.checkpoints,
                        latest: t.latest_checkpoint_id.clone(),
                    });
                }
                after = Some(t.thread_id);
            }
            if n < 1000 || out.len() >= THREAD_LIMIT {
                break;
            }
        }
        Ok(out)
    }

    /// The thread whose newest checkpoint is the newest (checkpoint ids are time-ordered).
    pub fn most_recent(threads: &[ThreadRow]) -> Option<String> {
        threads
            .iter()
            .max_by(|a, b| a.latest.cmp(&b.latest))
            .map(|t| t.id.clone())
    }

    fn engine_for(&mut self, thread: &str) -> Result<&mut Engine<'g>, Action> {
        let Some(lg) = self.graph else {
            return Err(Action::Failed {
                error: "read-only inspect mode".into(),
                hint: "stepping needs a graph spec".into(),
            });
        };
        let fresh = self.engine.as_ref().is_none_or(|e| e.thread_id != thread);
        if fresh {
            let store = Store::open(&self.db, Mode::ReadWrite).map_err(|e| Action::Failed {
                error: e.to_string(),
                hint: String::new(),
            })?;
            let mut e = Engine::for_graph(lg, store, thread).with_ids(Box::new(self.ids.clone()));
            e.seed = self.seed;
            self.engine = Some(e);
        }
        Ok(self.engine.as_mut().unwrap())
    }

    fn checkpoint_data(
        &self,
        th: &Thread,
        id: &str,
        latest: bool,
    ) -> Result<CheckpointData, InspectError> {
        let snapshot = th.show(if latest { None } else { Some(id) })?;
        let parent_values = match &snapshot.parent_checkpoint_id {
            Some(p) => Some(th.show(Some(p))?.values),
            None => None,
        };
        Ok(CheckpointData {
            snapshot,
            parent_values,
        })
    }

    /// The topology of the graph whose checkpoints live in `ns` (`a:id|b:id`: child `a`'s
    /// child `b`); `None` without a spec or for a namespace the spec does not know.
    fn topology_for(&self, ns: &str) -> Option<Topology> {
        if ns.is_empty() {
            return self.topology.clone();
        }
        let mut lg = self.graph?;
        for seg in ns.split('|') {
            let name = seg.split(':').next().unwrap_or(seg);
            lg = lg.children.get(name)?;
        }
        Some(lg.graph.topology())
    }

    /// Whether a thread has something left to run or answer.
    fn in_progress(&self, thread: &str) -> bool {
        self.open(thread, "")
            .and_then(|th| th.show(None))
            .map(|s| !s.next.is_empty())
            .unwrap_or(false)
    }

    fn open(&self, thread: &str, ns: &str) -> Result<Thread<'_>, InspectError> {
        Thread::open(&self.store, thread, ns, self.topology_for(ns))
    }

    /// Up to `limit` checkpoints strictly older than `before`, and whether more exist.
    fn history_rows(
        th: &Thread,
        before: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<HistoryEntry>, bool), InspectError> {
        let mut out: Vec<HistoryEntry> = Vec::new();
        let mut before = before.map(str::to_string);
        while out.len() < limit {
            let want = (limit - out.len()).min(1000) + 1;
            let page = th.history_page(before.as_deref(), want)?;
            let full = page.len() == want;
            for snap in page.iter().take(want - 1) {
                out.push(history_entry(snap));
            }
            if !full {
                return Ok((out, false));
            }
            before = out.last().map(|h| h.id.clone());
        }
        Ok((out, true))
    }

    pub fn thread_data(
        &self,
        thread: &str,
        ns: &str,
        select: Option<&str>,
    ) -> Result<ThreadData, InspectError> {
        let th = self.open(thread, ns)?;
        let (mut history, mut more) = Self::history_rows(&th, None, HISTORY_PAGE)?;
        // a selection older than the first page: load pages until it is in
        if let Some(sel) = select {
            while more && !history.iter().any(|h| h.id == sel) {
                let last = history.last().map(|h| h.id.clone());
                let (page, m) = Self::history_rows(&th, last.as_deref(), HISTORY_PAGE)?;
                history.extend(page);
                more = m;
            }
        }
        let latest = history.first().map(|h| h.id.clone()).unwrap_or_default();
        let sel = select
            .filter(|s| history.iter().any(|h| h.id == *s))
            .unwrap_or(&latest)
            .to_string();
        let selected = self.checkpoint_data(&th, &sel, sel == latest)?;
        Ok(ThreadData {
            thread: thread.to_string(),
            ns: ns.to_string(),
            history,
            more,
            selected,
        })
    }

    fn reload(&self, thread: &str, select: Option<&str>) -> Vec<Action> {
        let mut out = Vec::new();
        match self.threads() {
            Ok(t) => out.push(Action::ThreadsLoaded(t)),
            Err(e) => out.push(Action::Failed {
                error: e,
                hint: String::new(),
            }),
        }
        match self.thread_data(thread, "", select) {
            Ok(d) => out.push(Action::ThreadLoaded(Box::new(d))),
            Err(e) => out.push(inspect_error(e)),
        }
        out
    }

    /// Whether another process changed the DB since the last look (its own effects do not
    /// count: the app calls [`Runtime::mark_seen`] after each dispatch). A read-only store opened `immutable`
    /// is opened again on any change (then no longer immutable if a writer keeps a `-wal`).
    pub fn external_change(&mut self) -> bool {
        let Ok(now) = self.store.stamp() else {
            return false;
        };
        if self.stamp.as_ref() == Some(&now) {
            return false;
        }
        let first = self.stamp.is_none();
        // an immutable connection trusts its page cache: open the file again to see the change
        if self.store.is_immutable() {
            if let Ok(s) = Store::open(&self.db, Mode::ReadOnly) {
                self.store = s;
            }
        }
        self.stamp = self.store.stamp().ok();
        !first
    }

    /// Take the DB as it is now as seen: what this process's own effects wrote is not an
    /// external change.
    pub fn mark_seen(&mut self) {
        self.stamp = self.store.stamp().ok();
    }

    /// Run one effect; its results come back as actions.
    pub fn run(&mut self, effect: Effect) -> Vec<Action> {
        match effect {
            Effect::Startup { thread } => self.startup(thread),
            Effect::LoadThreads => match self.threads() {
                Ok(t) => vec![Action::ThreadsLoaded(t)],
                Err(e) => vec![Action::Failed {
                    error: e,
                    hint: String::new(),
                }],
            },
            Effect::OpenThread { thread, ns, select } => {
                match self.thread_data(&thread, &ns, select.as_deref()) {
                    Ok(d) => vec![Action::ThreadLoaded(Box::new(d))],
                    Err(e) => vec![inspect_error(e)],
                }
            }
            Effect::LoadCheckpoint {
                thread,
                ns,
                id,
                latest,
            } => {
                let r = self
                    .open(&thread, &ns)
                    .and_then(|th| self.checkpoint_data(&th, &id, latest));
                match r {
                    Ok(d) => vec![Action::CheckpointLoaded(Box::new(d))],
                    Err(e) => vec![inspect_error(e)],
                }
            }
            Effect::LoadHistory {
                thread,
                ns,
                before,
                rows,
                select,
            } => {
                let limit = rows.map_or(usize::MAX, |n| n.max(HISTORY_PAGE));
                let r = self
                    .open(&thread, &ns)
                    .and_then(|th| Self::history_rows(&th, Some(&before), limit));
                match r {
                    Ok((entries, more)) => vec![Action::HistoryPage {
                        thread,
                        ns,
                        entries,
                        more,
                        select,
                    }],
                    Err(e) => vec![inspect_error(e)],
                }
            }
            Effect::SearchThread {
                thread,
                ns,
                query,
                checkpoints,
            } => match self.search(&thread, &ns, &query, &checkpoints) {
                Ok(hits) => vec![Action::SearchResults {
                    query,
                    hits,
                    searched: checkpoints.len(),
                }],
                Err(e) => vec![inspect_error(e)],
            },
            Effect::Step { thread, n, breaks } => {
                self.drive(&thread, RunKind::Step(n), None, breaks, Some(n as usize))
            }
            Effect::Continue { thread, breaks } => {
                self.drive(&thread, RunKind::Continue, None, breaks, None)
            }
            Effect::Resume {
                thread,
                answer,
                breaks,
            } => {
                let input = match answer {
                    ResumeArg::Plain(v) => match json_value(&v) {
                        Ok(v) => Input::resume(v),
                        Err(a) => return vec![a],
                    },
                    ResumeArg::ById(m) => {
                        let mut map = Vec::new();
                        for (id, v) in m {
                            match json_value(&v) {
                                Ok(v) => map.push((id, v)),
                                Err(a) => return vec![a],
                            }
                        }
                        Input::resume_map(map)
                    }
                };
                self.drive(
                    &thread,
                    RunKind::Resume,
                    Some((input, None)),
                    breaks,
                    Some(1),
                )
            }
            Effect::TimeTravel {
                thread,
                checkpoint,
                breaks,
            } => self.drive(
                &thread,
                RunKind::TimeTravel,
                Some((Input::Continue, Some(checkpoint))),
                breaks,
                Some(0),
            ),
            Effect::UpdateState {
                thread,
                checkpoint,
                values,
                as_node,
            } => {
                let values = if values.is_null() {
                    None
                } else {
                    match json_value(&values) {
                        Ok(v) => Some(v),
                        Err(a) => return vec![a],
                    }
                };
                let label = as_node.clone().unwrap_or_else(|| "(inferred)".into());
                let e = match self.engine_for(&thread) {
                    Ok(e) => e,
                    Err(a) => return vec![a],
                };
                let r = e.update_state(
                    checkpoint.as_deref(),
                    values,
                    AsNode::parse(as_node.as_deref()),
                );
                // a run in progress is stale after an update: the next step starts afresh
                self.engine = None;
                match r {
                    Ok(id) => {
                        let mut out = vec![Action::StateUpdated {
                            checkpoint: id.clone(),
                            as_node: label,
                        }];
                        out.extend(self.reload(&thread, Some(&id)));
                        out
                    }
                    Err(e) => vec![engine_error(&e)],
                }
            }
            Effect::NewThread { thread, input } => {
                let v = match json_value(&input) {
                    Ok(v) => v,
                    Err(a) => return vec![a],
                };
                let e = match self.engine_for(&thread) {
                    Ok(e) => e,
                    Err(a) => return vec![a],
                };
                if let Err(err) = e.start(Input::Value(v), None) {
                    return vec![engine_error(&err)];
                }
                let mut out = self.reload(&thread, None);
                out.push(Action::Info(format!(
                    "new thread {thread}: input checkpoint written — n steps one superstep, c continues"
                )));
                out
            }
        }
    }

    /// Every match of `query` in the values and pending writes of `checkpoints` (newest first;
    /// the first is the thread's newest, shown live as `get_state` shows it).
    fn search(
        &self,
        thread: &str,
        ns: &str,
        query: &str,
        checkpoints: &[String],
    ) -> Result<Vec<ThreadHit>, InspectError> {
        let th = self.open(thread, ns)?;
        let ql = query.to_lowercase();
        let mut out = Vec::new();
        for (i, id) in checkpoints.iter().enumerate() {
            let snapshot = th.show(if i == 0 { None } else { Some(id) })?;
            let step = snapshot.step;
            let view = checkpoint_view(
                CheckpointData {
                    snapshot,
                    parent_values: None,
                },
                i == 0,
            );
            for (pane, row) in hits_in(&view, &ql) {
                out.push(ThreadHit {
                    checkpoint: id.clone(),
                    step,
                    pane,
                    label: hit_label(&view, pane, row),
                });
            }
        }
        Ok(out)
    }

    fn startup(&mut self, thread: Option<String>) -> Vec<Action> {
        let threads = match self.threads() {
            Ok(t) => t,
            Err(e) => {
                return vec![Action::Failed {
                    error: e,
                    hint: String::new(),
                }]
            }
        };
        let exists = |t: &str| threads.iter().any(|r| r.id == t);
        let pick = match &thread {
            Some(t) => Some(t.clone()),
            // debugging a graph: resume the most recent thread if it can still move; otherwise
            // start a fresh one with the spec's input, so n / c step straight away
            None if self.graph.is_some() => {
                Self::most_recent(&threads).filter(|t| self.in_progress(t))
            }
            None => Self::most_recent(&threads),
        };
        match (pick, self.graph) {
            (Some(t), _) if exists(&t) => {
                let mut out = vec![Action::ThreadsLoaded(threads)];
                out.extend(self.reload(&t, None).into_iter().skip(1));
                out.push(Action::Info(format!(
                    "thread {t}{} — ? shows every key",
                    if self.graph.is_some() {
                        ": n steps, c continues"
                    } else {
                        " (read-only)"
                    }
                )));
                out
            }
            (pick, Some(lg)) => {
                let t = pick.unwrap_or_else(|| {
                    (1..).map(|i| format!("t{i}")).find(|n| !exists(n)).unwrap()
                });
                match lg.spec.input.clone() {
                    Some(input) => self.run(Effect::NewThread { thread: t, input }),
                    None => vec![
                        Action::ThreadsLoaded(threads),
                        Action::Info(format!(
                            "the spec has no input: N starts thread {t} with one"
                        )),
                    ],
                }
            }
            (Some(t), None) => vec![
                Action::ThreadsLoaded(threads),
                Action::Failed {
                    error: format!("{}: no thread {t:?}", self.db.display()),
                    hint: "T lists the threads".into(),
                },
            ],
            (None, None) => vec![
                Action::ThreadsLoaded(threads),
                Action::Info("this DB has no threads".into()),
            ],
        }
    }

    /// Start (when needed) and step the engine; `steps: None` runs to the next pause.
    fn drive(
        &mut self,
        thread: &str,
        kind: RunKind,
        start: Option<(Input, Option<String>)>,
        breaks: Breaks,
        steps: Option<usize>,
    ) -> Vec<Action> {
        let e = match self.engine_for(thread) {
            Ok(e) => e,
            Err(a) => return vec![a],
        };
        e.interrupt_before = breaks.before;
        e.interrupt_after = breaks.after;
        let mut out = Vec::new();
        let mut reports: Vec<StepReport> = Vec::new();
        let mut failed = None;
        let started = match start {
            Some((input, cp)) => e.start(input, cp.as_deref()),
            None if !e.active() => e.start(Input::Continue, None),
            None => Ok(()),
        };
        if let Err(err) = started {
            failed = Some(engine_error(&err));
        } else {
            let limit = steps.unwrap_or(usize::MAX);
            while reports.len() < limit {
                match e.step() {
                    Ok(r) => {
                        let stop = r.pause.is_some();
                        reports.push(r);
                        if stop {
                            break;
                        }
                    }
                    Err(err) => {
                        failed = Some(engine_error(&err));
                        break;
                    }
                }
            }
        }
        let landed = if kind == RunKind::TimeTravel && failed.is_none() {
            e.current_checkpoint().map(str::to_string)
        } else {
            None
        };
        if failed.is_none() || !reports.is_empty() {
            out.push(Action::Ran(Box::new(RunResult {
                kind,
                thread: thread.to_string(),
                reports,
                landed: landed.clone(),
            })));
        }
        out.extend(self.reload(thread, landed.as_deref()));
        if let Some(f) = failed {
            out.push(f);
        }
        out
    }
}

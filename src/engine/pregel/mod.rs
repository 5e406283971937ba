//! `SyncPregelLoop` with durability "sync", as a stepper: `start` (= `__enter__` + `_first`),
//! `step` (= `tick` + running the tasks + `after_tick`), `run_until_pause`.

use super::apply::{apply_writes, TaskWrites};
use super::channels::ReduceWith;
pub use super::checkpoint::State;
use super::clock::{IdSource, SystemIds, Uuid6};
use super::graph::Graph;
use super::saver::Saver;
use super::{EngineError, NodeCode};
use crate::spec::model::Breakpoints;
use crate::store::{Checkpoint, CheckpointRow, Store, Version};
use rmpv::Value;
use serde_json::{Map, Value as Json};
use std::cell::RefCell;
use std::rc::Rc;

mod input;
mod report;
mod save;
mod start;
mod subgraph;
mod tick;

pub use crate::source::types::{Pause, StepReport, TaskOutcome, TaskReport};
pub use report::{Input, Resume};

/// A loaded checkpoint row, its decoded blob and its pending writes `(task_id, channel, value)`.
pub(crate) type Loaded = (CheckpointRow, Checkpoint, Vec<(String, String, Value)>);

struct Run {
    state: State,
    /// `checkpoint_previous_versions`: channel versions at the last save (or as loaded); the
    /// next save's `new_versions` are the ones newer than these.
    previous_versions: Vec<(String, Version)>,
    metadata: Map<String, Json>,
    /// id of the last saved checkpoint: the parent of the next one.
    saved_id: Option<String>,
    pending: Vec<(String, String, Value)>,
    step: i64,
    stop: i64,
    updated_channels: Option<Vec<String>>,
    is_replaying: bool,
    resume_map: Option<Vec<(String, Value)>>,
    first_tick: bool,
    /// `CONFIG_KEY_RESUMING` during the first tick of a resumed run (passed to subgraphs).
    first_tick_resuming: bool,
    finished: bool,
    /// `_delta_channels_forced_snapshot`: delta channels the next save must snapshot.
    forced_snapshot: Vec<String>,
    /// `_resume_loaded_writes`: `(task_id, channel)` of the loaded non-NULL writes to delta
    /// channels on a resume that reapplies them; the first finished tick forces a snapshot of
    /// those whose task is not in that step.
    resume_loaded: Vec<(String, String)>,
}

/// What an engine and the engines of its subgraphs share: one store, one buffer of rows (a
/// parent step commits its subgraphs' rows with its own), one clock.
struct Shared {
    store: Store,
    saver: RefCell<Saver>,
    ids: RefCell<Box<dyn IdSource>>,
    uuid: RefCell<Uuid6>,
}

/// How a subgraph run sits inside its parent task.
struct Nested {
    /// The parent step's plain resume value, which a subgraph's interrupt() may consume.
    null_resume: Rc<RefCell<Option<Value>>>,
    /// `CONFIG_KEY_RESUMING` from the parent: resume the subgraph's own checkpoint.
    resuming: bool,
    resume_map: Option<Vec<(String, Value)>>,
    /// `checkpoint_map`: ancestor namespaces -> their checkpoint ids (metadata `parents`).
    parents: Map<String, Json>,
}

/// A graph bound to one thread of a checkpoint DB.
pub struct Engine<'g> {
    pub graph: &'g Graph,
    code: &'g dyn NodeCode,
    sh: Rc<Shared>,
    /// Set when this engine runs a subgraph inside a parent task.
    nested: Option<Nested>,
    /// The loaded spec, for subgraph nodes.
    loaded: Option<&'g crate::engine::loaded::LoadedGraph>,
    pub thread_id: String,
    pub ns: String,
    pub seed: u64,
    pub recursion_limit: i64,
    pub interrupt_before: Breakpoints,
    pub interrupt_after: Breakpoints,
    run: Option<Run>,
    /// A task of the last step returned `Command(graph=PARENT)` (graph cleared): a subgraph
    /// engine hands it to its parent task; at the root it ends the run as `ParentCommand`.
    bubbled: Option<Value>,
    /// The step failed after its tasks ran (applying their writes raised): LangGraph has saved
    /// every finished task's writes (and their subgraphs' checkpoints) by then, so they are
    /// committed rather than discarded.
    keep_on_error: bool,
    /// The report of the last step that failed applying its writes (its tasks did run, or were
    /// reused): what a debugger shows beside the error.
    failed_step: Option<StepReport>,
    /// `checkpoint_map` of the run's config (a subgraph checkpoint's config, LangGraph's way of
    /// time-travelling through a subgraph): the root checkpoint to start from is its `""` entry,
    /// the root's checkpoints carry it as `metadata.parents`, and a subgraph whose namespace it
    /// names starts from that checkpoint. Empty for an ordinary run.
    pub checkpoint_map: Map<String, Json>,
}

struct Reducer<'a>(&'a dyn NodeCode);
impl ReduceWith for Reducer<'_> {
    fn reduce(&self, f: &str, a: &Value, b: &Value) -> Result<Value, String> {
        self.0.reduce(f, a, b)
    }
}

impl<'g> Engine<'g> {
    /// Bind a graph to a thread of a store opened with `Mode::ReadWrite`.
    pub fn new(graph: &'g Graph, code: &'g dyn NodeCode, store: Store, thread_id: &str) -> Self {
        Engine {
            graph,
            code,
            sh: Rc::new(Shared {
                store,
                saver: RefCell::new(Saver::new(thread_id)),
                ids: RefCell::new(Box::new(SystemIds::default())),
                uuid: RefCell::new(Uuid6::default()),
            }),
            nested: None,
            loaded: None,
            thread_id: thread_id.to_string(),
            ns: String::new(),
            seed: 0,
            recursion_limit: 25,
            interrupt_before: graph.interrupt_before.clone(),
            interrupt_after: graph.interrupt_after.clone(),
            run: None,
            bubbled: None,
            keep_on_error: false,
            failed_step: None,
            checkpoint_map: Map::new(),
        }
    }

    /// Bind a loaded spec (graph, code and its subgraphs) to a thread.
    pub fn for_graph(
        lg: &'g crate::engine::loaded::LoadedGraph,
        store: Store,
        thread_id: &str,
    ) -> Self {
        let mut e = Engine::new(&lg.graph, &lg.code, store, thread_id);
        e.loaded = Some(lg);
        e
    }

    /// Bind the subgraph whose checkpoints live in namespace `ns` (`node:<task id>`, nested
    /// `a:<id>|b:<id>`) to a thread: `update_state` on it is LangGraph's `update_state` with
    /// that namespace in the config (delegated to the subgraph). `None` when the spec has no
    /// such subgraph (LangGraph: `ValueError: Subgraph ... not found`).
    pub fn for_namespace(
        lg: &'g crate::engine::loaded::LoadedGraph,
        store: Store,
        thread_id: &str,
        ns: &str,
    ) -> Option<Self> {
        let child = lg.for_namespace(ns)?;
        let mut e = Engine::for_graph(child, store, thread_id);
        e.ns = ns.to_string();
        Some(e)
    }

    pub fn with_ids(self, ids: Box<dyn IdSource>) -> Self {
        *self.sh.ids.borrow_mut() = ids;
        self
    }

    pub fn store(&self) -> &Store {
        &self.sh.store
    }

    /// The store back (the engine is done). `None` while a subgraph engine still shares it.
    pub fn into_store(self) -> Option<Store> {
        Rc::try_unwrap(self.sh).ok().map(|sh| sh.store)
    }

    /// SQLite transactions this engine has committed.
    pub fn commits(&self) -> u64 {
        self.sh.saver.borrow().commits
    }

    /// Apply `tasks`' writes to `state` with this graph's reducers and a fresh version fraction.
    pub(crate) fn apply(
        &mut self,
        state: &mut State,
        tasks: &mut [TaskWrites],
    ) -> Result<Vec<String>, EngineError> {
        let frac = self.next_fraction();
        apply_writes(state, self.graph, tasks, frac, Some(&Reducer(self.code)))
    }

    /// Load `checkpoint_id` (or the latest) of this thread.
    fn load(&self, checkpoint_id: Option<&str>) -> Result<Option<Loaded>, EngineError> {
        let store = &self.sh.store;
        let Some(row) = store.checkpoint(&self.thread_id, &self.ns, checkpoint_id)? else {
            return Ok(None);
        };
        let cp = store.decode(&row)?;
        let writes = store
            .writes(&self.thread_id, &self.ns, &row.checkpoint_id)?
            .into_iter()
            .map(|w| (w.task_id, w.channel, w.value.into_value()))
            .collect();
        Ok(Some((row, cp, writes)))
    }

    /// `channels_from_checkpoint` with the saver: a delta channel with a version and nothing
    /// stored here is rebuilt from the nearest ancestor's `_DeltaSnapshot` and the ancestors'
    /// writes since (`get_delta_channel_history`, `DeltaChannel.replay_writes`).
    pub(crate) fn load_state(
        &self,
        row: &CheckpointRow,
        cp: &Checkpoint,
    ) -> Result<State, EngineError> {
        let mut state = State::load(self.graph, cp);
        let keys: Vec<String> = super::delta::delta_channels(self.graph)
            .filter(|(k, _)| cp.version(k).is_some() && cp.value(k).is_none())
            .map(|(k, _)| k.to_string())
            .collect();
        if keys.is_empty() {
            return Ok(state);
        }
        for h in crate::snapshot::delta::history(&self.sh.store, row, &keys)? {
            if let Some(ch) = state.channel_mut(&h.key) {
                if let Some(seed) = &h.seed {
                    ch.restore(seed);
                }
                ch.replay(&h.writes, Some(&Reducer(self.code)))?;
            }
        }
        Ok(state)
    }

    /// Note the thread's newest root checkpoint before reading it: every commit of this run
    /// checks that no other writer moved the thread on meanwhile.
    pub(crate) fn read_head(&mut self) -> Result<(), EngineError> {
        if self.nested.is_none() && self.ns.is_empty() {
            let seen = self.sh.store.write_token()?;
            let head = self.latest_id()?;
            self.sh.saver.borrow_mut().expect_head(head, seen);
        }
        Ok(())
    }

    fn latest_id(&self) -> Result<Option<String>, EngineError> {
        Ok(self
            .sh
            .store
            .checkpoint(&self.thread_id, &self.ns, None)?
            .map(|r| r.checkpoint_id))
    }

    /// Whether a run is in progress (started and not paused for good).
    pub fn active(&self) -> bool {
        self.run.as_ref().is_some_and(|r| !r.finished)
    }

    /// When the last `step` failed applying its tasks' writes (InvalidUpdateError), what those
    /// tasks did: run (with their effects) or reused from the DB. Their writes are saved.
    pub fn failed_step(&self) -> Option<&StepReport> {
        self.failed_step.as_ref()
    }

    /// Step until a pause (done, breakpoint, interrupt, error, recursion limit).
    pub fn run_until_pause(&mut self) -> Result<Vec<StepReport>, EngineError> {
        let mut out = Vec::new();
        loop {
            let r = self.step()?;
            let stop = r.pause.is_some();
            out.push(r);
            if stop {
                return Ok(out);
            }
        }
    }

    /// The id of the checkpoint the run is at (after the last step).
    pub fn current_checkpoint(&self) -> Option<&str> {
        self.run.as_ref().and_then(|r| r.saved_id.as_deref())
    }

    pub(crate) fn next_fraction(&mut self) -> f64 {
        self.sh.ids.borrow_mut().fraction()
    }

    pub(crate) fn code(&self) -> &'g dyn NodeCode {
        self.code
    }

    pub(crate) fn load_for_update(
        &self,
        checkpoint_id: Option<&str>,
    ) -> Result<Option<Loaded>, EngineError> {
        self.load(checkpoint_id)
    }

    pub(crate) fn is_latest(&self, id: &str) -> Result<bool, EngineError> {
        Ok(self.latest_id()?.as_deref() == Some(id))
    }
}

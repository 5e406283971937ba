//! `SyncPregelLoop` with durability "sync", as a stepper: `start` (= `__enter__` + `_first`),
//! `step` (= `tick` + running the tasks + `after_tick`), `run_until_pause`.

use super::apply::{apply_writes, null_task_writes, TaskWrites};
use super::breakpoints::should_interrupt;
use super::channels::ReduceWith;
pub use super::checkpoint::State;
use super::clock::{IdSource, SystemIds, Uuid6};
use super::graph::Graph;
use super::interrupts::{self, Effect, InterruptCall, TaskContext};
use super::runner::{run_task, Outcome};
use super::saver::Saver;
use super::tasks::{prepare_next_tasks, Task};
use super::{EngineError, NodeCode};
use crate::ids::NULL_TASK_ID;
use crate::spec::model::Breakpoints;
use crate::store::{Checkpoint, CheckpointRow, Store, Version};
use crate::value::Interrupt;
use rmpv::Value;
use serde_json::{json, Map, Value as Json};
use std::cell::RefCell;
use std::rc::Rc;

/// What to feed a run (`graph.invoke(input, config)`).
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// New input: written to `__start__`, tasks pending at the checkpoint are discarded.
    Value(Value),
    /// `invoke(None)`: continue / resume past a breakpoint or error, or replay at a checkpoint.
    Continue,
    /// `Command(update=..., goto=..., resume=...)`.
    Command {
        update: Option<Value>,
        goto: Vec<Value>,
        resume: Option<Resume>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Resume {
    /// `Command(resume=v)`.
    Plain(Value),
    /// `Command(resume={interrupt_id: v, ...})`.
    Map(Vec<(String, Value)>),
}

impl Input {
    pub fn resume(v: Value) -> Input {
        Input::Command {
            update: None,
            goto: Vec::new(),
            resume: Some(Resume::Plain(v)),
        }
    }
    pub fn resume_map(m: Vec<(String, Value)>) -> Input {
        Input::Command {
            update: None,
            goto: Vec::new(),
            resume: Some(Resume::Map(m)),
        }
    }
}

/// Why the run stopped (`None` in a report means it can go on).
#[derive(Debug, Clone, PartialEq)]
pub enum Pause {
    /// No task is triggered: the run is finished.
    Done,
    /// Static breakpoint before these nodes (nothing was run in this step).
    Before(Vec<String>),
    /// Static breakpoint after these nodes (their step's checkpoint is saved).
    After(Vec<String>),
    /// `interrupt()` in these tasks; the step has no checkpoint yet.
    Interrupt(Vec<(String, Interrupt)>),
    /// A node raised (after retries): `(node, repr)`; the step has no checkpoint.
    Error(String, String),
    /// `GraphRecursionError`.
    RecursionLimit(i64),
}

#[derive(Debug, Clone, PartialEq)]
pub enum TaskOutcome {
    /// Ran to completion with these writes.
    Done,
    /// A finished task from before a resume: its stored writes were reapplied, it did not run.
    Reused,
    Interrupted(Interrupt),
    Error(String),
}

#[derive(Debug, Clone)]
pub struct TaskReport {
    pub id: String,
    pub name: String,
    pub path: String,
    pub outcome: TaskOutcome,
    pub writes: Vec<(String, Value)>,
    pub attempts: u32,
    pub calls: Vec<InterruptCall>,
    pub effects: Vec<Effect>,
}

/// What one `step()` did.
#[derive(Debug, Clone)]
pub struct StepReport {
    pub step: i64,
    pub tasks: Vec<TaskReport>,
    /// The checkpoint written by this step, if any.
    pub checkpoint: Option<String>,
    pub pause: Option<Pause>,
}

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
    loaded: Option<&'g crate::spec::LoadedGraph>,
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
    pub fn for_graph(lg: &'g crate::spec::LoadedGraph, store: Store, thread_id: &str) -> Self {
        let mut e = Engine::new(&lg.graph, &lg.code, store, thread_id);
        e.loaded = Some(lg);
        e
    }

    /// Bind the subgraph whose checkpoints live in namespace `ns` (`node:<task id>`, nested
    /// `a:<id>|b:<id>`) to a thread: `update_state` on it is LangGraph's `update_state` with
    /// that namespace in the config (delegated to the subgraph). `None` when the spec has no
    /// such subgraph (LangGraph: `ValueError: Subgraph ... not found`).
    pub fn for_namespace(
        lg: &'g crate::spec::LoadedGraph,
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

    /// `__enter__` + `_first`: load the checkpoint, apply the input. Writes the input or fork
    /// checkpoint and any NULL writes (one transaction). Returns whether there is work to step.
    pub fn start(&mut self, input: Input, checkpoint_id: Option<&str>) -> Result<(), EngineError> {
        self.run = None;
        // `invoke(None)`: a null input is no input — continue (EmptyInputError on a new thread)
        let input = match input {
            Input::Value(Value::Nil) => Input::Continue,
            other => other,
        };
        self.read_head()?;
        let result = self.first(input, checkpoint_id);
        match result.and_then(|()| self.commit()) {
            Ok(()) => Ok(()),
            Err(e) => {
                self.discard();
                self.run = None;
                Err(e)
            }
        }
    }

    fn first(&mut self, input: Input, checkpoint_id: Option<&str>) -> Result<(), EngineError> {
        let addressed = checkpoint_id.is_some();
        let loaded = self.load(checkpoint_id)?;
        if addressed && loaded.is_none() {
            return Err(EngineError::UnknownCheckpoint(
                checkpoint_id.unwrap().to_string(),
            ));
        }
        let superseded = match (&loaded, addressed) {
            (Some((row, _, _)), true) => {
                self.latest_id()?.as_deref() != Some(row.checkpoint_id.as_str())
            }
            _ => false,
        };
        let (mut state, metadata, saved_id, pending) = match loaded {
            Some((row, cp, writes)) => (
                self.load_state(&row, &cp)?,
                row.metadata,
                Some(row.checkpoint_id),
                writes,
            ),
            None => {
                let (id, ts) = self.next_id(-2);
                let mut m = Map::new();
                m.insert("step".into(), json!(-2));
                (State::empty(self.graph, id, ts), m, None, Vec::new())
            }
        };
        let step = metadata.get("step").and_then(Json::as_i64).unwrap_or(-1) + 1;
        let mut run = Run {
            updated_channels: state.updated_channels.clone().filter(|u| !u.is_empty()),
            previous_versions: state.channel_versions.clone(),
            state: {
                state.updated_channels = None;
                state
            },
            metadata,
            saved_id,
            pending,
            step,
            stop: step + self.recursion_limit + 1,
            is_replaying: false,
            resume_map: None,
            first_tick: true,
            first_tick_resuming: false,
            finished: false,
            forced_snapshot: Vec::new(),
            resume_loaded: Vec::new(),
        };
        let is_command = matches!(input, Input::Command { .. });
        let is_resuming = !run.state.channel_versions.is_empty()
            && (matches!(input, Input::Continue | Input::Command { .. })
                || self.nested.as_ref().is_some_and(|n| n.resuming));
        if let Some(n) = &self.nested {
            run.resume_map = n.resume_map.clone();
        }
        let has_resume = matches!(
            input,
            Input::Command {
                resume: Some(_),
                ..
            }
        );
        let is_time_traveling = addressed && !has_resume;
        run.is_replaying = is_time_traveling || superseded;
        if is_time_traveling {
            run.pending.retain(|(_, c, _)| c != "__resume__");
        }
        // `_first`: a resume that reapplies the loaded writes learns which go back to their tasks
        // only once the step is planned; otherwise the branch starting here snapshots every delta
        // channel they touch (`delta_channels_with_pending_writes`)
        let delta_pending = run
            .pending
            .iter()
            .filter(|(_, c, _)| super::delta::is_delta(self.graph, c));
        if is_resuming && !run.is_replaying {
            run.resume_loaded = delta_pending
                .filter(|(t, _, _)| t != NULL_TASK_ID)
                .map(|(t, c, _)| (t.clone(), c.clone()))
                .collect();
        } else {
            for (_, c, _) in delta_pending {
                if !run.forced_snapshot.contains(c) {
                    run.forced_snapshot.push(c.clone());
                }
            }
        }
        let source = run
            .metadata
            .get("source")
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string();
        let forks = is_resuming
            && is_time_traveling
            && (!(source == "update" || source == "fork") || superseded);
        let mut carried: Vec<(String, String, Value)> = Vec::new();
        if let Input::Command {
            update,
            goto,
            resume,
        } = &input
        {
            let mut resume_is_map = false;
            let mut null_writes: Vec<(String, Value)> = Vec::new();
            match resume {
                Some(Resume::Map(m)) => {
                    resume_is_map = true;
                    run.resume_map = Some(m.clone());
                }
                Some(Resume::Plain(_)) => {
                    let pending = interrupts::pending_interrupts(&run.pending);
                    if pending.len() > 1 {
                        return Err(EngineError::MultiplePendingInterrupts { pending });
                    }
                }
                None => {}
            }
            // map_command: gotos, then updates, then the resume
            for g in goto {
                if let Some(s) = g.as_str() {
                    null_writes.push((format!("branch:to:{s}"), Value::from("__start__")));
                } else {
                    null_writes.push(("__pregel_tasks".into(), g.clone()));
                }
            }
            if let Some(u) = update {
                match u {
                    Value::Map(m) => {
                        for (k, v) in m {
                            if let Some(k) = k.as_str() {
                                null_writes.push((k.to_string(), v.clone()));
                            }
                        }
                    }
                    Value::Array(pairs) => {
                        for p in pairs {
                            if let Value::Array(kv) = p {
                                if kv.len() == 2 {
                                    if let Some(k) = kv[0].as_str() {
                                        null_writes.push((k.to_string(), kv[1].clone()));
                                    }
                                }
                            }
                        }
                    }
                    other => null_writes.push(("__root__".into(), other.clone())),
                }
            }
            if let Some(Resume::Plain(v)) = resume {
                null_writes.push(("__resume__".into(), v.clone()));
            }
            if null_writes.is_empty() && !resume_is_map {
                return Err(EngineError::EmptyInput(
                    "Received empty Command input".into(),
                ));
            }
            if !null_writes.is_empty() {
                if forks {
                    for (c, _) in &null_writes {
                        if super::delta::is_delta(self.graph, c) && !run.forced_snapshot.contains(c)
                        {
                            run.forced_snapshot.push(c.clone());
                        }
                    }
                    carried.extend(
                        null_writes
                            .into_iter()
                            .map(|(c, v)| (NULL_TASK_ID.to_string(), c, v)),
                    );
                } else {
                    self.put_writes(&mut run, NULL_TASK_ID, "", null_writes);
                }
            }
        }
        // apply NULL writes (stored + carried)
        let null_writes = null_task_writes(run.pending.iter().chain(carried.iter()));
        if !null_writes.is_empty() {
            let updated = self.apply(&mut run.state, &mut [TaskWrites::input(&null_writes)])?;
            if let Some(u) = &mut run.updated_channels {
                for c in updated {
                    if !u.contains(&c) {
                        u.push(c);
                    }
                }
            }
        }
        run.first_tick_resuming = is_resuming;
        if is_resuming {
            let wm: Vec<_> = self
                .graph
                .channels
                .iter()
                .filter_map(|(k, _)| run.state.version(k).map(|v| (k.clone(), v.clone())))
                .collect();
            let seen = run.state.seen_mut("__interrupt__");
            for (k, v) in wm {
                match seen.iter_mut().find(|(x, _)| *x == k) {
                    Some((_, old)) => *old = v,
                    None => seen.push((k, v)),
                }
            }
            if forks {
                run.pending.retain(|(_, c, _)| c != "__interrupt__");
                self.put_checkpoint(&mut run, "fork", None);
            }
        } else if let Input::Value(v) = &input {
            // discard tasks pending on the loaded checkpoint; apply the input to __start__
            let discard = prepare_next_tasks(
                &run.state,
                self.graph,
                &self.ns,
                run.step,
                run.updated_channels.as_deref(),
            );
            let input_writes = vec![("__start__".to_string(), v.clone())];
            let mut tw: Vec<TaskWrites> = discard
                .iter()
                .map(|t| TaskWrites {
                    name: &t.name,
                    path: &t.path,
                    triggers: &t.triggers,
                    writes: &[],
                })
                .collect();
            tw.push(TaskWrites::input(&input_writes));
            let updated = self.apply(&mut run.state, &mut tw)?;
            run.updated_channels = Some(updated.clone());
            self.put_checkpoint(&mut run, "input", Some(updated));
        } else if is_command && run.state.channel_versions.is_empty() {
            // Command on a brand-new thread: the Command object itself becomes the input (§7.5)
            let cmd = command_value(&input);
            let input_writes = vec![("__start__".to_string(), cmd)];
            let updated = self.apply(&mut run.state, &mut [TaskWrites::input(&input_writes)])?;
            run.updated_channels = Some(updated.clone());
            self.put_checkpoint(&mut run, "input", Some(updated));
        } else {
            return Err(EngineError::EmptyInput(
                "Received no input for __start__".into(),
            ));
        }
        self.run = Some(run);
        Ok(())
    }

    fn put_writes(
        &mut self,
        run: &mut Run,
        task_id: &str,
        task_path: &str,
        mut writes: Vec<(String, Value)>,
    ) {
        if writes.is_empty() {
            return;
        }
        let all_special = writes
            .iter()
            .all(|(c, _)| super::saver::special_idx(c).is_some());
        if all_special {
            // dedupe per channel, last wins, in first-occurrence order
            let mut out: Vec<(String, Value)> = Vec::new();
            for (c, v) in writes {
                match out.iter_mut().find(|(k, _)| *k == c) {
                    Some((_, old)) => *old = v,
                    None => out.push((c, v)),
                }
            }
            writes = out;
        }
        let to_save: Vec<(String, Value)> = if task_id == NULL_TASK_ID {
            run.pending
                .retain(|(t, c, _)| !(t == NULL_TASK_ID && super::saver::special_idx(c).is_some()));
            writes.sort_by_key(|(c, _)| super::saver::special_idx(c).is_some());
            run.pending
                .iter()
                .filter(|(t, _, _)| t == NULL_TASK_ID)
                .map(|(_, c, v)| (c.clone(), v.clone()))
                .chain(writes.iter().cloned())
                .collect()
        } else {
            run.pending.retain(|(t, _, _)| t != task_id);
            writes.clone()
        };
        run.pending
            .extend(writes.into_iter().map(|(c, v)| (task_id.to_string(), c, v)));
        let cid = run.state.id.clone();
        self.sh
            .saver
            .borrow_mut()
            .put_writes(&self.ns, &cid, task_id, task_path, &to_save);
    }

    /// `_put_checkpoint`: new id (clock_seq = step), parent = last saved, step += 1.
    fn put_checkpoint(
        &mut self,
        run: &mut Run,
        source: &str,
        updated: Option<Vec<String>>,
    ) -> String {
        let mut md = Map::new();
        md.insert("source".into(), json!(source));
        md.insert("step".into(), json!(run.step));
        md.insert(
            "parents".into(),
            Json::Object(
                self.nested
                    .as_ref()
                    .map(|n| n.parents.clone())
                    .unwrap_or_else(|| self.checkpoint_map.clone()),
            ),
        );
        // DeltaChannel: counters, cadence, snapshots (`_put_checkpoint` / `create_checkpoint`)
        let counters =
            super::delta::bumped(self.graph, &run.metadata, updated.as_deref().unwrap_or(&[]));
        run.state.snapshot =
            super::delta::to_snapshot(self.graph, &run.state, &counters, &run.forced_snapshot);
        if !run.state.snapshot.is_empty() {
            let frac = self.next_fraction();
            super::delta::bump_versions(
                self.graph,
                &mut run.state,
                &run.previous_versions,
                &mut |old| super::versions::next_version(old, frac),
            );
            let snap = run.state.snapshot.clone();
            run.forced_snapshot.retain(|c| !snap.contains(c));
        }
        super::delta::finish_metadata(&mut md, counters, &run.state.snapshot);
        let (id, ts) = self.next_id(run.step);
        run.state.id = id.clone();
        run.state.ts = ts;
        self.saver_put(
            &self.ns,
            run.saved_id.as_deref(),
            &run.state,
            updated.as_deref(),
            &run.previous_versions,
            &md,
        );
        run.state.snapshot.clear();
        run.previous_versions
            .clone_from(&run.state.channel_versions);
        run.metadata = md;
        run.saved_id = Some(id.clone());
        run.step += 1;
        id
    }

    /// Whether a run is in progress (started and not paused for good).
    pub fn active(&self) -> bool {
        self.run.as_ref().is_some_and(|r| !r.finished)
    }

    /// One superstep: prepare tasks, check `interrupt_before`, run what has not run, apply the
    /// writes, save the checkpoint, check `interrupt_after`. Its rows land in one transaction.
    pub fn step(&mut self) -> Result<StepReport, EngineError> {
        self.keep_on_error = false;
        self.failed_step = None;
        let result = self.tick();
        match result {
            Ok(r) => {
                if let Err(e) = self.commit() {
                    // nothing of this step was written: the next step starts from the DB again
                    self.discard();
                    self.run = None;
                    return Err(e);
                }
                if r.pause.is_some() {
                    if let Some(run) = &mut self.run {
                        run.finished = true;
                    }
                }
                Ok(r)
            }
            Err(e) => {
                // a step that fails applying its tasks' writes (InvalidUpdateError) keeps those
                // writes and the subgraph checkpoints behind them, as LangGraph does: one
                // transaction, no checkpoint for the step
                let kept = std::mem::take(&mut self.keep_on_error);
                let committed = if kept { self.commit() } else { Ok(()) };
                self.discard();
                self.run = None;
                committed?;
                Err(e)
            }
        }
    }

    fn tick(&mut self) -> Result<StepReport, EngineError> {
        let mut run = self
            .run
            .take()
            .ok_or_else(|| EngineError::Other("no run in progress: start one first".into()))?;
        let result = self.tick_run(&mut run);
        self.run = Some(run);
        result
    }

    fn tick_run(&mut self, run: &mut Run) -> Result<StepReport, EngineError> {
        let step = run.step;
        let mut report = StepReport {
            step,
            tasks: Vec::new(),
            checkpoint: None,
            pause: None,
        };
        if run.finished {
            report.pause = Some(Pause::Done);
            return Ok(report);
        }
        if run.step > run.stop {
            report.pause = Some(Pause::RecursionLimit(self.recursion_limit));
            return Ok(report);
        }
        let mut tasks = prepare_next_tasks(
            &run.state,
            self.graph,
            &self.ns,
            run.step,
            run.updated_channels.as_deref(),
        );
        if tasks.is_empty() {
            report.pause = Some(Pause::Done);
            return Ok(report);
        }
        // a resume hands finished tasks their stored writes back instead of re-running them
        let mut reused: Vec<String> = Vec::new();
        if !run.is_replaying && !run.pending.is_empty() {
            for (tid, st) in interrupts::read_task_statuses(&run.pending) {
                if st.output.is_empty() {
                    continue;
                }
                if let Some(t) = tasks.iter_mut().find(|t| t.id == tid) {
                    t.writes.extend(st.output);
                    reused.push(tid);
                }
            }
        }
        if run.first_tick {
            run.first_tick = false;
        }
        let before = should_interrupt(
            &run.state,
            &self.interrupt_before,
            tasks.iter().map(|t| t.name.as_str()),
        );
        if !before.is_empty() {
            report.pause = Some(Pause::Before(before));
            return Ok(report);
        }
        // run the tasks that have no writes yet, in task order
        let own_null = interrupts::null_resume(&run.pending);
        let null_resume = match (&own_null, &self.nested) {
            // a subgraph without a plain resume of its own falls back to its parent's
            (None, Some(n)) => n.null_resume.clone(),
            _ => Rc::new(RefCell::new(own_null.clone())),
        };
        // like LangGraph's get_null_resume(False), "a plain resume was given" stays true for every
        // task of the step even after one of them consumed it
        let step_had_null_resume = null_resume.borrow().is_some();
        let mut interrupted: Vec<(String, Interrupt)> = Vec::new();
        let mut subgraph_paused = false;
        let mut failed: Option<(String, String)> = None;
        let mut bubbled: Option<(String, Value)> = None;
        #[allow(clippy::needless_range_loop)]
        for i in 0..tasks.len() {
            if reused.contains(&tasks[i].id) {
                let t = &tasks[i];
                report.tasks.push(TaskReport {
                    id: t.id.clone(),
                    name: t.name.clone(),
                    path: t.path_str(),
                    outcome: TaskOutcome::Reused,
                    writes: t.writes.clone(),
                    attempts: 0,
                    calls: Vec::new(),
                    effects: Vec::new(),
                });
                continue;
            }
            let task: &Task = &tasks[i];
            let resume = interrupts::task_resume(
                &run.pending,
                &task.id,
                &task.task_ns,
                run.resume_map.as_deref(),
            );
            let before_null = null_resume.borrow().clone();
            let mut cx = TaskContext::new(
                &task.id,
                &task.task_ns,
                &task.name,
                resume,
                null_resume.clone(),
                self.seed,
                &task.path_str(),
                step,
            );
            cx.reexecution |= step_had_null_resume;
            let child = self
                .graph
                .node(&task.name)
                .and_then(|n| n.subgraph.as_ref())
                .and_then(|_| self.loaded.and_then(|l| l.children.get(&task.name)));
            let ex = match child {
                Some(child) => self.run_subgraph(child, run, task, &mut cx, null_resume.clone()),
                None => run_task(self.graph, &run.state, task, self.code, &mut cx),
            };
            // what the node changed in place is the channels' value from now on (no write, no
            // version), whatever became of the task — as in LangGraph, where the node held
            // the channels' own objects
            for (k, v) in std::mem::take(&mut cx.mutated) {
                if let Some(ch) = run.state.channel_mut(&k) {
                    ch.content = super::channels::Content::Value(v);
                }
            }
            if before_null.is_some() && null_resume.borrow().is_none() && own_null.is_some() {
                // consumed: LangGraph removes it from the step's pending writes
                if let Some(pos) = run
                    .pending
                    .iter()
                    .position(|(t, c, _)| t == NULL_TASK_ID && c == "__resume__")
                {
                    run.pending.remove(pos);
                }
            }
            let (id, name, path) = (task.id.clone(), task.name.clone(), task.path_str());
            let outcome = match ex.outcome {
                Outcome::Done => {
                    let mut writes = ex.writes;
                    if writes.iter().all(|(c, _)| super::runner::is_control(c)) {
                        writes.push(("__no_writes__".into(), Value::Nil));
                    }
                    tasks[i].writes = writes.clone();
                    self.put_writes(run, &id, &path, writes);
                    TaskOutcome::Done
                }
                Outcome::Interrupted(its) => {
                    subgraph_paused |= its.is_empty();
                    // a subgraph stopped at a breakpoint raises an empty GraphInterrupt: no row
                    if !its.is_empty() {
                        let mut w = vec![(
                            "__interrupt__".to_string(),
                            Value::Array(its.iter().map(Interrupt::to_value).collect()),
                        )];
                        w.extend(ex.writes.iter().filter(|(c, _)| c == "__resume__").cloned());
                        self.put_writes(run, &id, &path, w);
                    }
                    interrupted.extend(its.iter().map(|i| (name.clone(), i.clone())));
                    match its.first() {
                        Some(i) => TaskOutcome::Interrupted(i.clone()),
                        None => TaskOutcome::Interrupted(Interrupt {
                            value: Value::Nil,
                            id: String::new(),
                            response_schema: Value::Nil,
                        }),
                    }
                }
                Outcome::ParentCommand(c) => {
                    // GraphBubbleUp: LangGraph's runner saves nothing for the task
                    let repr = format!("ParentCommand({})", super::runner::command_repr(&c));
                    if bubbled.is_none() {
                        bubbled = Some((name.clone(), c));
                    }
                    TaskOutcome::Error(repr)
                }
                Outcome::Failed(f) => {
                    let mut w = ex.writes.clone();
                    w.push(("__error__".into(), Value::from(f.repr.as_str())));
                    self.put_writes(run, &id, &path, w);
                    if failed.is_none() {
                        failed = Some((name.clone(), f.repr.clone()));
                    }
                    TaskOutcome::Error(f.repr)
                }
            };
            report.tasks.push(TaskReport {
                id,
                name,
                path,
                outcome,
                writes: tasks[i].writes.clone(),
                attempts: ex.attempts,
                calls: cx.calls,
                effects: cx.effects,
            });
        }
        if let Some((node, repr)) = failed {
            report.pause = Some(Pause::Error(node, repr));
            return Ok(report);
        }
        if let Some((node, c)) = bubbled {
            let repr = format!("ParentCommand({})", super::runner::command_repr(&c));
            self.bubbled = Some(c);
            report.pause = Some(Pause::Error(node, repr));
            return Ok(report);
        }
        if !interrupted.is_empty() || subgraph_paused {
            report.pause = Some(Pause::Interrupt(interrupted));
            return Ok(report);
        }
        // after_tick
        for t in &tasks {
            for (c, v) in &t.writes {
                if super::delta::is_delta(self.graph, c)
                    && crate::value::ext::overwrite_value(v).is_some()
                    && !run.forced_snapshot.contains(c)
                {
                    run.forced_snapshot.push(c.clone());
                }
            }
        }
        for (tid, c) in std::mem::take(&mut run.resume_loaded) {
            if !tasks.iter().any(|t| t.id == tid) && !run.forced_snapshot.contains(&c) {
                run.forced_snapshot.push(c);
            }
        }
        let mut tw: Vec<TaskWrites> = tasks.iter().map(TaskWrites::from).collect();
        // what the tasks wrote is saved whatever apply_writes does with it
        self.keep_on_error = true;
        let updated = match self.apply(&mut run.state, &mut tw) {
            Ok(u) => u,
            Err(e) => {
                self.failed_step = Some(report);
                return Err(e);
            }
        };
        self.keep_on_error = false;
        run.pending.clear();
        run.is_replaying = false;
        run.first_tick_resuming = false;
        run.updated_channels = Some(updated.clone());
        let id = self.put_checkpoint(run, "loop", Some(updated));
        report.checkpoint = Some(id);
        let after = should_interrupt(
            &run.state,
            &self.interrupt_after,
            tasks.iter().map(|t| t.name.as_str()),
        );
        if !after.is_empty() {
            report.pause = Some(Pause::After(after));
        }
        Ok(report)
    }

    /// Run a subgraph node inside its parent task (LangGraph: the compiled subgraph invoked with
    /// `checkpoint_ns = node:task_id`): it keeps its own checkpoints in that namespace, resumes
    /// them when the parent resumes, and hands its final state back as the node's return value.
    fn run_subgraph(
        &mut self,
        child: &'g crate::spec::LoadedGraph,
        run: &Run,
        task: &Task,
        cx: &mut TaskContext,
        null_resume: Rc<RefCell<Option<Value>>>,
    ) -> super::runner::Executed {
        use super::runner::{Executed, Outcome};
        let mut parents = self
            .nested
            .as_ref()
            .map(|n| n.parents.clone())
            .unwrap_or_else(|| self.checkpoint_map.clone());
        parents.insert(self.ns.clone(), json!(run.state.id));
        // a checkpoint map naming this task's namespace addresses the subgraph's checkpoint
        let addressed: Option<String> = parents
            .get(&task.task_ns)
            .and_then(Json::as_str)
            .map(str::to_string);
        let resuming = run.first_tick_resuming;
        let mut e = Engine {
            graph: &child.graph,
            code: &child.code,
            sh: self.sh.clone(),
            nested: Some(Nested {
                null_resume,
                resuming,
                resume_map: run.resume_map.clone(),
                parents,
            }),
            loaded: Some(child),
            thread_id: self.thread_id.clone(),
            ns: task.task_ns.clone(),
            seed: self.seed,
            recursion_limit: self.recursion_limit,
            interrupt_before: child.graph.interrupt_before.clone(),
            interrupt_after: child.graph.interrupt_after.clone(),
            run: None,
            bubbled: None,
            keep_on_error: false,
            failed_step: None,
            checkpoint_map: Map::new(),
        };
        let input = task.node_input(&run.state, self.graph).to_value();
        let failed = |f: super::Failure| Executed {
            writes: Vec::new(),
            outcome: Outcome::Failed(f),
            attempts: 1,
        };
        if let Err(err) = e.first(Input::Value(input), addressed.as_deref()) {
            return failed(err.as_failure());
        }
        let pause = loop {
            match e.tick() {
                Ok(r) => {
                    if let Some(p) = r.pause {
                        break p;
                    }
                }
                Err(err) => return failed(err.as_failure()),
            }
        };
        if let Some(cmd) = e.bubbled.take() {
            // ParentCommand from inside the subgraph: this task's writers take the command as
            // if the node had returned it (`run_with_retry`: `for w in task.writers: w.invoke(cmd)`)
            return match super::runner::writes_for_return(
                self.graph, &run.state, task, &cmd, self.code, cx,
            ) {
                Ok(writes) => Executed {
                    writes,
                    outcome: Outcome::Done,
                    attempts: 1,
                },
                Err(super::NodeError::Failed(f)) => failed(f),
                Err(super::NodeError::ParentCommand(c)) => Executed {
                    writes: Vec::new(),
                    outcome: Outcome::ParentCommand(c),
                    attempts: 1,
                },
                Err(super::NodeError::Interrupt) => Executed {
                    writes: Vec::new(),
                    outcome: Outcome::Interrupted(cx.interrupt.clone().into_iter().collect()),
                    attempts: 1,
                },
            };
        }
        match pause {
            Pause::Done => {
                let out = e.run.as_ref().map(|r| r.state.read_state(&child.graph).to_value()).unwrap_or(Value::Nil);
                match super::runner::writes_for_return(self.graph, &run.state, task, &out, self.code, cx) {
                    Ok(writes) => Executed { writes, outcome: Outcome::Done, attempts: 1 },
                    Err(super::NodeError::Failed(f)) => failed(f),
                    Err(super::NodeError::ParentCommand(c)) => Executed { writes: Vec::new(), outcome: Outcome::ParentCommand(c), attempts: 1 },
                    Err(super::NodeError::Interrupt) => Executed {
                        writes: Vec::new(),
                        outcome: Outcome::Interrupted(cx.interrupt.clone().into_iter().collect()),
                        attempts: 1,
                    },
                }
            }
            Pause::Interrupt(list) => Executed {
                writes: Vec::new(),
                outcome: Outcome::Interrupted(list.into_iter().map(|(_, i)| i).collect()),
                attempts: 1,
            },
            Pause::Before(_) | Pause::After(_) => Executed { writes: Vec::new(), outcome: Outcome::Interrupted(Vec::new()), attempts: 1 },
            Pause::Error(_, repr) => failed(super::Failure {
                kind: repr.split('(').next().unwrap_or("Exception").to_string(),
                repr,
            }),
            Pause::RecursionLimit(n) => failed(super::Failure::new(
                "GraphRecursionError",
                &format!("Recursion limit of {n} reached without hitting a stop condition. You can increase the limit by setting the `recursion_limit` config key."),
            )),
        }
    }

    /// Address a subgraph's checkpoint the way LangGraph's `invoke(input, config)` does with that
    /// checkpoint's config (`get_state` in namespace `ns` gives it `checkpoint_map`: the
    /// checkpoint's `metadata.parents` plus `{ns: checkpoint_id}`): the root run starts from
    /// the map's root checkpoint, and the subgraph task of that namespace, if the run reaches it,
    /// from `checkpoint_id`. Returns the root checkpoint to pass to `start`. (Without a
    /// `checkpoint_id` LangGraph drops the namespace: an ordinary run of the root.)
    pub fn address_subgraph(
        &mut self,
        ns: &str,
        checkpoint_id: &str,
    ) -> Result<String, EngineError> {
        let row = self
            .sh
            .store
            .checkpoint(&self.thread_id, ns, Some(checkpoint_id))?
            .ok_or_else(|| {
                EngineError::UnknownCheckpoint(format!("{checkpoint_id} in namespace {ns:?}"))
            })?;
        let mut map = row
            .metadata
            .get("parents")
            .and_then(Json::as_object)
            .cloned()
            .unwrap_or_default();
        map.insert(ns.to_string(), json!(checkpoint_id));
        let root = map
            .get("")
            .and_then(Json::as_str)
            .ok_or_else(|| {
                EngineError::Other(format!(
                    "checkpoint {checkpoint_id} in namespace {ns:?} names no root checkpoint in metadata.parents"
                ))
            })?
            .to_string();
        self.checkpoint_map = map;
        Ok(root)
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

    pub(crate) fn saver_mut_commit(&mut self) -> Result<(), EngineError> {
        self.commit()
    }

    pub(crate) fn saver_mut_discard(&mut self) {
        self.discard()
    }

    /// `put`: `state` as a checkpoint of `ns` with parent `parent`, encoded by the store
    /// (`new_versions` relative to `previous`), buffered for the next commit.
    pub(crate) fn saver_put(
        &self,
        ns: &str,
        parent: Option<&str>,
        state: &State,
        updated: Option<&[String]>,
        previous: &[(String, Version)],
        md: &Map<String, Json>,
    ) {
        let cp = state.checkpoint_ref(updated, previous);
        let enc = self.sh.store.encode_checkpoint(
            ns,
            parent,
            &cp,
            super::saver::py_json(&Json::Object(md.clone())),
        );
        state.blob_len.set(enc.checkpoint.len());
        self.sh.saver.borrow_mut().put(enc);
    }

    pub(crate) fn saver_put_writes(
        &mut self,
        ns: &str,
        cid: &str,
        task_id: &str,
        path: &str,
        writes: &[(String, Value)],
    ) {
        self.sh
            .saver
            .borrow_mut()
            .put_writes(ns, cid, task_id, path, writes)
    }

    pub(crate) fn next_id(&mut self, clock_seq: i64) -> (String, String) {
        let mut ids = self.sh.ids.borrow_mut();
        self.sh.uuid.borrow_mut().next(ids.as_mut(), clock_seq)
    }

    /// Commit the buffered rows; a nested (subgraph) engine leaves them to its parent's step.
    fn commit(&mut self) -> Result<(), EngineError> {
        if self.nested.is_some() {
            return Ok(());
        }
        self.sh.saver.borrow_mut().commit(&self.sh.store)
    }

    fn discard(&mut self) {
        if self.nested.is_none() {
            self.sh.saver.borrow_mut().discard()
        }
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

/// The `langgraph.types.Command` object for a Command input (used as `__start__` on a new thread).
fn command_value(input: &Input) -> Value {
    let Input::Command {
        update,
        goto,
        resume,
    } = input
    else {
        return Value::Nil;
    };
    let resume = match resume {
        None => Value::Nil,
        Some(Resume::Plain(v)) => v.clone(),
        Some(Resume::Map(m)) => Value::Map(
            m.iter()
                .map(|(k, v)| (Value::from(k.as_str()), v.clone()))
                .collect(),
        ),
    };
    let goto = match goto.len() {
        0 => Value::Array(Vec::new()),
        _ => Value::Array(goto.clone()),
    };
    crate::value::ext::constructor(
        2,
        "langgraph.types",
        "Command",
        Value::Map(vec![
            ("graph".into(), Value::Nil),
            ("update".into(), update.clone().unwrap_or(Value::Nil)),
            ("resume".into(), resume),
            ("goto".into(), goto),
        ]),
        None,
    )
}

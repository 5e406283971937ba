//! The one place Effects run: the store is read through the inspector (`inspect::Thread`), the
//! graph is driven through the graph-source seam (`source::GraphSource`: the spec engine, or a
//! Python graph through the bridge), and every result comes back as Actions for `update`.

use super::action::{
    Action, Breaks, CheckpointData, Effect, HistoryEntry, ResumeArg, RunKind, RunResult,
    ThreadData, ThreadHit,
};
use super::state::ThreadRow;
use super::update::{hit_label, hits_in};
use super::views::{checkpoint_view, history_entry};
use crate::engine::clock::IdSource;
use crate::engine::loaded::LoadedGraph;
use crate::engine::source::SpecSource;
use crate::inspect::{InspectError, Thread};
use crate::snapshot::topology::Topology;
use crate::source::{AsNode, GraphSource, Input, RunOutcome, RunRequest, Start};
use crate::store::{Mode, Stamp, Store};
use std::path::{Path, PathBuf};

/// Checkpoints loaded per history page (newest first); older pages load as the selection nears
/// the end of what is loaded (or all at once on `G`).
pub const HISTORY_PAGE: usize = 200;
/// Threads listed at most.
pub const THREAD_LIMIT: usize = 10_000;

mod apps;
mod compare;
mod drive;
mod reads;
mod watch;
pub use apps::STORE_ITEMS;
mod errors;
use errors::{inspect_error, source_error};

pub struct Runtime<'g> {
    db: PathBuf,
    /// The session's run settings (`--config`, `--context`, `:context`).
    settings: crate::source::RunSettings,
    /// The graph being debugged; `None`: read-only inspection.
    source: Option<Box<dyn GraphSource + 'g>>,
    /// Reads (a second connection in debug mode; read-only in inspect mode).
    store: Store,
    /// The DB as of the last look: changes since then came from another process.
    stamp: Option<Stamp>,
    /// A run begun and not yet finished: why it was started, on which thread, since when.
    running: Option<(RunKind, String, std::time::Instant)>,
    /// `--graph REF` on an inspected file: the source gives the graph's shape, nothing runs.
    read_only: bool,
    /// What the last look at the file found to say (replaced, gone), for the app to show.
    notice: Option<Action>,
    /// The file was found gone (said once, until it is back).
    gone: bool,
    /// The last live-refresh check failed (a server store unreachable, a dropped connection):
    /// said once, checked again on every tick, everything reloaded once it answers.
    unreachable: bool,
    /// A read found the DB locked by another process: reload when the lock is gone.
    locked: bool,
}

/// How long a TUI read waits for another process's lock (a rollback-journal writer holds an
/// exclusive lock for its whole commit): briefly, so keys keep working; the read is retried
/// when the lock is gone.
pub const LOCK_WAIT: std::time::Duration = std::time::Duration::from_millis(200);

/// A store for the TUI's reads: it waits [`LOCK_WAIT`] for another process's lock.
fn tui_store(db: &Path, mode: Mode) -> Result<Store, crate::store::StoreError> {
    let s = Store::open(db, mode)?;
    s.set_lock_wait(LOCK_WAIT);
    Ok(s)
}

fn is_lock_error(e: &str) -> bool {
    e.contains("database is locked") || e.contains("database table is locked")
}

impl<'g> Runtime<'g> {
    /// Read-only: any SqliteSaver file.
    pub fn inspect(db: &Path) -> Result<Self, String> {
        let store = tui_store(db, Mode::ReadOnly).map_err(|e| e.to_string())?;
        Ok(Runtime {
            db: db.to_path_buf(),
            source: None,
            store,
            stamp: None,
            running: None,
            read_only: false,
            notice: None,
            gone: false,
            unreachable: false,
            locked: false,
            settings: Default::default(),
        })
    }

    /// A graph spec stepped on `db` (created when missing) by superstep's engine.
    pub fn debug(
        db: &Path,
        graph: &'g LoadedGraph,
        ids: Box<dyn IdSource>,
    ) -> Result<Self, String> {
        Self::spec(db, graph, ids, 0)
    }

    /// [`Runtime::debug`] with a seed for the spec's `random()` & co.
    pub fn spec(
        db: &Path,
        graph: &'g LoadedGraph,
        ids: Box<dyn IdSource>,
        seed: u64,
    ) -> Result<Self, String> {
        if db.exists() {
            // refuse a file that is not a checkpoint DB before opening it for writing
            Store::open(db, Mode::ReadOnly).map_err(|e| e.to_string())?;
        }
        let store = tui_store(db, Mode::ReadWrite).map_err(|e| e.to_string())?;
        let mut src = SpecSource::new(graph, db).with_ids(ids);
        src.seed = seed;
        Ok(Runtime {
            db: db.to_path_buf(),
            source: Some(Box::new(src)),
            store,
            stamp: None,
            running: None,
            read_only: false,
            notice: None,
            gone: false,
            unreachable: false,
            locked: false,
            settings: Default::default(),
        })
    }

    /// Any graph source on `db`, which the source has already created (a Python graph: the
    /// bridge's SqliteSaver made the schema). Reads go through a read-only connection.
    pub fn with_source(db: &Path, source: Box<dyn GraphSource + 'g>) -> Result<Self, String> {
        let store = tui_store(db, Mode::ReadOnly).map_err(|e| e.to_string())?;
        Ok(Runtime {
            db: db.to_path_buf(),
            source: Some(source),
            store,
            stamp: None,
            running: None,
            read_only: false,
            notice: None,
            gone: false,
            unreachable: false,
            locked: false,
            settings: Default::default(),
        })
    }

    /// Inspection with a graph's real topology (`--graph REF`): still read-only.
    pub fn with_graph(mut self, source: Box<dyn GraphSource + 'g>) -> Self {
        self.source = Some(source);
        self.read_only = true;
        self
    }

    /// The session's run settings (`--config`, `--context`). A wrong context given is an error;
    /// none given where the schema's defaults make none is not (the TUI says so and runs wait
    /// for `:context`).
    pub fn configure(&mut self, settings: &crate::source::RunSettings) -> Result<(), String> {
        let Some(src) = self.source.as_mut() else {
            return Ok(());
        };
        self.settings = settings.clone();
        match src.configure(settings) {
            Ok(_) => Ok(()),
            Err(_) if settings.context.is_none() && src.context_in_use().is_some() => Ok(()),
            Err(e) => Err(e.to_string()),
        }
    }

    /// The graph being debugged (`None`: inspection).
    pub fn source(&self) -> Option<&(dyn GraphSource + 'g)> {
        self.source.as_deref()
    }

    /// Whether this session steps a graph (not read-only inspection).
    fn stepping(&self) -> bool {
        self.source.is_some() && !self.read_only
    }

    pub fn db(&self) -> &Path {
        &self.db
    }

    /// The store as the TUI names it: a file by its path, a server store by its kind and URL
    /// (never the password).
    pub fn store_label(&self) -> String {
        if self.store.kind() == "SQLite" {
            self.store.label().to_string()
        } else {
            format!("{} {}", self.store.kind(), self.store.label())
        }
    }

    /// Run one effect; its results come back as actions.
    pub fn run(&mut self, effect: Effect) -> Vec<Action> {
        let mut out = self.run_effect(effect);
        for a in &mut out {
            if let Action::Failed { error, hint } = a {
                if is_lock_error(error) {
                    self.locked = true;
                    *hint = "another process holds the DB locked (a write in progress): what was read before stays shown, and it is read again when the lock is gone".into();
                }
            }
        }
        out
    }

    fn run_effect(&mut self, effect: Effect) -> Vec<Action> {
        match effect {
            Effect::MeasureStore => match crate::doctor::sizes::measure(
                &self.store,
                None,
                crate::doctor::sizes::SNAPSHOT_FREQUENCY,
                false,
            ) {
                Ok(du) => vec![Action::StoreMeasured(Box::new(du))],
                Err(e) => vec![Action::Failed {
                    error: e.to_string(),
                    hint: String::new(),
                }],
            },
            Effect::LoadStore { prefix } => self.load_store(prefix),
            Effect::SetContext { text } => self.set_context(&text),
            Effect::Startup { thread, create } => self.startup(thread, create),
            Effect::LoadThreads => match self.threads() {
                Ok((t, more)) => vec![Action::ThreadsLoaded(t, more)],
                Err(e) => vec![Action::Failed {
                    error: e,
                    hint: String::new(),
                }],
            },
            Effect::LoadMoreThreads { after, all, select } => {
                let limit = if all { usize::MAX } else { THREAD_LIMIT };
                match self.threads_after(Some(after), limit) {
                    Ok((rows, more)) => vec![Action::ThreadsAppended { rows, more, select }],
                    Err(e) => vec![Action::Failed {
                        error: e,
                        hint: String::new(),
                    }],
                }
            }
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
            Effect::Compare(job) => self.compare(job),
            Effect::Step { thread, n, breaks } => self.drive(
                &thread,
                RunKind::Step(n),
                Start::Continue,
                breaks,
                Some(n as usize),
            ),
            Effect::Continue { thread, breaks } => {
                self.drive(&thread, RunKind::Continue, Start::Continue, breaks, None)
            }
            Effect::Resume {
                thread,
                answer,
                breaks,
            } => {
                let input = match answer {
                    ResumeArg::Plain(v) => Input::resume(v),
                    ResumeArg::ById(m) => Input::resume_map(m),
                };
                // like invoke(Command(resume=...)) and `superstep resume`: on to the next pause
                self.drive(
                    &thread,
                    RunKind::Resume,
                    Start::Fresh {
                        input,
                        checkpoint: None,
                    },
                    breaks,
                    None,
                )
            }
            Effect::TimeTravel {
                thread,
                ns,
                checkpoint,
                breaks,
            } => self.drive_in(
                &thread,
                &ns,
                RunKind::TimeTravel,
                Start::Fresh {
                    input: Input::Continue,
                    checkpoint: Some(checkpoint),
                },
                breaks,
                Some(0),
            ),
            Effect::UpdateState {
                thread,
                ns,
                checkpoint,
                values,
                as_node,
            } => {
                let values = (!values.is_null()).then_some(values);
                let label = as_node.clone().unwrap_or_else(|| "(inferred)".into());
                let src = match self.source_mut() {
                    Ok(s) => s,
                    Err(a) => return vec![a],
                };
                let r = src.update_state_in(
                    &thread,
                    &ns,
                    checkpoint.as_deref(),
                    values,
                    AsNode::parse(as_node.as_deref()),
                );
                match r {
                    Ok(id) => {
                        let mut out = vec![Action::StateUpdated {
                            checkpoint: id.clone(),
                            as_node: label,
                        }];
                        // the new checkpoint is in the namespace that was updated
                        out.extend(self.reload_in(&thread, &ns, Some(&id)));
                        out
                    }
                    Err(e) => vec![source_error(&e)],
                }
            }
            Effect::Reload { thread } => {
                let src = match self.source_mut() {
                    Ok(s) => s,
                    Err(a) => return vec![a],
                };
                match src.reload() {
                    Ok(text) => {
                        let graph = Box::new(super::graph_info(src.shape()));
                        let mut out = vec![Action::Reloaded {
                            graph,
                            text: text.clone(),
                        }];
                        if let Some(t) = thread {
                            // the next tasks are derived with the new topology
                            out.extend(self.reload(&t, None));
                            out.push(Action::Info(text));
                        }
                        out
                    }
                    Err(e) => vec![source_error(&e)],
                }
            }
            Effect::CancelRun => {
                self.cancel_run();
                vec![]
            }
            Effect::SetReplay(mode) => {
                if let Some(src) = self.source.as_deref_mut() {
                    src.set_replay(mode, true);
                }
                vec![]
            }
            Effect::NewThread { thread, input } => {
                // an existing thread's: a new turn on it
                let turn = self.thread_exists(&thread);
                let src = match self.source_mut() {
                    Ok(s) => s,
                    Err(a) => return vec![a],
                };
                let shape = src.shape();
                let req = RunRequest {
                    thread: thread.clone(),
                    start: Start::Fresh {
                        input: Input::Value(input),
                        checkpoint: None,
                    },
                    steps: Some(0),
                    before: shape.interrupt_before.clone(),
                    after: shape.interrupt_after.clone(),
                };
                let ran = src.run(req);
                if let Some(err) = ran.error {
                    return vec![source_error(&err)];
                }
                let mut out = vec![Action::NodeOutput(ran.output)];
                out.extend(self.reload(&thread, None));
                out.push(Action::Info(if turn {
                    format!("thread {thread}: a new turn — its input checkpoint is written; n steps it, c runs it")
                } else {
                    format!("new thread {thread}: input checkpoint written — n steps one superstep, c continues")
                }));
                out
            }
        }
    }
}

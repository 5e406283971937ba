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
use crate::engine::update_state::AsNode;
use crate::engine::Input;
use crate::inspect::{InspectError, Thread};
use crate::snapshot::topology::Topology;
use crate::source::spec::SpecSource;
use crate::source::{GraphSource, RunOutcome, RunRequest, SourceError, Start};
use crate::spec::LoadedGraph;
use crate::store::{Mode, Stamp, Store};
use crate::value::from_view;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

/// Checkpoints loaded per history page (newest first); older pages load as the selection nears
/// the end of what is loaded (or all at once on `G`).
pub const HISTORY_PAGE: usize = 200;
/// Threads listed at most.
pub const THREAD_LIMIT: usize = 10_000;

pub struct Runtime<'g> {
    db: PathBuf,
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

fn source_error(e: &SourceError) -> Action {
    let hint = e.hint();
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
        })
    }

    /// Inspection with a graph's real topology (`--graph REF`): still read-only.
    pub fn with_graph(mut self, source: Box<dyn GraphSource + 'g>) -> Self {
        self.source = Some(source);
        self.read_only = true;
        self
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

    /// Every thread of the root namespace.
    pub fn threads(&self) -> Result<(Vec<ThreadRow>, bool), String> {
        self.threads_after(None, THREAD_LIMIT)
    }

    /// Up to `limit` threads after `after` (by id), and whether more follow.
    pub fn threads_after(
        &self,
        mut after: Option<String>,
        limit: usize,
    ) -> Result<(Vec<ThreadRow>, bool), String> {
        let mut out = Vec::new();
        loop {
            let page = self
                .store
                .threads(after.as_deref(), 1000)
                .map_err(|e| e.to_string())?;
            let n = page.len();
            for t in page {
                if out.len() >= limit {
                    return Ok((out, true));
                }
                if t.checkpoints > 0 {
                    out.push(ThreadRow {
                        id: t.thread_id.clone(),
                        checkpoints: t.checkpoints,
                        latest: t.latest_checkpoint_id.clone(),
                    });
                }
                after = Some(t.thread_id);
            }
            if n < 1000 {
                return Ok((out, false));
            }
        }
    }

    /// Whether the thread exists, whatever its place among the threads.
    pub fn thread_exists(&self, thread: &str) -> bool {
        self.store.thread_exists(thread).unwrap_or(false)
    }

    /// The thread with the newest checkpoint, over every page of threads.
    fn most_recent_anywhere(&self, first: &[ThreadRow], more: bool) -> Option<String> {
        let mut best: Option<ThreadRow> =
            first.iter().max_by(|a, b| a.latest.cmp(&b.latest)).cloned();
        let mut after = first.last().map(|t| t.id.clone());
        let mut more = more;
        while more && after.is_some() {
            let Ok((page, m)) = self.threads_after(after.clone(), THREAD_LIMIT) else {
                break;
            };
            more = m;
            after = page.last().map(|t| t.id.clone());
            if let Some(t) = page.into_iter().max_by(|a, b| a.latest.cmp(&b.latest)) {
                if best.as_ref().is_none_or(|b| t.latest > b.latest) {
                    best = Some(t);
                }
            }
        }
        best.map(|t| t.id)
    }

    /// The thread whose newest checkpoint is the newest (checkpoint ids are time-ordered).
    pub fn most_recent(threads: &[ThreadRow]) -> Option<String> {
        threads
            .iter()
            .max_by(|a, b| a.latest.cmp(&b.latest))
            .map(|t| t.id.clone())
    }

    /// The graph source, or the read-only refusal.
    fn source_mut(&mut self) -> Result<&mut (dyn GraphSource + 'g), Action> {
        if self.read_only {
            return Err(Action::Failed {
                error: "read-only inspect mode".into(),
                hint: "--graph only supplies the graph's shape; to step, open the graph itself (superstep GRAPH --db FILE)".into(),
            });
        }
        let Some(src) = self.source.as_deref_mut() else {
            return Err(Action::Failed {
                error: "read-only inspect mode".into(),
                hint: "stepping needs a graph spec".into(),
            });
        };
        if let Some(why) = src.gone() {
            return Err(Action::Failed {
                error: why,
                hint: "the file stays open read-only: quit and start superstep again to step"
                    .into(),
            });
        }
        Ok(src)
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
    /// child `b`); `None` without a graph or for a namespace the graph does not know.
    fn topology_for(&self, ns: &str) -> Option<Topology> {
        self.source.as_ref()?.topology(ns)
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
        self.reload_in(thread, "", select)
    }

    /// [`Runtime::reload`] in namespace `ns`.
    fn reload_in(&self, thread: &str, ns: &str, select: Option<&str>) -> Vec<Action> {
        let mut out = Vec::new();
        match self.threads() {
            Ok((t, more)) => out.push(Action::ThreadsLoaded(t, more)),
            Err(e) => out.push(Action::Failed {
                error: e,
                hint: String::new(),
            }),
        }
        match self.thread_data(thread, ns, select) {
            Ok(d) => out.push(Action::ThreadLoaded(Box::new(d))),
            Err(e) => out.push(inspect_error(e)),
        }
        out
    }

    /// Whether another process changed the DB since the last look (its own effects do not
    /// count: the app calls [`Runtime::mark_seen`] after each dispatch). A read-only store opened `immutable`
    /// is opened again on any change (then no longer immutable if a writer keeps a `-wal`).
    pub fn external_change(&mut self) -> bool {
        if self.locked {
            // a read failed on another process's lock: once it is gone, read again
            match self.store.stamp() {
                Ok(now) => {
                    self.locked = false;
                    self.stamp = Some(now);
                    self.notice = Some(Action::Info(format!(
                        "{}: the other process's lock is gone: read again",
                        self.store.label()
                    )));
                    return true;
                }
                Err(_) => return false,
            }
        }
        // the file itself: replaced by another (a `mv` over it) or deleted since it was opened;
        // the open handle would go on reading the old one and call it live
        match self.store.presence() {
            crate::store::Presence::Gone => {
                if !self.gone {
                    self.gone = true;
                    self.notice = Some(Action::Failed {
                        error: format!(
                            "{}: the file was deleted or moved away: what is shown is what it held when last read, nothing live",
                            self.store.label()
                        ),
                        hint: String::new(),
                    });
                }
                return false;
            }
            crate::store::Presence::Replaced if self.source.is_none() || self.read_only => {
                self.gone = false;
                return match tui_store(&self.db, Mode::ReadOnly) {
                    Ok(s) => {
                        self.store = s;
                        self.stamp = self.store.stamp().ok();
                        self.notice = Some(Action::Info(format!(
                            "{}: the file was replaced by another: opened the new one",
                            self.store.label()
                        )));
                        true
                    }
                    Err(e) => {
                        self.notice = Some(Action::Failed {
                            error: format!(
                                "the file was replaced by another, which cannot be read: {e}"
                            ),
                            hint: String::new(),
                        });
                        false
                    }
                };
            }
            crate::store::Presence::Replaced => {
                if !self.gone {
                    self.gone = true;
                    self.notice = Some(Action::Failed {
                        error: format!(
                            "{}: the file was replaced by another under the TUI: steps still write to the one opened; restart to work on the new one",
                            self.store.label()
                        ),
                        hint: String::new(),
                    });
                }
                return false;
            }
            crate::store::Presence::Same => self.gone = false,
        }
        let now = match self.store.stamp() {
            Ok(now) => now,
            Err(e) if is_lock_error(&e.to_string()) => {
                // another process's write holds the DB longer than LOCK_WAIT: read again after
                self.locked = true;
                self.notice = Some(Action::Info(format!(
                    "{}: another process holds the DB locked (a write in progress): read again when the lock is gone",
                    self.store.label()
                )));
                return false;
            }
            Err(e) => {
                if !self.unreachable {
                    self.unreachable = true;
                    self.notice = Some(Action::Failed {
                        error: format!("live refresh: {e}"),
                        hint: "tried again every tick; what is shown is what was last read".into(),
                    });
                }
                return false;
            }
        };
        if self.unreachable {
            // back: whatever a failed load left on screen is read again
            self.unreachable = false;
            self.stamp = Some(now);
            self.notice = Some(Action::Info(format!(
                "{}: reachable again: reloaded",
                self.store.label()
            )));
            return true;
        }
        if self.stamp.as_ref() == Some(&now) {
            return false;
        }
        let first = self.stamp.is_none();
        // an immutable connection trusts its page cache: open the file again to see the change
        if self.store.needs_reopen() {
            if let Ok(s) = tui_store(&self.db, Mode::ReadOnly) {
                self.store = s;
            }
        }
        self.stamp = self.store.stamp().ok();
        !first
    }

    /// What the last look at the file found to say (the file replaced or gone), once.
    pub fn take_notice(&mut self) -> Option<Action> {
        self.notice.take()
    }

    /// Take the DB as it is now as seen: what this process's own effects wrote is not an
    /// external change.
    pub fn mark_seen(&mut self) {
        // a stamp that cannot be read now (the DB locked) keeps the last one: forgetting it
        // would make the next change look like the first look, and go unseen
        if let Ok(s) = self.store.stamp() {
            self.stamp = Some(s);
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
                let values = if values.is_null() {
                    None
                } else {
                    match json_value(&values) {
                        Ok(v) => Some(v),
                        Err(a) => return vec![a],
                    }
                };
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
            Effect::CancelRun => {
                self.cancel_run();
                vec![]
            }
            Effect::NewThread { thread, input } => {
                let v = match json_value(&input) {
                    Ok(v) => v,
                    Err(a) => return vec![a],
                };
                let src = match self.source_mut() {
                    Ok(s) => s,
                    Err(a) => return vec![a],
                };
                let shape = src.shape();
                let req = RunRequest {
                    thread: thread.clone(),
                    start: Start::Fresh {
                        input: Input::Value(v),
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

    fn startup(&mut self, thread: Option<String>, create: bool) -> Vec<Action> {
        let (threads, more) = match self.threads() {
            Ok(t) => t,
            Err(e) => {
                return vec![Action::Failed {
                    error: e,
                    hint: String::new(),
                }]
            }
        };
        // a thread past the first page exists too (100,000 threads: the picker pages them)
        let exists = |t: &str| threads.iter().any(|r| r.id == t) || self.thread_exists(t);
        let pick = match &thread {
            Some(t) => Some(t.clone()),
            // debugging a graph: resume the most recent thread if it can still move; otherwise
            // start a fresh one with the spec's input, so n / c step straight away
            None if self.stepping() && create => self
                .most_recent_anywhere(&threads, more)
                .filter(|t| self.in_progress(t)),
            None => self.most_recent_anywhere(&threads, more),
        };
        let input = if self.stepping() && create {
            self.source.as_ref().map(|s| s.shape().input.clone())
        } else {
            None
        };
        match (pick, input) {
            (Some(t), _) if exists(&t) => {
                let mut out = vec![Action::ThreadsLoaded(threads.clone(), more)];
                out.extend(self.reload(&t, None).into_iter().skip(1));
                if out.iter().any(|a| matches!(a, Action::Failed { .. })) {
                    // the thread could not be shown (a corrupt row): the error stays on screen
                    return out;
                }
                out.push(Action::Info(format!(
                    "thread {t}{} — ? shows every key",
                    if self.stepping() {
                        ": n steps, c continues"
                    } else {
                        " (read-only)"
                    }
                )));
                out
            }
            (pick, Some(input)) => {
                let t = pick.unwrap_or_else(|| {
                    (1..).map(|i| format!("t{i}")).find(|n| !exists(n)).unwrap()
                });
                match input {
                    Some(input) => self.run(Effect::NewThread { thread: t, input }),
                    None => vec![
                        Action::ThreadsLoaded(threads.clone(), more),
                        Action::Info(format!(
                            "thread {t} does not exist yet: N starts it with an input"
                        )),
                    ],
                }
            }
            (Some(t), None) => vec![
                Action::ThreadsLoaded(threads.clone(), more),
                Action::Failed {
                    error: format!("{}: no thread {t:?}", self.store.label()),
                    hint: "T lists the threads".into(),
                },
            ],
            (None, None) if self.stepping() => vec![
                Action::ThreadsLoaded(threads.clone(), more),
                Action::Info(
                    "no thread yet (nothing written): N starts one with the spec's input, n steps it"
                        .into(),
                ),
            ],
            (None, None) => vec![
                Action::ThreadsLoaded(threads.clone(), more),
                Action::Info("this DB has no threads".into()),
            ],
        }
    }

    /// Start (when needed) and step the graph; `steps: None` runs to the next pause. The run is
    /// begun on the source; a source that runs in-process (the spec engine) has finished it
    /// when `begin` returns, a Python graph is polled (`poll_run`) while the TUI stays live.
    fn drive(
        &mut self,
        thread: &str,
        kind: RunKind,
        start: Start,
        breaks: Breaks,
        steps: Option<usize>,
    ) -> Vec<Action> {
        self.drive_in(thread, "", kind, start, breaks, steps)
    }

    /// [`Runtime::drive`] from a checkpoint in namespace `ns` (a subgraph checkpoint's config:
    /// the run is the root graph's, so the root is shown afterwards).
    fn drive_in(
        &mut self,
        thread: &str,
        ns: &str,
        kind: RunKind,
        start: Start,
        breaks: Breaks,
        steps: Option<usize>,
    ) -> Vec<Action> {
        let src = match self.source_mut() {
            Ok(s) => s,
            Err(a) => return vec![a],
        };
        let req = RunRequest {
            thread: thread.to_string(),
            start,
            steps,
            before: breaks.before,
            after: breaks.after,
        };
        if let Some(out) = src.begin_in(req, ns) {
            // finished (or refused) already: handled like a polled run's outcome
            return self.finished(kind, thread, out);
        }
        let what = match &kind {
            RunKind::Step(1) => "step".to_string(),
            RunKind::Step(n) => format!("{n} steps"),
            RunKind::Continue => "continue".into(),
            RunKind::Resume => "resume".into(),
            RunKind::TimeTravel => "time travel".into(),
        };
        self.running = Some((kind, thread.to_string(), std::time::Instant::now()));
        self.poll_run()
            .unwrap_or_else(|| vec![Action::RunStarted(what)])
    }

    /// How long the run in progress has been going.
    pub fn running_for(&self) -> Option<std::time::Duration> {
        self.running.as_ref().map(|(_, _, t)| t.elapsed())
    }

    /// Whether a run is begun and not finished (the TUI shows a spinner and polls).
    pub fn running(&self) -> bool {
        self.running.is_some()
    }

    /// The actions of the run in progress once it has finished; `None` while it runs.
    pub fn poll_run(&mut self) -> Option<Vec<Action>> {
        let (kind, thread, _) = self.running.clone()?;
        let out = self.source.as_deref_mut()?.poll()?;
        self.running = None;
        Some(self.finished(kind, &thread, out))
    }

    /// Ask the run in progress to stop (Esc / Ctrl-C while a node runs).
    pub fn cancel_run(&mut self) {
        if self.running.is_some() {
            if let Some(src) = self.source.as_deref_mut() {
                src.cancel();
            }
        }
    }

    fn finished(&mut self, kind: RunKind, thread: &str, out: RunOutcome) -> Vec<Action> {
        let RunOutcome {
            reports,
            checkpoint,
            error,
            output,
        } = out;
        let landed = if kind == RunKind::TimeTravel && error.is_none() {
            checkpoint
        } else {
            None
        };
        let mut actions = Vec::new();
        if error.is_none() || !reports.is_empty() {
            actions.push(Action::Ran(Box::new(RunResult {
                kind,
                thread: thread.to_string(),
                reports,
                landed: landed.clone(),
                output,
            })));
        }
        actions.extend(self.reload(thread, landed.as_deref()));
        if let Some(e) = error {
            actions.push(source_error(&e));
        }
        actions
    }
}

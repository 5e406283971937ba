//! Reading the store for the app: threads (paged), a thread's history and checkpoints, reloads,
//! search.

use super::*;

impl<'g> Runtime<'g> {
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
    pub(super) fn most_recent_anywhere(&self, first: &[ThreadRow], more: bool) -> Option<String> {
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
    pub(super) fn source_mut(&mut self) -> Result<&mut (dyn GraphSource + 'g), Action> {
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

    pub(super) fn checkpoint_data(
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
        let ids: Vec<&str> = snapshot.tasks.iter().map(|t| t.id.as_str()).collect();
        let calls = crate::replay::task_calls(&self.db, &snapshot.thread_id, &ids);
        Ok(CheckpointData {
            snapshot,
            parent_values,
            calls,
        })
    }

    /// The topology of the graph whose checkpoints live in `ns` (`a:id|b:id`: child `a`'s
    /// child `b`); `None` without a graph or for a namespace the graph does not know.
    pub(super) fn topology_for(&self, ns: &str) -> Option<Topology> {
        self.source.as_ref()?.topology(ns)
    }

    /// Whether a thread has something left to run or answer.
    pub(super) fn in_progress(&self, thread: &str) -> bool {
        self.open(thread, "")
            .and_then(|th| th.show(None))
            .map(|s| !s.next.is_empty())
            .unwrap_or(false)
    }

    pub(super) fn open(&self, thread: &str, ns: &str) -> Result<Thread<'_>, InspectError> {
        Thread::open(&self.store, thread, ns, self.topology_for(ns))
    }

    /// Up to `limit` checkpoints strictly older than `before`, and whether more exist.
    pub(super) fn history_rows(
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

    pub(super) fn reload(&self, thread: &str, select: Option<&str>) -> Vec<Action> {
        self.reload_in(thread, "", select)
    }

    /// [`Runtime::reload`] in namespace `ns`.
    pub(super) fn reload_in(&self, thread: &str, ns: &str, select: Option<&str>) -> Vec<Action> {
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

    /// Every match of `query` in the values and pending writes of `checkpoints` (newest first;
    /// the first is the thread's newest, shown live as `get_state` shows it).
    pub(super) fn search(
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
                    calls: Vec::new(),
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
}

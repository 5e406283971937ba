//! Driving the graph: the startup thread, runs on the graph source (step, continue, resume, new
//! thread, update_state) polled while they run, and what a finished run becomes.

use super::*;

impl<'g> Runtime<'g> {
    pub(super) fn startup(&mut self, thread: Option<String>, create: bool) -> Vec<Action> {
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
                Action::Info(format!(
                    "no thread yet (nothing written): N starts one with {}, n steps it",
                    self.input_word()
                )),
            ],
            (None, None) => vec![
                Action::ThreadsLoaded(threads.clone(), more),
                Action::Info("this DB has no threads".into()),
            ],
        }
    }

    /// What `N` starts a thread with: a spec's own `input`, or the graph's input (a Python graph:
    /// a form built from its input schema).
    pub(super) fn input_word(&self) -> &'static str {
        match self.source.as_ref().map(|s| s.shape().input.is_some()) {
            Some(true) => "the spec's input",
            _ => "the graph's input",
        }
    }

    /// Start (when needed) and step the graph; `steps: None` runs to the next pause. The run is
    /// begun on the source; a source that runs in-process (the spec engine) has finished it
    /// when `begin` returns, a Python graph is polled (`poll_run`) while the TUI stays live.
    pub(super) fn drive(
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
    pub(super) fn drive_in(
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

    /// `--watch`: whether a file of the graph's code changed since the last look.
    pub fn code_changed(&mut self) -> bool {
        !self.running() && self.source.as_deref_mut().is_some_and(|s| s.code_changed())
    }

    /// The nodes of the superstep running now (the spinner names them).
    pub fn running_nodes(&self) -> Vec<String> {
        match (&self.running, self.source.as_deref()) {
            (Some(_), Some(src)) => src.running_nodes(),
            _ => Vec::new(),
        }
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

    pub(super) fn finished(&mut self, kind: RunKind, thread: &str, out: RunOutcome) -> Vec<Action> {
        let RunOutcome {
            reports,
            checkpoint,
            error,
            output,
            calls,
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
                calls,
            })));
        }
        actions.extend(self.reload(thread, landed.as_deref()));
        if let Some(e) = error {
            if let Some(tb) = e.traceback() {
                // kept in the session's output log: `o` shows it
                actions.push(Action::NodeOutput(vec![crate::source::TaskOutput {
                    task_id: String::new(),
                    node: String::new(),
                    ns: String::new(),
                    attempt: 0,
                    stream: crate::app::update::TRACEBACK.into(),
                    text: tb.to_string(),
                }]));
            }
            actions.push(source_error(&e));
        }
        actions
    }
}

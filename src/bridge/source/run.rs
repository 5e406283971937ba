//! Sending a run request and waiting for what it becomes.

use super::*;

impl PythonSource {
    pub(super) fn poll_blocking(&mut self) -> Option<RunOutcome> {
        if let Some(out) = self.finished.take() {
            return Some(out);
        }
        if self.pending.is_none() {
            return Some(RunOutcome::default());
        }
        self.pump(Wait::Done)
    }
}

impl PythonSource {
    /// Send a run request (the namespace of a fresh run's checkpoint; `""`: the root) and leave
    /// it pending, or its failure in `finished`.
    pub(super) fn send_run(&mut self, req: RunRequest, ns: &str) {
        let (config, context) = match self.run_settings() {
            Ok(x) => x,
            Err(e) => {
                self.finished = Some(RunOutcome {
                    error: Some(e),
                    ..RunOutcome::default()
                });
                return;
            }
        };
        let (replay, record) = self.calls.wire();
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
            config,
            context,
            inner: wire_inner(inner_before, inner_after),
            replay,
            record,
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
                    running: Vec::new(),
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

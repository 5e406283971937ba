//! One superstep: `tick` + running the tasks + `after_tick`.

use super::{Engine, Pause, Run, StepReport, TaskOutcome, TaskReport};
use crate::engine::apply::TaskWrites;
use crate::engine::breakpoints::should_interrupt;
use crate::engine::interrupts::{self, TaskContext};
use crate::engine::runner::{run_task, Outcome};
use crate::engine::tasks::{prepare_next_tasks, Task};
use crate::engine::EngineError;
use crate::ids::NULL_TASK_ID;
use crate::value::Interrupt;
use rmpv::Value;
use std::cell::RefCell;
use std::rc::Rc;

impl<'g> Engine<'g> {
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

    pub(super) fn tick(&mut self) -> Result<StepReport, EngineError> {
        let mut run = self
            .run
            .take()
            .ok_or_else(|| EngineError::Other("no run in progress: start one first".into()))?;
        let result = self.tick_run(&mut run);
        self.run = Some(run);
        result
    }

    pub(super) fn tick_run(&mut self, run: &mut Run) -> Result<StepReport, EngineError> {
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
                    path: t.path.clone(),
                    traceback: None,
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
                    ch.content = crate::engine::channels::Content::Value(v);
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
            let parts = task.path.clone();
            let outcome = match ex.outcome {
                Outcome::Done => {
                    let mut writes = ex.writes;
                    if writes
                        .iter()
                        .all(|(c, _)| crate::engine::runner::is_control(c))
                    {
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
                    let repr =
                        format!("ParentCommand({})", crate::engine::runner::command_repr(&c));
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
                path: parts,
                traceback: None,
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
            let repr = format!("ParentCommand({})", crate::engine::runner::command_repr(&c));
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
                if crate::engine::delta::is_delta(self.graph, c)
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
}

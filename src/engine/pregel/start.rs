//! `__enter__` + `_first`: load the checkpoint and apply the run's input.

use super::input::command_value;
use super::{Engine, Input, Resume, Run};
use crate::engine::apply::{null_task_writes, TaskWrites};
use crate::engine::checkpoint::State;
use crate::engine::interrupts;
use crate::engine::tasks::prepare_next_tasks;
use crate::engine::EngineError;
use crate::ids::NULL_TASK_ID;
use rmpv::Value;
use serde_json::{json, Map, Value as Json};

impl<'g> Engine<'g> {
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

    pub(super) fn first(
        &mut self,
        input: Input,
        checkpoint_id: Option<&str>,
    ) -> Result<(), EngineError> {
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
            .filter(|(_, c, _)| crate::engine::delta::is_delta(self.graph, c));
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
                        if crate::engine::delta::is_delta(self.graph, c)
                            && !run.forced_snapshot.contains(c)
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
}

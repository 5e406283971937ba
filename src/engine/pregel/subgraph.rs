//! A subgraph node run inside its parent task, and addressing a subgraph's checkpoint.

use super::{Engine, Input, Nested, Pause, Run};
use crate::engine::interrupts::TaskContext;
use crate::engine::tasks::Task;
use crate::engine::EngineError;
use rmpv::Value;
use serde_json::{json, Map, Value as Json};
use std::cell::RefCell;
use std::rc::Rc;

impl<'g> Engine<'g> {
    /// Run a subgraph node inside its parent task (LangGraph: the compiled subgraph invoked with
    /// `checkpoint_ns = node:task_id`): it keeps its own checkpoints in that namespace, resumes
    /// them when the parent resumes, and hands its final state back as the node's return value.
    pub(super) fn run_subgraph(
        &mut self,
        child: &'g crate::engine::loaded::LoadedGraph,
        run: &Run,
        task: &Task,
        cx: &mut TaskContext,
        null_resume: Rc<RefCell<Option<Value>>>,
    ) -> crate::engine::runner::Executed {
        use crate::engine::runner::{Executed, Outcome};
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
        let failed = |f: crate::engine::Failure| Executed {
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
            return match crate::engine::runner::writes_for_return(
                self.graph, &run.state, task, &cmd, self.code, cx,
            ) {
                Ok(writes) => Executed {
                    writes,
                    outcome: Outcome::Done,
                    attempts: 1,
                },
                Err(crate::engine::NodeError::Failed(f)) => failed(f),
                Err(crate::engine::NodeError::ParentCommand(c)) => Executed {
                    writes: Vec::new(),
                    outcome: Outcome::ParentCommand(c),
                    attempts: 1,
                },
                Err(crate::engine::NodeError::Interrupt) => Executed {
                    writes: Vec::new(),
                    outcome: Outcome::Interrupted(cx.interrupt.clone().into_iter().collect()),
                    attempts: 1,
                },
            };
        }
        match pause {
            Pause::Done => {
                let out = e.run.as_ref().map(|r| r.state.read_state(&child.graph).to_value()).unwrap_or(Value::Nil);
                match crate::engine::runner::writes_for_return(self.graph, &run.state, task, &out, self.code, cx) {
                    Ok(writes) => Executed { writes, outcome: Outcome::Done, attempts: 1 },
                    Err(crate::engine::NodeError::Failed(f)) => failed(f),
                    Err(crate::engine::NodeError::ParentCommand(c)) => Executed { writes: Vec::new(), outcome: Outcome::ParentCommand(c), attempts: 1 },
                    Err(crate::engine::NodeError::Interrupt) => Executed {
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
            Pause::Error(_, repr) => failed(crate::engine::Failure {
                kind: repr.split('(').next().unwrap_or("Exception").to_string(),
                repr,
            }),
            Pause::RecursionLimit(n) => failed(crate::engine::Failure::new(
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
}

//! `interrupt()` and resuming (spec §7): the per-task scratchpad, interrupt ids, which answers a
//! re-executed node gets back, and which interrupts are still pending.

pub use crate::source::types::{Effect, InterruptCall};

use super::NodeError;
use crate::ids::{interrupt_id, NULL_TASK_ID};
use crate::value::Interrupt;
use rmpv::Value;
use std::cell::RefCell;
use std::rc::Rc;

/// The context a node runs with: LangGraph's `PregelScratchpad` plus superstep's logs.
pub struct TaskContext {
    pub task_id: String,
    pub task_ns: String,
    pub node: String,
    /// Answers the task holds (its stored RESUME list, plus a resume-map answer).
    pub resume: Vec<Value>,
    counter: usize,
    /// The step's plain resume value (`Command(resume=v)`), consumed by the first taker.
    null_resume: Rc<RefCell<Option<Value>>>,
    /// `("__resume__", list)` writes sent by `interrupt()` during this attempt.
    pub writes: Vec<(String, Value)>,
    pub interrupt: Option<Interrupt>,
    pub calls: Vec<InterruptCall>,
    pub effects: Vec<Effect>,
    pub attempt: u32,
    /// Seed for the nondeterminism helpers, mixed with the task and execution.
    pub seed: u64,
    pub helper_calls: u64,
    /// Whether this execution started with an answer available (a plain resume or held answers):
    /// the helpers' stream differs between the first execution and re-executions.
    pub reexecution: bool,
    /// `task_path_str` of the task and the step it runs in (for the helpers' stream).
    pub path: String,
    pub step: i64,
    /// State values the code changed in place (`state["items"].append(x)`): LangGraph's node
    /// holds the channels' own objects, so these are the channels' values now (no write, no
    /// version). Latest change of a key last.
    pub mutated: Vec<(String, Value)>,
}

impl TaskContext {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        task_id: &str,
        task_ns: &str,
        node: &str,
        resume: Vec<Value>,
        null_resume: Rc<RefCell<Option<Value>>>,
        seed: u64,
        path: &str,
        step: i64,
    ) -> Self {
        let reexecution = !resume.is_empty() || null_resume.borrow().is_some();
        TaskContext {
            task_id: task_id.to_string(),
            task_ns: task_ns.to_string(),
            node: node.to_string(),
            resume,
            counter: 0,
            null_resume,
            writes: Vec::new(),
            interrupt: None,
            calls: Vec::new(),
            effects: Vec::new(),
            attempt: 1,
            seed,
            helper_calls: 0,
            reexecution,
            path: path.to_string(),
            step,
            mutated: Vec::new(),
        }
    }

    /// A retry re-runs the node from its first line: the counter restarts, answers stay.
    pub fn next_attempt(&mut self) {
        self.counter = 0;
        self.writes.clear();
        self.interrupt = None;
        self.attempt += 1;
        self.helper_calls = 0;
    }

    /// `interrupt(value)`: an answer, or `Err(NodeError::Interrupt)` to stop the node.
    pub fn interrupt(&mut self, value: Value) -> Result<Value, NodeError> {
        let idx = self.counter;
        self.counter += 1;
        if idx < self.resume.len() {
            let answer = self.resume[idx].clone();
            self.writes.push((
                "__resume__".into(),
                Value::Array(self.resume[..=idx].to_vec()),
            ));
            self.calls.push(InterruptCall::Replayed {
                index: idx,
                payload: value,
                answer: answer.clone(),
            });
            return Ok(answer);
        }
        if let Some(v) = self.null_resume.borrow_mut().take() {
            self.resume.push(v.clone());
            self.writes
                .push(("__resume__".into(), Value::Array(self.resume.clone())));
            self.calls.push(InterruptCall::Resumed {
                index: idx,
                payload: value,
                answer: v.clone(),
            });
            return Ok(v);
        }
        let it = Interrupt {
            value,
            id: interrupt_id(&self.task_ns, self.resume.len()),
            response_schema: Value::Nil,
        };
        self.calls.push(InterruptCall::Raised {
            index: idx,
            interrupt: it.clone(),
        });
        self.interrupt = Some(it);
        Err(NodeError::Interrupt)
    }

    pub fn effect(&mut self, name: &str, data: Value) {
        self.effects.push(Effect {
            name: name.to_string(),
            data,
            attempt: self.attempt,
        });
    }

    /// Next value of the helpers' deterministic stream (`random()`, `uuid4()`, `llm()`, `now()`):
    /// `xxh3_64("{seed}|{step}|{task path}|{attempt}|{call index}|{0 or 1: re-execution}|{salt}")`.
    /// A re-executed node (resumed, answers held) draws a different stream from its first run —
    /// which is what makes regenerated payloads visible — yet every run is reproducible.
    pub fn helper_u64(&mut self, salt: &str) -> u64 {
        let n = self.helper_calls;
        self.helper_calls += 1;
        let key = format!(
            "{}|{}|{}|{}|{}|{}|{}",
            self.seed,
            self.step,
            self.path,
            self.attempt,
            n,
            if self.reexecution { 1 } else { 0 },
            salt
        );
        xxhash_rust::xxh3::xxh3_64(key.as_bytes())
    }
}

/// The scratchpad's answers for a task (`_scratchpad`): its own stored RESUME list, plus its
/// answer from a resume map (by the id of its next interrupt, or legacy first id).
pub fn task_resume(
    pending: &[(String, String, Value)],
    task_id: &str,
    task_ns: &str,
    map: Option<&[(String, Value)]>,
) -> Vec<Value> {
    let mut resume = match pending
        .iter()
        .find(|(t, c, _)| t == task_id && c == "__resume__")
    {
        Some((_, _, Value::Array(a))) => a.clone(),
        Some((_, _, v)) => vec![v.clone()],
        None => Vec::new(),
    };
    if let Some(map) = map {
        let next_id = interrupt_id(task_ns, resume.len());
        let first_id = interrupt_id(task_ns, 0);
        if let Some((_, v)) = map.iter().find(|(k, _)| *k == next_id) {
            resume.push(v.clone());
        } else if let Some((_, v)) = map.iter().find(|(k, _)| *k == first_id) {
            resume.push(v.clone());
        }
    }
    resume
}

/// The step's plain resume value: the first NULL_TASK_ID RESUME write.
pub fn null_resume(pending: &[(String, String, Value)]) -> Option<Value> {
    pending
        .iter()
        .find(|(t, c, _)| t == NULL_TASK_ID && c == "__resume__")
        .map(|(_, _, v)| v.clone())
        .filter(|v| !v.is_nil())
}

/// `read_task_statuses`: per task id, (finished, latest interrupts).
pub struct Status {
    pub output: Vec<(String, Value)>,
    pub interrupts: Vec<Interrupt>,
    pub error: Option<Value>,
}

pub fn read_task_statuses(pending: &[(String, String, Value)]) -> Vec<(String, Status)> {
    let mut out: Vec<(String, Status)> = Vec::new();
    for (t, c, v) in pending {
        if t == NULL_TASK_ID {
            continue;
        }
        let i = match out.iter().position(|(k, _)| k == t) {
            Some(i) => i,
            None => {
                out.push((
                    t.clone(),
                    Status {
                        output: Vec::new(),
                        interrupts: Vec::new(),
                        error: None,
                    },
                ));
                out.len() - 1
            }
        };
        let st = &mut out[i].1;
        match c.as_str() {
            "__interrupt__" => match v {
                Value::Array(items) => st
                    .interrupts
                    .extend(items.iter().filter_map(Interrupt::from_value)),
                other => st.interrupts.extend(Interrupt::from_value(other)),
            },
            "__error__" => {
                if st.error.is_none() {
                    st.error = Some(v.clone())
                }
            }
            "__error_source_node__" | "__resume__" => {}
            _ => st.output.push((c.clone(), v.clone())),
        }
    }
    out
}

/// Ids of interrupts still waiting for an answer (`_pending_interrupts`).
pub fn pending_interrupts(pending: &[(String, String, Value)]) -> Vec<String> {
    let mut ids: Vec<String> = read_task_statuses(pending)
        .into_iter()
        .filter(|(_, s)| s.output.is_empty())
        .flat_map(|(_, s)| s.interrupts.into_iter().map(|i| i.id))
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

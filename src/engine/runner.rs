//! Running one task (`PregelRunner` + `run_with_retry`): the node's code, then its writers —
//! state updates (`_get_updates`), control (`_control_branch`), edges, waiting edges and
//! conditional edges — with LangGraph's retry rules.

use super::channels::{Channel, ChannelKind, ReduceWith, ReducerFn};
use super::checkpoint::State;
use super::graph::{Graph, Writer};
use super::interrupts::TaskContext;
use super::tasks::Task;
use super::{Arg, Failure, NodeCode, NodeError, NodeInput};
use crate::spec::model::{RetrySpec, END, START};
use crate::value::ext::Ext;
use crate::value::{Interrupt, Send};
use rmpv::Value;

/// How a task's execution ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Done,
    /// `Command(graph=PARENT)`: nothing is saved for the task; the command (graph cleared) goes
    /// to the parent graph's task.
    ParentCommand(Value),
    /// The task's interrupts (a subgraph can raise several; none for a subgraph breakpoint).
    Interrupted(Vec<Interrupt>),
    Failed(Failure),
}

pub struct Executed {
    /// `task.writes` at the end (RESUME writes + outputs), before the ERROR/INTERRUPT commit.
    pub writes: Vec<(String, Value)>,
    pub outcome: Outcome,
    pub attempts: u32,
}

struct CodeReducer<'a>(&'a dyn NodeCode);

impl ReduceWith for CodeReducer<'_> {
    fn reduce(&self, func: &str, current: &Value, update: &Value) -> Result<Value, String> {
        self.0.reduce(func, current, update)
    }
}

fn py_repr_value(v: &Value) -> String {
    super::py_repr(v)
}

/// Channels that describe what happened to a task rather than what it produced.
pub fn is_control(c: &str) -> bool {
    matches!(
        c,
        "__error__" | "__error_source_node__" | "__interrupt__" | "__resume__"
    )
}

/// The writes a node's writers make for a return value (the subgraph path: the subgraph's output
/// is the node's return value).
pub fn writes_for_return(
    graph: &Graph,
    state: &State,
    task: &Task,
    ret: &Value,
    code: &dyn NodeCode,
    cx: &mut TaskContext,
) -> Result<Vec<(String, Value)>, NodeError> {
    let mut writes = std::mem::take(&mut cx.writes);
    node_writes(graph, state, task, ret, code, cx, &mut writes)?;
    Ok(writes)
}

/// The writes `update_state` makes: `node`'s writers on `values`, the node itself not run.
pub fn writer_writes(
    graph: &Graph,
    state: &State,
    node: &str,
    values: &Value,
    code: &dyn NodeCode,
) -> Result<Vec<(String, Value)>, Failure> {
    let task = Task {
        id: String::new(),
        name: node.to_string(),
        path: Vec::new(),
        triggers: Vec::new(),
        input: None,
        task_ns: String::new(),
        writes: Vec::new(),
    };
    let null = std::rc::Rc::new(std::cell::RefCell::new(None));
    let mut cx = TaskContext::new("", "", node, Vec::new(), null, 0, "", 0);
    let mut writes = Vec::new();
    match node_writes(graph, state, &task, values, code, &mut cx, &mut writes) {
        Ok(()) => Ok(writes),
        Err(NodeError::Failed(f)) => Err(f),
        // `interrupt()` outside a task: LangGraph's lookup of the task's scratchpad fails
        Err(NodeError::Interrupt) => Err(Failure::new("KeyError", "__pregel_scratchpad")),
        Err(NodeError::ParentCommand(c)) => Err(Failure::new("ParentCommand", &command_repr(&c))),
    }
}

fn invalid_update(msg: &str) -> Failure {
    Failure::new("InvalidUpdateError", msg)
}

/// Python exception ancestry for the names `retry_on` / `default_retry_on` care about.
fn is_a(kind: &str, base: &str) -> bool {
    if kind == base || base == "Exception" {
        return true;
    }
    let parent = match kind {
        "ConnectionError" | "TimeoutError" | "FileNotFoundError" | "PermissionError" => "OSError",
        "ConnectionResetError"
        | "ConnectionRefusedError"
        | "ConnectionAbortedError"
        | "BrokenPipeError" => "ConnectionError",
        "ZeroDivisionError" | "OverflowError" | "FloatingPointError" => "ArithmeticError",
        "KeyError" | "IndexError" => "LookupError",
        "NotImplementedError" | "RecursionError" => "RuntimeError",
        "ModuleNotFoundError" => "ImportError",
        "UnicodeError" => "ValueError",
        "UnboundLocalError" => "NameError",
        _ => return false,
    };
    is_a(parent, base)
}

/// LangGraph's `default_retry_on`.
pub fn default_retry_on(kind: &str) -> bool {
    if is_a(kind, "ConnectionError") {
        return true;
    }
    ![
        "ValueError",
        "TypeError",
        "ArithmeticError",
        "ImportError",
        "LookupError",
        "NameError",
        "SyntaxError",
        "RuntimeError",
        "ReferenceError",
        "StopIteration",
        "StopAsyncIteration",
        "OSError",
    ]
    .iter()
    .any(|b| is_a(kind, b))
}

fn should_retry(policy: &RetrySpec, kind: &str) -> bool {
    match &policy.retry_on {
        None => default_retry_on(kind),
        Some(list) => list.iter().any(|b| is_a(kind, b)),
    }
}

/// Run a task to the end of its writers, with retries.
pub fn run_task(
    graph: &Graph,
    state: &State,
    task: &Task,
    code: &dyn NodeCode,
    cx: &mut TaskContext,
) -> Executed {
    let node = graph.node(&task.name).expect("tasks name graph nodes");
    let mut attempts = 0u32;
    loop {
        attempts += 1;
        if attempts > 1 {
            cx.next_attempt();
        }
        let result = match &node.func {
            None => Ok(task.input.clone().unwrap_or(Value::Nil)),
            Some(f) => {
                let mut input = task.node_input(state, graph);
                // a retry reads what an earlier attempt changed in place
                if let NodeInput::State(entries) = &mut input {
                    for (k, a) in entries.iter_mut() {
                        if let Some((_, now)) = cx.mutated.iter().rev().find(|(m, _)| m == k) {
                            *a = Arg::Owned(now.clone());
                        }
                    }
                }
                code.call_node(f, &input, cx)
            }
        };
        // `task.writes`: what the node's interrupts sent, then what its writers wrote — kept
        // when a writer (a conditional edge) fails or interrupts part way, as LangGraph keeps
        // them in the task
        let mut writes: Vec<(String, Value)> = Vec::new();
        let result = result.and_then(|ret| {
            writes = std::mem::take(&mut cx.writes);
            node_writes(graph, state, task, &ret, code, cx, &mut writes)
        });
        writes.append(&mut cx.writes);
        match result {
            Ok(()) => {
                return Executed {
                    writes,
                    outcome: Outcome::Done,
                    attempts,
                }
            }
            // a GraphBubbleUp: not retried, no ERROR row
            Err(NodeError::ParentCommand(c)) => {
                return Executed {
                    writes: Vec::new(),
                    outcome: Outcome::ParentCommand(c),
                    attempts,
                };
            }
            Err(NodeError::Interrupt) => {
                let it = cx.interrupt.clone().expect("interrupt sets its payload");
                return Executed {
                    writes,
                    outcome: Outcome::Interrupted(vec![it]),
                    attempts,
                };
            }
            Err(NodeError::Failed(f)) => {
                let retry = node.retry.as_ref().filter(|p| should_retry(p, &f.kind));
                if let Some(p) = retry {
                    if attempts < p.max_attempts {
                        continue;
                    }
                }
                return Executed {
                    writes,
                    outcome: Outcome::Failed(f),
                    attempts,
                };
            }
        }
    }
}

fn command_fields(v: &Value) -> Option<Vec<(String, Value)>> {
    let Value::Ext(code, data) = v else {
        return None;
    };
    match Ext::parse(*code, data) {
        Ext::Constructor {
            module,
            name,
            arg: Value::Map(m),
            ..
        } if module == "langgraph.types" && name == "Command" => Some(
            m.into_iter()
                .filter_map(|(k, v)| k.as_str().map(|k| (k.to_string(), v)))
                .collect(),
        ),
        _ => None,
    }
}

/// The first `Command(graph=PARENT)` in a node's return value, with `graph` cleared (LangGraph
/// re-targets it at the parent's namespace, where it is an ordinary command).
fn parent_command(ret: &Value) -> Option<Value> {
    let items = match ret {
        Value::Array(a) => a.as_slice(),
        v => std::slice::from_ref(v),
    };
    items.iter().find_map(|v| {
        let f = command_fields(v)?;
        (field(&f, "graph").as_str() == Some("__parent__")).then(|| {
            let fields = f
                .into_iter()
                .map(|(k, v)| {
                    let v = if k == "graph" { Value::Nil } else { v };
                    (Value::from(k), v)
                })
                .collect();
            crate::value::ext::constructor(
                2,
                "langgraph.types",
                "Command",
                Value::Map(fields),
                None,
            )
        })
    })
}

/// `repr(command)`: Python's `Command.__repr__` lists the truthy fields in declaration order.
pub fn command_repr(cmd: &Value) -> String {
    let f = command_fields(cmd).unwrap_or_default();
    let truthy = |v: &Value| match v {
        Value::Nil => false,
        Value::Boolean(b) => *b,
        Value::Integer(i) => i.as_i64() != Some(0),
        Value::F64(x) => *x != 0.0,
        Value::String(s) => !s.as_bytes().is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Map(m) => !m.is_empty(),
        _ => true,
    };
    let parts: Vec<String> = ["graph", "update", "resume", "goto"]
        .iter()
        .filter(|k| truthy(field(&f, k)))
        .map(|k| format!("{k}={}", py_repr_value(field(&f, k))))
        .collect();
    format!("Command({})", parts.join(", "))
}

fn field<'a>(fields: &'a [(String, Value)], k: &str) -> &'a Value {
    static NIL: Value = Value::Nil;
    fields
        .iter()
        .find(|(f, _)| f == k)
        .map(|(_, v)| v)
        .unwrap_or(&NIL)
}

/// `Command._update_as_tuples`.
fn update_tuples(update: &Value) -> Vec<(String, Value)> {
    match update {
        Value::Nil => Vec::new(),
        Value::Map(m) => m
            .iter()
            .filter_map(|(k, v)| k.as_str().map(|k| (k.to_string(), v.clone())))
            .collect(),
        Value::Array(a)
            if a.iter().all(
                |p| matches!(p, Value::Array(kv) if kv.len() == 2 && kv[0].as_str().is_some()),
            ) =>
        {
            a.iter()
                .map(|p| match p {
                    Value::Array(kv) => (kv[0].as_str().unwrap().to_string(), kv[1].clone()),
                    _ => unreachable!(),
                })
                .collect()
        }
        other => vec![("__root__".into(), other.clone())],
    }
}

/// `_get_updates`: the state writes of a node's return value.
fn get_updates(graph: &Graph, ret: &Value) -> Result<Vec<(String, Value)>, Failure> {
    let keep = |k: &str| graph.is_state_key(k);
    match ret {
        Value::Nil => Ok(Vec::new()),
        Value::Map(m) => Ok(m
            .iter()
            .filter_map(|(k, v)| {
                k.as_str()
                    .filter(|k| keep(k))
                    .map(|k| (k.to_string(), v.clone()))
            })
            .collect()),
        v if command_fields(v).is_some() => {
            let f = command_fields(v).unwrap();
            if field(&f, "graph").as_str() == Some("__parent__") {
                return Ok(Vec::new());
            }
            Ok(update_tuples(field(&f, "update"))
                .into_iter()
                .filter(|(k, _)| keep(k))
                .collect())
        }
        Value::Array(items) if items.iter().any(|i| command_fields(i).is_some()) => {
            let mut out = Vec::new();
            for i in items {
                out.extend(get_updates(graph, i)?);
            }
            Ok(out)
        }
        // an object with annotated fields (`Send` has `node: str`, `arg: Any`): its attributes
        // named like state keys are written, unless None (`get_update_as_tuples`)
        v if Send::from_value(v).is_some() => {
            let send = Send::from_value(v).unwrap();
            Ok(graph
                .state_keys
                .iter()
                .filter_map(|k| match k.as_str() {
                    "node" => Some((k.clone(), Value::from(send.node.as_str()))),
                    "arg" if !send.arg.is_nil() => Some((k.clone(), send.arg.clone())),
                    _ => None,
                })
                .collect())
        }
        other => Err(invalid_update(&super::error_message(
            &format!("Expected dict, got {}", super::py_str(other)),
            "INVALID_GRAPH_NODE_RETURN_VALUE",
        ))),
    }
}

/// `_control_branch`: `Send` / `Command.goto` -> writes.
fn control_writes(ret: &Value) -> Result<Vec<(String, Value)>, Failure> {
    if Send::from_value(ret).is_some() {
        return Ok(vec![("__pregel_tasks".into(), ret.clone())]);
    }
    let commands: Vec<Vec<(String, Value)>> = match ret {
        Value::Array(items) => items.iter().filter_map(command_fields).collect(),
        v => command_fields(v).into_iter().collect(),
    };
    let mut out = Vec::new();
    // a Command(graph=PARENT) never gets here: node_writes hands it up first
    for c in commands {
        let goto = field(&c, "goto");
        let targets: Vec<Value> = match goto {
            Value::Array(a) => a.clone(),
            Value::Nil => Vec::new(),
            other => vec![other.clone()],
        };
        for g in targets {
            if Send::from_value(&g).is_some() {
                out.push(("__pregel_tasks".into(), g));
            } else if let Some(s) = g.as_str() {
                if s != END {
                    out.push((format!("branch:to:{s}"), Value::Nil));
                }
            }
        }
    }
    Ok(out)
}

/// The state a conditional edge reads: current channels with this task's writes applied locally
/// (`local_read(fresh=True)`). Keys the task did not write are borrowed; an `add` list with
/// appended items is passed as a concatenation, not copied.
fn fresh_state<'a>(
    graph: &'a Graph,
    state: &'a State,
    writes: &[(String, Value)],
    mutated: &[(String, Value)],
    code: &dyn NodeCode,
) -> Result<NodeInput<'a>, Failure> {
    let reducer = CodeReducer(code);
    let mut out: Vec<(&'a str, Arg<'a>)> = Vec::new();
    for k in &graph.state_keys {
        let Some(ch) = state.channel(k) else { continue };
        let vals: Vec<&Value> = writes
            .iter()
            .filter(|(c, _)| c == k)
            .map(|(_, v)| v)
            .collect();
        // the node changed this value in place: the channel holds the changed object
        if let Some((_, now)) = mutated.iter().rev().find(|(m, _)| m == k) {
            let mut copy: Channel = ch.clone();
            copy.content = super::channels::Content::Value(now.clone());
            let owned: Vec<Value> = vals.into_iter().cloned().collect();
            copy.update(&owned, Some(&reducer))
                .map_err(|e| invalid_update(&e.to_string()))?;
            if let Some(v) = copy.get() {
                out.push((k.as_str(), Arg::Owned(v)));
            }
            continue;
        }
        if vals.is_empty() {
            if ch.is_available() {
                if let Some(v) = ch.value_ref() {
                    out.push((k.as_str(), Arg::Ref(v)));
                }
            }
            continue;
        }
        let is_add = matches!(
            &ch.kind,
            ChannelKind::Reducer {
                reducer: ReducerFn::Add,
                ..
            }
        );
        if let (true, Some(Value::Array(cur))) = (is_add, ch.value_ref()) {
            if vals.iter().all(|v| matches!(v, Value::Array(_))) {
                let more: Vec<Value> = vals
                    .iter()
                    .flat_map(|v| match v {
                        Value::Array(a) => a.clone(),
                        _ => Vec::new(),
                    })
                    .collect();
                out.push((k.as_str(), Arg::Concat(cur, more)));
                continue;
            }
        }
        // a DeltaChannel with `operator.add`: `state + [w1, w2]`, each write one item
        let is_delta_add = matches!(
            &ch.kind,
            ChannelKind::Delta {
                reducer: ReducerFn::Add,
                ..
            }
        );
        if let (true, Some(Value::Array(cur))) = (is_delta_add, ch.value_ref()) {
            if vals
                .iter()
                .all(|v| crate::value::ext::overwrite_value(v).is_none())
            {
                out.push((
                    k.as_str(),
                    Arg::Concat(cur, vals.into_iter().cloned().collect()),
                ));
                continue;
            }
        }
        let owned: Vec<Value> = vals.into_iter().cloned().collect();
        let mut copy: Channel = ch.clone();
        copy.update(&owned, Some(&reducer))
            .map_err(|e| invalid_update(&e.to_string()))?;
        if let Some(v) = copy.get() {
            out.push((k.as_str(), Arg::Owned(v)));
        }
    }
    Ok(NodeInput::State(out))
}

fn node_writes(
    graph: &Graph,
    state: &State,
    task: &Task,
    ret: &Value,
    code: &dyn NodeCode,
    cx: &mut TaskContext,
    writes: &mut Vec<(String, Value)>,
) -> Result<(), NodeError> {
    let fail = NodeError::Failed;
    if let Some(c) = parent_command(ret) {
        // `_control_branch` raises ParentCommand before any edge is taken
        return Err(NodeError::ParentCommand(c));
    }
    writes.extend(get_updates(graph, ret).map_err(fail)?);
    writes.extend(control_writes(ret).map_err(fail)?);
    let node = graph.node(&task.name).unwrap();
    for w in &node.writers {
        match w {
            Writer::Edge(ch) => writes.push((ch.clone(), Value::Nil)),
            Writer::Join(ch) => writes.push((ch.clone(), Value::from(task.name.as_str()))),
            Writer::Branch { path, path_map } => {
                let fresh = fresh_state(graph, state, writes, &cx.mutated, code).map_err(fail)?;
                let result = code.call_path(path, &fresh, cx);
                // an interrupt() in the path function sends its RESUME into the task's writes
                // here, between the node's writes and the branch's
                writes.append(&mut cx.writes);
                let result = result?;
                let results = match result {
                    Value::Array(a) => a,
                    other => vec![other],
                };
                let mut dests: Vec<Value> = Vec::new();
                for r in results {
                    if Send::from_value(&r).is_some() {
                        dests.push(r);
                        continue;
                    }
                    match path_map {
                        Some(m) => match m.iter().find(|(k, _)| *k == r) {
                            Some((_, d)) => dests.push(Value::from(d.as_str())),
                            None => return Err(fail(Failure::new("KeyError", &py_repr_value(&r)))),
                        },
                        None => dests.push(r),
                    }
                }
                for d in &dests {
                    if d.is_nil() || d.as_str() == Some(START) {
                        return Err(fail(Failure::new(
                            "ValueError",
                            "Branch did not return a valid destination",
                        )));
                    }
                    if Send::from_value(d).is_some_and(|s| s.node == END) {
                        return Err(fail(invalid_update("Cannot send a packet to the END node")));
                    }
                }
                for d in dests {
                    if Send::from_value(&d).is_some() {
                        writes.push(("__pregel_tasks".into(), d));
                    } else if let Some(s) = d.as_str() {
                        if s != END {
                            writes.push((format!("branch:to:{s}"), Value::Nil));
                        }
                    } else {
                        return Err(fail(Failure::new(
                            "ValueError",
                            "Branch did not return a valid destination",
                        )));
                    }
                }
            }
        }
    }
    Ok(())
}

//! Rows-equal suite for the Python bridge: every scenario of tests/bridge/scenarios.json runs
//! twice with real LangGraph —
//!
//! * straight: `tests/bridge/straight.py` (plain `invoke` / `Command` / `update_state` calls);
//! * stepped: through superstep's bridge (`PythonSource`), one superstep at a time, exactly as
//!   the TUI's `n` drives it (`run(.., steps: Some(0))`, then `steps: Some(1)` until a pause);
//!
//! and the two checkpoint files must hold the same rows, normalised like the differential suite
//! (every task / interrupt id recomputed from the file's own checkpoint ids, then labelled).
//!
//! These need Python with LangGraph: they are `#[ignore]`d, and `.ci/run` runs them with
//! `--ignored` and `SUPERSTEP_TEST_PYTHON` set to the pinned venv. Without it they fail loudly.
//!
//! The `pg_*` twins run the same scenarios on Postgres (tests/postgres/ci.sh, with
//! `SUPERSTEP_TEST_PG` a role that may create databases): the straight run on `PostgresSaver`
//! (`AsyncPostgresSaver` for async graphs) in one fresh database, the bridge on its own
//! `PostgresSaver` in another — superstep writes no row there either — and the rows compared,
//! PostgresSaver's blob layout included.

use crate::common;

use crate::common::bridge::{bridge_dir as here, python, scenario as scenario_json};
use common::bridge::fresh_pg;
use common::normalize::{first_diff, Normalizer};
use serde_json::{json, Value as Json};
use std::path::Path;
use superstep::bridge::{GraphRef, Interpreter, PythonSource};
use superstep::inspect::Thread;
use superstep::source::{inner_name, GraphSource, Input, Pause, RunOutcome, RunRequest, Start};
use superstep::spec::model::Breakpoints;
use superstep::store::{Mode, Store};
use superstep::value::{to_view, ViewOptions};

/// The op's breakpoints as superstep names them: the root's (`key`), then those inside
/// subgraphs (`sub_<key>`: path -> nodes or `"*"`) as `inner|ask` / `inner|*`.
fn breaks(op: &Json, key: &str) -> Breakpoints {
    let mut names: Vec<String> = op
        .get(key)
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .map(|x| x.as_str().unwrap().to_string())
        .collect();
    for (path, v) in op
        .get(format!("sub_{key}"))
        .and_then(Json::as_object)
        .into_iter()
        .flatten()
    {
        match v {
            Json::String(s) if s == "*" => names.push(inner_name(path, "*")),
            Json::Array(a) => names.extend(a.iter().map(|n| inner_name(path, n.as_str().unwrap()))),
            other => panic!("{key}: bad subgraph breakpoints {other}"),
        }
    }
    if names.is_empty() {
        Breakpoints::None
    } else {
        Breakpoints::Nodes(names)
    }
}

/// The exception class a run ended with, as the straight run records it.
fn outcome(out: &RunOutcome) -> Option<Result<(), String>> {
    if let Some(e) = &out.error {
        let m = e.to_string();
        let class = m.split(':').next().unwrap_or(&m).trim().to_string();
        return Some(Err(class));
    }
    match out.reports.last().and_then(|r| r.pause.as_ref()) {
        None => None,
        Some(Pause::Error(_, repr)) => Some(Err(repr.split('(').next().unwrap().to_string())),
        Some(Pause::RecursionLimit(_)) => Some(Err("GraphRecursionError".into())),
        Some(_) => Some(Ok(())),
    }
}

/// One op, stepped: start the run (LangGraph's `_first`), then one superstep per call.
fn stepped(
    src: &mut PythonSource,
    thread: &str,
    input: Input,
    checkpoint: Option<String>,
    op: &Json,
) -> (Result<(), String>, usize) {
    let (before, after) = (breaks(op, "break_before"), breaks(op, "break_after"));
    // a breakpoint switched on while the run is paused, after this many supersteps
    let live = op["live_after_steps"].as_u64().map(|n| n as usize);
    let before_at = |steps: usize| match live {
        Some(n) if steps < n => Breakpoints::None,
        _ => before.clone(),
    };
    let mut out = src.run(RunRequest {
        thread: thread.into(),
        start: Start::Fresh { input, checkpoint },
        steps: Some(0),
        before: before_at(0),
        after: after.clone(),
    });
    let mut steps = out.reports.len();
    loop {
        if let Some(r) = outcome(&out) {
            return (r, steps);
        }
        out = src.run(RunRequest {
            thread: thread.into(),
            start: Start::Continue,
            steps: Some(1),
            before: before_at(steps),
            after: after.clone(),
        });
        assert!(
            !out.reports.is_empty() || out.error.is_some(),
            "a step that reports nothing"
        );
        steps += out.reports.len();
        assert!(steps < 200, "runaway stepping");
    }
}

fn root_checkpoint(db: &Path, thread: &str, n: usize) -> String {
    let store = Store::open(db, Mode::ReadOnly).unwrap();
    let mut ids: Vec<String> = store
        .history(thread, "", None, usize::MAX)
        .unwrap()
        .into_iter()
        .map(|r| r.checkpoint_id)
        .collect();
    ids.reverse();
    ids[n].clone()
}

/// The newest namespace of `thread` whose node path is `path` (`inner`, `mid|leaf`), and its
/// checkpoint ids, oldest first.
fn namespace(db: &Path, thread: &str, path: &str) -> (String, Vec<String>) {
    let store = Store::open(db, Mode::ReadOnly).unwrap();
    let want: Vec<&str> = path.split('|').collect();
    let mut best: Option<(String, Vec<String>)> = None;
    for ns in store.namespaces(thread).unwrap() {
        let names: Vec<&str> = ns
            .split('|')
            .map(|s| s.split(':').next().unwrap())
            .collect();
        if ns.is_empty() || names != want {
            continue;
        }
        let mut ids: Vec<String> = store
            .history(thread, &ns, None, usize::MAX)
            .unwrap()
            .into_iter()
            .map(|r| r.checkpoint_id)
            .collect();
        ids.reverse();
        if best.as_ref().is_none_or(|(_, b)| b.last() < ids.last()) {
            best = Some((ns, ids));
        }
    }
    best.unwrap_or_else(|| panic!("no namespace {path} on thread {thread}"))
}

/// Interrupt id pending in `node`'s task on the thread's latest checkpoint.
fn pending_id(src: &PythonSource, db: &Path, thread: &str, node: &str) -> String {
    let store = Store::open(db, Mode::ReadOnly).unwrap();
    let th = Thread::open(&store, thread, "", src.topology("")).unwrap();
    let snap = th.show(None).unwrap();
    snap.tasks
        .iter()
        .find(|t| t.name == node && !t.interrupts.is_empty())
        .map(|t| t.interrupts[0].id.clone())
        .unwrap_or_else(|| panic!("no interrupt pending in {node}"))
}

/// The root's next nodes, the tasks waiting on an interrupt (both sorted) and the values on the
/// thread's latest checkpoint, as superstep reads them from the bridge's file.
fn observe(src: &PythonSource, db: &Path, thread: &str) -> (Json, Json, Json) {
    let store = Store::open(db, Mode::ReadOnly).unwrap();
    let th = Thread::open(&store, thread, "", src.topology("")).unwrap();
    let snap = th.show(None).unwrap();
    let mut next = snap.next.clone();
    next.sort();
    let values: serde_json::Map<String, Json> = snap
        .values
        .iter()
        .map(|(k, v)| (k.clone(), to_view(v, ViewOptions::default())))
        .collect();
    // a graph whose values are one channel's bare value (a functional-API entrypoint)
    let values = if snap.root_value {
        values
            .into_iter()
            .next()
            .map(|(_, v)| v)
            .unwrap_or(Json::Null)
    } else {
        Json::Object(values)
    };
    let mut waiting: Vec<String> = snap
        .tasks
        .iter()
        .filter(|t| !t.interrupts.is_empty())
        .map(|t| t.name.clone())
        .collect();
    waiting.sort();
    (json!(next), json!(waiting), values)
}

fn value(j: &Json) -> Json {
    j.clone()
}

/// `postgres`: both runs on fresh Postgres databases instead of SQLite files.
fn play(name: &str, postgres: bool) {
    let py = python();
    let scen = scenario_json(name);
    let dir = tempfile::tempdir().unwrap();
    let (straight_db, bridge_db) = if postgres {
        (
            fresh_pg(&format!("br_{name}_straight")),
            fresh_pg(&format!("br_{name}_bridge")),
        )
    } else {
        (
            dir.path().join("straight.sqlite"),
            dir.path().join("bridge.sqlite"),
        )
    };
    let events = dir.path().join("straight.events.json");
    // every test sets the same value; LangGraph's set-ordered edge writes follow it
    std::env::set_var("PYTHONHASHSEED", "0");

    let st = std::process::Command::new(&py)
        .arg(here().join("straight.py"))
        .arg(name)
        .arg(&straight_db)
        .arg(&events)
        .env("PYTHONHASHSEED", "0")
        .output()
        .expect("run the straight Python run");
    assert!(
        st.status.success(),
        "straight.py {name} failed: {}",
        String::from_utf8_lossy(&st.stderr)
    );
    let want_events: Json =
        serde_json::from_str(&std::fs::read_to_string(&events).unwrap()).unwrap();

    let reference = here().join(scen["graph"].as_str().unwrap());
    let GraphRef::Python(r) = GraphRef::parse_flag(reference.to_str().unwrap()).unwrap() else {
        panic!("not a Python reference")
    };
    let interp = Interpreter {
        path: py.clone(),
        why: "SUPERSTEP_TEST_PYTHON",
    };
    let mut src = PythonSource::open(r, interp, Some(&bridge_db)).expect("the bridge loads");
    let mut got_events = Vec::new();
    let mut i = 0;
    for th in scen["threads"].as_array().unwrap() {
        let thread = th["thread"].as_str().unwrap();
        for op in th["ops"].as_array().unwrap() {
            // the op's context and config, as `--context` / `--config` give them
            let pick = |k: &str| {
                [op, th, &scen]
                    .into_iter()
                    .find_map(|x| x.get(k))
                    .filter(|v| !v.is_null())
                    .map(|v| v.to_string())
            };
            let settings = superstep::source::RunSettings::from_args(
                pick("config").as_deref(),
                None,
                pick("context").as_deref(),
                None,
            )
            .unwrap();
            src.configure(&settings)
                .expect("the bridge takes the settings");
            let r = match op["op"].as_str().unwrap() {
                "update" | "replay" | "resume" if op.get("ns").is_some() => {
                    // a subgraph's checkpoint (--ns), as the CLI's update / replay /
                    // resume --checkpoint address it
                    let (ns, ids) = namespace(&bridge_db, thread, op["ns"].as_str().unwrap());
                    let cp = op["checkpoint"].as_u64().map(|n| ids[n as usize].clone());
                    match op["op"].as_str().unwrap() {
                        "update" => {
                            let values = (!op["values"].is_null()).then(|| value(&op["values"]));
                            let as_node = superstep::source::AsNode::parse(
                                op.get("as_node").and_then(Json::as_str),
                            );
                            src.update_state_in(thread, &ns, cp.as_deref(), values, as_node)
                                .map(|_| ())
                                .map_err(|e| e.to_string().split(':').next().unwrap().to_string())
                        }
                        kind => {
                            let input = if kind == "resume" {
                                Input::resume(value(&op["value"]))
                            } else {
                                Input::Continue
                            };
                            let out = src.run_in(
                                RunRequest {
                                    thread: thread.into(),
                                    start: Start::Fresh {
                                        input,
                                        checkpoint: cp,
                                    },
                                    steps: None,
                                    before: breaks(op, "break_before"),
                                    after: breaks(op, "break_after"),
                                },
                                &ns,
                            );
                            outcome(&out).unwrap_or(Ok(()))
                        }
                    }
                }
                "run" => {
                    stepped(
                        &mut src,
                        thread,
                        Input::Value(value(&op["input"])),
                        None,
                        op,
                    )
                    .0
                }
                "continue" => stepped(&mut src, thread, Input::Continue, None, op).0,
                "resume" => {
                    let input = if let Some(ids) = op.get("ids").and_then(Json::as_object) {
                        Input::resume_map(
                            ids.iter()
                                .map(|(node, v)| {
                                    (pending_id(&src, &bridge_db, thread, node), value(v))
                                })
                                .collect(),
                        )
                    } else {
                        Input::resume(value(&op["value"]))
                    };
                    stepped(&mut src, thread, input, None, op).0
                }
                "replay" => {
                    let cp = root_checkpoint(
                        &bridge_db,
                        thread,
                        op["checkpoint"].as_u64().unwrap() as usize,
                    );
                    stepped(&mut src, thread, Input::Continue, Some(cp), op).0
                }
                "update" => {
                    let values = (!op["values"].is_null()).then(|| value(&op["values"]));
                    let as_node =
                        superstep::source::AsNode::parse(op.get("as_node").and_then(Json::as_str));
                    // a fork of an older root checkpoint (the time-travel guide's edit)
                    let cp = op["checkpoint"]
                        .as_u64()
                        .map(|n| root_checkpoint(&bridge_db, thread, n as usize));
                    src.update_state(thread, cp.as_deref(), values, as_node)
                        .map(|_| ())
                        .map_err(|e| e.to_string().split(':').next().unwrap().to_string())
                }
                other => panic!("unknown op {other}"),
            };
            let mut ev = match r {
                Ok(()) => json!({"op": i, "outcome": "ok"}),
                Err(class) => json!({"op": i, "error": class}),
            };
            if scen["observe"] == true {
                let (next, waiting, values) = observe(&src, &bridge_db, thread);
                ev["next"] = next;
                ev["waiting"] = waiting;
                ev["values"] = values;
            }
            got_events.push(ev);
            i += 1;
        }
    }
    assert_eq!(
        Json::Array(got_events),
        want_events,
        "{name}: op outcomes differ (stepped through the bridge vs straight)"
    );
    let norm = Normalizer::from_topology(&src.info.topology);
    drop(src);
    if scen["store"] == true {
        // the memory the graph kept: LangGraph's store in each file, the same items
        let mut a = common::normalize::store_items(&straight_db);
        let mut b = common::normalize::store_items(&bridge_db);
        common::normalize::relabel_random_ids(&mut a);
        common::normalize::relabel_random_ids(&mut b);
        assert!(
            a.as_array().is_some_and(|x| !x.is_empty()),
            "{name}: no store items compared"
        );
        assert_eq!(
            b, a,
            "{name}: store items differ (superstep = stepped, langgraph = straight)"
        );
    }
    let mut a = norm.normalize(&straight_db);
    let mut b = norm.normalize(&bridge_db);
    for x in [&mut a, &mut b] {
        common::normalize::null_raced_message_ids(x);
        common::normalize::relabel_random_ids(x);
    }
    assert!(
        !a.to_string().contains("MISMATCH") && !b.to_string().contains("MISMATCH"),
        "{name}: an id does not recompute:\n{}",
        serde_json::to_string_pretty(&b).unwrap()
    );
    if let Some(d) = first_diff(&b, &a, "") {
        panic!("{name}: rows differ (superstep = stepped through the bridge, langgraph = straight run)\n{d}");
    }
    // the suite must compare something
    assert!(
        a.to_string().contains("\"C1\""),
        "{name}: no checkpoints were compared"
    );
    if postgres {
        // PostgresSaver's own layout was part of the comparison
        assert!(
            a.to_string().contains("\"referenced_by\""),
            "{name}: no blob rows compared"
        );
    }
}

macro_rules! scenarios {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        #[ignore = "needs Python with LangGraph: .ci/run runs it (SUPERSTEP_TEST_PYTHON)"]
        fn $name() {
            play(stringify!($name), false);
        }
    )*};
}

/// The same scenarios on Postgres (`pg_<name>`).
macro_rules! pg_scenarios {
    ($($name:ident => $scenario:literal),* $(,)?) => {$(
        #[test]
        #[ignore = "needs Python with LangGraph and a Postgres server: tests/postgres/ci.sh runs it (SUPERSTEP_TEST_PYTHON, SUPERSTEP_TEST_PG)"]
        fn $name() {
            play($scenario, true);
        }
    )*};
}

scenarios!(
    linear,
    conditional,
    interrupt_resume,
    parallel_by_id,
    compiled_breakpoint,
    runtime_breakpoints,
    live_breakpoint,
    time_travel,
    update_state_as_node,
    send,
    subgraph_interrupt,
    subgraph_breakpoint,
    subgraph_step,
    subgraph_runtime_break,
    nested_subgraph_break,
    subgraph_ns,
    nested_ns_update,
    error_retry,
    async_graph,
    factory,
    factory_context_manager,
    own_checkpointer,
    prebuilt_agent,
    react_agent,
    template_react_agent,
    follow_up_turn,
    memory_agent,
    memory_config,
    functional,
);

pg_scenarios!(
    pg_linear => "linear",
    pg_conditional => "conditional",
    pg_interrupt_resume => "interrupt_resume",
    pg_parallel_by_id => "parallel_by_id",
    pg_compiled_breakpoint => "compiled_breakpoint",
    pg_runtime_breakpoints => "runtime_breakpoints",
    pg_live_breakpoint => "live_breakpoint",
    pg_time_travel => "time_travel",
    pg_update_state_as_node => "update_state_as_node",
    pg_send => "send",
    pg_subgraph_interrupt => "subgraph_interrupt",
    pg_error_retry => "error_retry",
    pg_async_graph => "async_graph",
    pg_factory => "factory",
    pg_factory_context_manager => "factory_context_manager",
    pg_own_checkpointer => "own_checkpointer",
    pg_subgraph_breakpoint => "subgraph_breakpoint",
    pg_subgraph_step => "subgraph_step",
    pg_subgraph_runtime_break => "subgraph_runtime_break",
    pg_nested_subgraph_break => "nested_subgraph_break",
    pg_subgraph_ns => "subgraph_ns",
    pg_nested_ns_update => "nested_ns_update",
    pg_prebuilt_agent => "prebuilt_agent",
    pg_react_agent => "react_agent",
    pg_template_react_agent => "template_react_agent",
    pg_memory_agent => "memory_agent",
    pg_memory_config => "memory_config",
    pg_functional => "functional",
);

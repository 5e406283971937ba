//! Failures of the Python bridge are clear and lose nothing.
//!
//! Without Python (run by `cargo test`): a bad reference, a missing file, an interpreter that does
//! not exist — one line, exit 2, no file written.
//!
//! With Python (`#[ignore]`d; `.ci/run` runs them with `SUPERSTEP_TEST_PYTHON`): an import error,
//! a missing attribute, an interpreter without langgraph, output printed at import time, a hung
//! node cancelled (interrupted, or killed when it ignores the interrupt), the bridge killed under
//! the TUI (it stays open, read-only, and says why).

use crate::common;

use crate::common::bridge::python;
use common::superstep;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use superstep::bridge::{GraphRef, Interpreter, PythonRef, PythonSource};
use superstep::source::{GraphSource, Input, RunOutcome, RunRequest, Start};
use superstep::spec::model::Breakpoints;

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn bad_references_exit_2_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.sqlite");
    let db_s = db.to_str().unwrap();
    for (r, want) in [
        ("missing.py:graph", "missing.py: no such file"),
        ("pkg.mod:1x", "\"1x\" is not a Python attribute name"),
        ("no-colon", "expected a graph spec (.json)"),
    ] {
        let o = superstep(&["--db", db_s, "run", r, "-t", "t1", "--input", "{}"]);
        assert_eq!(o.status.code(), Some(2), "{r}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{r}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "one line: {}", stderr(&o));
    }
    // an interpreter that does not exist: named, with how to choose another
    let app = dir.path().join("app.py");
    std::fs::write(&app, "graph = None\n").unwrap();
    let r = format!("{}:graph", app.display());
    let o = superstep(&[
        "--db",
        db_s,
        "run",
        &r,
        "-t",
        "t1",
        "--python",
        "/nonexistent/python3",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("/nonexistent/python3 (--python): cannot run it"),
        "{e}"
    );
    assert!(
        e.contains("choose another interpreter with --python PATH"),
        "{e}"
    );
    // a langgraph.json naming several graphs wants an id
    let cfg = dir.path().join("langgraph.json");
    std::fs::write(
        &cfg,
        r#"{"graphs": {"a": "./app.py:graph", "b": "./app.py:graph"}}"#,
    )
    .unwrap();
    let o = superstep(&["graph", cfg.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("2 graphs (a, b): name one"),
        "{}",
        stderr(&o)
    );
    let o = superstep(&["graph", cfg.to_str().unwrap(), "c"]);
    assert!(
        stderr(&o).contains("no graph \"c\" (graphs: a, b)"),
        "{}",
        stderr(&o)
    );
    assert!(!db.exists(), "nothing may be written");
}

// ---- with Python -------------------------------------------------------------------------------

fn graphs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bridge/graphs")
}

fn reference(file: &str, attr: &str) -> PythonRef {
    let r = format!("{}:{attr}", graphs().join(file).display());
    match GraphRef::parse(&r, None).unwrap() {
        GraphRef::Python(p) => p,
        _ => unreachable!(),
    }
}

fn open(file: &str, attr: &str, db: &Path) -> PythonSource {
    let py = Interpreter {
        path: python(),
        why: "SUPERSTEP_TEST_PYTHON",
    };
    PythonSource::open(reference(file, attr), py, Some(db)).expect("loads")
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn import_errors_missing_attributes_and_interpreters_without_langgraph() {
    let dir = tempfile::tempdir().unwrap();
    let py = python();
    let py = py.to_str().unwrap();
    let bad = dir.path().join("bad.py");
    std::fs::write(
        &bad,
        "print('hello')\nimport no_such_module_here\ngraph = None\n",
    )
    .unwrap();
    let o = superstep(&["graph", &format!("{}:graph", bad.display()), "--python", py]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("ModuleNotFoundError: No module named 'no_such_module_here'"),
        "{e}"
    );
    assert!(
        e.contains("bad.py:2 in <module>"),
        "the last traceback frame: {e}"
    );
    assert!(e.contains(&format!("interpreter {py} (--python)")), "{e}");
    assert!(e.contains("choose another with --python PATH"), "{e}");
    let o = superstep(&[
        "graph",
        &format!("{}:grph", graphs().join("linear.py").display()),
        "--python",
        py,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("has no attribute 'grph' (it defines:"),
        "{}",
        stderr(&o)
    );
    // a Python without langgraph: a bare venv
    let venv = dir.path().join("bare");
    let ok = std::process::Command::new(py)
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .unwrap();
    assert!(ok.success());
    let bare = venv.join("bin/python");
    let o = superstep(&[
        "graph",
        &format!("{}:graph", graphs().join("linear.py").display()),
        "--python",
        bare.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("cannot import langgraph: ModuleNotFoundError"),
        "{e}"
    );
    assert!(e.contains(&bare.display().to_string()), "{e}");
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn output_printed_at_import_and_in_nodes_is_captured_not_mixed_into_the_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("o.sqlite");
    let mut src = open("linear.py", "graph", &db);
    let input = serde_json::json!({"topic": "a b c", "log": []});
    let out = src.run(request(
        "t",
        Start::Fresh {
            input: Input::Value(input),
            checkpoint: None,
        },
    ));
    assert!(out.error.is_none(), "{:?}", out.error);
    let import: Vec<_> = out.output.iter().filter(|o| o.task_id.is_empty()).collect();
    assert!(
        import.iter().any(|o| o.text == "linear.py imported\n"),
        "{:?}",
        out.output
    );
    let node: Vec<_> = out.output.iter().filter(|o| o.node == "research").collect();
    assert_eq!(node.len(), 1, "{:?}", out.output);
    assert_eq!(node[0].text, "researching a b c\n");
    assert_eq!(node[0].attempt, 1);
    let research = out
        .reports
        .iter()
        .flat_map(|r| &r.tasks)
        .find(|t| t.name == "research")
        .unwrap();
    assert_eq!(node[0].task_id, research.id);
}

/// A run of `thread` from `start` to the next pause, no breakpoints.
fn request(thread: &str, start: Start) -> RunRequest {
    RunRequest {
        thread: thread.into(),
        start,
        steps: None,
        before: Breakpoints::None,
        after: Breakpoints::None,
    }
}

fn wait(src: &mut PythonSource, limit: Duration) -> RunOutcome {
    let t = Instant::now();
    loop {
        if let Some(o) = src.poll() {
            return o;
        }
        assert!(t.elapsed() < limit, "no outcome within {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// How many checkpoints the thread has and the newest's id (`(0, "")` before the schema exists).
fn latest(db: &Path, thread: &str) -> (i64, String) {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row(
        "SELECT COUNT(*), COALESCE(MAX(checkpoint_id), '') FROM checkpoints WHERE thread_id=?1",
        [thread],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap_or((0, String::new()))
}

fn hung_node_is_cancelled(attr: &str, killed: bool) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.sqlite");
    let mut src = open("slow.py", attr, &db);
    let mark = dir.path().join("started");
    let input = serde_json::json!({"seconds": 3600, "log": [], "mark": mark.to_str().unwrap()});
    src.begin(request(
        "t",
        Start::Fresh {
            input: Input::Value(input),
            checkpoint: None,
        },
    ));
    // until every slow node sleeps (each touches `started.<node>`); 120 s is a hang guard
    let sleepers: &[&str] = if attr == "parallel" {
        &["sleepy", "other"]
    } else {
        &["sleepy"]
    };
    let asleep = || {
        sleepers
            .iter()
            .all(|n| dir.path().join(format!("started.{n}")).exists())
    };
    let t = Instant::now();
    while !asleep() {
        assert!(src.poll().is_none(), "the run ended early");
        assert!(t.elapsed() < Duration::from_secs(120), "hang");
        std::thread::sleep(Duration::from_millis(50));
    }
    let before = latest(&db, "t");
    let pid = src.bridge_pid().unwrap();
    let asked = Instant::now();
    src.cancel();
    let out = wait(&mut src, Duration::from_secs(120));
    let took = asked.elapsed();
    let e = out.error.expect("a cancelled run says so").to_string();
    assert!(e.contains("cancelled"), "{e}");
    if killed {
        assert!(e.contains("killed"), "{e}");
        // a lower bound: the grace period was given (load can only lengthen it)
        assert!(
            took >= Duration::from_secs(3),
            "killed after the grace period: {took:?}"
        );
    } else {
        // SIGINT stopped the sleeping node: it was not killed after the grace period
        assert!(!e.contains("killed"), "SIGINT stops a sleeping node: {e}");
    }
    // the old bridge is gone
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "bridge {pid} still running"
    );
    // the file keeps the last committed checkpoint, and nothing after it
    assert_eq!(latest(&db, "t"), before);
    // the next operation starts a new bridge and works
    let input = serde_json::json!({"seconds": 0, "log": []});
    let out = src.run(request(
        "t2",
        Start::Fresh {
            input: Input::Value(input),
            checkpoint: None,
        },
    ));
    assert!(out.error.is_none(), "{:?}", out.error);
    assert!(src.gone().is_none());
    assert_ne!(src.bridge_pid(), Some(pid));
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn a_hung_node_is_interrupted() {
    hung_node_is_cancelled("graph", false);
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn a_hung_node_that_ignores_the_interrupt_is_killed() {
    hung_node_is_cancelled("parallel", true);
}

/// A time travel from a subgraph checkpoint (`t` inside a namespace the TUI opened, `replay
/// --ns`) is begun like any run: the TUI keeps polling (spinner, keys answered) and Esc cancels
/// a node that hangs there. It used to block in `run_in` until the node returned.
#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn a_run_from_a_subgraph_checkpoint_is_polled_and_cancellable() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("n.sqlite");
    let mut src = open("slow.py", "nested", &db);
    let input = serde_json::json!({"seconds": 0, "log": []});
    let out = src.run(request(
        "t",
        Start::Fresh {
            input: Input::Value(input),
            checkpoint: None,
        },
    ));
    assert!(out.error.is_none(), "{:?}", out.error);
    let (ns, first): (String, String) = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE thread_id='t' AND checkpoint_ns != ''
             ORDER BY checkpoint_id LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(ns.starts_with("inner:"), "{ns}");
    let pid = src.bridge_pid().unwrap();
    let pending = src.begin_in(
        request(
            "t",
            Start::Fresh {
                input: Input::Continue,
                checkpoint: Some(first),
            },
        ),
        &ns,
    );
    assert!(
        pending.is_none(),
        "the run was not begun: {:?}",
        pending.map(|o| o.error)
    );
    // wake hangs: the run stays pending while the caller keeps polling
    let t = Instant::now();
    while t.elapsed() < Duration::from_millis(1500) {
        assert!(src.poll().is_none(), "the run ended while wake sleeps");
        std::thread::sleep(Duration::from_millis(50));
    }
    src.cancel();
    let out = wait(&mut src, Duration::from_secs(120));
    let e = out.error.expect("a cancelled run says so").to_string();
    assert!(e.contains("cancelled"), "{e}");
    assert!(
        !e.contains("killed"),
        "SIGINT stops the sleeping subgraph node: {e}"
    );
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "bridge {pid} still running"
    );
    // a namespace run without a checkpoint is answered at once, not begun
    let refused = src.begin_in(request("t", Start::Continue), &ns);
    let e = refused
        .expect("answered at once")
        .error
        .unwrap()
        .to_string();
    assert!(e.contains("starts from one of its checkpoints"), "{e}");
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn the_bridge_killed_under_the_tui_leaves_it_open_read_only() {
    use superstep::app::effects::Runtime;
    use superstep::app::App;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.sqlite");
    let mut src = open("interrupt.py", "graph", &db);
    src.open_db().unwrap();
    let pid = src.bridge_pid().unwrap();
    let rt = Runtime::with_source(&db, Box::new(src)).unwrap();
    let mut app = App::debug(rt);
    app.start(None);
    app.dispatch(superstep::app::action::Action::Command(
        "new t1 {\"request\": \"pay\"}".into(),
    ));
    app.settle();
    let _ = std::process::Command::new("kill")
        .arg("-9")
        .arg(pid.to_string())
        .status();
    // until the kernel says it is dead (a zombie until superstep reaps it, or gone)
    let t = Instant::now();
    while std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(false)
    {
        assert!(
            t.elapsed() < Duration::from_secs(120),
            "kill -9 {pid} hangs"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    app.dispatch(superstep::app::action::Action::Step);
    app.settle();
    let msg = app.state.message.clone().expect("a message").text;
    assert!(msg.contains("the Python bridge exited"), "{msg}");
    assert!(msg.contains("read-only"), "{msg}");
    assert!(!app.state.quit);
    // still answering: another step says the same, moving around works
    app.dispatch(superstep::app::action::Action::Step);
    app.settle();
    let msg = app.state.message.clone().unwrap().text;
    assert!(msg.contains("the Python bridge exited"), "{msg}");
    app.dispatch(superstep::app::action::Action::Down);
}

//! `--break-when EXPR`: a conditional breakpoint pauses a spec graph and its Python twin
//! (tests/bridge/graphs/twin_loop.py, built from graphs/loop.json by tests/differential/twin.py)
//! at the same step, with the same state; and a run paused there and continued (the same run,
//! as the TUI goes on with it) writes the rows of a straight run — for the twin, a plain
//! LangGraph `invoke` (ids normalised, as the differential suite compares them).

use crate::common::bridge::python;
use crate::common::normalize::{first_diff, Normalizer};
use crate::common::{dir_state, stderr, stdout, superstep};
use serde_json::Value as Json;
use std::path::Path;
use superstep::bridge::{GraphRef, Interpreter, PythonSource};
use superstep::compare::breaker;
use superstep::compare::expr::Expr;
use superstep::engine::source::SpecSource;
use superstep::source::{GraphSource, Input, Pause, RunRequest, Start};
use superstep::spec::model::Breakpoints;

const SPEC: &str = "graphs/loop.json";
const EXPR: &str = "len(log) == 3 and note == \"at 3\"";

fn repo(p: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(p)
        .to_string_lossy()
        .into_owned()
}

/// `superstep ARGS --db DB --json` (the run must succeed).
fn json_run(args: &[&str], db: &Path) -> Json {
    let mut a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    a.extend([
        "--db".into(),
        db.to_string_lossy().into_owned(),
        "--json".into(),
    ]);
    let refs: Vec<&str> = a.iter().map(String::as_str).collect();
    let o = superstep(&refs);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)))
}

fn request(start: Start) -> RunRequest {
    RunRequest {
        thread: "t".into(),
        start,
        steps: None,
        before: Breakpoints::None,
        after: Breakpoints::None,
    }
}

fn input() -> Input {
    Input::Value(serde_json::json!({"n": 0, "limit": 5}))
}

/// Through the graph-source seam, as the TUI drives it: run until the expression holds, then
/// go on with the same run to the end. Returns where it paused and the state there.
fn break_then_continue(src: &mut dyn GraphSource, db: &Path) -> (i64, Json) {
    let expr = Expr::compile(EXPR, &src.shape().state_keys).unwrap();
    let topo = src.topology("");
    let b = breaker::run_until(
        src,
        request(Start::Fresh {
            input: input(),
            checkpoint: None,
        }),
        "",
        &expr,
        |id| breaker::read_scope(db, topo.clone(), "t", id),
    );
    assert!(b.outcome.error.is_none(), "{:?}", b.outcome.error);
    assert!(b.errors.is_empty(), "{:?}", b.errors);
    let hit = b.hit.expect("the expression held");
    assert_eq!(hit.value.repr, "True");
    let scope = breaker::read_scope(db, topo, "t", &hit.checkpoint).unwrap();
    let values: serde_json::Map<String, Json> = scope.values.into_iter().collect();
    let rest = src.run(request(Start::Continue));
    assert!(rest.error.is_none(), "{:?}", rest.error);
    assert_eq!(
        rest.reports.last().and_then(|r| r.pause.clone()),
        Some(Pause::Done)
    );
    (hit.step, Json::Object(values))
}

fn rows(db: &Path) -> Json {
    let lg = superstep::engine::loaded::load(Path::new(&repo(SPEC))).unwrap();
    Normalizer::new(&lg).normalize(db)
}

fn same_rows(paused: &Path, straight: &Path, what: &str) {
    let (a, b) = (rows(paused), rows(straight));
    if let Some(d) = first_diff(&a, &b, "") {
        panic!("{what}: paused + continued differs from a straight run:\n{d}");
    }
    assert!(
        a.to_string().contains("\"C6\""),
        "{what}: the rows were compared"
    );
}

#[test]
fn a_spec_graph_pauses_when_the_expression_holds_and_its_rows_equal_a_straight_run() {
    let dir = tempfile::tempdir().unwrap();
    let (paused, straight) = (dir.path().join("p.sqlite"), dir.path().join("s.sqlite"));
    let lg = superstep::engine::loaded::load(Path::new(&repo(SPEC))).unwrap();
    let (step, values) = break_then_continue(&mut SpecSource::new(&lg, &paused), &paused);
    assert_eq!(step, 3);
    assert_eq!(
        values["log"],
        serde_json::json!(["step 1", "step 2", "step 3"])
    );
    let out = SpecSource::new(&lg, &straight).run(request(Start::Fresh {
        input: input(),
        checkpoint: None,
    }));
    assert_eq!(
        out.reports.last().and_then(|r| r.pause.clone()),
        Some(Pause::Done)
    );
    same_rows(&paused, &straight, "spec");
}

#[test]
fn on_the_command_line_it_pauses_like_steps_would_there() {
    // the CLI ends the process at the pause: `continue` is then a new invoke(None), as after
    // `--steps`; the rows are those of `run --steps 4` + `continue`
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.sqlite"), dir.path().join("b.sqlite"));
    let first = json_run(&["run", &repo(SPEC), "-t", "t", "--break-when", EXPR], &a);
    assert_eq!(first["pause"]["kind"], "break_when", "{first:#}");
    assert_eq!(first["pause"]["step"], 3);
    assert_eq!(first["pause"]["expr"], EXPR);
    assert_eq!(first["steps"].as_array().unwrap().len(), 4);
    assert_eq!(first["values"]["note"], "at 3");
    let done = json_run(&["continue", &repo(SPEC), "-t", "t"], &a);
    assert_eq!(done["pause"]["kind"], "done");
    json_run(&["run", &repo(SPEC), "-t", "t", "--steps", "4"], &b);
    json_run(&["continue", &repo(SPEC), "-t", "t"], &b);
    same_rows(&a, &b, "CLI");
    // the human line
    let c = dir.path().join("c.sqlite");
    let o = superstep(&[
        "run",
        &repo(SPEC),
        "-t",
        "t",
        "--db",
        &c.to_string_lossy(),
        "--break-when",
        EXPR,
    ]);
    assert!(
        stdout(&o)
            .contains("paused: break when len(log) == 3 and note == \"at 3\" (after step 3: True)"),
        "{}",
        stdout(&o)
    );
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn the_python_twin_pauses_at_the_same_step_and_its_rows_equal_a_straight_run() {
    let py = python();
    let dir = tempfile::tempdir().unwrap();
    let (paused, straight) = (dir.path().join("p.sqlite"), dir.path().join("s.sqlite"));
    let lg = superstep::engine::loaded::load(Path::new(&repo(SPEC))).unwrap();
    let spec_db = dir.path().join("spec.sqlite");
    let (spec_step, spec_values) =
        break_then_continue(&mut SpecSource::new(&lg, &spec_db), &spec_db);
    let twin = format!("{}:graph", repo("tests/bridge/graphs/twin_loop.py"));
    let GraphRef::Python(r) = GraphRef::parse_flag(&twin).unwrap() else {
        panic!("not a Python reference")
    };
    let interp = Interpreter {
        path: py.clone(),
        why: "SUPERSTEP_TEST_PYTHON",
    };
    let mut src = PythonSource::open(r, interp, Some(&paused)).expect("the bridge loads the twin");
    let (step, values) = break_then_continue(&mut src, &paused);
    drop(src);
    assert_eq!(step, spec_step, "the step where each paused");
    assert_eq!(values, spec_values, "the state where each paused");
    // the straight run: plain LangGraph, invoke() on a SqliteSaver
    let script = format!(
        "import sqlite3, sys\nsys.path.insert(0, {graphs:?})\nfrom langgraph.checkpoint.sqlite import SqliteSaver\nimport twin_loop\n\
         saver = SqliteSaver(sqlite3.connect({db:?}, check_same_thread=False))\n\
         g = twin_loop.graph.copy(update={{'checkpointer': saver}})\n\
         g.invoke({{'n': 0, 'limit': 5}}, {{'configurable': {{'thread_id': 't'}}}})\n",
        graphs = repo("tests/bridge/graphs"),
        db = straight.to_string_lossy(),
    );
    let o = std::process::Command::new(&py)
        .arg("-c")
        .arg(&script)
        .env("PYTHONHASHSEED", "0")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    same_rows(&paused, &straight, "Python twin");
    // and on the command line
    let cli = dir.path().join("cli.sqlite");
    let o = superstep(&[
        "run",
        &twin,
        "-t",
        "t",
        "--db",
        &cli.to_string_lossy(),
        "--python",
        &py.to_string_lossy(),
        "--break-when",
        EXPR,
        "--json",
        "--input",
        r#"{"n": 0, "limit": 5}"#,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: Json = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(j["pause"]["kind"], "break_when", "{j:#}");
    assert_eq!(j["pause"]["step"], spec_step);
}

#[test]
fn a_bad_expression_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.sqlite");
    let db_s = db.to_string_lossy().into_owned();
    for (expr, want) in [
        (
            "len(lg) > 2",
            "column 5: Variable `lg` not found, did you mean `log`?",
        ),
        ("n >", "column 4: Parse error"),
        ("n = 3", "expected one expression"),
    ] {
        let o = superstep(&[
            "run",
            &repo(SPEC),
            "-t",
            "t",
            "--db",
            &db_s,
            "--break-when",
            expr,
        ]);
        assert_eq!(o.status.code(), Some(2), "{expr}");
        let err = stderr(&o);
        assert!(err.contains(want), "{expr}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!db.exists(), "{expr}: the file was created");
    }
    // on an existing thread: byte-identical afterwards
    let o = superstep(&["run", &repo(SPEC), "-t", "t", "--db", &db_s, "--steps", "2"]);
    assert!(o.status.success());
    let before = dir_state(dir.path());
    let o = superstep(&[
        "continue",
        &repo(SPEC),
        "-t",
        "t",
        "--db",
        &db_s,
        "--break-when",
        "nn",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(dir_state(dir.path()), before);
}

#[test]
fn an_expression_that_fails_on_a_state_counts_as_false_and_says_so_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.sqlite");
    let o = superstep(&[
        "run",
        &repo(SPEC),
        "-t",
        "t",
        "--db",
        &db.to_string_lossy(),
        "--break-when",
        "log[3] == \"step 4\"",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("paused: break when log[3] == \"step 4\" (after step 4: True)"),
        "{}",
        stdout(&o)
    );
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("failed on the states after steps 0–3 (counted as false): column 1: Index `3` is out of bound"),
        "{err}"
    );
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn the_tui_breaks_a_python_graph_when_the_expression_holds() {
    let py = python();
    let dir = tempfile::tempdir().unwrap();
    let twin = format!("{}:graph", repo("tests/bridge/graphs/twin_loop.py"));
    let keys = r#"N <C-u>{"n":0,"limit":5}<Enter> :break<Space>when<Space>len(log)<Space>==<Space>3 <Enter> c"#;
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_superstep"))
        .current_dir(dir.path())
        .args([
            &twin,
            "--db",
            "tui.sqlite",
            "--print",
            "--size",
            "120x30",
            "--keys",
            keys,
        ])
        .arg("--python")
        .arg(&py)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let screen = stdout(&o);
    assert!(
        screen.contains("break when len(log) == 3: held after step 3 (True), 4 supersteps"),
        "{screen}"
    );
    assert!(screen.contains("State · step 3 (loop)"), "{screen}");
}

#[test]
fn resume_and_replay_take_break_when_too() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.sqlite");
    let spec = repo("graphs/countdown.json");
    let first = json_run(&["run", &spec, "-t", "t"], &db);
    assert_eq!(first["pause"]["kind"], "interrupt", "{first:#}");
    // the resume runs on past the answered interrupt and stops where n == 7
    let r = json_run(
        &[
            "resume",
            &spec,
            "-t",
            "t",
            "--value",
            "true",
            "--break-when",
            "n == 7",
        ],
        &db,
    );
    assert_eq!(r["pause"]["kind"], "break_when", "{r:#}");
    assert_eq!(r["values"]["n"], 7);
    assert_eq!(r["values"]["approvals"], serde_json::json!(["5:True"]));
    // a replay from step 2 forks and stops where n == 4 on the fork
    let store = superstep::store::Store::open(&db, superstep::store::Mode::ReadOnly).unwrap();
    let at2 = store
        .history("t", "", None, 100)
        .unwrap()
        .into_iter()
        .find(|r| r.metadata["step"] == 2)
        .unwrap()
        .checkpoint_id;
    drop(store);
    let r = json_run(
        &[
            "replay",
            &spec,
            "-t",
            "t",
            "--checkpoint",
            &at2,
            "--break-when",
            "n == 4",
        ],
        &db,
    );
    assert_eq!(r["pause"]["kind"], "break_when", "{r:#}");
    assert_eq!(r["values"]["n"], 4);
    // the fork checkpoint is step 3 (LangGraph's replay), so n == 4 is reached at step 5
    assert_eq!(r["metadata"]["step"], 5);
    assert_eq!(r["pause"]["step"], 5);
}

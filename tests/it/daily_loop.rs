//! The daily debugging loop on a Python graph (issue 20): follow-up turns, reload, tracebacks,
//! exit codes, the CLI streaming its supersteps, `.env` precedence, and the smaller items.
//!
//! Tests that run Python are `#[ignore]`d: `.ci/run` runs them with `--ignored` and
//! `SUPERSTEP_TEST_PYTHON` set to the pinned venv. Without it they fail loudly.

use crate::common::bridge::python;
use crate::common::{stderr, stdout, superstep};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use superstep::bridge::{GraphRef, Interpreter, PythonSource};

fn graphs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bridge/graphs")
}

/// superstep with the pinned Python, in `dir`.
fn ss(dir: &Path, args: &[&str]) -> Output {
    ss_env(dir, args, &[])
}

fn ss_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_superstep"));
    c.current_dir(dir)
        .args(args)
        .arg("--python")
        .arg(python())
        .env("NO_COLOR", "1")
        .env("PYTHONHASHSEED", "0");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run superstep")
}

fn json_of(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", stdout(o), stderr(o)))
}

// ---- no Python needed ---------------------------------------------------------------------------

/// The piped overview's hint names the `--db` it was given (it said `history --thread T`, which
/// reads the demo DB instead); without `--db` the hint needs none.
#[test]
fn the_overview_hint_repeats_the_db() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("my runs.sqlite");
    std::fs::copy(crate::common::fixture("linear.sqlite"), &db).unwrap();
    let o = superstep(&["--db", db.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let hint = stdout(&o).lines().last().unwrap().to_string();
    assert!(
        hint.contains(&format!("history --thread T --db '{}'", db.display())),
        "{hint}"
    );
    let o = superstep(&[]);
    let hint = stdout(&o).lines().last().unwrap().to_string();
    assert!(
        hint.contains("history --thread T ") && !hint.contains("--db"),
        "{hint}"
    );
}

/// `run --help` is about graphs, Python ones included (it said "Run a graph spec").
#[test]
fn run_help_is_not_only_about_specs() {
    let o = superstep(&["run", "--help"]);
    let help = stdout(&o);
    assert!(!help.contains("Run a graph spec"), "{help}");
    assert!(help.contains("Python"), "{help}");
}

// ---- Python -------------------------------------------------------------------------------------

/// A variable exported in the shell wins over langgraph.json's `.env` (python-dotenv's
/// `load_dotenv` and `langgraph dev` keep the shell's); one only in `.env` is set.
#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn shell_variables_win_over_dotenv() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(graphs().join("envapp.py"), dir.path().join("envapp.py")).unwrap();
    std::fs::write(
        dir.path().join(".env"),
        "APP_MODEL=from-dotenv\nAPP_REGION=from-dotenv\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("langgraph.json"),
        r#"{"dependencies": ["."], "graphs": {"app": "./envapp.py:graph"}, "env": ".env"}"#,
    )
    .unwrap();
    let o = ss_env(
        dir.path(),
        &[
            "run",
            "langgraph.json",
            "-t",
            "t1",
            "--db",
            "e.sqlite",
            "--input",
            "{}",
            "--json",
        ],
        &[("APP_MODEL", "from-shell")],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json_of(&o);
    assert_eq!(j["values"]["model"], "from-shell", "{j}");
    assert_eq!(j["values"]["region"], "from-dotenv", "{j}");
}

/// `-t NAME` on a Python graph whose thread does not exist yet: `N` proposes NAME (it proposed
/// `t1`); the status line says "the graph's input", not "the spec's input".
#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn the_t_name_is_proposed_for_a_new_thread() {
    let dir = tempfile::tempdir().unwrap();
    let g = graphs().join("linear.py:graph");
    let g = g.to_str().unwrap();
    let o = ss(
        dir.path(),
        &[
            g, "--db", "t.sqlite", "-t", "mine", "--print", "--keys", "N",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("thread: mine"), "{}", stdout(&o));
    let o = ss(dir.path(), &[g, "--db", "u.sqlite", "--print"]);
    let f = stdout(&o);
    assert!(
        f.contains("the graph's input") && !f.contains("spec's input"),
        "{f}"
    );
}

/// A node that raises after its retries: the step line, then its traceback with the app's own
/// frame first (`at …/retry.py:N in strict`), in the human output and in `--json`
/// (`steps[].tasks[].traceback`; `path` a list like the snapshot's); exit code 3 (it was 0).
#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn a_node_error_shows_its_traceback_and_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let g = graphs().join("retry.py:graph");
    let g = g.to_str().unwrap();
    let input = r#"{"service_up": false, "log": []}"#;
    let o = ss(
        dir.path(),
        &["run", g, "-t", "t1", "--db", "r.sqlite", "--input", input],
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.contains("strict  error ValueError('service down')"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        lines[i + 1].contains("! at ")
            && lines[i + 1].contains("tests/bridge/graphs/retry.py:")
            && lines[i + 1].ends_with("in strict"),
        "{out}"
    );
    assert!(
        out.contains("! Traceback (most recent call last):"),
        "{out}"
    );
    assert!(
        out.contains("!     raise ValueError(\"service down\")"),
        "{out}"
    );
    assert!(out.contains("paused: error in strict"), "{out}");
    let o = ss(
        dir.path(),
        &[
            "run", g, "-t", "t2", "--db", "r.sqlite", "--input", input, "--json",
        ],
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let j = json_of(&o);
    let tasks: Vec<&serde_json::Value> = j["steps"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["tasks"].as_array().unwrap())
        .collect();
    let strict = tasks.iter().find(|t| t["name"] == "strict").unwrap();
    let tb = strict["traceback"].as_str().unwrap();
    assert!(
        tb.starts_with("at ")
            && tb.contains("retry.py:")
            && tb.contains("ValueError: service down"),
        "{tb}"
    );
    assert_eq!(
        strict["path"],
        serde_json::json!(["__pregel_pull", "strict"])
    );
    // the snapshot's own tasks[].path has the same shape
    assert_eq!(j["tasks"][0]["path"], strict["path"]);
    assert!(tasks
        .iter()
        .all(|t| t.get("traceback").is_none() || t["name"] == "strict"));
}

/// A run that ends in InvalidUpdateError (two nodes write one plain key in a superstep): the
/// supersteps committed before it are printed (nothing was), then the error and its traceback on
/// stderr; exit code 3. `--json` holds the steps and `error`.
#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn invalid_update_error_prints_the_committed_supersteps() {
    let dir = tempfile::tempdir().unwrap();
    let g = graphs().join("conflict.py:graph");
    let g = g.to_str().unwrap();
    let o = ss(
        dir.path(),
        &[
            "run",
            g,
            "-t",
            "t1",
            "--db",
            "c.sqlite",
            "--input",
            r#"{"log": []}"#,
        ],
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("step   0  __start__  done"), "{out}");
    assert!(out.contains("step   1  prepare  done"), "{out}");
    let err = stderr(&o);
    assert!(
        err.contains("superstep: the run ended on an error: InvalidUpdateError: At key 'winner'"),
        "{err}"
    );
    assert!(err.contains("Traceback (most recent call last):"), "{err}");
    let o = ss(
        dir.path(),
        &[
            "run",
            g,
            "-t",
            "t2",
            "--db",
            "c.sqlite",
            "--input",
            r#"{"log": []}"#,
            "--json",
        ],
    );
    assert_eq!(o.status.code(), Some(3));
    let j = json_of(&o);
    assert_eq!(j["steps"].as_array().unwrap().len(), 2, "{j}");
    assert!(j["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("InvalidUpdateError"));
    assert!(j["error"]["traceback"]
        .as_str()
        .unwrap()
        .contains("InvalidUpdateError"));
    assert_eq!(j["values"]["log"], serde_json::json!(["prepared"]));
}

/// Read a child's stdout as it comes.
fn collect(mut r: impl std::io::Read + Send + 'static) -> std::sync::Arc<std::sync::Mutex<String>> {
    let buf = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let b = buf.clone();
    std::thread::spawn(move || {
        let mut chunk = [0u8; 4096];
        while let Ok(n) = r.read(&mut chunk) {
            if n == 0 {
                break;
            }
            b.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&chunk[..n]));
        }
    });
    buf
}

/// Wait (hang guard: 120 s) until `cond` holds.
fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !cond() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// `run` on a graph whose second node hangs: the first superstep is on stdout while the node
/// still runs (nothing was printed before the end); the signal cancels the run, superstep says
/// which checkpoint the thread keeps and exits 128 + N; no bridge temp directory is left.
fn hung_run_is_streamed_then_interrupted(group: bool, sig: i32) {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let mark = dir.path().join("mark");
    let input = serde_json::json!({"seconds": 600, "log": [], "mark": mark.to_str().unwrap()});
    let g = graphs().join("slow.py:graph");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_superstep"));
    cmd.current_dir(dir.path())
        .args([
            "run",
            g.to_str().unwrap(),
            "-t",
            "t1",
            "--db",
            "s.sqlite",
            "--input",
        ])
        .arg(input.to_string())
        .arg("--python")
        .arg(python())
        .env("NO_COLOR", "1")
        .env("TMPDIR", &tmp)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    if group {
        // as a terminal's Ctrl-C: the signal goes to the whole foreground process group
        cmd.process_group(0);
    }
    let mut child = cmd.spawn().unwrap();
    let out = collect(child.stdout.take().unwrap());
    let err = collect(child.stderr.take().unwrap());
    wait_until("the slow node to start", || {
        mark.with_extension("sleepy").exists()
    });
    wait_until("the committed superstep on stdout", || {
        out.lock().unwrap().contains("step   1  quick  done")
    });
    assert!(child.try_wait().unwrap().is_none(), "the run ended early");
    let pid = child.id() as i32;
    unsafe {
        libc::kill(if group { -pid } else { pid }, sig);
    }
    let status = child.wait().unwrap();
    wait_until("stderr to close", || Arc::strong_count(&err) == 1);
    let (out, err) = (out.lock().unwrap().clone(), err.lock().unwrap().clone());
    assert_eq!(status.code(), Some(128 + sig), "{out}\n{err}");
    assert!(
        err.contains("superstep: interrupted by")
            && err.contains("the thread keeps its last committed checkpoint")
            && err.contains("(step 1)"),
        "{err}"
    );
    // what the hung node printed before it was cut short
    assert!(out.contains("(cut short, not committed)"), "{out}");
    assert!(out.contains("sleepy: going to sleep"), "{out}");
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "left in the temp dir: {left:?}");
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn ctrl_c_on_a_hung_run_says_what_was_kept() {
    hung_run_is_streamed_then_interrupted(true, libc::SIGINT);
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn sigterm_on_a_hung_run_says_what_was_kept() {
    hung_run_is_streamed_then_interrupted(false, libc::SIGTERM);
}

/// A run that stops where it should exits 0; a bad input is refused with exit 2.
#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn exit_codes_of_runs_that_pause_and_of_refused_ones() {
    let dir = tempfile::tempdir().unwrap();
    let g = graphs().join("interrupt.py:graph");
    let g = g.to_str().unwrap();
    let o = ss(
        dir.path(),
        &[
            "run",
            g,
            "-t",
            "t1",
            "--db",
            "i.sqlite",
            "--input",
            r#"{"request": "pay Bob"}"#,
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("paused: interrupt"), "{}", stdout(&o));
    let o = ss(
        dir.path(),
        &[
            "run",
            g,
            "-t",
            "t2",
            "--db",
            "i.sqlite",
            "--input",
            "{not json",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
}

/// `db`'s rows are a straight Python run's of the three turns of tests/bridge/scenarios.json's
/// follow_up_turn (`invoke({"messages": [{"role": "user", "content": …}]}, config)` three times,
/// tests/bridge/straight.py), normalised as bridge_rows does (uuid4 message ids labelled).
fn assert_rows_of_the_straight_turns(db: &Path, dir: &Path) {
    use crate::common::normalize::{
        first_diff, null_raced_message_ids, relabel_random_ids, Normalizer,
    };
    let straight = dir.join("straight.sqlite");
    let st = Command::new(python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bridge/straight.py"))
        .arg("follow_up_turn")
        .arg(&straight)
        .arg(dir.join("events.json"))
        .env("PYTHONHASHSEED", "0")
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let g = graphs().join("chat.py:graph");
    let GraphRef::Python(r) = GraphRef::parse(g.to_str().unwrap(), None).unwrap() else {
        panic!()
    };
    let interp = Interpreter {
        path: python(),
        why: "SUPERSTEP_TEST_PYTHON",
    };
    let src = PythonSource::open(r, interp, None).unwrap();
    let norm = Normalizer::from_topology(&src.info.topology);
    let mut a = norm.normalize(&straight);
    let mut b = norm.normalize(db);
    for x in [&mut a, &mut b] {
        null_raced_message_ids(x);
        relabel_random_ids(x);
    }
    assert!(
        b.to_string().contains("\"R3\""),
        "three human message ids labelled"
    );
    if let Some(d) = first_diff(&b, &a, "") {
        panic!("rows differ (superstep's turns vs a straight run's)\n{d}");
    }
    assert!(a.to_string().contains("where is order 42?"));
}

/// The TUI's follow-up turn: `N` starts the conversation, `M` sends each next message as just its
/// text; every turn is stepped with `n`. The rows are a straight run's of the same three turns.
#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn a_follow_up_turn_in_the_tui_leaves_the_rows_of_a_straight_run() {
    let dir = tempfile::tempdir().unwrap();
    let g = graphs().join("chat.py:graph");
    let keys = concat!(
        r#"N <C-u>{"messages":[{"role":"user","content":"hello"}]}<Enter> 9n "#,
        "M where<Space>is<Space>order<Space>42?<Enter> 9n ",
        "M thanks<Enter> 9n"
    );
    let o = ss(
        dir.path(),
        &[
            g.to_str().unwrap(),
            "--db",
            "tui.sqlite",
            "-t",
            "t1",
            "--print",
            "--keys",
            keys,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let frame = stdout(&o);
    assert!(frame.contains("done: no task is triggered"), "{frame}");
    assert_rows_of_the_straight_turns(&dir.path().join("tui.sqlite"), dir.path());
}

/// The CLI's follow-up turns: `run -t T` on the existing thread, the text given with `--message`
/// (the same as `--input '{"messages": [{"role": "user", "content": …}]}'`).
#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn follow_up_turns_from_the_cli_leave_the_rows_of_a_straight_run() {
    let dir = tempfile::tempdir().unwrap();
    let g = graphs().join("chat.py:graph");
    let g = g.to_str().unwrap();
    let turn = |extra: &[&str]| {
        let mut a = vec!["run", g, "-t", "t1", "--db", "cli.sqlite"];
        a.extend_from_slice(extra);
        let o = ss(dir.path(), &a);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        stdout(&o)
    };
    turn(&[
        "--input",
        r#"{"messages": [{"role": "user", "content": "hello"}]}"#,
    ]);
    let out = turn(&["--message", "where is order 42?"]);
    assert!(out.contains("step   5  lookup  done"), "{out}");
    turn(&["--message", "thanks"]);
    assert_rows_of_the_straight_turns(&dir.path().join("cli.sqlite"), dir.path());
}

// ---- reload -------------------------------------------------------------------------------------

const APP: &str = r#"from typing import TypedDict

from langgraph.graph import END, START, StateGraph

import helper


class State(TypedDict):
    n: int


def first(state: State):
    return {"n": state["n"] + 1}


def second(state: State):
    return {"n": helper.double(state["n"])}


b = StateGraph(State)
b.add_node("first", first)
b.add_node("second", second)
b.add_edge(START, "first")
b.add_edge("first", "second")
b.add_edge("second", END)
graph = b.compile()
"#;

const HELPER_BROKEN: &str = "def double(n):\n    raise NotImplementedError(\"double\")\n";
const HELPER_FIXED: &str = "def double(n):\n    return n * 2\n";

/// An app of two modules in `dir`: `second` calls `helper.double`, which raises until fixed.
fn two_module_app(dir: &Path) -> String {
    std::fs::write(dir.join("app.py"), APP).unwrap();
    std::fs::write(dir.join("helper.py"), HELPER_BROKEN).unwrap();
    dir.join("app.py:graph").display().to_string()
}

/// Rewrite a file with a modification time of its own (a file system with coarse timestamps
/// could otherwise keep the old one).
fn rewrite(p: &Path, text: &str) {
    std::fs::write(p, text).unwrap();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(2);
    std::fs::File::options()
        .write(true)
        .open(p)
        .unwrap()
        .set_modified(later)
        .unwrap();
}

/// Reload through the graph source: the error's traceback names the helper module's line; after
/// the helper is fixed, `code_changed` sees it (`--watch`), `reload` imports it again and the
/// next run on the same thread finishes with the new code; an edit that does not import keeps
/// the code loaded before.
#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn reload_runs_the_new_code_on_the_same_thread() {
    use superstep::source::{Breakpoints, GraphSource, Input, Pause, RunRequest, Start};
    let dir = tempfile::tempdir().unwrap();
    let reference = two_module_app(dir.path());
    let GraphRef::Python(r) = GraphRef::parse(&reference, None).unwrap() else {
        panic!()
    };
    let interp = Interpreter {
        path: python(),
        why: "SUPERSTEP_TEST_PYTHON",
    };
    let db = dir.path().join("r.sqlite");
    let mut src = PythonSource::open(r, interp, Some(&db)).unwrap();
    assert!(
        src.info.files.iter().any(|f| f.ends_with("helper.py")),
        "{:?}",
        src.info.files
    );
    let req = |start| RunRequest {
        thread: "t1".into(),
        start,
        steps: None,
        before: Breakpoints::None,
        after: Breakpoints::None,
    };
    let value = |j: serde_json::Value| j;
    let out = src.run(req(Start::Fresh {
        input: Input::Value(value(serde_json::json!({"n": 20}))),
        checkpoint: None,
    }));
    let last = out.reports.last().unwrap();
    assert!(
        matches!(&last.pause, Some(Pause::Error(n, _)) if n == "second"),
        "{:?}",
        last.pause
    );
    let tb = last.tasks[0].traceback.clone().unwrap();
    assert!(
        tb.starts_with("at ") && tb.lines().next().unwrap().contains("helper.py:2 in double"),
        "{tb}"
    );
    assert!(!src.code_changed());
    rewrite(&dir.path().join("helper.py"), "def double(n) return\n");
    assert!(src.code_changed(), "the edit is seen");
    assert!(!src.code_changed(), "once");
    let e = src.reload().unwrap_err();
    assert!(
        e.to_string().contains("SyntaxError") && e.hint().contains("stays in use"),
        "{e}"
    );
    rewrite(&dir.path().join("helper.py"), HELPER_FIXED);
    let said = src.reload().unwrap();
    assert!(said.contains("the thread is kept"), "{said}");
    let out = src.run(req(Start::Continue));
    assert!(out.error.is_none(), "{:?}", out.error);
    assert_eq!(out.reports.last().unwrap().pause, Some(Pause::Done));
    let store = superstep::store::Store::open(&db, superstep::store::Mode::ReadOnly).unwrap();
    let snap = superstep::inspect::Thread::open(&store, "t1", "", None)
        .unwrap()
        .show(None)
        .unwrap();
    assert_eq!(
        superstep::value::to_view(&snap.values[0].1, Default::default()),
        serde_json::json!(42)
    );
}

fn tmux_session(dir: &Path, args: &str) -> crate::tui_tmux::Tmux {
    assert!(crate::tui_tmux::tmux_available(), "tmux is required");
    let t = crate::tui_tmux::start(dir);
    t.type_text(&format!(
        "cd {} && {} {args} --python {}",
        dir.display(),
        env!("CARGO_BIN_EXE_superstep"),
        python().display()
    ));
    t.send(&["Enter"]);
    t.wait_for("q quit");
    t
}

/// Under a real terminal: `N` proposes the input from the schema (`{"n":0}`), `c` stops on the
/// helper's error — the status line names `helper.py:2` and says R reloads (it said "fix the state
/// with u"); after the edit `R` reloads and `c` finishes on the same thread. With `--watch` the
/// save alone reloads.
fn reload_under_tmux(watch: bool) {
    let dir = tempfile::tempdir().unwrap();
    let reference = two_module_app(dir.path());
    let t = tmux_session(
        dir.path(),
        &format!(
            "{reference} --db r.sqlite{}",
            if watch { " --watch" } else { "" }
        ),
    );
    t.send(&["N"]);
    t.wait_for(r#"{"n":0}"#);
    t.send(&["Enter"]);
    t.wait_for("input checkpoint written");
    t.send(&["c"]);
    let pane = t.wait_for("error in second");
    assert!(
        pane.contains("helper.py:2")
            && pane.contains("R reloads it")
            && !pane.contains("fix the state"),
        "{pane}"
    );
    // the output pane shows the traceback, the app's frame first
    t.send(&["o"]);
    let pane = t.wait_for("Traceback (most recent call last)");
    assert!(
        pane.contains("✗ at ") && pane.contains("NotImplementedError: double"),
        "{pane}"
    );
    t.send(&["Escape"]);
    // a key right after Esc would read as Alt+key: wait for the viewer to close
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while t.capture().contains("Node output") {
        assert!(
            std::time::Instant::now() < deadline,
            "the output pane never closed"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    rewrite(&dir.path().join("helper.py"), HELPER_FIXED);
    if !watch {
        t.send(&["R"]);
    }
    t.wait_for("reloaded");
    t.send(&["c"]);
    t.wait_for("done: no task is triggered");
    t.send(&["q"]);
    t.wait_for_exit();
    let store = superstep::store::Store::open(
        &dir.path().join("r.sqlite"),
        superstep::store::Mode::ReadOnly,
    )
    .unwrap();
    let snap = superstep::inspect::Thread::open(&store, "t1", "", None)
        .unwrap()
        .show(None)
        .unwrap();
    assert_eq!(
        superstep::value::to_view(&snap.values[0].1, Default::default()),
        serde_json::json!(2)
    );
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn reload_with_r_under_tmux() {
    reload_under_tmux(false);
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn reload_on_save_with_watch_under_tmux() {
    reload_under_tmux(true);
}

// ---- TUI frames ---------------------------------------------------------------------------------

/// A frame after `keys`, ids masked, this checkout's and the interpreter's paths replaced.
fn frame(graph: &str, keys: &str, dir: &Path) -> String {
    let g = graphs().join(graph);
    let o = ss(
        dir,
        &[
            g.to_str().unwrap(),
            "--db",
            "f.sqlite",
            "--print",
            "--size",
            "110x34",
            "--keys",
            keys,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let venv = python()
        .parent()
        .and_then(Path::parent)
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let text = stdout(&o)
        .replace(env!("CARGO_MANIFEST_DIR"), "<repo>")
        .replace(&venv, "<venv>");
    crate::common::mask_ids(&text)
}

/// `M` on a `messages` graph: the message editor (just the text, sent as a human message); the
/// footer and help list the key. And `N` on a graph without a spec input proposes one from the
/// input schema.
#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn the_message_editor_and_the_input_form() {
    let dir = tempfile::tempdir().unwrap();
    let first = r#"N <C-u>{"messages":[{"role":"user","content":"hello"}]}<Enter> c"#;
    let f = frame(
        "chat.py:graph",
        &format!("{first} M where<Space>is"),
        dir.path(),
    );
    assert!(
        f.contains("Message to thread t1") && f.contains("you: where is"),
        "{f}"
    );
    crate::common::snapshot_settings()
        .bind(|| insta::assert_snapshot!("daily_loop_message_editor", f));
    let f = frame("chat.py:graph", "?", dir.path());
    assert!(f.contains("follow-up turn on this thread"), "{f}");
    let f = frame("slow.py:graph", "N", tempfile::tempdir().unwrap().path());
    assert!(
        f.contains(r#"input:  {"seconds":0.0,"log":[],"mark":""}"#),
        "{f}"
    );
}

/// Enter on a task that raised: the task view shows its traceback, the app's own frame first.
/// (Asserted, not snapshotted: the frames' paths, and so the wrapping, are the checkout's.)
#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn the_task_view_shows_the_traceback() {
    let dir = tempfile::tempdir().unwrap();
    let keys = r#"N <C-u>{"service_up":false,"log":[]}<Enter> c <Tab> <Tab> <Enter>"#;
    let f = frame("retry.py:graph", keys, dir.path());
    assert!(
        f.contains("traceback (the app's own frame first):")
            && f.contains("at <repo>/tests/bridge/graphs/retry.py:27 in strict"),
        "{f}"
    );
    // the traceback itself, at its end (G): the node's raise, as Python prints it. The frames
    // above it are as long as the venv's path, so it is below the first page in a deep checkout.
    let again = tempfile::tempdir().unwrap();
    let f = frame("retry.py:graph", &format!("{keys} G"), again.path());
    assert!(f.contains("raise ValueError(\"service down\")"), "{f}");
}

/// `u` starts from the selected key's current value; for a message list, the last message with
/// its id (it started empty). Editing the tool call's argument in place and applying it replaces
/// that message (add_messages, same id): the lookup then runs with the edited argument, and the
/// conversation has no second copy of the call.
#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn u_starts_from_the_last_message_and_an_edit_is_a_change() {
    let dir = tempfile::tempdir().unwrap();
    let start = r#"N <C-u>{"messages":[{"role":"user","content":"where<Space>is<Space>order<Space>42?"}]}<Enter> n n"#;
    // {"messages":[{"type":"ai","content":"","id":"ai-0","tool_calls":[{"name":"lookup","args":{"order":"42"},"id":"call-0","type":"tool_call"}]}]}
    let f = frame("chat.py:graph", &format!("{start} u"), dir.path());
    let unwrapped: String = f
        .lines()
        .map(|l| l.trim_matches(|c| c == '│' || c == ' '))
        .collect();
    assert!(
        unwrapped.contains(r#"{"messages":[{"type":"ai","content":"","id":"ai-0","tool_calls":[{"name":"lookup","args":{"order":"42"},"id":"call-0","type":"tool_call"}]}]}"#),
        "{f}"
    );
    assert!(f.contains("messages: the last message with its id"), "{f}");
    // from the end of the proposal, back over `"},"id":…}]}]}` to the 42, and make it 13
    let back = "<Left> ".repeat(40);
    let keys = format!("{start} u <End> {back}<BS> <BS> 1 3 <Enter> c");
    let f = frame("chat.py:graph", &keys, tempfile::tempdir().unwrap().path());
    assert!(f.contains("Order status: los"), "{f}");
    let dir = tempfile::tempdir().unwrap();
    let o = ss(
        dir.path(),
        &[
            graphs().join("chat.py:graph").to_str().unwrap(),
            "--db",
            "u.sqlite",
            "--print",
            "--keys",
            &keys,
        ],
    );
    assert!(o.status.success());
    let o = superstep(&[
        "show",
        "--db",
        dir.path().join("u.sqlite").to_str().unwrap(),
        "-t",
        "t1",
        "--json",
    ]);
    let j = json_of(&o);
    let msgs = j["values"]["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 4, "{j}");
    assert_eq!(msgs[1]["tool_calls"][0]["args"]["order"], "13");
    assert_eq!(msgs[1]["id"], "ai-0");
}

/// While a superstep runs, the spinner names its node(s) (it said only "step running").
#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn the_spinner_names_the_running_node() {
    use superstep::app::state::Running;
    use superstep::source::{Breakpoints, GraphSource, Input, RunRequest, Start};
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("mark");
    let g = graphs().join("slow.py:graph");
    let GraphRef::Python(r) = GraphRef::parse(g.to_str().unwrap(), None).unwrap() else {
        panic!()
    };
    let interp = Interpreter {
        path: python(),
        why: "SUPERSTEP_TEST_PYTHON",
    };
    let mut src = PythonSource::open(r, interp, Some(&dir.path().join("s.sqlite"))).unwrap();
    let input = serde_json::json!({"seconds": 600, "log": [], "mark": mark.to_str().unwrap()});
    src.begin(RunRequest {
        thread: "t1".into(),
        start: Start::Fresh {
            input: Input::Value(input),
            checkpoint: None,
        },
        steps: None,
        before: Breakpoints::None,
        after: Breakpoints::None,
    });
    wait_until("the slow node to run", || {
        assert!(src.poll().is_none(), "the run ended");
        src.running_nodes() == ["sleepy"]
    });
    let line = superstep::app::update::running_line(&Running {
        what: "continue".into(),
        elapsed_ms: 1200,
        cancelling: false,
        quit_after: false,
        nodes: src.running_nodes(),
    });
    assert!(
        line.ends_with("continue: sleepy running 1.2 s · Esc cancels"),
        "{line}"
    );
    src.cancel();
    wait_until("the cancel", || src.poll().is_some());
}

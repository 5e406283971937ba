//! Messages that say what happened (issue 21 item 8): a node's own KeyboardInterrupt is not a
//! cancel, a bridge that died says its exit status, an import that exits says its status and what
//! the module printed, `q` during a step cancels and quits, a 10 KB thread id keeps the threads
//! table in line.

use crate::common::{stdout, superstep};

/// A 10 KB thread id (written by the engine) is cut in the `threads` table, whose columns stay in
/// line; `--json` keeps it whole.
#[test]
fn a_ten_kilobyte_thread_id_keeps_the_threads_table_in_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.sqlite");
    let db = db.to_str().unwrap();
    let g = concat!(env!("CARGO_MANIFEST_DIR"), "/graphs/countdown.json");
    let long = "x".repeat(10 * 1024);
    for t in ["short", long.as_str()] {
        let o = superstep(&["run", g, "--db", db, "-t", t, "--steps", "1"]);
        assert!(o.status.success(), "{}", crate::common::stderr(&o));
    }
    let o = superstep(&["--db", db, "threads"]);
    assert!(o.status.success());
    let out = stdout(&o);
    let rows: Vec<&str> = out.lines().filter(|l| !l.starts_with("note:")).collect();
    assert_eq!(rows.len(), 3, "{out:.300}");
    // CHECKPOINTS ends at the same column on every row
    let at = |l: &str| {
        let header = rows[0].find("CHECKPOINTS").unwrap() + "CHECKPOINTS".len();
        l.chars().nth(header - 1).unwrap()
    };
    for r in &rows[1..] {
        assert!(r.chars().count() < 200, "{:.200}", r);
        assert!(at(r).is_ascii_digit(), "{:.200}", r);
    }
    assert!(
        out.contains("1 thread id is longer than 64 columns cut with …"),
        "{out:.400}"
    );
    let o = superstep(&["--db", db, "threads", "--json"]);
    assert!(stdout(&o).contains(&long));
}

// ---- with Python -------------------------------------------------------------------------------

use crate::common::bridge::{graph, run};

fn failed_run(attr: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.sqlite");
    let o = run(
        &db,
        &[
            "run",
            &graph("hostile.py", attr),
            "-t",
            "t",
            "--input",
            r#"{"n": 0}"#,
        ],
    );
    let e = crate::common::stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    e
}

/// A node that raises KeyboardInterrupt itself is an error of the run, named so — not "cancelled
/// (Esc / Ctrl-C)", which nobody pressed.
#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn a_nodes_own_keyboard_interrupt_is_not_called_a_cancel() {
    let e = failed_run("ctrl_c_graph");
    assert!(
        e.contains("KeyboardInterrupt: raised by the node itself"),
        "{e}"
    );
    assert!(
        e.contains("raised by the graph's own code, not a cancel"),
        "{e}"
    );
    assert!(e.contains("hostile.py"), "the frame: {e}");
    assert!(!e.contains("cancelled"), "{e}");
}

/// The bridge killed by the node (os._exit(1), SIGKILL): the message says the exit status, never
/// "(gone)".
#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn a_bridge_that_died_says_its_exit_status() {
    let e = failed_run("exit_in_node");
    assert!(
        e.contains("the Python bridge exited (exit status 1)"),
        "{e}"
    );
    let e = failed_run("killed_in_node");
    assert!(
        e.contains("the Python bridge exited (killed by signal 9 (SIGKILL))"),
        "{e}"
    );
}

/// A module that exits while it is imported: its exit status and what it printed.
#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn an_import_that_exits_says_its_status_and_what_it_printed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("i.sqlite");
    let o = run(
        &db,
        &[
            "run",
            &graph("exit_at_import.py", "graph"),
            "-t",
            "t",
            "--input",
            "{}",
        ],
    );
    let e = crate::common::stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("the bridge exited while loading the graph (exit status 4)"),
        "{e}"
    );
    assert!(e.contains("no API key found: giving up"), "{e}");
    assert!(!e.contains("(no output)"), "{e}");
}

/// A slow import (heavy dependencies): the terminal says what is being imported and for how
/// long, instead of staying blank until the TUI appears.
#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn a_slow_import_says_so_with_the_time_it_takes() {
    use crate::tui_tmux::{start, tmux_available};
    assert!(tmux_available(), "this test drives the TUI in tmux");
    let dir = tempfile::tempdir().unwrap();
    let release = dir.path().join("go");
    let t = start(dir.path());
    t.type_text(&format!(
        "SLOW_IMPORT_RELEASE={} {} --python {} --db {} {}",
        release.display(),
        env!("CARGO_BIN_EXE_superstep"),
        crate::common::bridge::python().display(),
        dir.path().join("s.sqlite").display(),
        graph("slow_import.py", "graph"),
    ));
    t.send(&["Enter"]);
    t.wait_for("superstep: importing ");
    t.wait_for("slow_import.py:graph… 1 s");
    std::fs::write(&release, "").unwrap();
    let pane = t.wait_for("q quit");
    assert!(!pane.contains("importing"), "{pane}");
    t.send(&["q"]);
    t.wait_for_exit();
}

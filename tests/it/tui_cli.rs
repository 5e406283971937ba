//! The TUI's command-line entry points: `--print`, `--keys`, defaults, and their errors.

use crate::common;
use common::*;
use std::process::Command;

const CLOCK: &str = "1796207639000000000";

fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots"));
    s.set_prepend_module_to_snapshot(false);
    s
}

fn graph(name: &str) -> String {
    format!("{}/graphs/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn print_renders_one_frame_after_the_keys() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli.sqlite");
    let db = db.to_str().unwrap();
    let o = superstep(&[
        &graph("approval.json"),
        "--db",
        db,
        "--print",
        "--clock",
        CLOCK,
        "--keys",
        "n n n",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 40);
    assert!(out.contains("interrupt in approve"), "{out}");
    settings().bind(|| insta::assert_snapshot!("tui_cli_print_interrupt", out));
    // the state is in the DB: a second invocation resumes it by id
    let o = superstep(&[
        &graph("approval.json"),
        "--db",
        db,
        "--print",
        "--size",
        "100x30",
        "--clock",
        "1796207649000000000",
        "--keys",
        "r \"yes\" <Enter> c",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 30);
    assert!(out.contains("done"), "{out}");
    assert!(out.contains("execute done"), "{out}");
}

#[test]
fn key_sequence_errors_exit_2_with_a_clear_message() {
    let o = superstep(&[&graph("approval.json"), "--print", "--keys", "n <Entr>"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o)
            .starts_with("superstep: --keys: unknown key <Entr> at character 3 (known: Enter Esc"),
        "{}",
        stderr(&o)
    );
    let o = superstep(&[&graph("approval.json"), "--print", "--keys", "<Enter"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unclosed '<'"), "{}", stderr(&o));
}

#[test]
fn the_tui_needs_a_terminal_or_print() {
    let o = superstep(&[&graph("approval.json")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("needs a terminal"), "{}", stderr(&o));
    assert!(stdout(&o).is_empty());
    let o = superstep(&["no-such-thing", "--print"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("expected a graph spec (.json), a checkpoint DB file or a subcommand"),
        "{}",
        stderr(&o)
    );
    // an existing non-spec file is taken as the DB to inspect, and refused as one
    let o = superstep(&["README.md", "--print"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("README.md") && stderr(&o).contains("not"),
        "{}",
        stderr(&o)
    );
    let o = superstep(&[&graph("approval.json"), "--print", "--size", "12"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--size \"12\": expected WIDTHxHEIGHT"),
        "{}",
        stderr(&o)
    );
    // without a graph and without a terminal: the overview, as before
    let db = fixture("multi_interrupt.sqlite");
    let o = superstep(&["--db", db.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("THREAD"), "{}", stdout(&o));
    // subcommands still parse next to the positional GRAPH
    let o = superstep(&["threads", "--db", db.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn inspect_print_is_read_only_and_explains_stepping() {
    let (dir, db) = scratch("multi_interrupt.sqlite");
    let before = dir_state(dir.path());
    let o = superstep(&[
        "--db",
        db.to_str().unwrap(),
        "--print",
        "--keys",
        "n",
        "-t",
        "partial",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("INSPECT read-only"), "{out}");
    assert!(out.contains("thread partial"), "{out}");
    assert!(out.contains("read-only inspect mode"), "{out}");
    assert_eq!(before, dir_state(dir.path()));
    let o = superstep(&["--db", db.to_str().unwrap(), "--print", "-t", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no thread \"nope\""), "{}", stderr(&o));
    // the embedded demo DB without --db
    let o = superstep(&["--print"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("INSPECT read-only"));
}

#[test]
fn a_graph_without_db_uses_a_per_spec_file_in_the_temp_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |keys: &str| {
        Command::new(env!("CARGO_BIN_EXE_superstep"))
            .args([&graph("approval.json"), "--print", "--keys", keys])
            .env("TMPDIR", tmp.path())
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    };
    let o = run("n");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // the demo's recorded threads are all finished: a fresh thread starts, ready to step
    assert!(stdout(&o).contains("thread t1"), "{}", stdout(&o));
    let files: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".sqlite"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].starts_with("superstep-approval-"), "{files:?}");
    // the demo graph starts from the embedded demo DB: threads real LangGraph wrote for it
    let db = tmp.path().join(&files[0]);
    let o = Command::new(env!("CARGO_BIN_EXE_superstep"))
        .args(["threads", "--db", db.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    let threads: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ids: Vec<&str> = threads
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["thread_id"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&"approve") && ids.contains(&"timetravel"),
        "{ids:?}"
    );
    // the next start opens the same file (no second DB)
    let o = run("n");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let n = std::fs::read_dir(tmp.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".sqlite")
        })
        .count();
    assert_eq!(n, 1);
}

#[test]
fn too_small_terminal_screen() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.sqlite");
    let o = superstep(&[
        &graph("approval.json"),
        "--db",
        db.to_str().unwrap(),
        "--print",
        "--size",
        "50x12",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("terminal too small"));
    assert!(stdout(&o).contains("50x12 — superstep needs at least 60x16"));
    // the 20x5: still the screen, not a panic or a garbled layout
    let o = superstep(&[
        &graph("approval.json"),
        "--db",
        db.to_str().unwrap(),
        "--print",
        "--size",
        "20x5",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("terminal too small"), "{}", stdout(&o));
    assert_eq!(stdout(&o).lines().count(), 5);
}

//! The TUI's rough edges found while reading real agent states (issue 13), each reproduced from
//! one command line: `superstep … --keys "…" --print`.

use crate::common;
use common::*;
use std::path::Path;

const CLOCK: &str = "1796207639000000000";

fn graph(name: &str) -> String {
    format!("{}/graphs/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn frame(args: &[&str]) -> String {
    let o = superstep(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

fn checkpoints(db: &Path, thread: &str) -> usize {
    let store = superstep::store::Store::open(db, superstep::store::Mode::ReadOnly).unwrap();
    store.history(thread, "", None, 1000).unwrap().len()
}

#[test]
fn r_runs_to_the_next_pause_like_langgraph_and_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let (tui, cli) = (dir.path().join("tui.sqlite"), dir.path().join("cli.sqlite"));
    let spec = graph("approval.json");
    // the editor's footer says what Enter will do
    let f = frame(&[
        &spec,
        "--db",
        tui.to_str().unwrap(),
        "--print",
        "--clock",
        CLOCK,
        "--keys",
        "c r true",
    ]);
    assert!(f.contains("Enter send, run to the next pause"), "{f}");
    // r, an answer, Enter: on to the end of the run (approve, then execute), not one superstep
    let f = frame(&[
        &spec,
        "--db",
        tui.to_str().unwrap(),
        "--print",
        "--keys",
        "r true<Enter>",
    ]);
    assert!(f.contains("│ done"), "{f}");
    assert!(
        f.contains("resume: step 2 approve done · step 3 execute done"),
        "{f}"
    );
    // `superstep resume` (invoke(Command(resume=True))) ends on the same step
    for args in [
        vec!["run", &spec, "-t", "t1"],
        vec!["resume", &spec, "-t", "t1", "--value", "true"],
    ] {
        let o = superstep(&[&args[..], &["--db", cli.to_str().unwrap()]].concat());
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    }
    assert_eq!(checkpoints(&tui, "t1"), checkpoints(&cli, "t1"));
}

#[test]
fn the_resume_editor_sends_a_bare_word_as_a_string_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.sqlite");
    let db = db.to_str().unwrap();
    let spec = graph("approval.json");
    let f = frame(&[
        &spec, "--db", db, "--print", "--clock", CLOCK, "--keys", "c r yes",
    ]);
    assert!(
        f.contains("✓ not JSON: Enter sends the string \"yes\""),
        "{f}"
    );
    // a typo in real JSON is still an error, not a string
    let f = frame(&[
        &spec,
        "--db",
        db,
        "--print",
        "--keys",
        "r {\"ok\":<Space>tru",
    ]);
    assert!(f.contains("✗ invalid JSON"), "{f}");
    // one key: Enter sends "yes"
    frame(&[&spec, "--db", db, "--print", "--keys", "r yes<Enter>"]);
    let o = superstep(&["show", "--db", db, "-t", "t1", "--json"]);
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let hist = superstep(&["history", "--db", db, "-t", "t1", "--json"]);
    assert!(
        stdout(&hist).contains("\"yes\""),
        "the RESUME write holds \"yes\""
    );
    assert_eq!(j["next"], serde_json::json!([]), "{j}");
}

#[test]
fn help_is_as_wide_as_the_screen_and_colon_help_lists_the_commands() {
    let spec = graph("approval.json");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let db = db.to_str().unwrap();
    let f = frame(&[
        &spec, "--db", db, "--print", "--size", "220x50", "--keys", "?",
    ]);
    // the longest description reads whole at 220 columns
    assert!(
        f.contains("then run to the next pause like invoke(Command(resume=...))"),
        "{f}"
    );
    // and wraps under its column, never cut, at 100
    let f = frame(&[
        &spec, "--db", db, "--print", "--size", "100x50", "--keys", "?",
    ]);
    assert!(f.contains("like invoke(Command(resume=...))"), "{f}");
    let f = frame(&[&spec, "--db", db, "--print", "--keys", ":help<Enter>"]);
    assert!(f.contains("Commands — type : then one of these"), "{f}");
    assert!(
        f.contains(":travel [ID]") && !f.contains("Help — every key"),
        "{f}"
    );
}

#[test]
fn the_thread_picker_honours_g_and_a_switch_clears_the_old_message() {
    let db = fixture("multi_interrupt.sqlite");
    let db = db.to_str().unwrap();
    let f = frame(&["--db", db, "--print", "--keys", "T G <Enter>"]);
    let threads = frame(&["threads", "--db", db]);
    let last = threads
        .lines()
        .last()
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap();
    assert!(f.contains(&format!("thread {last} │")), "{f}");
    // n in read-only mode says why not; switching thread replaces that message
    let f = frame(&["--db", db, "--print", "--keys", "n"]);
    assert!(f.contains("read-only inspect mode"), "{f}");
    let f = frame(&["--db", db, "--print", "--keys", "n T G <Enter>"]);
    assert!(!f.contains("read-only inspect mode"), "{f}");
    assert!(f.contains(&format!("\n thread {last}\n")), "{f}");
    let f = frame(&["--db", db, "--print", "--keys", "T G g <Enter> T"]);
    assert!(f.contains("▸ "), "{f}");
}

#[test]
fn print_alone_writes_nothing_and_the_temp_db_is_named_once() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let spec = graph("countdown.json");
    let run = |keys: Option<&str>| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_superstep"));
        c.args([&spec, "--print"])
            .env("TMPDIR", &tmp)
            .env("NO_COLOR", "1");
        if let Some(k) = keys {
            c.args(["--keys", k]);
        }
        c.output().unwrap()
    };
    // --print alone: nothing created, nothing said
    let o = run(None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("no thread yet (nothing written)"),
        "{}",
        stdout(&o)
    );
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "no file in the temp dir"
    );
    // keys that step write, to a temp DB whose path is said once, when it is made
    let o = run(Some("n"));
    let db: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(db.len(), 1, "{db:?}");
    assert!(
        stderr(&o).contains(&format!("checkpoints are in {}", db[0].display())),
        "{}",
        stderr(&o)
    );
    let o = run(Some("n"));
    assert!(!stderr(&o).contains("checkpoints are in"), "{}", stderr(&o));
    // --print alone on an existing DB: no new thread
    let before = checkpoints(&db[0], "t1");
    let threads = stdout(&superstep(&["threads", "--db", db[0].to_str().unwrap()]));
    run(None);
    assert_eq!(checkpoints(&db[0], "t1"), before);
    assert_eq!(
        stdout(&superstep(&["threads", "--db", db[0].to_str().unwrap()])),
        threads
    );
}

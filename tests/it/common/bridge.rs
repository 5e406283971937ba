//! Helpers for the tests that run Python graphs through the bridge (`#[ignore]`d: `.ci/run` sets
//! `SUPERSTEP_TEST_PYTHON`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// The interpreter with LangGraph 1.2.x (`SUPERSTEP_TEST_PYTHON`), or a loud failure.
pub fn python() -> PathBuf {
    PathBuf::from(std::env::var_os("SUPERSTEP_TEST_PYTHON").unwrap_or_else(|| {
        panic!("SUPERSTEP_TEST_PYTHON is not set: these tests need a Python with LangGraph 1.2.x (.ci/run sets it)")
    }))
}

/// `tests/bridge/`: the graphs, apps and scenarios the bridge tests play.
pub fn bridge_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bridge")
}

/// Scenario `name` of `tests/bridge/scenarios.json`.
pub fn scenario(name: &str) -> serde_json::Value {
    let all: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(bridge_dir().join("scenarios.json")).unwrap(),
    )
    .unwrap();
    all["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no scenario {name}"))
}

/// `tests/bridge/graphs/<file>:<attr>`.
pub fn graph(file: &str, attr: &str) -> String {
    format!(
        "{}:{attr}",
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/bridge/graphs")
            .join(file)
            .display()
    )
}

/// `superstep --python $SUPERSTEP_TEST_PYTHON --db DB ARGS...`, not yet started.
pub fn command(db: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_superstep"));
    c.arg("--python")
        .arg(python())
        .arg("--db")
        .arg(db)
        .args(args)
        .env("NO_COLOR", "1");
    c
}

/// [`command`], run to the end.
pub fn run(db: &Path, args: &[&str]) -> Output {
    command(db, args).output().expect("run superstep")
}

/// Wait until `cond` holds; `what` names it when the hang guard (120 s) trips.
pub fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let t = Instant::now();
    while !cond() {
        assert!(t.elapsed() < Duration::from_secs(120), "hang: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether process `pid` still runs (a zombie waiting to be reaped does not).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(false)
}

/// `(checkpoint_id, parent)` of the thread's root checkpoints, oldest first, read by superstep's
/// store (a SQLite file or a Postgres URL); empty before the thread exists.
pub fn chain(db: &Path, thread: &str) -> Vec<(String, Option<String>)> {
    use superstep::store::{Mode, Store};
    let Ok(store) = Store::open(db, Mode::ReadOnly) else {
        return Vec::new();
    };
    let mut rows: Vec<_> = store
        .history(thread, "", None, 1_000_000)
        .unwrap_or_default()
        .into_iter()
        .map(|r| (r.checkpoint_id, r.parent_checkpoint_id))
        .collect();
    rows.reverse();
    rows
}

/// Panics when two root checkpoints of the thread share a parent (a fork).
pub fn assert_no_fork(db: &Path, thread: &str) -> usize {
    let rows = chain(db, thread);
    let mut parents: Vec<_> = rows.iter().filter_map(|r| r.1.clone()).collect();
    let n = parents.len();
    parents.sort();
    parents.dedup();
    assert_eq!(parents.len(), n, "a fork on thread {thread}: {rows:?}");
    rows.len()
}

/// A fresh, empty Postgres database `db` on the `SUPERSTEP_TEST_PG` server: its URL.
pub fn fresh_pg(db: &str) -> PathBuf {
    let admin = std::env::var("SUPERSTEP_TEST_PG").unwrap_or_else(|_| {
        panic!("SUPERSTEP_TEST_PG is not set: the pg_* tests need a Postgres role that may create databases (tests/postgres/ci.sh sets it)")
    });
    let mut c = postgres::Client::connect(&admin, postgres::NoTls).unwrap();
    c.batch_execute(&format!("DROP DATABASE IF EXISTS \"{db}\" WITH (FORCE)"))
        .unwrap();
    c.batch_execute(&format!("CREATE DATABASE \"{db}\""))
        .unwrap();
    PathBuf::from(format!("{}/{db}", admin.rsplit_once('/').unwrap().0))
}

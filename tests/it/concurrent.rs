//! Two writers stepping one thread. The documented behaviour: every commit checks, under the
//! write lock, that the thread's newest checkpoint is still the one the step started from; a
//! writer that lost the race writes nothing and gets a clear "moved on" error (exit code 2 on
//! the CLI). The history stays one linear chain — never a fork nobody asked for.

use std::path::Path;
use std::process::Command;
use superstep::engine::pregel::{Engine, Input};
use superstep::store::{Mode, Store};

fn graph() -> superstep::engine::loaded::LoadedGraph {
    superstep::engine::loaded::load(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/graphs/countdown.json"
    )))
    .unwrap()
}

/// Every root checkpoint but the first has a parent, and no two share one.
fn assert_linear(db: &Path, thread: &str) -> usize {
    let store = Store::open(db, Mode::ReadOnly).unwrap();
    let rows = store.history(thread, "", None, 100_000).unwrap();
    let mut parents: Vec<&str> = rows
        .iter()
        .filter_map(|r| r.parent_checkpoint_id.as_deref())
        .collect();
    assert_eq!(parents.len() + 1, rows.len(), "one root checkpoint");
    parents.sort();
    let n = parents.len();
    parents.dedup();
    assert_eq!(parents.len(), n, "two checkpoints share a parent: a fork");
    // a connection of our own: the store hands out none
    let conn = rusqlite::Connection::open(db).unwrap();
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    rows.len()
}

#[test]
fn the_second_stepper_is_refused_and_writes_nothing() {
    let lg = graph();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("two.sqlite");
    let mut a = Engine::for_graph(&lg, Store::open(&db, Mode::ReadWrite).unwrap(), "t");
    a.start(
        Input::Value(
            superstep::value::from_view(&serde_json::json!({"n": 0, "limit": 20})).unwrap(),
        ),
        None,
    )
    .unwrap();
    a.step().unwrap();
    let mut b = Engine::for_graph(&lg, Store::open(&db, Mode::ReadWrite).unwrap(), "t");
    b.start(Input::Continue, None).unwrap();
    // A moves the thread on; B's step, computed from the older checkpoint, must not land
    a.step().unwrap();
    let before = assert_linear(&db, "t");
    let err = b.step().unwrap_err().to_string();
    assert!(err.contains("moved on while this step ran"), "{err}");
    assert!(err.contains("nothing was written"), "{err}");
    assert_eq!(assert_linear(&db, "t"), before, "B wrote nothing");
    // B starts again from the DB and carries on the same chain
    b.start(Input::Continue, None).unwrap();
    b.step().unwrap();
    assert_eq!(assert_linear(&db, "t"), before + 1);
    // and now A is the stale one
    let err = a.step().unwrap_err().to_string();
    assert!(err.contains("moved on"), "{err}");
}

#[test]
fn racing_cli_processes_never_fork_the_history() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("race.sqlite");
    let bin = env!("CARGO_BIN_EXE_superstep");
    let g = concat!(env!("CARGO_MANIFEST_DIR"), "/graphs/countdown.json");
    let dbs = db.display().to_string();
    let o = Command::new(bin)
        .args(["run", g, "--db", &dbs, "--thread", "r", "--steps", "1"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (mut won, mut refused) = (0, 0);
    for _ in 0..12 {
        let kids: Vec<_> = (0..2)
            .map(|_| {
                Command::new(bin)
                    .args(["continue", g, "--db", &dbs, "--thread", "r", "--steps", "1"])
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for k in kids {
            let o = k.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            match o.status.code() {
                Some(0) => won += 1,
                Some(2) if err.contains("moved on while this step ran") => refused += 1,
                // a pause at an interrupt: continue has nothing to run there
                Some(2) if err.contains("interrupt") || err.contains("nothing to run") => {
                    let _ = Command::new(bin)
                        .args([
                            "resume", g, "--db", &dbs, "--thread", "r", "--value", "true",
                        ])
                        .output();
                }
                c => panic!("exit {c:?}: {err}"),
            }
        }
        assert_linear(&db, "r");
    }
    assert!(won > 0, "some steps landed");
    eprintln!("racing steppers: {won} steps landed, {refused} refused");
}

//! Engine behaviours of issue 12 that the row comparison alone cannot show (the differential
//! suite proves the rows; these check what the engine reports about them).

use std::path::PathBuf;
use superstep::engine::pregel::{Engine, Input, TaskOutcome};
use superstep::engine::EngineError;
use superstep::store::{Mode, Store};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn count(db: &std::path::Path, sql: &str) -> i64 {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn a_step_failing_in_apply_writes_keeps_its_tasks_writes_and_continue_reuses_them() {
    let lg = superstep::engine::loaded::load(&root().join("graphs/conflict.json")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("c.sqlite");
    let run = |input: Input| {
        let store = Store::open(&db, Mode::ReadWrite).unwrap();
        let mut e = Engine::for_graph(&lg, store, "t");
        e.start(input, None).unwrap();
        let err = e.run_until_pause().unwrap_err();
        assert!(
            matches!(&err, EngineError::InvalidUpdate(m) if m.starts_with("At key 'pick'")),
            "{err}"
        );
        e.failed_step().cloned().expect("the failed step's report")
    };
    let first = run(Input::Value(lg.graph.input.clone().unwrap()));
    let names: Vec<(&str, &TaskOutcome)> = first
        .tasks
        .iter()
        .map(|t| (t.name.as_str(), &t.outcome))
        .collect();
    assert_eq!(
        names,
        [("left", &TaskOutcome::Done), ("right", &TaskOutcome::Done)]
    );
    assert_eq!(first.tasks[0].effects.len(), 1);
    // the input checkpoint and step 0; __start__'s 3 writes + 3 of each node on step 0
    assert_eq!(count(&db, "SELECT COUNT(*) FROM checkpoints"), 2);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM writes"), 9);
    // continue: both finished tasks are reused, nothing runs again, nothing new is written
    let again = run(Input::Continue);
    assert!(
        again
            .tasks
            .iter()
            .all(|t| t.outcome == TaskOutcome::Reused && t.effects.is_empty()),
        "{:?}",
        again.tasks
    );
    assert_eq!(count(&db, "SELECT COUNT(*) FROM writes"), 9);
}

//! Bad input on the CLI: one clear line on stderr, exit code 2, the file byte-identical.

use crate::common;
use common::*;
use rusqlite::Connection;

fn assert_fails(args: &[&str], needle: &str) {
    let o = superstep(args);
    let err = stderr(&o);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{args:?}: exit code; stderr {err}"
    );
    assert!(
        err.contains(needle),
        "{args:?}: stderr {err:?} lacks {needle:?}"
    );
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?}: not one line: {err:?}"
    );
    assert!(stdout(&o).is_empty(), "{args:?}: printed to stdout");
}

#[test]
fn missing_file() {
    assert_fails(
        &["threads", "--db", "/nonexistent/x.sqlite"],
        "no such file",
    );
}

#[test]
fn not_sqlite_and_empty_files() {
    let dir = tempfile::tempdir().unwrap();
    let txt = dir.path().join("notes.sqlite");
    std::fs::write(&txt, "hello, this is text and certainly not a database\n").unwrap();
    let empty = dir.path().join("empty.sqlite");
    std::fs::write(&empty, "").unwrap();
    let before = dir_state(dir.path());
    assert_fails(
        &["threads", "--db", txt.to_str().unwrap()],
        "not a SQLite database",
    );
    assert_fails(
        &["show", "--db", empty.to_str().unwrap(), "-t", "x"],
        "not a SQLite database (empty file)",
    );
    assert_eq!(before, dir_state(dir.path()));
}

#[test]
fn sqlite_but_not_a_checkpoint_db() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("other.sqlite");
    Connection::open(&p)
        .unwrap()
        .execute_batch("CREATE TABLE checkpoints (x); INSERT INTO checkpoints VALUES (1);")
        .unwrap();
    let before = dir_state(dir.path());
    assert_fails(
        &["threads", "--db", p.to_str().unwrap()],
        "not a LangGraph checkpoint database (missing table writes)",
    );
    assert_eq!(before, dir_state(dir.path()));
}

#[test]
fn unknown_thread_and_checkpoint() {
    let (dir, db) = scratch("interrupt.sqlite");
    let db = db.to_str().unwrap();
    let before = dir_state(dir.path());
    assert_fails(
        &["show", "--db", db, "-t", "no-such-thread"],
        "no thread \"no-such-thread\"",
    );
    assert_fails(
        &["history", "--db", db, "-t", "no-such-thread"],
        "no thread",
    );
    assert_fails(
        &["show", "--db", db, "-t", "single", "--ns", "nope:1"],
        "in namespace \"nope:1\"",
    );
    assert_fails(
        &[
            "show",
            "--db",
            db,
            "-t",
            "single",
            "--checkpoint",
            "1f000000-0000-6000-8000-000000000000",
        ],
        "has no checkpoint 1f000000-0000-6000-8000-000000000000",
    );
    assert_eq!(before, dir_state(dir.path()));
}

#[test]
fn corrupt_blobs_are_located() {
    let (dir, db) = scratch("interrupt.sqlite");
    let (cid, wcid) = {
        let c = Connection::open(&db).unwrap();
        let cid: String = c
            .query_row("SELECT checkpoint_id FROM checkpoints WHERE thread_id='single' ORDER BY checkpoint_id DESC LIMIT 1", [], |r| r.get(0))
            .unwrap();
        c.execute("UPDATE checkpoints SET checkpoint = x'87a17604c1' WHERE thread_id='single' AND checkpoint_id=?1", [&cid])
            .unwrap();
        let wcid: String = c
            .query_row("SELECT checkpoint_id FROM writes WHERE thread_id='double' AND channel='__interrupt__' LIMIT 1", [], |r| r.get(0))
            .unwrap();
        c.execute("UPDATE writes SET value = x'92c1' WHERE thread_id='double' AND channel='__interrupt__'", [])
            .unwrap();
        c.execute(
            "UPDATE checkpoints SET metadata = 'not json' WHERE thread_id='schema'",
            [],
        )
        .unwrap();
        (cid, wcid)
    };
    let before = dir_state(dir.path());
    let p = db.to_str().unwrap();
    assert_fails(&["show", "--db", p, "-t", "single"], &format!("corrupt checkpoint blob in checkpoints(thread_id=\"single\", checkpoint_ns=\"\", checkpoint_id={cid})"));
    assert_fails(
        &["show", "--db", p, "-t", "double", "--checkpoint", &wcid],
        "corrupt write value in writes(thread_id=\"double\"",
    );
    assert_fails(
        &["history", "--db", p, "-t", "schema"],
        "corrupt metadata in checkpoints(thread_id=\"schema\"",
    );
    assert_eq!(before, dir_state(dir.path()));
}

#[test]
fn bad_arguments_exit_2() {
    let o = superstep(&["show", "--db", "x.sqlite"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--thread"));
    let o = superstep(&["history", "--db", "x.sqlite", "-t", "a", "--limit", "many"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn inspection_leaves_a_wal_mode_db_and_its_directory_untouched() {
    // A DB still in WAL mode with no -wal file (nobody has it open): reading must not create
    // -wal/-shm next to it.
    let (dir, db) = scratch("interrupt.sqlite");
    Connection::open(&db)
        .unwrap()
        .pragma_update(None, "journal_mode", "WAL")
        .unwrap();
    assert!(!dir.path().join("interrupt.sqlite-wal").exists());
    let before = dir_state(dir.path());
    let p = db.to_str().unwrap();
    for args in [
        vec!["threads", "--db", p],
        vec!["history", "--db", p, "-t", "single", "--json"],
        vec!["show", "--db", p, "-t", "single"],
        vec!["--db", p],
    ] {
        let o = superstep(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    }
    assert_eq!(before, dir_state(dir.path()));
}

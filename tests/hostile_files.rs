//! Odd and hostile files (issue 15): crafted rows in real LangGraph fixtures, files that are not
//! regular files, read-only files. Each is shown truthfully or refused with a message naming
//! what and where — never a panic, never a silent wrong answer.

mod common;

use common::{scratch, stderr, stdout, superstep};
use rusqlite::Connection;

/// A real LangGraph DB with one write's value replaced.
fn with_write_value(thread: &str, channel: &str, value: &[u8]) -> (tempfile::TempDir, String) {
    let (dir, db) = scratch("interrupt.sqlite");
    let c = Connection::open(&db).unwrap();
    let n = c
        .execute(
            "UPDATE writes SET type = 'msgpack', value = ?1 WHERE thread_id = ?2 AND channel = ?3",
            rusqlite::params![value, thread, channel],
        )
        .unwrap();
    assert_eq!(n, 1);
    drop(c);
    (dir, db.to_str().unwrap().to_string())
}

/// Item 9: the single byte 0xc1 (msgpack's reserved marker) was read as nil — the pending
/// interrupt vanished. ormsgpack raises `ValueError('invalid type Reserved')`; it is a corrupt row.
#[test]
fn a_reserved_marker_is_a_located_corrupt_row_not_null() {
    let (_d, db) = with_write_value("single_paused", "__interrupt__", &[0xc1]);
    for cmd in ["show", "history"] {
        let o = superstep(&[cmd, "--db", &db, "-t", "single_paused"]);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", stdout(&o));
        let e = stderr(&o);
        assert!(
            e.contains("corrupt write value in writes(thread_id=\"single_paused\"")
                && e.contains("task_id=c5c2ecbd-6ad7-47b8-92ac-a7cc106d6313, idx=-3")
                && e.contains("reserved marker 0xc1 at byte 0"),
            "{cmd}: {e}"
        );
    }
    // nested in a value too
    let (_d, db) = with_write_value("single_paused", "__interrupt__", &[0x91, 0xc1]);
    let o = superstep(&["show", "--db", &db, "-t", "single_paused", "--json"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("reserved marker 0xc1 at byte 1"));
    // the TUI says so inline
    let o = superstep(&[
        "--db",
        &db,
        "-t",
        "single_paused",
        "--print",
        "--size",
        "250x30",
    ]);
    let frame = stdout(&o);
    assert!(
        frame.contains("corrupt write value in writes(thread_id=\"single_paused\"")
            && frame.contains("reserved marker"),
        "{frame}"
    );
}

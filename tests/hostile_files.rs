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

/// A real LangGraph DB whose thread `single_paused` is copied under 250 thread ids stored as
/// BLOBs (`b0000`…) and 3 stored as TEXT that is not UTF-8 (a foreign writer's rows).
fn non_text_thread_ids() -> (tempfile::TempDir, String) {
    let (dir, db) = scratch("interrupt.sqlite");
    let c = Connection::open(&db).unwrap();
    let copy = |id: &dyn rusqlite::ToSql| {
        c.execute(
            "INSERT INTO checkpoints SELECT ?1, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata
             FROM checkpoints WHERE thread_id = 'single_paused'",
            [id],
        )
        .unwrap();
        c.execute(
            "INSERT INTO writes SELECT ?1, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value
             FROM writes WHERE thread_id = 'single_paused'",
            [id],
        )
        .unwrap();
    };
    for i in 0..250 {
        copy(&format!("b{i:04}").into_bytes());
    }
    struct RawText(&'static [u8]);
    impl rusqlite::ToSql for RawText {
        fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
            Ok(rusqlite::types::ToSqlOutput::Borrowed(
                rusqlite::types::ValueRef::Text(self.0),
            ))
        }
    }
    for raw in [&b"t\xff1"[..], b"t\x802", b"\xc3"] {
        copy(&RawText(raw));
    }
    // a real thread whose id is the address form of the BLOB b0001: the text id wins (the BLOB
    // is then unreachable by `-t`; a writer that makes both gets one of them)
    copy(&"blob:6230303031");
    drop(c);
    (dir, db.to_str().unwrap().to_string())
}

/// Run superstep, killed after `secs` (the old `threads` never stopped on such a DB).
fn bounded(args: &[&str], secs: u64) -> std::process::Output {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_superstep"))
        .args(args)
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        use std::io::Read;
        let mut v = Vec::new();
        // at most 10 MB: a runaway listing is a failure, not a full disk
        let _ = out.take(10 << 20).read_to_end(&mut v);
        v
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("{args:?} still running after {secs} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let stdout = reader.join().unwrap();
    let o = child.wait_with_output().unwrap();
    std::process::Output { stdout, ..o }
}

/// Item 3: BLOB / non-UTF-8 thread ids made `threads` loop forever (779 MB in 10 s) and could not
/// be opened. They are paged by the raw key, listed escaped with an address form, and `-t`
/// takes that form.
#[test]
fn non_text_thread_ids_are_paged_listed_and_addressable() {
    let (_d, db) = non_text_thread_ids();
    let o = bounded(&["threads", "--db", &db], 20);
    assert!(o.status.success(), "{}", stderr(&o));
    let listing = stdout(&o);
    // header + 10 LangGraph threads + 250 BLOB + 3 non-UTF-8 + the look-alike
    assert_eq!(listing.lines().count(), 1 + 10 + 250 + 3 + 1, "{listing}");
    assert!(listing.contains("b0002 (blob:6230303032)"), "{listing}");
    assert!(listing.contains("b0249 (blob:6230323439)"), "{listing}");
    assert!(listing.contains("t\\xff1 (bytes:74ff31)"), "{listing}");
    assert!(listing.contains("\\xc3 (bytes:c3)"), "{listing}");
    let o = bounded(&["threads", "--db", &db, "--json"], 20);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ids: Vec<&str> = j
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["thread_id"].as_str().unwrap())
        .collect();
    let unique: std::collections::BTreeSet<_> = ids.iter().collect();
    // every thread once; the BLOB b0001 and the text look-alike share one name
    assert_eq!((ids.len(), unique.len()), (264, 263));
    // the overview too (it pages the same way)
    assert!(bounded(&["--db", &db], 20).status.success());

    let reference = superstep(&["show", "--db", &db, "-t", "single_paused", "--json"]);
    let reference: serde_json::Value = serde_json::from_slice(&reference.stdout).unwrap();
    for t in [
        "blob:6230303032",
        "blob:6230323439",
        "bytes:74ff31",
        "bytes:c3",
    ] {
        let o = superstep(&["show", "--db", &db, "-t", t, "--json"]);
        assert!(o.status.success(), "{t}: {}", stderr(&o));
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(j["config"]["configurable"]["thread_id"], t);
        for k in ["values", "next", "tasks", "interrupts", "pending_writes"] {
            assert_eq!(j[k], reference[k], "{t}: {k}");
        }
        let o = superstep(&["history", "--db", &db, "-t", t]);
        assert!(o.status.success(), "{t}: {}", stderr(&o));
        assert_eq!(stdout(&o).lines().count(), 2 + 2, "{t}: {}", stdout(&o));
        let o = superstep(&["--db", &db, "-t", t, "--print", "--size", "140x30"]);
        assert!(o.status.success(), "{t}: {}", stderr(&o));
        assert!(
            stdout(&o).contains("interrupt in ask"),
            "{t}: {}",
            stdout(&o)
        );
    }
    // the look-alike text thread is itself (one thread's history, not merged with the BLOB's)
    let o = superstep(&["history", "--db", &db, "-t", "blob:6230303031", "--json"]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j.as_array().unwrap().len(), 2);
}

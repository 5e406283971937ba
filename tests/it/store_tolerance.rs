//! The store tolerates what real SqliteSaver files contain (spec §1, §2.5): old schemas, orphan
//! writes, absent/nil `updated_channels`, json checkpoints, empty metadata, WAL and live writers.

use crate::common;
use common::*;
use rusqlite::{params, Connection};
use std::time::{Duration, Instant};
use superstep::inspect::Thread;
use superstep::store::{Mode, Store};
use superstep::value::{encode_msgpack, Typed, ViewOptions};

fn show_json(db: &std::path::Path, thread: &str, checkpoint: Option<&str>) -> serde_json::Value {
    let store = Store::open(db, Mode::ReadOnly).unwrap();
    let th = Thread::open(&store, thread, "", None).unwrap();
    th.show(checkpoint).unwrap().to_json(ViewOptions::default())
}

#[test]
fn missing_task_path_column() {
    let (dir, src) = scratch("interrupt.sqlite");
    let old = dir.path().join("old.sqlite");
    let c = Connection::open(&old).unwrap();
    c.execute_batch(&format!(
        "CREATE TABLE checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', checkpoint_id TEXT NOT NULL,
           parent_checkpoint_id TEXT, type TEXT, checkpoint BLOB, metadata BLOB, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id));
         CREATE TABLE writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', checkpoint_id TEXT NOT NULL,
           task_id TEXT NOT NULL, idx INTEGER NOT NULL, channel TEXT NOT NULL, type TEXT, value BLOB,
           PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx));
         ATTACH '{}' AS src;
         INSERT INTO checkpoints SELECT * FROM src.checkpoints;
         INSERT INTO writes SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value FROM src.writes;
         DETACH src;",
        src.display()
    ))
    .unwrap();
    drop(c);
    let a = show_json(&src, "single", None);
    let b = show_json(&old, "single", None);
    assert_eq!(a["values"], b["values"]);
    assert_eq!(a["next"], b["next"]);
    // without task_path the rows are ordered by (task_id, idx), and task_path reads as ''
    assert!(b["pending_writes"]
        .as_array()
        .unwrap()
        .iter()
        .all(|w| w["task_path"] == ""));
    let n = |j: &serde_json::Value| j["pending_writes"].as_array().unwrap().len();
    assert_eq!(n(&a), n(&b));
}

#[test]
fn orphan_writes_are_ignored_not_fatal() {
    let db = fixture("interrupt.sqlite");
    let c = Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let orphans: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM writes w LEFT JOIN checkpoints c USING (thread_id, checkpoint_ns, checkpoint_id)
             WHERE c.checkpoint_id IS NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        orphans > 0,
        "fixture should hold the orphan RESUME write of a fresh-thread Command(resume)"
    );
    let o = superstep(&["threads", "--db", db.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

fn rewrite_checkpoint(
    db: &std::path::Path,
    thread: &str,
    f: impl Fn(&mut Vec<(rmpv::Value, rmpv::Value)>),
) -> String {
    let c = Connection::open(db).unwrap();
    let (cid, blob): (String, Vec<u8>) = c
        .query_row(
            "SELECT checkpoint_id, checkpoint FROM checkpoints WHERE thread_id=?1 ORDER BY checkpoint_id DESC LIMIT 1",
            [thread],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let Typed::Value(rmpv::Value::Map(mut m)) = Typed::decode("msgpack", &blob).unwrap() else {
        panic!()
    };
    f(&mut m);
    c.execute(
        "UPDATE checkpoints SET checkpoint=?1 WHERE thread_id=?2 AND checkpoint_id=?3",
        params![encode_msgpack(&rmpv::Value::Map(m)), thread, cid],
    )
    .unwrap();
    cid
}

#[test]
fn updated_channels_absent_or_nil() {
    let (_d, db) = scratch("interrupt.sqlite");
    let before = show_json(&db, "double", None);
    rewrite_checkpoint(&db, "double", |m| {
        m.retain(|(k, _)| k.as_str() != Some("updated_channels"))
    });
    let absent = show_json(&db, "double", None);
    rewrite_checkpoint(&db, "double", |m| {
        m.push(("updated_channels".into(), rmpv::Value::Nil))
    });
    let nil = show_json(&db, "double", None);
    for j in [&absent, &nil] {
        assert_eq!(j["next"], before["next"]);
        assert_eq!(j["tasks"], before["tasks"]);
        assert_eq!(j["values"], before["values"]);
    }
}

#[test]
fn json_typed_checkpoint_and_empty_metadata() {
    let (_d, db) = scratch("interrupt.sqlite");
    let c = Connection::open(&db).unwrap();
    let v = "00000000000000000000000000000001.0.5";
    c.execute(
        "INSERT INTO checkpoints VALUES ('jt', '', '1f1ee3be-0000-6000-8000-000000000001', NULL, 'json', ?1, NULL)",
        [format!(
            r#"{{"v":4,"ts":"2026-12-02T10:00:00+00:00","id":"1f1ee3be-0000-6000-8000-000000000001","channel_values":{{"x":5,"branch:to:a":null}},"channel_versions":{{"x":"{v}","branch:to:a":"{v}"}},"versions_seen":{{"__input__":{{}}}},"updated_channels":null}}"#
        )
        .into_bytes()],
    )
    .unwrap();
    c.execute(
        "INSERT INTO writes VALUES ('jt', '', '1f1ee3be-0000-6000-8000-000000000001', 't1', '', 0, 'x', 'json', CAST('6' AS BLOB))",
        [],
    )
    .unwrap();
    c.execute(
        "UPDATE checkpoints SET metadata = CAST('' AS BLOB) WHERE thread_id='single'",
        [],
    )
    .unwrap();
    drop(c);
    let j = show_json(&db, "jt", None);
    assert_eq!(j["values"]["x"], 5);
    assert_eq!(j["metadata"], serde_json::json!({}));
    assert_eq!(j["next"], serde_json::json!(["a"]));
    assert_eq!(j["pending_writes"][0]["value"], 6);
    let j = show_json(&db, "single", None);
    assert_eq!(j["metadata"], serde_json::json!({}));
}

#[test]
fn history_pages_are_consistent() {
    let db = fixture("time_travel.sqlite");
    let store = Store::open(&db, Mode::ReadOnly).unwrap();
    let thread = store.threads(None, 10).unwrap()[0].thread_id.clone();
    let th = Thread::open(&store, &thread, "", None).unwrap();
    let all = th.history_page(None, 1000).unwrap();
    assert!(all.len() >= 4);
    let mut paged = Vec::new();
    let mut before: Option<String> = None;
    loop {
        let page = th.history_page(before.as_deref(), 2).unwrap();
        if page.is_empty() {
            break;
        }
        before = page.last().map(|s| s.checkpoint_id.clone());
        paged.extend(page);
    }
    let ids = |v: &[superstep::snapshot::Snapshot]| {
        v.iter()
            .map(|s| s.checkpoint_id.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&all), ids(&paged));
    let mut sorted = ids(&all);
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(ids(&all), sorted, "history is newest first");
}

#[test]
fn reads_while_another_process_writes_in_wal_mode() {
    // A writer keeps committing checkpoints (WAL, like SqliteSaver) while we read: no error, and
    // a fresh read sees the writer's last row.
    let (_d, db) = scratch("interrupt.sqlite");
    {
        let c = Connection::open(&db).unwrap();
        c.pragma_update(None, "journal_mode", "WAL").unwrap();
    }
    // Counted, not timed: the writer commits until the reader has read 20 times while rows kept
    // arriving (at least 20 of them); 120 s is a hang guard only.
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
    use std::sync::Arc;
    let stop = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicU32::new(0));
    let writer_db = db.clone();
    let (w_stop, w_count) = (stop.clone(), count.clone());
    let writer = std::thread::spawn(move || {
        let c = Connection::open(&writer_db).unwrap();
        c.busy_timeout(Duration::from_secs(5)).unwrap();
        let (blob, meta): (Vec<u8>, Vec<u8>) = c
            .query_row(
                "SELECT checkpoint, metadata FROM checkpoints WHERE thread_id='single' LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        let mut n = 0u32;
        while !w_stop.load(Ordering::SeqCst) {
            let id = format!("1f1ee3bf-{n:04x}-6000-8000-000000000000");
            c.execute(
                "INSERT INTO checkpoints VALUES ('live', '', ?1, NULL, 'msgpack', ?2, ?3)",
                params![id, blob, meta],
            )
            .unwrap();
            n += 1;
            w_count.store(n, Ordering::SeqCst);
        }
        n
    });
    let mut reads = 0;
    let start = Instant::now();
    while reads < 20 || count.load(Ordering::SeqCst) < 20 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "hang: {reads} reads"
        );
        let store = Store::open(&db, Mode::ReadOnly).unwrap();
        store.threads(None, 100).unwrap();
        if store.thread_exists("live").unwrap() {
            let th = Thread::open(&store, "live", "", None).unwrap();
            th.history_page(None, 50).unwrap();
        }
        reads += 1;
    }
    stop.store(true, Ordering::SeqCst);
    let written = writer.join().unwrap();
    assert!(written >= 20, "written {written}");
    let store = Store::open(&db, Mode::ReadOnly).unwrap();
    let t = store
        .threads(None, 100)
        .unwrap()
        .into_iter()
        .find(|t| t.thread_id == "live")
        .unwrap();
    assert_eq!(t.checkpoints, written as i64);
}

#[test]
fn waits_for_a_lock_instead_of_failing() {
    // Rollback-journal DB with an exclusive writer holding the lock briefly: the busy timeout waits.
    let (_d, db) = scratch("interrupt.sqlite");
    let c = Connection::open(&db).unwrap();
    c.execute_batch("BEGIN EXCLUSIVE; UPDATE checkpoints SET type=type;")
        .unwrap();
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(400));
        c.execute_batch("COMMIT").unwrap();
    });
    let store = Store::open(&db, Mode::ReadOnly).unwrap();
    assert!(!store.threads(None, 10).unwrap().is_empty());
    release.join().unwrap();
}

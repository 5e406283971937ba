//! Odd and hostile files (issue 15): crafted rows in real LangGraph fixtures, files that are not
//! regular files, read-only files. Each is shown truthfully or refused with a message naming
//! what and where — never a panic, never a silent wrong answer.

use crate::common;

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
        let rows = stdout(&o)
            .lines()
            .filter(|l| {
                l.trim_start()
                    .starts_with(|c: char| c.is_ascii_digit() || c == '-')
            })
            .count();
        assert_eq!(rows, 2, "{t}: {}", stdout(&o));
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

/// Item 12: a DB path that is not a regular file said `no such file`; a hot rollback journal
/// said `attempt to write a readonly database`. Say what it is; never block on a FIFO.
#[test]
fn paths_that_are_not_files_say_what_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.sqlite");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let d = dir.path().to_str().unwrap();
    let f = fifo.to_str().unwrap();
    for (path, what) in [
        (d, "it is a directory"),
        ("/dev/null", "it is a character device"),
        ("/dev/zero", "it is a character device"),
        (f, "it is a named pipe"),
    ] {
        for args in [
            vec!["threads", "--db", path],
            vec!["show", "--db", path, "-t", "t"],
            vec!["--db", path, "--print"],
            vec!["--db", path, "run", "graphs/approval.json", "-t", "t"],
        ] {
            let o = bounded(&args, 10);
            assert_eq!(o.status.code(), Some(2), "{args:?}");
            assert_eq!(
                stderr(&o).trim_end(),
                format!("superstep: {path}: not a SQLite database ({what})"),
                "{args:?}"
            );
        }
    }
}

/// A copy of a real LangGraph DB caught in the middle of a write: the file with some pages of
/// an uncommitted transaction and its rollback journal (a process killed mid-write).
fn hot_journal() -> (tempfile::TempDir, std::path::PathBuf) {
    let (src_dir, src) = scratch("interrupt.sqlite");
    let c = Connection::open(&src).unwrap();
    c.execute_batch("PRAGMA journal_mode=DELETE; PRAGMA cache_size=1; BEGIN;")
        .unwrap();
    // enough changed pages to spill to the file before the commit
    c.execute(
        "INSERT INTO writes SELECT thread_id || '-x', checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value FROM writes",
        [],
    )
    .unwrap();
    c.execute("UPDATE checkpoints SET metadata = metadata || ''", [])
        .unwrap();
    let journal = src.with_file_name("interrupt.sqlite-journal");
    assert!(journal.metadata().unwrap().len() > 0);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("crashed.sqlite");
    // the copies hold no lock: their journal is hot
    std::fs::copy(&src, &db).unwrap();
    std::fs::copy(&journal, dir.path().join("crashed.sqlite-journal")).unwrap();
    c.execute_batch("ROLLBACK").unwrap();
    drop(c);
    drop(src_dir);
    (dir, db)
}

#[test]
fn a_hot_journal_is_explained_and_left_alone() {
    let (dir, db) = hot_journal();
    let before = common::dir_state(dir.path());
    let d = db.to_str().unwrap();
    for args in [
        vec!["threads", "--db", d],
        vec!["show", "--db", d, "-t", "single"],
        vec!["--db", d, "--print"],
    ] {
        let o = superstep(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let e = stderr(&o);
        assert!(
            e.starts_with(&format!(
                "superstep: {d}: a hot rollback journal ({d}-journal) is next to it: a process crashed"
            )) && e.contains("PRAGMA quick_check"),
            "{args:?}: {e}"
        );
    }
    assert_eq!(
        common::dir_state(dir.path()),
        before,
        "inspection changed the directory"
    );
    // the recovery the message gives works: one write-capable open rolls the journal back
    let c = Connection::open(&db).unwrap();
    let ok: String = c.query_row("PRAGMA quick_check", [], |r| r.get(0)).unwrap();
    assert_eq!(ok, "ok");
    drop(c);
    let o = superstep(&["threads", "--db", d]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !stdout(&o).contains("-x "),
        "the crashed write was rolled back"
    );
}

/// Run the binary as an unprivileged user when the tests run as root (root may write a 0444
/// file, so a read-only file is only read-only for someone else).
fn as_unprivileged(args: &[&str]) -> std::process::Output {
    // SAFETY: geteuid has no preconditions
    let root = unsafe { libc::geteuid() } == 0;
    let mut cmd = if root {
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_superstep"));
        c
    } else {
        std::process::Command::new(env!("CARGO_BIN_EXE_superstep"))
    };
    cmd.args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run superstep (as root the test needs util-linux's setpriv)")
}

/// Item 11: the engine on a read-only file said `attempt to write a readonly database`, named
/// no file and left 0444 `-wal` / `-shm` files behind. Checked before anything is opened.
#[test]
fn the_engine_refuses_a_read_only_file_or_directory_before_touching_it() {
    use std::os::unix::fs::PermissionsExt;
    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/graphs/approval.json");
    // a WAL-mode DB (SqliteSaver.setup's) that is read-only, in a directory anyone may write
    let (dir, db) = scratch("interrupt.sqlite");
    Connection::open(&db)
        .unwrap()
        .query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
        .unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = common::dir_state(dir.path());
    let d = db.to_str().unwrap();
    let o = as_unprivileged(&["--db", d, "run", spec, "-t", "t"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).starts_with(&format!(
            "superstep: {d}: the file is read-only for this user: the engine writes"
        )),
        "{}",
        stderr(&o)
    );
    assert_eq!(common::dir_state(dir.path()), before, "files left behind");
    // inspection of the same file still works
    assert!(as_unprivileged(&["show", "--db", d, "-t", "single"])
        .status
        .success());

    // a writable file in a directory the user may not write (the journal goes there)
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o666)).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let before = common::dir_state(dir.path());
    let o = as_unprivileged(&["--db", d, "run", spec, "-t", "t"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).starts_with(&format!(
            "superstep: {d}: the directory {} is read-only for this user",
            dir.path().display()
        )),
        "{}",
        stderr(&o)
    );
    assert_eq!(common::dir_state(dir.path()), before, "files left behind");
}

/// Item 13: the disk filling up during a run (here: the file size limit, `ulimit -f`, with
/// SIGXFSZ ignored so the write fails as on a full disk) leaves the DB consistent; the message
/// names the file.
#[test]
fn a_full_disk_during_a_run_names_the_file_and_keeps_the_db_consistent() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("full.sqlite");
    let d = db.to_str().unwrap();
    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/graphs/loop.json");
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f 200; exec \"$0\" --db '{d}' run '{spec}' -t t --input '{{\"n\": 0, \"limit\": 100000}}'"
        ))
        .arg(env!("CARGO_BIN_EXE_superstep"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let e = stderr(&o);
    assert!(e.starts_with(&format!("superstep: {d}: ")), "{e}");
    assert!(e.lines().count() == 1, "{e}");
    // consistent: SQLite's check passes and every checkpoint of the thread reads back
    let c = Connection::open(&db).unwrap();
    let ok: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    drop(c);
    let o = superstep(&["history", "--db", d, "-t", "t", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let h: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let steps = h.as_array().unwrap().len();
    assert!(steps >= 2, "{steps}");
    assert_eq!(h[0]["next"], serde_json::json!(["count"]), "{}", h[0]);
}

/// Item 10: a leftover `-wal` with no `-shm` (a writer killed, the `-shm` removed) or with a
/// stale one: inspection created `db-shm` / rewrote the stale one. The pair is now read from a
/// private copy; the directory stays byte-identical, and the `-wal`'s commits are shown.
#[test]
fn a_leftover_wal_is_read_and_the_directory_left_alone() {
    let (_src_dir, src) = scratch("interrupt.sqlite");
    let c = Connection::open(&src).unwrap();
    c.execute_batch(
        "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;
         INSERT INTO checkpoints SELECT 'in_the_wal', checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata
         FROM checkpoints WHERE thread_id = 'single';
         INSERT INTO writes SELECT 'in_the_wal', checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value
         FROM writes WHERE thread_id = 'single';",
    )
    .unwrap();
    // the pair as a killed writer leaves it, minus the -shm
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("left.sqlite");
    std::fs::copy(&src, &db).unwrap();
    std::fs::copy(
        src.with_file_name("interrupt.sqlite-wal"),
        dir.path().join("left.sqlite-wal"),
    )
    .unwrap();
    drop(c);
    let d = db.to_str().unwrap();
    let check = |what: &str| {
        let before = common::dir_state(dir.path());
        let o = superstep(&["threads", "--db", d]);
        assert!(o.status.success(), "{what}: {}", stderr(&o));
        assert!(stdout(&o).contains("in_the_wal"), "{what}: {}", stdout(&o));
        for args in [
            vec!["show", "--db", d, "-t", "in_the_wal"],
            vec!["history", "--db", d, "-t", "in_the_wal"],
            vec!["--db", d, "-t", "in_the_wal", "--print"],
        ] {
            let o = superstep(&args);
            assert!(o.status.success(), "{what} {args:?}: {}", stderr(&o));
        }
        assert_eq!(
            common::dir_state(dir.path()),
            before,
            "{what}: the directory changed"
        );
    };
    check("-wal without -shm");
    // a stale -shm (garbage): not rewritten
    std::fs::write(dir.path().join("left.sqlite-shm"), vec![0xab_u8; 32768]).unwrap();
    check("-wal with a stale -shm");
}

/// Run superstep with at most `mib` MiB of address space (an allocation beyond it fails).
fn limited(mib: usize, args: &[&str]) -> std::process::Output {
    let mut cmd = format!(
        "ulimit -v {}; exec {} ",
        mib * 1024,
        env!("CARGO_BIN_EXE_superstep")
    );
    for a in args {
        cmd.push_str(&format!(" '{a}'"));
    }
    std::process::Command::new("bash")
        .args(["-c", &cmd])
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// Item 5: a 20 MB metadata array (10 M numbers) took over 600 MB (40 MB: over 1 GB, then an abort:
/// `memory allocation of … bytes failed`, exit 134); a 20 MB metadata string was printed whole. Metadata over
/// 1 MiB is now previewed from a stream like a big blob: all of it under a 400 MiB limit.
#[test]
fn huge_metadata_is_previewed_in_bounded_memory() {
    let (_d, db) = scratch("interrupt.sqlite");
    let c = Connection::open(&db).unwrap();
    let mut array = String::with_capacity(20_000_100);
    array.push_str(r#"{"source":"loop","step":0,"parents":{},"big":["#);
    for i in 0..10_000_000u32 {
        array.push_str(if i == 0 { "1" } else { ",1" });
    }
    array.push_str("]}");
    let string = format!(
        r#"{{"source":"loop","step":-1,"parents":{{}},"note":"{}"}}"#,
        "x".repeat(20_000_000)
    );
    // the newest checkpoint of single_paused (its array), and its parent (the string)
    for (meta, id) in [
        (&array, "1f1ee4af-6b5a-63ba-8000-a34a8b1a13bc"),
        (&string, "1f1ee4af-6b56-66e8-bfff-99666e561d91"),
    ] {
        let n = c
            .execute(
                "UPDATE checkpoints SET metadata = ?1 WHERE thread_id = 'single_paused' AND checkpoint_id = ?2",
                rusqlite::params![meta.as_bytes(), id],
            )
            .unwrap();
        assert_eq!(n, 1);
    }
    drop(c);
    drop((array, string));
    let d = db.to_str().unwrap();
    for args in [
        vec!["show", "--db", d, "-t", "single_paused"],
        vec!["show", "--db", d, "-t", "single_paused", "--json"],
        vec!["history", "--db", d, "-t", "single_paused"],
        vec!["history", "--db", d, "-t", "single_paused", "--json"],
        vec!["--db", d, "-t", "single_paused", "--print", "--keys", "j"],
    ] {
        let o = limited(400, &args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(
            o.stdout.len() < 1_000_000,
            "{args:?}: {} bytes",
            o.stdout.len()
        );
    }
    let o = superstep(&["show", "--db", d, "-t", "single_paused", "--json"]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let big = j["metadata"]["big"].as_array().unwrap();
    assert_eq!(big.len(), 1001);
    assert_eq!(big[1000], "… [cut by superstep: 9999000 more items]");
    assert!(j["warnings"]
        .to_string()
        .contains("the metadata is 20000047 bytes"));
    let o = superstep(&[
        "show",
        "--db",
        d,
        "-t",
        "single_paused",
        "--checkpoint",
        "1f1ee4af-6b56-66e8-bfff-99666e561d91",
        "--json",
    ]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let note = j["metadata"]["note"].as_str().unwrap();
    assert!(
        note.ends_with("… [cut by superstep: 20000000 bytes in all]"),
        "{}",
        &note[note.len() - 60..]
    );
    assert_eq!(
        note.len(),
        64 * 1024 + "… [cut by superstep: 20000000 bytes in all]".len()
    );
}

/// Item 5: metadata as a VIRTUAL generated column (a 24 KB file) made SQLite build gigabytes on
/// every read: `show` took 8 GB, `history` aborted. SQLite may now build at most 64 MiB for an
/// inspection query: refused with a message, in bounded memory.
#[test]
fn generated_metadata_is_refused_not_built() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("generated.sqlite");
    let c = Connection::open(&db).unwrap();
    c.execute_batch(&format!(
        "CREATE TABLE checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', checkpoint_id TEXT NOT NULL,
           parent_checkpoint_id TEXT, type TEXT, checkpoint BLOB,
           metadata TEXT GENERATED ALWAYS AS ('{{\"big\":\"' || hex(zeroblob(50000000)) || '\"}}') VIRTUAL,
           PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id));
         CREATE TABLE writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', checkpoint_id TEXT NOT NULL,
           task_id TEXT NOT NULL, task_path TEXT NOT NULL DEFAULT '', idx INTEGER NOT NULL, channel TEXT NOT NULL, type TEXT,
           value BLOB, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx));
         ATTACH '{}' AS src;
         INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint)
           SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint FROM src.checkpoints WHERE thread_id = 'single';
         INSERT INTO writes SELECT * FROM src.writes WHERE thread_id = 'single';
         DETACH src;",
        common::fixture("interrupt.sqlite").display()
    ))
    .unwrap();
    drop(c);
    assert!(std::fs::metadata(&db).unwrap().len() < 100_000);
    let d = db.to_str().unwrap();
    for args in [
        vec!["show", "--db", d, "-t", "single"],
        vec!["history", "--db", d, "-t", "single"],
    ] {
        let o = limited(400, &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("reading it would make SQLite build a value over 64 MiB"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

/// SqliteSaver with LangGraph's EncryptedSerializer encrypts the whole checkpoint blob (`type`
/// "msgpack+xortest"; fixture by tests/oracle/encrypted_sqlite.py). It was reported as a corrupt
/// blob ("checkpoint is not a map"); it is an encrypted one, said so, and the file is untouched.
#[test]
fn an_encrypted_sqlite_checkpoint_is_named_encrypted_not_corrupt() {
    let (dir, db) = scratch("encrypted_sqlite.sqlite");
    let db = db.to_str().unwrap();
    let before = common::dir_state(dir.path());
    let o = superstep(&["threads", "--db", db]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("t ") && stdout(&o).contains("3"),
        "{}",
        stdout(&o)
    );
    for args in [
        &["show", "--db", db, "-t", "t"][..],
        &["history", "--db", db, "-t", "t"],
        &["show", "--db", db, "-t", "t", "--json"],
    ] {
        let o = superstep(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stdout(&o));
        let e = stderr(&o);
        assert!(
            e.contains("is encrypted (type \"msgpack+xortest\", written by LangGraph's EncryptedSerializer)")
                && e.contains("checkpoints(thread_id=\"t\", checkpoint_ns=\"\", checkpoint_id=")
                && e.contains("no key to decrypt it")
                && !e.contains("corrupt"),
            "{args:?}: {e}"
        );
    }
    let o = superstep(&["--db", db, "-t", "t", "--print", "--size", "250x30"]);
    let frame = stdout(&o);
    assert!(
        frame.contains("is encrypted") && !frame.contains("corrupt"),
        "{frame}"
    );
    assert_eq!(
        common::dir_state(dir.path()),
        before,
        "the store was changed"
    );
}

//! Nothing from a DB reaches the terminal unescaped (issue 15 items 1 and 4).
//!
//! `tests/fixtures/hostile.sqlite` was written by real LangGraph (tests/oracle/gen_hostile.py) with a
//! catalogue of terminal escape sequences — OSC 0 / OSC 52 / OSC 8, `ESC[2J`, BEL, BS, CR, a newline,
//! C1 controls, DEL, a bidi override, zero-width characters — in thread ids, node names, state keys,
//! checkpoint namespaces, task ids, channels, values, interrupt values, error texts and metadata.
//! Every human-facing output (`threads`, `history`, `show`, the piped overview, the TUI's frames and
//! the messages on stderr) must carry none of those characters: they are shown as `\e`, `\u{202e}`, …
//! `hostile_ids.sqlite` holds checkpoint and task ids with a multi-byte character across the bytes
//! where ids used to be cut (8 and 24): nothing may panic.

use crate::common;

use common::{fixture, scratch, stderr, stdout, superstep};
use std::path::Path;

/// A character a terminal acts on or does not show: C0 controls but the newline, DEL, C1
/// controls, bidi embeddings/overrides/isolates, zero-width and other invisible format
/// characters, line/paragraph separators.
fn unsafe_char(c: char) -> bool {
    (c < ' ' && c != '\n')
        || ('\u{7f}'..='\u{9f}').contains(&c)
        || matches!(c,
            '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{206f}'
            | '\u{feff}' | '\u{e0000}'..='\u{e007f}')
}

#[track_caller]
fn assert_terminal_safe(what: &str, bytes: &[u8]) {
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => panic!("{what}: output is not UTF-8: {e}"),
    };
    if let Some((i, c)) = text.char_indices().find(|&(_, c)| unsafe_char(c)) {
        let from = text[..i].char_indices().rev().nth(40).map_or(0, |(j, _)| j);
        panic!(
            "{what}: U+{:04X} reached the output at byte {i}, after {:?}",
            c as u32,
            &text[from..i]
        );
    }
}

/// Every (thread id, checkpoint_ns) in a fixture, read with SQLite directly.
fn threads_and_namespaces(db: &Path) -> Vec<(String, String)> {
    let uri = format!("file:{}?immutable=1", db.display());
    let c = rusqlite::Connection::open_with_flags(
        uri,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_URI,
    )
    .unwrap();
    let mut st = c
        .prepare("SELECT DISTINCT thread_id, checkpoint_ns FROM checkpoints ORDER BY 1, 2")
        .unwrap();
    let rows = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    rows
}

#[track_caller]
fn run_ok(what: &str, args: &[&str]) -> String {
    let o = superstep(args);
    assert_terminal_safe(&format!("{what} (stdout)"), &o.stdout);
    assert_terminal_safe(&format!("{what} (stderr)"), &o.stderr);
    assert!(o.status.success(), "{what}: {}", stderr(&o));
    stdout(&o)
}

#[test]
fn every_field_of_a_hostile_db_is_shown_escaped_by_the_cli() {
    let db = fixture("hostile.sqlite");
    let db = db.to_str().unwrap();
    let all = threads_and_namespaces(Path::new(db));
    assert!(all.len() >= 40, "{all:?}");
    assert!(all.iter().any(|(_, ns)| ns.contains('\u{202e}')));

    let listing = run_ok("threads", &["threads", "--db", db]);
    // the ids are there, made visible
    assert!(listing.contains("h-osc0-\\e]0;PWNED-TITLE\\a"), "{listing}");
    assert!(listing.contains("h-bidi-abc\\u{202e}dcba"), "{listing}");
    assert!(listing.contains("h-newline-two\\nlines"), "{listing}");
    // the overview (no subcommand, piped) shows the threads and the newest one's state
    run_ok("overview", &["--db", db]);

    for (t, ns) in &all {
        let what = format!("thread {t:?} ns {ns:?}");
        let hist = run_ok(
            &format!("history {what}"),
            &["history", "--db", db, "-t", t, "--ns", ns],
        );
        let show = run_ok(
            &format!("show {what}"),
            &["show", "--db", db, "-t", t, "--ns", ns],
        );
        assert!(
            hist.lines().count() >= 3 && show.contains("values"),
            "{what}"
        );
        // every older checkpoint too (history view)
        let j: serde_json::Value = serde_json::from_str(&run_ok(
            &format!("history --json {what}"),
            &["history", "--db", db, "-t", t, "--ns", ns, "--json"],
        ))
        .unwrap();
        for s in j.as_array().unwrap().iter().skip(1) {
            let id = s["config"]["configurable"]["checkpoint_id"]
                .as_str()
                .unwrap();
            run_ok(
                &format!("show --checkpoint {id} {what}"),
                &["show", "--db", db, "-t", t, "--ns", ns, "--checkpoint", id],
            );
        }
    }
    // the fields carrying the payloads are all printed (escaped), not dropped
    let t = "h-clear-\x1b[2J\x1b[H";
    let show = run_ok("show h-clear", &["show", "--db", db, "-t", t]);
    for want in [
        "thread h-clear-\\e[2J\\e[H",            // thread id
        "k\\e[2J\\e[H",                          // state key
        "next   ask\\e[2J\\e[H",                 // node name
        "\"note\":\"\\u001b[2J\\u001b[H\"",      // metadata
        "{\"question\":\"\\u001b[2J\\u001b[H\"", // interrupt value
    ] {
        assert!(show.contains(want), "{want} not in\n{show}");
    }
    let t = "err-c1\u{9b}31m\u{9d}0;t\u{9c}";
    let show = run_ok("show err-c1", &["show", "--db", db, "-t", t]);
    // the error repr and the JSON preview of a value: C1 controls are not escaped by JSON
    assert!(
        show.contains("boom\\u{9b}31m\\u{9d}0;t\\u{9c}  error"),
        "{show}"
    );
    assert!(show.contains("[\"\\u{9b}31m\\u{9d}0;t\\u{9c}\"]"), "{show}");
    let show = run_ok("show ids", &["show", "--db", db, "-t", "ids"]);
    // a task id carrying OSC 0 and a channel named CSI 2J
    assert!(show.contains("\\e]0;PWNED-TITLE\\a"), "{show}");
    assert!(show.contains("\\u{9b}2J"), "{show}");
}

#[test]
fn messages_on_stderr_are_escaped() {
    let db = fixture("hostile.sqlite");
    let db = db.to_str().unwrap();
    // an unknown thread / checkpoint echoes what was asked for
    for args in [
        vec!["show", "--db", db, "-t", "nope\x1b]0;x\x07\u{202e}"],
        vec![
            "show",
            "--db",
            db,
            "-t",
            "ids",
            "--checkpoint",
            "\x1b[2J\u{9b}",
        ],
        vec![
            "show",
            "--db",
            db,
            "-t",
            "ids",
            "--ns",
            "\x1b]52;c;eA==\x07",
        ],
    ] {
        let o = superstep(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_terminal_safe(&format!("{args:?}"), &o.stderr);
    }
    // the corrupt-row locator names a task id carrying OSC 0 (the value: a truncated array)
    let (_dir, copy) = scratch("hostile.sqlite");
    let c = rusqlite::Connection::open(&copy).unwrap();
    let n = c
        .execute(
            "UPDATE writes SET value = x'92' WHERE thread_id = 'ids' AND task_id LIKE char(27) || '%'",
            [],
        )
        .unwrap();
    assert_eq!(n, 1);
    let n = c
        .execute(
            "UPDATE writes SET value = x'92' WHERE checkpoint_ns LIKE 'sub' || char(27) || ']0;%'",
            [],
        )
        .unwrap();
    assert!(n >= 1);
    drop(c);
    let copy = copy.to_str().unwrap();
    let o = superstep(&["show", "--db", copy, "-t", "ids"]);
    assert_terminal_safe("corrupt write of task <OSC 0>", &o.stderr);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("\\e]0;PWNED-TITLE\\a"),
        "{}",
        stderr(&o)
    );
    for (t, ns) in threads_and_namespaces(Path::new(copy)) {
        if ns.starts_with("sub\x1b]0;") {
            let o = superstep(&["show", "--db", copy, "-t", &t, "--ns", &ns]);
            assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
            assert_terminal_safe("corrupt write in namespace <OSC 0>", &o.stderr);
        }
    }
}

/// Key sequences that open every pane's detail from the default focus (History): the value
/// viewer, the task detail, the subgraph namespace, the thread picker, an older checkpoint.
const TUI_KEYS: &[&str] = &[
    "",
    "<Enter>",
    "<Tab><Enter>",
    "<Tab><Tab><Enter>",
    "<Tab><Tab>s",
    "<Tab><Tab><Tab><Enter>",
    "<Tab><Tab><Tab><Tab><Enter>",
    "<Tab><Tab><Tab><Tab><Tab>",
    "T",
    "j",
];

#[test]
fn every_field_of_a_hostile_db_is_shown_escaped_by_the_tui() {
    let db = fixture("hostile.sqlite");
    let db = db.to_str().unwrap();
    for (t, ns) in threads_and_namespaces(Path::new(db)) {
        if !ns.is_empty() {
            continue; // reached with `s` from the parent thread
        }
        for keys in TUI_KEYS {
            let frame = run_ok(
                &format!("TUI thread {t:?} keys {keys:?}"),
                &[
                    "--db", db, "-t", &t, "--print", "--size", "140x40", "--keys", keys,
                ],
            );
            assert_eq!(frame.lines().count(), 40, "{frame}");
        }
    }
    // the escapes are visible in the frame (not dropped)
    let frame = run_ok(
        "TUI h-bidi",
        &[
            "--db",
            db,
            "-t",
            "h-bidi-abc\u{202e}dcba",
            "--print",
            "--size",
            "140x40",
        ],
    );
    assert!(frame.contains("thread h-bidi-abc\\u{202e}dcba"), "{frame}");
}

#[test]
fn multi_byte_ids_never_panic() {
    // hostile.sqlite 'ids': task ids of 36 bytes with 'é' across byte 8, and 'abcdefgé';
    // hostile_ids.sqlite: checkpoint ids of 36 bytes with 'é' across byte 8 / byte 24
    for name in ["hostile.sqlite", "hostile_ids.sqlite"] {
        let db = fixture(name);
        let db = db.to_str().unwrap();
        for args in [
            vec!["show", "--db", db, "-t", "ids"],
            vec!["history", "--db", db, "-t", "ids"],
            vec!["--db", db],
        ] {
            run_ok(&format!("{args:?}"), &args);
        }
        for keys in TUI_KEYS {
            let frame = run_ok(
                &format!("TUI {name} keys {keys:?}"),
                &[
                    "--db", db, "-t", "ids", "--print", "--size", "140x40", "--keys", keys,
                ],
            );
            assert_eq!(frame.lines().count(), 40, "{frame}");
        }
    }
    let db = fixture("hostile_ids.sqlite");
    let db = db.to_str().unwrap();
    let hist = run_ok("history", &["history", "--db", db, "-t", "ids"]);
    // ids are cut by characters: 36 bytes but 35 characters are shown whole
    assert!(
        hist.contains("1fffffff-0000-6000-8000é00000000000"),
        "{hist}"
    );
    assert!(
        hist.contains("1ffffffé-0000-6000-8000-00000000000"),
        "{hist}"
    );
    let show = run_ok("show", &["show", "--db", db, "-t", "ids"]);
    assert!(
        show.contains("abcdefgé-0000-6000-8000-00000000000"),
        "{show}"
    );
    // LangGraph's get_state raises on a non-hex checkpoint id; superstep shows it and says why
    // the task ids are missing
    assert!(
        show.contains(
            "tasks.id: checkpoint id \"1ffffffé-0000-6000-8000-00000000000\" is not a hex uuid"
        ),
        "{show}"
    );
}

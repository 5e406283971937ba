//! `superstep store ls|get`: LangGraph's key-value store kept in the checkpoint file, read as
//! LangGraph reads it. The oracle is tests/fixtures/store.json — LangGraph's own
//! `list_namespaces()` and `search()` over the SqliteStore that tests/oracle/gen_store.py filled
//! (hostile strings in keys and values, LIKE wildcards in labels, an updated and a deleted item).

use crate::common;

use common::{dir_state, scratch, stderr, stdout, superstep};
use serde_json::{json, Value as Json};

fn expected() -> Json {
    let text = std::fs::read_to_string(common::fixture("store.json")).unwrap();
    serde_json::from_str::<Json>(&text).unwrap()["store"].clone()
}

fn json_of(args: &[&str]) -> Json {
    let out = superstep(args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

#[test]
fn namespaces_keys_and_values_are_langgraphs() {
    let (dir, db) = scratch("store.sqlite");
    let db = db.to_str().unwrap();
    let before = dir_state(dir.path());
    let want = expected();
    let items = want["items"].as_array().unwrap();
    // namespaces, with as many items as LangGraph's search finds in each
    let got = json_of(&["store", "ls", "--db", db, "--json"]);
    let got_ns: Vec<Json> = got["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["namespace"].clone())
        .collect();
    assert_eq!(Json::Array(got_ns), want["namespaces"]);
    for n in got["namespaces"].as_array().unwrap() {
        let count = items
            .iter()
            .filter(|i| i["namespace"] == n["namespace"])
            .count();
        assert_eq!(n["items"], json!(count), "{n}");
    }
    // every item by its namespace (labels joined with "." and as a JSON list) and key
    for i in items {
        let mut want_item = i.clone();
        want_item.as_object_mut().unwrap().remove("score");
        let ns: Vec<&str> = i["namespace"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        let key = i["key"].as_str().unwrap();
        assert_eq!(
            json_of(&["store", "get", &ns.join("."), key, "--db", db, "--json"]),
            want_item
        );
        let listed = json!(ns).to_string();
        assert_eq!(
            json_of(&["store", "get", &listed, key, "--db", db, "--json"]),
            want_item
        );
    }
    // a namespace lists what is in it and under it, never a sibling that shares a text prefix
    // (memories.u10) or matches a LIKE wildcard (memories.u_1)
    let u1 = json_of(&["store", "ls", "memories.u1", "--db", db, "--json"]);
    let keys: Vec<&str> = u1["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["rust", "tea"]);
    let users = json_of(&["store", "ls", "users", "--db", db, "--json"]);
    assert_eq!(users["items"].as_array().unwrap().len(), 2);
    assert_eq!(
        before,
        dir_state(dir.path()),
        "reading the store changed the directory"
    );
}

#[test]
fn what_a_store_holds_reaches_the_terminal_escaped() {
    let (_dir, db) = scratch("store.sqlite");
    let db = db.to_str().unwrap();
    for args in [
        vec!["store", "ls", "hostile", "--db", db],
        vec!["store", "ls", "--db", db],
        vec!["store", "get", "hostile", "newlinetwo\nlines", "--db", db],
    ] {
        let out = superstep(&args);
        let text = stdout(&out) + &stderr(&out);
        for bad in ['\x1b', '\x07', '\u{9b}', '\u{202e}'] {
            assert!(!text.contains(bad), "{args:?}: raw {bad:?} in {text:?}");
        }
    }
    let out = superstep(&["store", "ls", "hostile", "--db", db]);
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 5, "{text}");
    assert!(text.contains("clear\\e[2J\\e[H"), "{text}");
}

#[test]
fn a_database_without_a_store_is_not_given_one() {
    let (dir, db) = scratch("linear.sqlite");
    let db = db.to_str().unwrap();
    let before = dir_state(dir.path());
    let out = superstep(&["store", "ls", "--db", db]);
    assert!(out.status.success());
    assert!(
        stderr(&out).contains("no LangGraph store in this database"),
        "{}",
        stderr(&out)
    );
    let out = superstep(&["store", "get", "a", "b", "--db", db]);
    assert_eq!(out.status.code(), Some(2));
    let out = superstep(&["store", "ls", "a..b", "--db", db]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("expected labels joined with"),
        "{}",
        stderr(&out)
    );
    assert_eq!(before, dir_state(dir.path()));
}

/// The TUI's Store view (`:store [NAMESPACE]`): namespaces with their item counts, each item's
/// value under its key; inspection leaves the file and its directory as they were.
#[test]
fn the_tui_store_view() {
    let (dir, db) = scratch("store.sqlite");
    let before = dir_state(dir.path());
    let out = superstep(&[
        "--db",
        db.to_str().unwrap(),
        "--keys",
        ":store<Space>memories<Enter>",
        "--print",
        "--size",
        "100x20",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    common::snapshot_settings().bind(|| insta::assert_snapshot!("tui_store_view", stdout(&out)));
    let out = superstep(&[
        "--db",
        db.to_str().unwrap(),
        "--keys",
        ":store<Enter>",
        "--print",
    ]);
    let text = stdout(&out);
    assert!(text.contains("Store · 12 items in 7 namespaces"), "{text}");
    assert!(!text.contains('\x1b'), "a raw escape reached the frame");
    assert_eq!(before, dir_state(dir.path()));
    // a DB without a store says so, and is not given one
    let (dir, db) = scratch("linear.sqlite");
    let before = dir_state(dir.path());
    let out = superstep(&[
        "--db",
        db.to_str().unwrap(),
        "--keys",
        ":store<Enter>",
        "--print",
    ]);
    assert!(
        stdout(&out).contains("no LangGraph store in this DB"),
        "{}",
        stdout(&out)
    );
    assert_eq!(before, dir_state(dir.path()));
}

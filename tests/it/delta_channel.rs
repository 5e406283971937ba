//! DeltaChannel state keys in a spec (issue 12 item 8): the spec errors a wrong declaration gets,
//! and the inspector reading what the engine wrote — every checkpoint's values equal to what it
//! reads at the same checkpoint of the thread LangGraph 1.2.24 wrote from the twin of the same
//! spec (tests/differential/expected/delta.sqlite). The rows themselves are compared by
//! tests/differential.rs (graph `delta`) and the hand-off suite.

use crate::common;
use common::*;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn spec_with(dir: &Path, key: &str) -> String {
    let p = dir.join("g.json");
    let spec = format!(
        r#"{{"name": "g", "code_inline": "def a(s):\n    return {{}}\ndef merge(s, w):\n    return s\n",
            "state": {{"n": {{}}, "log": {key}}},
            "nodes": ["a"], "edges": [["__start__", "a"]], "input": {{"n": 1}}}}"#
    );
    std::fs::write(&p, spec).unwrap();
    p.display().to_string()
}

#[test]
fn a_wrong_delta_declaration_is_a_spec_error_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.sqlite");
    let db = db.to_str().unwrap();
    for (key, needle) in [
        (
            r#"{"reducer": "add", "delta": {"snapshot_frequency": 0}}"#,
            "state.log.delta.snapshot_frequency: expected a positive integer, got 0",
        ),
        (
            r#"{"reducer": "add", "delta": {"snapshot_frequency": 2.5}}"#,
            "state.log.delta.snapshot_frequency: expected a positive integer",
        ),
        (
            r#"{"reducer": "add", "delta": {"every": 3}}"#,
            "state.log.delta.every: unknown key (expected snapshot_frequency)",
        ),
        (
            r#"{"reducer": "add", "delta": 3}"#,
            "state.log.delta: expected true or",
        ),
        (
            r#"{"delta": true}"#,
            "state.log.delta: a delta channel needs a reducer",
        ),
        (
            r#"{"reducer": "add", "type": "int", "delta": true}"#,
            "state.log.type: a delta channel with reducer \"add\"",
        ),
        (
            r#"{"reducer": "merge", "type": "any", "delta": true}"#,
            "state.log.type: a delta channel needs a concrete type",
        ),
        (
            r#"{"reducer": "add", "default": ["x"], "delta": true}"#,
            "state.log.default: a delta channel starts from its type's empty value",
        ),
    ] {
        let spec = spec_with(dir.path(), key);
        let o = superstep(&["--db", db, "run", &spec, "-t", "x"]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{key}: {err}");
        assert!(err.contains(needle), "{key}: {err:?} lacks {needle:?}");
        assert!(!Path::new(db).exists(), "{key}: a rejected spec wrote {db}");
    }
    // the two accepted forms
    for key in [
        r#"{"reducer": "add", "type": "list", "delta": true}"#,
        r#"{"reducer": "merge", "type": "dict", "delta": {"snapshot_frequency": 7}}"#,
    ] {
        let spec = spec_with(dir.path(), key);
        let o = superstep(&["--db", db, "run", &spec, "-t", key]);
        assert_eq!(o.status.code(), Some(0), "{key}: {}", stderr(&o));
    }
}

fn history(db: &str, thread: &str) -> Vec<serde_json::Value> {
    let g = root().join("graphs/delta.json");
    let o = superstep(&[
        "history",
        "--db",
        db,
        "--thread",
        thread,
        "--graph",
        g.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    serde_json::from_str::<serde_json::Value>(&stdout(&o))
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn the_inspector_rebuilds_what_the_engine_wrote_as_it_does_langgraphs_rows() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.sqlite");
    let db = db.to_str().unwrap();
    let g = root().join("graphs/delta.json");
    // the differential scenario's "long" thread: 12 ticks, `log` snapshots every 3 updates
    let o = superstep(&[
        "--db",
        db,
        "run",
        g.to_str().unwrap(),
        "-t",
        "long",
        "--input",
        r#"{"n": 0, "limit": 12, "ask": false, "log": []}"#,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let expected = root().join("tests/differential/expected/delta.sqlite");
    let ours = history(db, "long");
    let theirs = history(expected.to_str().unwrap(), "long");
    assert_eq!(ours.len(), theirs.len());
    assert!(ours.len() > 12, "{}", ours.len());
    let mut rebuilt = 0;
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(a["values"], b["values"], "checkpoint {i} of {}", ours.len());
        assert_eq!(a["next"], b["next"], "checkpoint {i}");
        assert_eq!(a["metadata"], b["metadata"], "checkpoint {i}");
        if a["metadata"]["counters_since_delta_snapshot"]["log"].is_array()
            && a["values"]["log"].as_array().is_some_and(|l| !l.is_empty())
        {
            rebuilt += 1;
        }
    }
    // most checkpoints hold no `log` blob: its value was rebuilt from the ancestors' writes
    assert!(rebuilt >= 6, "{rebuilt}");
    // operator.add over a batch: each write is one item (the input's `[]` too)
    assert_eq!(
        ours[0]["values"]["log"],
        serde_json::json!([
            [],
            "t1",
            "t2",
            "t3",
            "t4",
            "t5",
            "t6",
            "t7",
            "t8",
            "t9",
            "t10",
            "t11",
            "t12"
        ])
    );
}

/// The values and next LangGraph's own get_state_history gave for every thread of the `delta`
/// scenario (run_twin.py `dump_values`: expected/delta.values.json), against the inspector's
/// history with the spec (so the Starlark batch reducer `merge_unique` runs) on LangGraph's DB.
/// (The engine's rows for the same scenario equal LangGraph's: tests/differential.rs.)
#[test]
fn history_values_equal_langgraphs_get_state_history_on_both_dbs() {
    let dump: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/differential/expected/delta.values.json"))
            .unwrap(),
    )
    .unwrap();
    let theirs_db = root().join("tests/differential/expected/delta.sqlite");
    let mut compared = 0;
    for (thread, states) in dump.as_object().unwrap() {
        let states = states.as_array().unwrap();
        let shown = history(theirs_db.to_str().unwrap(), thread);
        assert_eq!(shown.len(), states.len(), "{thread}");
        for (i, (s, lg)) in shown.iter().zip(states).enumerate() {
            assert_eq!(
                s["config"]["configurable"]["checkpoint_id"], lg["checkpoint_id"],
                "{thread} #{i}"
            );
            assert_eq!(s["values"], lg["values"], "{thread} #{i}: values");
            assert_eq!(s["next"], lg["next"], "{thread} #{i}: next");
            assert!(
                !s.to_string().contains("$snapshot"),
                "{thread} #{i}: a delta key not rebuilt: {}",
                s["values"]
            );
            compared += 1;
        }
    }
    assert!(compared > 60, "{compared}");
}

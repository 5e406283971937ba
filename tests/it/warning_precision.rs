//! How honest the DB-only warnings are, measured over every oracle fixture: of the snapshots
//! that carry a warning about their values, how many really show values that differ from
//! LangGraph's own `get_state` / `get_state_history` (the fixture's JSON)? A warning on every
//! snapshot teaches users to ignore warnings; the figure must say that most warnings are real.
//!
//! Recall is `oracle_fixtures`' job (no silent difference); this test measures precision, and
//! that no warning at all appears when the graph's topology is known.

use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use superstep::inspect::Thread;
use superstep::snapshot::topology::Topology;
use superstep::snapshot::Snapshot;
use superstep::store::{Mode, Store};
use superstep::value::ViewOptions;

fn fixtures_dir() -> PathBuf {
    std::env::var_os("SUPERSTEP_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures"))
}

fn fixtures() -> Vec<(PathBuf, PathBuf)> {
    let mut out: Vec<_> = std::fs::read_dir(fixtures_dir())
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter_map(|j| {
            let db = j.with_extension("sqlite");
            db.exists().then_some((j, db))
        })
        .collect();
    out.sort();
    assert!(out.len() >= 15, "expected the oracle fixtures");
    out
}

/// Every snapshot of every thread dumped by the oracle, ours beside LangGraph's.
fn each_snapshot(topology: bool, mut f: impl FnMut(&str, &Snapshot, &Json)) {
    for (json, db) in fixtures() {
        let expected: Json =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let name = json.file_stem().unwrap().to_string_lossy().to_string();
        let store = Store::open(&db, Mode::ReadOnly).unwrap();
        for t in expected["threads"].as_array().unwrap() {
            let history = t["history"].as_array().unwrap();
            if history.is_empty() {
                continue;
            }
            let tid = t["thread_id"].as_str().unwrap();
            let ns = t["checkpoint_ns"].as_str().unwrap_or("");
            let topo = topology.then(|| Topology::from_oracle_json(&t["topology"]).unwrap());
            let th = Thread::open(&store, tid, ns, topo).unwrap();
            let label = format!("{name}/{tid}{ns}");
            f(&label, &th.show(None).unwrap(), &t["state"]);
            let mut mine = Vec::new();
            th.for_each_history(
                None,
                50,
                |s| -> Result<(), superstep::inspect::InspectError> {
                    mine.push(s);
                    Ok(())
                },
            )
            .unwrap();
            for (s, h) in mine.iter().zip(history) {
                f(&label, s, h);
            }
        }
    }
}

fn values_warnings(s: &Snapshot) -> Vec<String> {
    s.warnings
        .iter()
        .filter(|w| w.field.starts_with("values"))
        .map(|w| w.field.clone())
        .collect()
}

#[test]
fn most_values_warnings_are_real_and_none_with_the_graph() {
    let (mut views, mut warned, mut real) = (0usize, 0usize, 0usize);
    let mut by_field = std::collections::BTreeMap::<String, (usize, usize)>::new();
    let mut false_alarms = Vec::new();
    each_snapshot(false, |label, s, theirs| {
        views += 1;
        let fields = values_warnings(s);
        if fields.is_empty() {
            return;
        }
        warned += 1;
        let ours = s.to_json(ViewOptions::default());
        let differs = ours["values"] != theirs["values"];
        real += usize::from(differs);
        for f in fields {
            let e = by_field
                .entry(
                    f.split('.')
                        .nth(1)
                        .map_or("values", |_| "values.<key>")
                        .to_string(),
                )
                .or_default();
            e.0 += 1;
            e.1 += usize::from(differs);
        }
        if !differs {
            false_alarms.push(format!("{label} {}: {:?}", s.checkpoint_id, s.warnings));
        }
    });
    let precision = real as f64 / warned.max(1) as f64;
    eprintln!(
        "warning precision (DB only): {real} of {warned} snapshots warned about their values really differ \
         from LangGraph's ({:.1}%); {views} views compared; by field (warned, real): {by_field:?}",
        100.0 * precision
    );
    for f in false_alarms.iter().take(20) {
        eprintln!("  warned, same values: {f}");
    }
    // with the graph's topology nothing is guessed, so nothing is warned about
    let mut with_graph = Vec::new();
    each_snapshot(true, |label, s, _| {
        let w: Vec<&str> = s
            .warnings
            .iter()
            .filter(|w| !w.message.contains("preview"))
            // a DeltaChannel with a Python reducer: the graph names it, superstep cannot run it
            .filter(|w| !w.message.contains("is a DeltaChannel"))
            .map(|w| w.field.as_str())
            .collect();
        if !w.is_empty() {
            with_graph.push(format!("{label} {}: {w:?}", s.checkpoint_id));
        }
    });
    assert!(
        with_graph.is_empty(),
        "warnings with the graph loaded: {with_graph:#?}"
    );
    assert!(
        precision > 0.5,
        "only {real} of {warned} warned snapshots really differ ({:.1}%)",
        100.0 * precision
    );
}

use crate::common;

use crate::common::snapshot_settings as settings;

#[test]
fn a_db_only_view_warns_where_it_may_differ_and_a_graph_silences_it() {
    let db = common::fixture("linear.sqlite");
    let fx = common::fixture("linear.json");
    let (db, fx) = (db.to_str().unwrap(), fx.to_str().unwrap());
    let store = Store::open(std::path::Path::new(db), Mode::ReadOnly).unwrap();
    let oldest = store.history("t1", "", None, 100).unwrap().pop().unwrap();
    let id = oldest.checkpoint_id.as_str();
    // the input checkpoint lacks 'vals', which later checkpoints hold: LangGraph shows [] there
    let o = common::superstep(&["show", "--db", db, "-t", "t1", "--checkpoint", id]);
    let db_only = common::stdout(&o);
    assert!(
        db_only.contains(
            "values.vals: 'vals' has no value at this checkpoint though the thread writes it"
        ),
        "{db_only}"
    );
    assert!(db_only.contains("likely []"), "{db_only}");
    assert_eq!(
        db_only.matches("note ").count(),
        1,
        "the DB-wide limitation, once: {db_only}"
    );
    // the newest checkpoint: nothing about it is uncertain, so no warning; the note stays
    let newest = common::stdout(&common::superstep(&["show", "--db", db, "-t", "t1"]));
    assert!(!newest.contains("warnings"), "{newest}");
    // with the graph: no warning, no note, and the default LangGraph shows
    let o = common::superstep(&[
        "show",
        "--db",
        db,
        "-t",
        "t1",
        "--checkpoint",
        id,
        "--topology",
        fx,
    ]);
    let graph = common::stdout(&o);
    assert!(
        !graph.contains("warning") && !graph.contains("note"),
        "{graph}"
    );
    assert!(graph.contains("vals  []"), "{graph}");
    settings().bind(|| {
        insta::assert_snapshot!("cli_warnings_db_only", db_only);
        insta::assert_snapshot!("cli_warnings_graph_loaded", graph);
    });
    // history --json: the note once on stderr, get_state_history's list on stdout
    let o = common::superstep(&["history", "--db", db, "-t", "t1", "--json"]);
    assert_eq!(
        common::stderr(&o)
            .matches("note: values.(unwritten)")
            .count(),
        1,
        "{}",
        common::stderr(&o)
    );
    let list: Json = serde_json::from_str(&common::stdout(&o)).unwrap();
    assert!(list
        .as_array()
        .unwrap()
        .iter()
        .all(|s| !s["warnings"].to_string().contains("(unwritten)")));
    // show --json: the limitation in its own field, not among the snapshot's warnings
    let o = common::superstep(&["show", "--db", db, "-t", "t1", "--json"]);
    let one: Json = serde_json::from_str(&common::stdout(&o)).unwrap();
    assert_eq!(one["limitations"][0]["field"], "values.(unwritten)");
    assert_eq!(one["warnings"], serde_json::json!([]));
}

#[test]
fn the_tui_states_the_limitation_once_and_warns_per_checkpoint_only_where_it_may_differ() {
    let db = common::fixture("linear.sqlite");
    let db = db.to_str().unwrap();
    // DB only, the input checkpoint: its own warning, and the limitation in the status line
    let o = common::superstep(&["--db", db, "-t", "t1", "--print", "--keys", "G"]);
    let frame = common::stdout(&o);
    assert!(
        frame.contains("⚠ values.vals: 'vals' has no value"),
        "{frame}"
    );
    assert!(frame.contains("INSPECT read-only · DB only"), "{frame}");
    assert_eq!(frame.matches('⚠').count(), 1, "{frame}");
    settings().bind(|| insta::assert_snapshot!("tui_warnings_db_only", frame));
    // the newest checkpoint: nothing may differ, so nothing is warned
    let o = common::superstep(&["--db", db, "-t", "t1", "--print"]);
    assert!(!common::stdout(&o).contains('⚠'), "{}", common::stdout(&o));
    // a graph spec loaded: no warning, no limitation
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("w.sqlite");
    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/graphs/approval.json");
    let o = common::superstep(&[
        spec,
        "--db",
        tmp.to_str().unwrap(),
        "--print",
        "--clock",
        "1796207639000000000",
        "--keys",
        "n n",
    ]);
    let frame = common::stdout(&o);
    assert!(frame.contains("DEBUG approval"), "{frame}");
    assert!(
        !frame.contains('⚠') && !frame.contains("DB only"),
        "{frame}"
    );
    settings().bind(|| {
        insta::assert_snapshot!(
            "tui_warnings_graph_loaded",
            frame.replace(tmp.to_str().unwrap(), "[TMP]/w.sqlite")
        )
    });
}

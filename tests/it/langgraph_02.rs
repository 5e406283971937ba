//! DBs written by LangGraph 0.2.x (issue 15 item 2): langgraph 0.2.20 + langgraph-checkpoint-sqlite
//! 1.0.3 and 0.2.76 + 2.0.6, sync and async savers (tests/oracle/v02). Every checkpoint is compared
//! with that version's own get_state by tests/oracle_fixtures.rs; this file pins what a user sees
//! on the threads the issue names: a pause, an error, values without the old per-node channels.

use crate::common;

use common::{fixture, stderr, stdout, superstep};

fn show(db: &str, thread: &str, extra: &[&str]) -> serde_json::Value {
    let db = fixture(db);
    let mut args = vec!["show", "--db", db.to_str().unwrap(), "-t", thread, "--json"];
    args.extend(extra);
    let o = superstep(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn a_paused_thread_shows_its_pending_interrupt() {
    for db in ["v0_2_76.sqlite", "v0_2_76_async.sqlite"] {
        let j = show(db, "paused", &[]);
        // LangGraph 0.2.76: next=('approve',), the interrupt pending, no id
        assert_eq!(j["next"], serde_json::json!(["approve"]), "{db}");
        assert_eq!(j["tasks"][0]["name"], "approve");
        assert_eq!(
            j["interrupts"][0]["value"]["question"],
            "Approve this action?"
        );
        assert!(j["interrupts"][0]["id"].is_null());
        assert_eq!(
            j["values"],
            serde_json::json!({"request": "transfer 100 EUR to Bob", "draft": "Plan: transfer 100 EUR to Bob", "log": ["draft"]}),
            "no per-node channel among the values"
        );
        let frame = {
            let db = fixture(db);
            stdout(&superstep(&[
                "--db",
                db.to_str().unwrap(),
                "-t",
                "paused",
                "--print",
                "--size",
                "150x35",
            ]))
        };
        assert!(frame.contains("interrupt in approve"), "{frame}");
    }
    // 0.2.20 (NodeInterrupt): the pending task and its interrupt are shown; its node's name is in
    // the graph only, and the warning says so, naming the format
    for db in ["v0_2_20.sqlite", "v0_2_20_async.sqlite"] {
        let j = show(db, "paused", &[]);
        assert_eq!(j["tasks"].as_array().unwrap().len(), 1, "{db}");
        assert_eq!(
            j["interrupts"][0]["value"]["question"],
            "Approve this action?"
        );
        let w = j["warnings"].to_string();
        assert!(
            w.contains("LangGraph 0.2 checkpoint format (v1") && w.contains("--topology"),
            "{w}"
        );
        // with the graph's topology (the oracle dump holds it) the name is exact
        let topo = fixture(&db.replace(".sqlite", ".json"));
        let j = show(db, "paused", &["--topology", topo.to_str().unwrap()]);
        assert_eq!(j["next"], serde_json::json!(["approve"]), "{db}");
    }
}

#[test]
fn an_error_thread_shows_the_failed_task() {
    for db in [
        "v0_2_20.sqlite",
        "v0_2_20_async.sqlite",
        "v0_2_76.sqlite",
        "v0_2_76_async.sqlite",
    ] {
        let j = show(db, "error", &[]);
        assert_eq!(j["tasks"][0]["error"], "ValueError('boom')", "{db}");
        assert!(j["values"].get("ok").is_none(), "{db}: {}", j["values"]);
        // three Send packets, worker 2 failed: as LangGraph shows it (0.2.20's async saver lost
        // the failed step's writes — LangGraph itself then shows no error)
        let j = show(db, "send_error", &[]);
        let oracle: serde_json::Value = serde_json::from_slice(
            &std::fs::read(fixture(&db.replace(".sqlite", ".json"))).unwrap(),
        )
        .unwrap();
        let theirs = oracle["threads"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["thread_id"] == "send_error")
            .unwrap();
        let errors = |tasks: &serde_json::Value| -> Vec<(serde_json::Value, serde_json::Value)> {
            tasks
                .as_array()
                .unwrap()
                .iter()
                .map(|t| (t["path"].clone(), t["error"].clone()))
                .collect()
        };
        assert_eq!(
            errors(&j["tasks"]),
            errors(&theirs["state"]["tasks"]),
            "{db}"
        );
        assert_eq!(j["tasks"].as_array().unwrap().len(), 3, "{db}");
    }
    let j = show("v0_2_76.sqlite", "send_error", &[]);
    assert_eq!(j["tasks"][2]["error"], "ValueError('worker 2 failed')");
    assert_eq!(
        j["tasks"][2]["path"],
        serde_json::json!(["__pregel_push", 2])
    );
}

#[test]
fn the_engine_will_not_mix_formats_on_an_old_thread() {
    let (_d, db) = common::scratch("v0_2_76.sqlite");
    let before = common::dir_state(db.parent().unwrap());
    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/graphs/approval.json");
    let d = db.to_str().unwrap();
    for args in [
        vec!["--db", d, "resume", spec, "-t", "paused", "--value", "true"],
        vec!["--db", d, "continue", spec, "-t", "paused"],
    ] {
        let o = superstep(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&o).contains(
                "thread \"paused\" was written in the LangGraph 0.2 checkpoint format (v2"
            ),
            "{}",
            stderr(&o)
        );
    }
    assert_eq!(common::dir_state(db.parent().unwrap()), before);
}

//! Recorded replay (issue 23): model and tool calls recorded per task attempt, answered from the
//! recording on time travel, a fork by update, a retry and a resume. The app
//! (`tests/replay/agent.py`) counts every real model call and tool effect in files; each test
//! runs superstep's CLI (a new process per command: recordings survive restarts).
//!
//! `SUPERSTEP_TEST_PYTHON=/path/to/python cargo test --test it -- --ignored replay_calls::`

use crate::common::replay::{
    app, assert_branch_replayed, checkpoint_at, run_calls, statuses, Scene,
};

/// The agent run to its end on thread t1 (plan, then four bump turns: ten supersteps).
fn ten_steps() -> Scene {
    let s = Scene::new(app("agent.py", "graph"));
    s.ok(
        "run",
        &[
            "-t",
            "t1",
            "--input",
            r#"{"messages":[{"role":"user","content":"hi"}]}"#,
        ],
    );
    assert_eq!(s.counted(), (5, 5), "5 model calls; policy + 4 bumps");
    s
}

/// The id of the user's message (to edit it in place: add_messages replaces by id).
fn human_id(s: &Scene) -> String {
    let out = crate::common::bridge::run(&s.db, &["show", "-t", "t1", "--json"]);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    j["values"]["messages"][0]["id"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn time_travel_answers_every_call_from_the_recording_and_writes_the_same_rows() {
    let s = ten_steps();
    let at2 = checkpoint_at(&s.db, "t1", 2);
    let j = s.json("replay", &["-t", "t1", "--checkpoint", &at2]);
    let calls = run_calls(&j);
    // steps 3..10: four bumps, each followed by the model's next turn
    assert_eq!(calls.len(), 8, "{calls:#?}");
    assert!(statuses(&calls).iter().all(|x| x == "recorded"));
    assert_eq!(s.counted(), (5, 5), "no model call, no tool effect");
    assert_branch_replayed(&s.db, "t1", &at2);
    // LangGraph's file holds LangGraph's tables only; the calls are in the sibling file
    let tables: Vec<String> = rusqlite::Connection::open(&s.db)
        .unwrap()
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(tables, ["checkpoints", "writes"]);
    assert!(s
        .db
        .with_file_name("app.sqlite.superstep-calls.sqlite")
        .exists());
}

#[test]
#[ignore = "needs Python with LangGraph and a Postgres server: tests/postgres/ci.sh runs it (SUPERSTEP_TEST_PYTHON, SUPERSTEP_TEST_PG)"]
fn pg_time_travel_answers_from_recordings_kept_in_the_postgres_database() {
    let mut s = Scene::new(app("agent.py", "graph"));
    s.db = crate::common::bridge::fresh_pg("replay_time_travel");
    s.ok(
        "run",
        &[
            "-t",
            "t1",
            "--input",
            r#"{"messages":[{"role":"user","content":"hi"}]}"#,
        ],
    );
    assert_eq!(s.counted(), (5, 5));
    let at2 = checkpoint_at(&s.db, "t1", 2);
    let j = s.json("replay", &["-t", "t1", "--checkpoint", &at2]);
    let calls = run_calls(&j);
    assert_eq!(calls.len(), 8);
    assert!(statuses(&calls).iter().all(|x| x == "recorded"));
    assert_eq!(s.counted(), (5, 5), "no model call, no tool effect");
    assert_branch_replayed(&s.db, "t1", &at2);
    assert_eq!(
        s.calls("t1").len(),
        18,
        "listed from the superstep_calls table"
    );
    // PostgresSaver's four tables, and superstep's own beside them
    let mut c = postgres::Client::connect(s.db.to_str().unwrap(), postgres::NoTls).unwrap();
    let tables: Vec<String> = c
        .query(
            "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(
        tables,
        [
            "checkpoint_blobs",
            "checkpoint_migrations",
            "checkpoint_writes",
            "checkpoints",
            // PostgresStore's (LangGraph's store for the run, issue 20)
            "store",
            "store_migrations",
            "superstep_call_aliases",
            "superstep_call_meta",
            "superstep_call_steps",
            "superstep_calls"
        ]
    );
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn replay_off_calls_the_model_and_the_tools_again() {
    let s = ten_steps();
    let at2 = checkpoint_at(&s.db, "t1", 2);
    let j = s.json(
        "replay",
        &["-t", "t1", "--checkpoint", &at2, "--replay", "off"],
    );
    assert!(statuses(&run_calls(&j)).iter().all(|x| x == "live"));
    assert_eq!(s.counted(), (9, 9), "4 model calls and 4 bumps again");
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn an_edited_message_goes_live_exactly_at_the_first_changed_request() {
    let s = ten_steps();
    let at0 = checkpoint_at(&s.db, "t1", 0);
    let id = human_id(&s);
    let values = format!(r#"{{"messages":[{{"role":"user","content":"hello","id":"{id}"}}]}}"#);
    s.ok(
        "update",
        &["-t", "t1", "--checkpoint", &at0, "--values", &values],
    );
    let j = s.json("continue", &["-t", "t1"]);
    let calls = run_calls(&j);
    let st = statuses(&calls);
    // plan's policy lookup does not depend on the message: answered; the model's first request
    // holds the edited message: diverged, and everything after it live
    assert_eq!(st[0], "recorded", "{calls:#?}");
    assert_eq!(calls[0]["name"], "policy");
    assert_eq!(st[1], "diverged");
    assert!(st[2..].iter().all(|x| x == "live"), "{st:?}");
    assert_eq!(calls[1]["diff"][0]["path"], "messages[0].content");
    assert_eq!(calls[1]["diff"][0]["recorded"], "hi");
    assert_eq!(calls[1]["diff"][0]["now"], "hello");
    let (model, tool) = s.counted();
    assert_eq!(
        (model - 5, tool - 5),
        (5, 4),
        "the new branch's calls, policy not again"
    );
    assert!(s.lines("tool")[5..].iter().all(|l| l.ends_with("hello")));
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn strict_fails_at_the_first_changed_request_naming_the_call() {
    let s = ten_steps();
    let at0 = checkpoint_at(&s.db, "t1", 0);
    let id = human_id(&s);
    let values = format!(r#"{{"messages":[{{"role":"user","content":"hello","id":"{id}"}}]}}"#);
    s.ok(
        "update",
        &["-t", "t1", "--checkpoint", &at0, "--values", &values],
    );
    let j: serde_json::Value =
        serde_json::from_str(&s.ended("continue", &["-t", "t1", "--replay", "strict", "--json"]))
            .unwrap();
    let pause = &j["pause"];
    assert_eq!(pause["kind"], "error", "{pause}");
    let e = pause["error"].as_str().unwrap();
    assert!(
        e.contains("ReplayMismatch")
            && e.contains("call 1 of task agent")
            && e.contains("model CountingModel")
            && e.contains(r#"messages[0].content: "hi" → "hello""#),
        "{e}"
    );
    assert_eq!(s.counted(), (5, 5), "strict called nothing");
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn calls_are_listed_exported_and_dropped_and_listing_changes_no_file() {
    let s = ten_steps();
    let rec = s.db.with_file_name("app.sqlite.superstep-calls.sqlite");
    let listing = |dir: &std::path::Path| {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                let bytes = if p.is_file() {
                    std::fs::read(&p).unwrap()
                } else {
                    vec![]
                };
                (p.file_name().unwrap().to_string_lossy().into_owned(), bytes)
            })
            .collect();
        v.sort();
        v
    };
    let before = listing(s.dir.path());
    let calls = s.calls("t1");
    assert_eq!(calls.len(), 10);
    assert_eq!(calls[0]["kind"], "tool");
    assert_eq!(calls[1]["kind"], "model");
    assert_eq!(calls[1]["input_tokens"], 10);
    assert_eq!(listing(s.dir.path()), before, "listing calls wrote nothing");
    // the TUI inspecting the file read-only, a task's calls open: nothing written either
    let tui = crate::common::bridge::run(
        &s.db,
        &[
            "-t",
            "t1",
            "--print",
            "--size",
            "130x34",
            "--keys",
            "3j <Tab> <Tab> <Enter>",
        ],
    );
    let screen = String::from_utf8_lossy(&tui.stdout);
    assert!(screen.contains("model and tool calls (1 live)"), "{screen}");
    assert_eq!(listing(s.dir.path()), before, "inspecting wrote nothing");
    // the human listing names each call
    let human = crate::common::bridge::run(&s.db, &["calls", "-t", "t1"]);
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.contains("thread t1: 10 calls in 1 run (10 live)"),
        "{text}"
    );
    assert!(text.contains(r#"bump({"k":3,"note":"hi"})"#), "{text}");

    // exported beside a copy of the checkpoint file, the recordings replay the thread there
    let other = tempfile::tempdir().unwrap();
    let copy = other.path().join("app.sqlite");
    for sidecar in ["", "-wal", "-shm"] {
        let from = s.dir.path().join(format!("app.sqlite{sidecar}"));
        if from.exists() {
            std::fs::copy(&from, other.path().join(format!("app.sqlite{sidecar}"))).unwrap();
        }
    }
    let exported = other.path().join("app.sqlite.superstep-calls.sqlite");
    let out = crate::common::bridge::run(
        &s.db,
        &["calls", "-t", "t1", "--export", exported.to_str().unwrap()],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let at2 = checkpoint_at(&copy, "t1", 2);
    let moved = Scene {
        db: copy,
        ..Scene::new(s.graph.clone())
    };
    let j = moved.json("replay", &["-t", "t1", "--checkpoint", &at2]);
    assert!(statuses(&run_calls(&j)).iter().all(|x| x == "recorded"));
    assert_eq!(moved.counted(), (0, 0));

    // dropped: the next time travel calls everything again
    let out = crate::common::bridge::run(&s.db, &["calls", "-t", "t1", "--drop"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "dropped 10 recorded calls of thread t1"
    );
    assert!(rec.exists());
    let j = s.json("replay", &["-t", "t1", "--checkpoint", &at2]);
    assert!(statuses(&run_calls(&j)).iter().all(|x| x == "live"));
    assert_eq!(s.counted(), (9, 9));
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn a_replayed_branch_is_replayed_again_and_a_fork_of_a_fork_follows_it() {
    let s = ten_steps();
    let at2 = checkpoint_at(&s.db, "t1", 2);
    s.ok("replay", &["-t", "t1", "--checkpoint", &at2]);
    // travel inside the replayed branch: its checkpoints stand for the original's
    let b = crate::common::replay::branches(&s.db, "t1");
    let second = b.last().unwrap();
    let mid = &second[second.len() - 4].1;
    let j = s.json("replay", &["-t", "t1", "--checkpoint", mid]);
    let calls = run_calls(&j);
    assert!(!calls.is_empty());
    assert!(
        statuses(&calls).iter().all(|x| x == "recorded"),
        "{calls:#?}"
    );
    assert_eq!(s.counted(), (5, 5));
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn a_run_with_no_record_writes_nothing_beside_the_store() {
    let s = Scene::new(app("agent.py", "graph"));
    s.ok(
        "run",
        &[
            "-t",
            "t1",
            "--no-record",
            "--input",
            r#"{"messages":[{"role":"user","content":"hi"}]}"#,
        ],
    );
    assert_eq!(s.counted(), (5, 5));
    let beside: Vec<String> = std::fs::read_dir(s.db.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("superstep-calls"))
        .collect();
    assert!(beside.is_empty(), "--no-record left {beside:?}");
}

//! The CLI's human and JSON output on committed LangGraph fixtures.

use crate::common;
use common::*;

use crate::common::snapshot_settings as settings;

fn run_ok(args: &[&str]) -> String {
    let o = superstep(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

#[test]
fn human_views_of_a_partial_parallel_resume() {
    let db = fixture("multi_interrupt.sqlite");
    let db = db.to_str().unwrap();
    settings().bind(|| {
        insta::assert_snapshot!(
            "cli_threads_multi_interrupt",
            run_ok(&["threads", "--db", db])
        );
        insta::assert_snapshot!(
            "cli_show_partial_live",
            run_ok(&["show", "--db", db, "-t", "partial"])
        );
        insta::assert_snapshot!(
            "cli_history_partial",
            run_ok(&["history", "--db", db, "-t", "partial"])
        );
    });
}

#[test]
fn human_view_of_an_error_and_subgraph() {
    let errors = fixture("errors.sqlite");
    let sub = fixture("subgraph.sqlite");
    settings().bind(|| {
        insta::assert_snapshot!(
            "cli_history_errors",
            run_ok(&["history", "--db", errors.to_str().unwrap(), "-t", "err"])
        );
        insta::assert_snapshot!(
            "cli_threads_subgraph",
            run_ok(&["threads", "--db", sub.to_str().unwrap()])
        );
    });
}

#[test]
fn json_output_is_langgraphs_snapshot() {
    // The CLI path prints what LangGraph's get_state / get_state_history printed (with topology).
    let db = fixture("time_travel.sqlite");
    let fx = fixture("time_travel.json");
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&fx).unwrap()).unwrap();
    for t in expected["threads"].as_array().unwrap() {
        let tid = t["thread_id"].as_str().unwrap();
        let args = [
            "--db",
            db.to_str().unwrap(),
            "-t",
            tid,
            "--json",
            "--topology",
            fx.to_str().unwrap(),
        ];
        let show: serde_json::Value =
            serde_json::from_str(&run_ok(&[&["show"], &args[..]].concat())).unwrap();
        let hist: serde_json::Value =
            serde_json::from_str(&run_ok(&[&["history"], &args[..]].concat())).unwrap();
        let strip = |mut j: serde_json::Value| {
            for w in j["pending_writes"].as_array_mut().unwrap() {
                *w = serde_json::json!({"task_id": w["task_id"], "channel": w["channel"], "value": w["value"]});
            }
            j.as_object_mut().unwrap().remove("warnings");
            j.as_object_mut().unwrap().remove("limitations");
            j
        };
        assert_eq!(strip(show), t["state"], "{tid}: show");
        let hist: Vec<_> = hist
            .as_array()
            .unwrap()
            .iter()
            .cloned()
            .map(strip)
            .collect();
        assert_eq!(&hist, t["history"].as_array().unwrap(), "{tid}: history");
        let limited: serde_json::Value =
            serde_json::from_str(&run_ok(&[&["history", "--limit", "2"], &args[..]].concat()))
                .unwrap();
        assert_eq!(limited.as_array().unwrap().len(), 2.min(hist.len()));
    }
}

#[test]
fn threads_json_and_overview() {
    let db = fixture("linear.sqlite");
    let j: serde_json::Value = serde_json::from_str(&run_ok(&[
        "threads",
        "--db",
        db.to_str().unwrap(),
        "--json",
    ]))
    .unwrap();
    let ids: Vec<&str> = j
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["thread_id"].as_str().unwrap())
        .collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted);
    assert!(!ids.is_empty());
    // no subcommand and no --db: the embedded demo database (made by real LangGraph)
    let demo = run_ok(&[]);
    assert!(demo.contains("THREAD") && demo.contains("values"), "{demo}");
}

#[test]
fn human_show_reads_an_agent_conversation() {
    // a create_react_agent thread real LangGraph wrote (tests/oracle/gen_agent.py)
    let db = fixture("agent.sqlite");
    let db = db.to_str().unwrap();
    let out = run_ok(&["show", "--db", db, "-t", "react"]);
    assert!(
        out.contains("  messages  12 msgs · last: AI \"The Hôtel du Louvre"),
        "{out}"
    );
    assert!(out.contains("… 6 earlier messages (--messages all prints every one)"));
    assert!(!out.contains("__type__"), "no raw message JSON: {out}");
    settings().bind(|| insta::assert_snapshot!("cli_show_conversation", out));
    let all = run_ok(&["show", "--db", db, "-t", "react", "--messages", "all"]);
    assert!(
        all.contains("#0   System  You are a concise travel assistant."),
        "{all}"
    );
    let none = run_ok(&["show", "--db", db, "-t", "long", "--messages", "0"]);
    assert!(
        none.contains("  messages  600 msgs · last: AI \"Turn 149"),
        "{none}"
    );
    assert!(!none.contains("#599"), "{none}");
    // --json is LangGraph's snapshot, messages as tagged objects
    let json: serde_json::Value =
        serde_json::from_str(&run_ok(&["show", "--db", db, "-t", "react", "--json"])).unwrap();
    assert_eq!(
        json["values"]["messages"][11]["__type__"],
        "langchain_core.messages.ai.AIMessage"
    );
    let o = superstep(&["show", "--db", db, "-t", "react", "--messages", "some"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("expected a number of messages or \"all\""),
        "{}",
        stderr(&o)
    );
}

/// `show` names what each task wrote, messages as messages: `wrote messages: Tool get_weather ✓
/// "Paris: …"` (it printed `result={"messages":[Tool …]}`), and a pending write of one message is
/// that message (it printed `1 msg · last: Tool …`). A real create_react_agent step with two
/// parallel tool calls (agent.sqlite, thread react, step 1).
#[test]
fn show_says_what_each_task_wrote_as_messages() {
    let db = fixture("agent.sqlite");
    let db = db.to_str().unwrap();
    let out = run_ok(&[
        "show",
        "--db",
        db,
        "-t",
        "react",
        "--checkpoint",
        "1f1ef001-e7ee-6304-8001-90cc33c02b5b",
    ]);
    assert!(out.contains(
        "tools  done         wrote messages: Tool get_weather ✓ \"Paris: 18°C, light rain, wind 12 km/h from the south-west\"\n"
    ), "{out}");
    assert!(
        out.contains("tools  done         wrote messages: Tool calculator ✓ \"1024\"\n"),
        "{out}"
    );
    assert!(
        out.contains("0  messages         WRITE      Tool calculator ✓ \"1024\"\n"),
        "{out}"
    );
    assert!(!out.contains("1 msg · last"), "{out}");
}

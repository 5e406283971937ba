//! Recorded replay on graphs of other shapes (issue 23): async nodes, `Send` fan-out (several
//! tasks calling the model concurrently), a subgraph, retries after an error (a retry policy,
//! and a run stopped by the error then continued), parallel interrupts, and the support demo
//! (going back before the refund does not refund twice). Apps: `tests/replay/shapes.py`.
//!
//! `SUPERSTEP_TEST_PYTHON=/path/to/python cargo test --test it -- --ignored replay_shapes::`

use crate::common::replay::{
    app, assert_branch_replayed, branches, checkpoint_at, run_calls, statuses, Scene,
};
use serde_json::Value as Json;

fn shape(attr: &str, input: &str) -> Scene {
    let s = Scene::new(app("shapes.py", attr));
    s.ok("run", &["-t", "t1", "--input", input]);
    s
}

/// Time travel to the original branch's checkpoint at `step`: every call answered from the
/// recording, nothing called, the same rows. Returns the run's calls.
fn replays_from(s: &Scene, step: i64) -> Vec<Json> {
    let before = s.counted();
    let at = checkpoint_at(&s.db, "t1", step);
    let j = s.json("replay", &["-t", "t1", "--checkpoint", &at]);
    let calls = run_calls(&j);
    assert!(!calls.is_empty());
    assert!(
        statuses(&calls).iter().all(|x| x == "recorded"),
        "{calls:#?}"
    );
    assert_eq!(s.counted(), before, "no model call, no tool effect");
    assert_branch_replayed(&s.db, "t1", &at);
    calls
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn an_async_graph_replays() {
    let s = shape(
        "async_graph",
        r#"{"messages":[{"role":"user","content":"hi"}]}"#,
    );
    assert_eq!(s.counted(), (5, 4));
    assert_eq!(replays_from(&s, 1).len(), 8);
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn send_fan_out_tasks_replay_each_their_own_calls() {
    let s = shape("fanout", r#"{"items":[1,2,3],"answers":[]}"#);
    assert_eq!(s.counted(), (3, 0));
    let calls = replays_from(&s, 1);
    // three tasks of one node in one superstep, each answered with its own item's answer
    assert_eq!(calls.len(), 3);
    let mut asked: Vec<&str> = calls
        .iter()
        .map(|c| c["request"].as_str().unwrap())
        .collect();
    asked.sort();
    assert_eq!(
        asked,
        [
            "1 msgs, last human: item 1",
            "1 msgs, last human: item 2",
            "1 msgs, last human: item 3"
        ]
    );
    for c in &calls {
        let item = c["request"].as_str().unwrap().rsplit(' ').next().unwrap();
        assert!(c["response"]
            .as_str()
            .unwrap()
            .contains(&format!("item {item}")));
    }
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn a_text_completion_llm_replays() {
    let s = shape("completion", r#"{"notes":[]}"#);
    assert_eq!(s.counted(), (3, 0));
    let calls = replays_from(&s, 0);
    let asked: Vec<&str> = calls
        .iter()
        .map(|c| c["request"].as_str().unwrap())
        .collect();
    assert_eq!(
        asked,
        [
            "1 prompts, last: title",
            "1 prompts, last: outline",
            "1 prompts, last: polish completed: outline"
        ]
    );
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn a_call_inside_a_subgraph_replays() {
    let s = shape("nested", r#"{"notes":[]}"#);
    assert_eq!(s.counted(), (1, 1));
    let calls = replays_from(&s, 0);
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["node"], "ask");
    assert!(calls[0]["ns"].as_str().unwrap().starts_with("inner:"));
    assert!(calls[0]["ns"].as_str().unwrap().contains("|ask:"));
    assert_eq!(calls[1]["name"], "note");
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn a_retry_policy_replays_the_failed_attempt_and_the_one_after_it() {
    let s = shape("retry", r#"{"notes":[]}"#);
    // fetch: attempt 1 asks, flaky fails; attempt 2 asks, flaky works; finish asks
    assert_eq!(s.counted(), (3, 2));
    let calls = replays_from(&s, 0);
    let seen: Vec<(u64, &str, bool)> = calls
        .iter()
        .map(|c| {
            (
                c["attempt"].as_u64().unwrap(),
                c["name"].as_str().unwrap(),
                c["error"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (1, "CountingModel", false),
            (1, "flaky", true),
            (2, "CountingModel", false),
            (2, "flaky", false),
            (1, "CountingModel", false)
        ]
    );
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn continuing_after_an_error_answers_the_calls_before_it_and_retries_the_failed_one() {
    let s = Scene::new(app("shapes.py", "once"));
    s.ended("run", &["-t", "t1", "--input", r#"{"notes":[]}"#]);
    assert_eq!(
        s.counted(),
        (1, 1),
        "fetch asked, flaky failed, the run stopped"
    );
    let j = s.json("continue", &["-t", "t1"]);
    let calls = run_calls(&j);
    let st = statuses(&calls);
    assert_eq!(st, ["recorded", "live", "live"], "{calls:#?}");
    assert_eq!(calls[1]["name"], "flaky");
    assert!(!calls[1]["error"].as_bool().unwrap());
    assert_eq!(
        s.counted(),
        (2, 2),
        "the model not asked again before the retried tool"
    );
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn parallel_interrupts_do_not_call_the_model_again_on_resume_or_replay() {
    let s = Scene::new(app("shapes.py", "parallel"));
    let j = s.json("run", &["-t", "t1", "--input", r#"{"notes":[]}"#]);
    assert_eq!(s.counted(), (2, 0));
    let ids: Vec<String> = j["pause"]["interrupts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 2, "{}", j["pause"]);
    let a = format!("{}=\"yes\"", ids[0]);
    let b = format!("{}=\"no\"", ids[1]);
    let j = s.json("resume", &["-t", "t1", "--id", &a, "--id", &b]);
    // both nodes run again from their start: their model calls come from the first execution
    let calls = run_calls(&j);
    assert_eq!(statuses(&calls), ["recorded", "recorded"], "{calls:#?}");
    assert_eq!(s.counted(), (2, 0));
    // back before them: they ask (answered) and interrupt again
    let at = checkpoint_at(&s.db, "t1", 0);
    let j = s.json("replay", &["-t", "t1", "--checkpoint", &at]);
    assert_eq!(statuses(&run_calls(&j)), ["recorded", "recorded"]);
    assert_eq!(j["pause"]["kind"], "interrupt");
    assert_eq!(s.counted(), (2, 0));
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn going_back_before_the_refund_does_not_refund_twice() {
    let graph = format!(
        "{}/examples/support/langgraph.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let s = Scene::new(graph);
    let ask = r#"{"messages": "My tent from order 1042 arrived torn, I want a refund"}"#;
    let j = s.json("run", &["-t", "o1", "--input", ask]);
    assert_eq!(j["pause"]["kind"], "interrupt");
    let refunds = |j: &Json| {
        j["output"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|o| {
                o["text"]
                    .as_str()
                    .unwrap_or("")
                    .contains("refund of 189.00 sent")
            })
            .count()
    };
    let j = s.json("resume", &["-t", "o1", "--value", "true"]);
    assert_eq!(refunds(&j), 1, "the refund is issued once");
    // the checkpoint before the approval interrupt, on the original branch
    let first = &branches(&s.db, "o1")[0];
    let out = crate::common::bridge::run(&s.db, &["history", "-t", "o1", "--json"]);
    let hist: Vec<Json> = serde_json::from_slice(&out.stdout).unwrap();
    let before = first
        .iter()
        .find(|(_, id)| {
            hist.iter().any(|h| {
                h["config"]["configurable"]["checkpoint_id"] == id.as_str()
                    && h["next"] == serde_json::json!(["approval"])
            })
        })
        .map(|(_, id)| id.clone())
        .unwrap();
    let j = s.json("replay", &["-t", "o1", "--checkpoint", &before]);
    assert_eq!(j["pause"]["kind"], "interrupt", "the human is asked again");
    let j = s.json("resume", &["-t", "o1", "--value", "true"]);
    assert_eq!(refunds(&j), 0, "no second refund");
    let calls = run_calls(&j);
    let refund: Vec<&Json> = calls
        .iter()
        .filter(|c| c["name"] == "issue_refund")
        .collect();
    assert_eq!(refund.len(), 1);
    assert_eq!(refund[0]["status"], "recorded");
    assert!(
        statuses(&calls).iter().all(|x| x == "recorded"),
        "{calls:#?}"
    );
}

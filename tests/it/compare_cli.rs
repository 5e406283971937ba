//! `superstep diff / diverge / why` on the command line: addresses, human and JSON output, and
//! every bad input as one line on stderr with exit code 2, the store left byte-identical.

use crate::common::{dir_state, scratch, stderr, stdout, superstep};
use serde_json::Value as Json;

const DB: &str = "compare.sqlite";

fn run(args: &[&str]) -> (i32, String, String) {
    let (dir, db) = scratch(DB);
    let before = dir_state(dir.path());
    let mut a: Vec<&str> = args.to_vec();
    let db = db.to_string_lossy().into_owned();
    a.extend(["--db", &db]);
    let o = superstep(&a);
    assert_eq!(dir_state(dir.path()), before, "{args:?} changed the store");
    (o.status.code().unwrap_or(-1), stdout(&o), stderr(&o))
}

#[test]
fn diff_addresses_thread_step_and_checkpoint_ids() {
    // a fork and its original at step 2: the edited AI message and its tool call
    let (code, out, err) = run(&["diff", "chat_fork@2", "chat_a@2"]);
    assert_eq!(code, 0, "{err}");
    for want in [
        "A  chat_fork · step 2 update",
        "B  chat_a · step 2 loop",
        "~ messages[1] tool_calls  AI calls weather(city=\"Oslo\") → AI calls weather(city=\"Paris\")",
        "- messages[1] tool call   weather {\"city\":\"Oslo\"}",
        "+ messages[2]             Tool weather ✓ \"Paris: sunny\"",
        "~ next                    tools → agent",
    ] {
        assert!(out.contains(want), "missing {want:?} in\n{out}");
    }
    // the same pair by ids, as JSON
    let (_, j, _) = run(&["diff", "chat_fork@2", "chat_a@2", "--json"]);
    let j: Json = serde_json::from_str(&j).unwrap();
    let (a, b) = (
        j["a"]["checkpoint_id"].as_str().unwrap().to_string(),
        j["b"]["checkpoint_id"].as_str().unwrap().to_string(),
    );
    let (code, j2, err) = run(&["diff", &format!("chat_fork@{a}"), &b, "--json"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(serde_json::from_str::<Json>(&j2).unwrap(), j);
    assert_eq!(j["values"][0]["change"], "messages");
    // a thread alone is its newest checkpoint; a checkpoint against itself is the same
    let (code, out, _) = run(&["diff", "par_a", "par_a"]);
    assert_eq!(code, 0);
    assert!(out.contains("same"), "{out}");
}

#[test]
fn diff_across_subgraph_namespaces() {
    // each thread's subgraph namespace: task.state of the parent's `sub` task
    let ns = |t: &str| {
        let (_, h, _) = run(&["history", "-t", t, "--json"]);
        let h: Json = serde_json::from_str(&h).unwrap();
        h.as_array()
            .unwrap()
            .iter()
            .flat_map(|s| s["tasks"].as_array().unwrap().clone())
            .find_map(|t| {
                t["state"]["configurable"]["checkpoint_ns"]
                    .as_str()
                    .map(str::to_string)
            })
            .unwrap()
    };
    let (na, nb) = (ns("sub_a"), ns("sub_b"));
    let (code, out, err) = run(&["diff", "sub_a", "sub_b", "--ns", &na, "--ns-b", &nb]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("~ log[0]"), "{out}");
    assert!(out.contains("~ x"), "{out}");
}

#[test]
fn diverge_names_the_step_and_the_tasks_whose_writes_differ() {
    let (code, out, err) = run(&["diverge", "send_a", "send_b"]);
    assert_eq!(code, 0, "{err}");
    for want in [
        "common ancestor: none",
        "diverged at checkpoint #3 of each lineage (values):",
        "  A  send_a · step 2 loop",
        "~ results[1]  20 → 22",
        "caused by the writes of the tasks before:",
        "  work  (~__pregel_push, 0000000001, 0000000000)",
        "     B: results [22]; branch:to:collect null",
    ] {
        assert!(out.contains(want), "missing {want:?} in\n{out}");
    }
    // one argument: the fork against the branch it left
    let (code, out, err) = run(&["diverge", "chat_fork"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("common ancestor: chat_fork · step 1 loop"),
        "{out}"
    );
    assert!(out.contains("(update / loop)"), "{out}");
    let (code, out, _) = run(&["diverge", "chat_a", "chat_a"]);
    assert_eq!(code, 0);
    assert!(out.contains("no divergence"), "{out}");
}

#[test]
fn why_walks_a_message_list_to_its_writes() {
    let (code, out, err) = run(&["why", "-t", "chat_fork", "messages"]);
    assert_eq!(code, 0, "{err}");
    for want in [
        "why messages — thread chat_fork",
        "step   0  loop    input (__start__)",
        "→ [0]",
        "step   2  update  update_state       (no write row)            the value came with checkpoint",
        "step   4  loop    agent",
        "AI \"Answer: Oslo: sunny\"  → [3]",
    ] {
        assert!(out.contains(want), "missing {want:?} in\n{out}");
    }
    let (code, out, _) = run(&["why", "-t", "chat_a", "messages[-1]", "--json"]);
    assert_eq!(code, 0);
    let j: Json = serde_json::from_str(&out).unwrap();
    assert_eq!(j["contributions"].as_array().unwrap().len(), 1);
    assert_eq!(j["contributions"][0]["write"]["node"], "agent");
    assert_eq!(j["path"], "[-1]");
    // a scalar key with operator.add: one contribution per write
    let (_, out, _) = run(&["why", "-t", "chat_a", "turns", "--json"]);
    let j: Json = serde_json::from_str(&out).unwrap();
    assert_eq!(j["contributions"].as_array().unwrap().len(), 2, "{j:#}");
}

#[test]
fn bad_addresses_and_paths_are_one_line_errors() {
    for (args, want) in [
        (
            vec!["diff", "nope", "chat_a"],
            "\"nope\" is neither a thread nor a checkpoint id",
        ),
        (
            vec!["diff", "chat_a@99", "chat_a"],
            "thread \"chat_a\" has no checkpoint at step 99",
        ),
        (vec!["diff", "ghost@1", "chat_a"], "no thread \"ghost\""),
        (vec!["diff", "", "chat_a"], "empty checkpoint address"),
        (
            vec!["diverge", "chat_a"],
            "thread \"chat_a\" has one branch only",
        ),
        (
            vec!["why", "-t", "chat_a", "nokey"],
            "no state key \"nokey\" in this checkpoint's lineage (keys: messages, turns)",
        ),
        (
            vec!["why", "-t", "chat_a", "messages[1"],
            "'[' at column 9 is not closed",
        ),
        (
            vec!["why", "-t", "chat_a", "messages.7"],
            "messages.7: no such path",
        ),
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

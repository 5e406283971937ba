//! The engine's command line: pauses, answers, and every rejected command leaving the DB
//! byte-identical with exit code 2 and one line on stderr.

use crate::common;
use common::*;
use std::path::Path;

fn ok(args: &[&str]) -> String {
    let o = superstep(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut a = args.to_vec();
    a.push("--json");
    serde_json::from_str(&ok(&a)).unwrap()
}

fn graph(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("graphs")
        .join(name)
        .display()
        .to_string()
}

fn rejected(args: &[&str], needle: &str, dir: &Path) {
    let before = dir_state(dir);
    let o = superstep(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: stderr {err}");
    assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err:?}");
    assert_eq!(before, dir_state(dir), "{args:?} changed the directory");
}

#[test]
fn run_pause_resume_by_value_and_by_id() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.sqlite");
    let db = db.to_str().unwrap();
    let g = graph("parallel.json");
    let j = json(&["--db", db, "run", &g, "-t", "p"]);
    assert_eq!(j["pause"]["kind"], "interrupt");
    let ids: Vec<String> = j["interrupts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 2);
    // a plain answer with two pending: LangGraph's RuntimeError, DB unchanged
    rejected(
        &["--db", db, "resume", &g, "-t", "p", "--value", "\"yes\""],
        "multiple pending interrupts",
        dir.path(),
    );
    // unknown id, bad JSON, unknown node
    rejected(
        &[
            "--db",
            db,
            "resume",
            &g,
            "-t",
            "p",
            "--id",
            "00000000000000000000000000000000=1",
        ],
        "unknown interrupt id",
        dir.path(),
    );
    rejected(
        &[
            "--db",
            db,
            "resume",
            &g,
            "-t",
            "p",
            "--id",
            &format!("{}={{bad", ids[0]),
        ],
        "invalid JSON",
        dir.path(),
    );
    rejected(
        &["--db", db, "resume", &g, "-t", "p", "--id", &ids[0]],
        "expected ID=JSON",
        dir.path(),
    );
    rejected(
        &["--db", db, "resume", &g, "-t", "p", "--goto", "nope"],
        "unknown node \"nope\"",
        dir.path(),
    );
    rejected(
        &[
            "--db",
            db,
            "update",
            &g,
            "-t",
            "p",
            "--values",
            "{}",
            "--as-node",
            "nope",
        ],
        "Node nope does not exist",
        dir.path(),
    );
    rejected(
        &["--db", db, "run", &g, "-t", "p2", "--break-before", "nope"],
        "--break-before: unknown node",
        dir.path(),
    );
    rejected(
        &["--db", db, "run", &g, "-t", "p2", "--input", "[1,"],
        "--input: invalid JSON",
        dir.path(),
    );
    rejected(
        &["--db", db, "continue", &g, "-t", "nobody"],
        "no thread \"nobody\"",
        dir.path(),
    );
    rejected(
        &[
            "--db",
            db,
            "resume",
            &g,
            "-t",
            "nobody",
            "--id",
            "00000000000000000000000000000000=1",
        ],
        "pending: none",
        dir.path(),
    );
    rejected(
        &[
            "--db",
            db,
            "replay",
            &g,
            "-t",
            "p",
            "--checkpoint",
            "1f000000-0000-6000-8000-000000000000",
        ],
        "has no checkpoint",
        dir.path(),
    );
    // a partial answer by id: one task finishes, the other stays pending
    let j = json(&[
        "--db",
        db,
        "resume",
        &g,
        "-t",
        "p",
        "--id",
        &format!("{}=\"ok\"", ids[0]),
    ]);
    assert_eq!(j["pause"]["kind"], "interrupt");
    assert_eq!(j["interrupts"].as_array().unwrap().len(), 1);
    assert_eq!(j["interrupts"][0]["id"].as_str().unwrap(), ids[1]);
    let j = json(&["--db", db, "resume", &g, "-t", "p", "--value", "\"fine\""]);
    assert_eq!(j["pause"]["kind"], "done");
    assert_eq!(j["values"]["answers"].as_array().unwrap().len(), 2);
}

#[test]
fn spec_errors_are_located_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.sqlite");
    std::fs::write(&db, b"").unwrap(); // an existing (empty) file must stay untouched
    let case = |name: &str, json: &str, star: Option<&str>, needle: &str| {
        let spec = dir.path().join(format!("{name}.json"));
        std::fs::write(&spec, json).unwrap();
        if let Some(s) = star {
            std::fs::write(dir.path().join("g.star"), s).unwrap();
        }
        let o = superstep(&["graph", spec.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains(needle), "{name}: {err:?} lacks {needle:?}");
        assert!(
            err.contains(&format!("{name}.json")),
            "{name}: error does not name the file: {err}"
        );
        let o = superstep(&[
            "--db",
            db.to_str().unwrap(),
            "run",
            spec.to_str().unwrap(),
            "-t",
            "x",
            "--input",
            "{}",
        ]);
        assert_eq!(o.status.code(), Some(2));
        assert_eq!(
            std::fs::read(&db).unwrap(),
            b"",
            "{name}: DB written despite a spec error"
        );
    };
    let base = |nodes: &str, edges: &str| {
        format!(
            r#"{{"name": "g", "code": "g.star", "state": {{"x": {{}}}}, "nodes": {nodes}, "edges": {edges}}}"#
        )
    };
    case(
        "unknown_edge",
        &base(r#"["a"]"#, r#"[["__start__", "a"], ["a", "zz"]]"#),
        Some("def a(s):\n    return {}\n"),
        "edges[1][1]: unknown node \"zz\"",
    );
    case(
        "no_entry",
        &base(r#"["a"]"#, r#"[["a", "__end__"]]"#),
        Some("def a(s):\n    return {}\n"),
        "no edge from __start__",
    );
    case(
        "bad_reducer",
        r#"{"name": "g", "code": "g.star", "state": {"x": {"reducer": 5}}, "nodes": ["a"], "edges": [["__start__", "a"]]}"#,
        Some("def a(s):\n    return {}\n"),
        "state.x.reducer: expected",
    );
    case(
        "missing_fn",
        &base(r#"["a"]"#, r#"[["__start__", "a"]]"#),
        Some("def b(s):\n    return {}\n"),
        "nodes[0].fn: node function \"a\" is not defined",
    );
    case(
        "arity",
        &base(r#"["a"]"#, r#"[["__start__", "a"]]"#),
        Some("def a():\n    return {}\n"),
        "must take 1 positional argument",
    );
    case(
        "syntax",
        &base(r#"["a"]"#, r#"[["__start__", "a"]]"#),
        Some("def a(s)\n    return {}\n"),
        "g.star:1:9",
    );
    case("bad_json", "{\"name\": ", None, "line 1 column");
    case(
        "reserved",
        &base(r#"["__a"]"#, r#"[["__start__", "__a"]]"#),
        None,
        "nodes[0]: \"__a\" is reserved",
    );
    case(
        "dup",
        &base(r#"["a", "a"]"#, r#"[["__start__", "a"]]"#),
        None,
        "duplicate node \"a\"",
    );
    case(
        "bad_defer",
        &base(
            r#"[{"name": "a", "defer": "yes"}]"#,
            r#"[["__start__", "a"]]"#,
        ),
        Some("def a(s):\n    return {}\n"),
        "nodes[0].defer: expected true or false, got a string",
    );
    case(
        "unknown_key",
        r#"{"name": "g", "nodez": []}"#,
        None,
        "nodez: unknown key",
    );
    case(
        "bad_path_map",
        r#"{"name": "g", "code": "g.star", "state": {"x": {}}, "nodes": ["a"], "edges": [["__start__", "a"]], "conditional_edges": [{"source": "a", "path": "r", "path_map": {"k": "nowhere"}}]}"#,
        Some("def a(s):\n    return {}\ndef r(s):\n    return 'k'\n"),
        "conditional_edges[0].path_map[\"k\"]: unknown node \"nowhere\"",
    );
}

#[test]
fn runaway_and_oversized_nodes_become_error_writes() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("run.json");
    std::fs::write(
        &spec,
        r#"{"name": "runaway", "code": "run.star", "state": {"x": {}}, "nodes": ["spin", "grow"],
            "edges": [["__start__", "spin"], ["__start__", "grow"]], "input": {"x": 1}}"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("run.star"),
        "def spin(state):\n    n = 0\n    for i in range(1000000000):\n        n = (n + i) % 7\n    return {\"x\": n}\n\ndef grow(state):\n    s = \"x\"\n    for i in range(40):\n        s = s + s\n    return {\"x\": len(s)}\n",
    )
    .unwrap();
    let db = dir.path().join("t.sqlite");
    // the run ends on the nodes' errors: exit code 3, the JSON printed
    let o = superstep(&[
        "--db",
        db.to_str().unwrap(),
        "run",
        spec.to_str().unwrap(),
        "-t",
        "r",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(j["pause"]["kind"], "error");
    let errors: Vec<&str> = j["pending_writes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["type"] == "ERROR")
        .map(|w| w["value"].as_str().unwrap())
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("RuntimeError(") && e.contains("Starlark steps")),
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.starts_with("MemoryError(")),
        "{errors:?}"
    );
}

#[test]
fn graph_listing_and_mermaid() {
    let g = graph("pipeline.json");
    let text = ok(&["graph", &g]);
    assert!(
        text.contains("publish") && text.contains("break-before"),
        "{text}"
    );
    assert!(
        text.contains("decide() ? publish->publish | archive->archive"),
        "{text}"
    );
    let m = ok(&["graph", &g, "--mermaid"]);
    assert!(
        // as LangGraph draws it: no label when the label is the destination
        m.starts_with("---") && m.contains("score -.-> publish;"),
        "{m}"
    );
}

/// An error that ends the run outside any node (two nodes write one plain key in a superstep:
/// LangGraph's InvalidUpdateError) is a pause of kind "error" in --json, exit code 3, so a script
/// need not parse stderr (the hand-off harness read `{"kind": "steps"}` and crashed).
#[test]
fn an_error_outside_a_node_is_an_error_pause_in_json() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.sqlite");
    let o = superstep(&[
        "--db",
        db.to_str().unwrap(),
        "run",
        &graph("conflict.json"),
        "-t",
        "c",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(j["pause"]["kind"], "error", "{j:#}");
    assert!(j["pause"]["node"].is_null(), "{j:#}");
    let e = j["pause"]["error"].as_str().unwrap();
    assert!(e.starts_with("InvalidUpdateError: At key 'pick'"), "{e}");
    assert_eq!(j["error"]["message"], e);
}

//! Every graph in graphs/ opens in the TUI and runs to its first pause (`c`), and the subgraph
//! graph resumes through its subgraph — the seed patterns "run in the TUI".

use crate::common;
use common::*;

#[test]
fn every_graph_runs_to_its_first_pause_in_the_tui() {
    let dir = tempfile::tempdir().unwrap();
    let graphs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("graphs");
    let mut n = 0;
    for e in std::fs::read_dir(&graphs).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        let db = dir.path().join(format!("{name}.sqlite"));
        let o = superstep(&[
            p.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
            "--keys",
            "c",
            "--print",
            "--size",
            "140x40",
        ]);
        let screen = stdout(&o);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        let status: String = screen.lines().rev().take(3).collect::<Vec<_>>().join("\n");
        assert!(
            !status.contains("NameError") && !status.contains("RuntimeError"),
            "{name}: {status}"
        );
        let paused = ["interrupt in", "paused before", "error in", "done"]
            .iter()
            .any(|k| status.contains(k))
            // the conflict graphs show LangGraph raising while it applies a step's writes
            || (name.starts_with("conflict") && status.contains("InvalidUpdateError"));
        assert!(paused, "{name}: no pause in the status line:\n{status}");
        n += 1;
    }
    assert!(n >= 18, "only {n} graphs");
}

#[test]
fn the_subgraph_graph_resumes_through_its_subgraph() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.sqlite");
    let g = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("graphs/subgraph.json");
    let o = superstep(&[
        g.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
        "--keys",
        "c r \"ok\"<Enter> c",
        "--print",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let screen = stdout(&o);
    assert!(screen.contains("wrapped up: ok"), "{screen}");
    // the subgraph's checkpoints live in their own namespace
    let o = superstep(&["threads", "--db", db.to_str().unwrap(), "--json"]);
    let t: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(t[0]["subgraph_checkpoints"].as_i64().unwrap() >= 3, "{t}");
}

/// The gallery: every graph in graphs/ has a row in graphs/README.md saying what it demonstrates
/// (test-only specs live in tests/differential/graphs/).
#[test]
fn every_gallery_graph_has_a_line_in_graphs_readme() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("graphs");
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    let mut missing = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            if !readme.contains(&format!("`{name}`")) {
                missing.push(name);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "graphs/README.md says nothing of {missing:?}"
    );
}

//! `superstep graph --mermaid` draws the edges LangGraph draws, including where a node's
//! `Command(goto=...)` may lead (a spec node's `"destinations"`, LangGraph's
//! `Command[Literal[...]]` hint). The expected drawings are LangGraph 1.2.24's own
//! `get_graph().draw_mermaid()` of each spec's twin (tests/differential/gen_drawings.py).

use crate::common;
use common::*;
use std::collections::BTreeSet;

fn repo(p: &str) -> String {
    format!("{}/{p}", env!("CARGO_MANIFEST_DIR"))
}

/// The drawing's node and edge lines (the front matter and `%%` comments aside), as a set:
/// LangGraph orders edges its own way.
fn lines(m: &str) -> BTreeSet<String> {
    m.split("graph TD;")
        .nth(1)
        .unwrap_or("")
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty() && !l.starts_with("%%"))
        .collect()
}

#[test]
fn mermaid_draws_the_edges_langgraph_draws_command_destinations_included() {
    let dir = repo("tests/fixtures/graph_drawings");
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        let expected = std::fs::read_to_string(&p).unwrap();
        let o = superstep(&["graph", &repo(&format!("graphs/{name}.json")), "--mermaid"]);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        let ours = stdout(&o);
        assert_eq!(
            lines(&ours),
            lines(&expected),
            "{name}:\n{ours}\n--- LangGraph:\n{expected}"
        );
        seen += 1;
    }
    assert!(seen >= 5, "{seen} drawings");
}

#[test]
fn the_listing_names_command_destinations_or_says_the_node_routes_dynamically() {
    let o = superstep(&["graph", &repo("graphs/approval.json")]);
    let text = stdout(&o);
    assert!(
        text.contains("approve          -> Command(goto) ? execute | cancel"),
        "{text}"
    );
    // the same graph without the declaration: the listing and the drawing say so
    let dir = tempfile::tempdir().unwrap();
    let spec = std::fs::read_to_string(repo("graphs/approval.json"))
        .unwrap()
        .replace(
            r#"{"name": "approve", "destinations": ["execute", "cancel"]}"#,
            r#""approve""#,
        );
    std::fs::write(dir.path().join("approval.json"), spec).unwrap();
    std::fs::copy(
        repo("graphs/approval.star"),
        dir.path().join("approval.star"),
    )
    .unwrap();
    let bare = dir.path().join("approval.json");
    let text = stdout(&superstep(&["graph", bare.to_str().unwrap()]));
    assert!(
        text.contains("approve          -> Command(goto) ? routes dynamically"),
        "{text}"
    );
    let m = stdout(&superstep(&["graph", bare.to_str().unwrap(), "--mermaid"]));
    assert!(
        m.contains("%% approve routes dynamically by Command(goto=...)")
            && !m.contains("approve -.->"),
        "{m}"
    );
    // labels, as add_node(destinations={"execute": "yes"}) draws them
    let labelled = std::fs::read_to_string(repo("graphs/approval.json"))
        .unwrap()
        .replace(
            r#""destinations": ["execute", "cancel"]"#,
            r#""destinations": {"execute": "yes", "cancel": "no"}"#,
        );
    std::fs::write(dir.path().join("labelled.json"), labelled).unwrap();
    let l = dir.path().join("labelled.json");
    let m = stdout(&superstep(&["graph", l.to_str().unwrap(), "--mermaid"]));
    assert!(m.contains("approve -. &nbsp;yes&nbsp; .-> execute;"), "{m}");
    let text = stdout(&superstep(&["graph", l.to_str().unwrap()]));
    assert!(
        text.contains("Command(goto) ? yes->execute | no->cancel"),
        "{text}"
    );
}

#[test]
fn a_destination_that_is_no_node_is_a_spec_error() {
    let dir = tempfile::tempdir().unwrap();
    let spec = std::fs::read_to_string(repo("graphs/approval.json"))
        .unwrap()
        .replace(r#"["execute", "cancel"]"#, r#"["execute", "cancle"]"#);
    std::fs::write(dir.path().join("approval.json"), spec).unwrap();
    std::fs::copy(
        repo("graphs/approval.star"),
        dir.path().join("approval.star"),
    )
    .unwrap();
    let o = superstep(&["graph", dir.path().join("approval.json").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("nodes[1].destinations: unknown node \"cancle\""),
        "{}",
        stderr(&o)
    );
}

//! Hand-off between superstep and LangGraph on the same SQLite file: a thread started by one and
//! finished by the other must leave the same rows as a pure LangGraph run. The mixed files are
//! made live by `tests/differential/handoff/handoff.sh` (real LangGraph + the superstep binary),
//! so this test only runs from `.ci/run`:
//!
//!     SUPERSTEP_HANDOFF=DIR cargo test --test it -- --ignored handoff::
//!
//! The same on Postgres (tests/postgres/ci.sh: handoff.sh with SUPERSTEP_HANDOFF_PG): the manifest
//! names PostgresSaver databases by URL, and the rows compared include PostgresSaver's layout
//! (inline values, blob rows and their sharing).

use crate::common;
use common::normalize::{first_diff, Normalizer};
use serde_json::Value as Json;
use std::path::PathBuf;

#[test]
#[ignore = "needs live LangGraph: run by .ci/run after handoff.sh"]
fn mixed_threads_leave_langgraphs_rows() {
    let dir = PathBuf::from(
        std::env::var_os("SUPERSTEP_HANDOFF")
            .expect("set SUPERSTEP_HANDOFF to handoff.sh's output dir"),
    );
    let manifest: Json =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let (mut threads, mut failures) = (0, Vec::new());
    let mut by_direction = std::collections::BTreeMap::<String, usize>::new();
    for e in manifest["entries"].as_array().unwrap() {
        let graph = e["graph"].as_str().unwrap();
        let lg = superstep::engine::loaded::load(&crate::differential::spec_file(graph)).unwrap();
        let norm = Normalizer::new(&lg);
        let names: Vec<String> = e["threads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["thread"].as_str().unwrap().to_string())
            .collect();
        // a file in DIR, or (handoff.py --pg) a Postgres database's URL
        let store = |k: &str| {
            let s = e[k].as_str().unwrap();
            if superstep::store::Store::is_server(std::path::Path::new(s)) {
                PathBuf::from(s)
            } else {
                dir.join(s)
            }
        };
        let mixed = norm.normalize_threads(&store("mixed_db"), Some(&names));
        let pure = norm.normalize_threads(&store("pure_db"), Some(&names));
        let label = format!("{graph}.{}", e["direction"].as_str().unwrap());
        if let Some(d) = first_diff(&mixed, &pure, &label) {
            failures.push(d);
        }
        assert!(
            !mixed.to_string().contains("MISMATCH"),
            "{label}: ids do not recompute in the mixed DB"
        );
        threads += names.len();
        *by_direction
            .entry(e["direction"].as_str().unwrap().to_string())
            .or_default() += names.len();
    }
    eprintln!("handoff: {threads} mixed threads compared row by row with pure LangGraph runs {by_direction:?}, {} difference(s)", failures.len());
    assert!(threads > 50, "too few hand-off threads: {threads}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

//! superstep's engine against real LangGraph: every scenario in tests/differential/scenarios is
//! played by the engine into a fresh DB, and the DB is compared row by row with the one LangGraph
//! wrote for the same scenario (tests/differential/expected, made by run_twin.py; `.ci/run`
//! regenerates them live and points SUPERSTEP_DIFFERENTIAL at the fresh copies).

use crate::common;
use common::normalize::{first_diff, Normalizer};
use rmpv::Value;
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};
use superstep::engine::graph::Graph;
use superstep::engine::pregel::{Engine, Input, Pause, Resume};
use superstep::engine::update_state::AsNode;
use superstep::engine::EngineError;
use superstep::store::{Mode, Store};
use superstep::value::{from_view, Interrupt};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn expected_dir() -> PathBuf {
    std::env::var_os("SUPERSTEP_DIFFERENTIAL")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("tests/differential/expected"))
}

/// The thread's `n`-th root checkpoint, oldest first.
/// A subgraph namespace of the thread by node path (`"interview"` = the first one created,
/// `"interview#1"` the second, `"mid|leaf"` nested), as run_twin.py resolves it.
fn namespace(store: &Store, thread: &str, name: &str) -> String {
    let (path, k) = match name.split_once('#') {
        Some((p, k)) => (p, k.parse::<usize>().unwrap()),
        None => (name, 0),
    };
    let mut found: Vec<(String, String)> = store
        .namespaces(thread)
        .unwrap()
        .into_iter()
        .filter(|ns| !ns.is_empty())
        .filter(|ns| {
            ns.split('|')
                .map(|p| p.split(':').next().unwrap())
                .collect::<Vec<_>>()
                .join("|")
                == path
        })
        .map(|ns| {
            let first = store
                .history(thread, &ns, None, usize::MAX)
                .unwrap()
                .last()
                .unwrap()
                .checkpoint_id
                .clone();
            (first, ns)
        })
        .collect();
    found.sort();
    found
        .get(k)
        .unwrap_or_else(|| panic!("thread {thread} has no namespace {name}"))
        .1
        .clone()
}

fn nth_checkpoint_in(store: &Store, thread: &str, ns: &str, n: usize) -> String {
    let mut ids: Vec<String> = store
        .history(thread, ns, None, usize::MAX)
        .unwrap()
        .into_iter()
        .map(|r| r.checkpoint_id)
        .collect();
    ids.reverse();
    ids.get(n)
        .unwrap_or_else(|| {
            panic!(
                "thread {thread} has no checkpoint #{n} ({} exist)",
                ids.len()
            )
        })
        .clone()
}

/// The pending interrupt id of `node` at the thread's latest checkpoint (last one of its task).
fn pending_id(store: &Store, thread: &str, node: &str) -> Option<String> {
    let row = store.checkpoint(thread, "", None).unwrap()?;
    let writes = store.writes(thread, "", &row.checkpoint_id).unwrap();
    let tid = if let Some(k) = node.strip_prefix('*') {
        // "*k": the k-th unfinished task with an interrupt, in (task_path, task_id) order
        let mut order: Vec<(String, String)> = writes
            .iter()
            .filter(|w| w.channel == "__interrupt__")
            .map(|w| (w.task_path.clone(), w.task_id.clone()))
            .collect();
        order.sort();
        order.dedup();
        order.retain(|(_, t)| {
            !writes
                .iter()
                .any(|w| &w.task_id == t && !superstep::engine::runner::is_control(&w.channel))
        });
        order.get(k.parse::<usize>().unwrap())?.1.clone()
    } else {
        let path = format!("~__pregel_pull, {node}");
        writes.iter().find(|w| w.task_path == path)?.task_id.clone()
    };
    let finished = writes
        .iter()
        .any(|w| w.task_id == tid && !superstep::engine::runner::is_control(&w.channel));
    if finished {
        return None;
    }
    writes
        .iter()
        .filter(|w| w.task_id == tid && w.channel == "__interrupt__")
        .filter_map(|w| match w.value.as_value() {
            Some(Value::Array(items)) => items.iter().filter_map(Interrupt::from_value).next_back(),
            _ => None,
        })
        .next_back()
        .map(|i| i.id)
}

fn error_kind(e: &EngineError) -> String {
    match e {
        EngineError::MultiplePendingInterrupts { .. } => "RuntimeError".into(),
        EngineError::EmptyInput(_) => "EmptyInputError".into(),
        EngineError::Update(_) | EngineError::InvalidUpdate(_) => "InvalidUpdateError".into(),
        EngineError::Raised(f) => f.kind.clone(),
        other => format!("Other({other})"),
    }
}

/// Play a scenario with the engine; returns the events list (same shape as run_twin.py's).
fn play(scenario: &Json, db: &Path) -> Vec<Json> {
    let name = scenario["graph"].as_str().unwrap();
    let lg = superstep::engine::loaded::load(&spec_file(name)).unwrap();
    let seed = scenario["seed"].as_u64().unwrap_or(0);
    let mut events = Vec::new();
    for t in scenario["threads"].as_array().unwrap() {
        let thread = t["thread"].as_str().unwrap();
        for (i, op) in t["ops"].as_array().unwrap().iter().enumerate() {
            let store = Store::open(db, Mode::ReadWrite).unwrap();
            let ns = op
                .get("ns")
                .and_then(Json::as_str)
                .map(|n| namespace(&store, thread, n));
            let at = op.get("checkpoint").and_then(Json::as_u64).map(|n| {
                nth_checkpoint_in(&store, thread, ns.as_deref().unwrap_or(""), n as usize)
            });
            let mut resolved_ids = Vec::new();
            if let Some(Json::Object(m)) = op.get("ids") {
                for (node, v) in m {
                    if let Some(id) = pending_id(&store, thread, node) {
                        resolved_ids.push((id, from_view(v).unwrap()));
                    }
                }
            }
            let graph: &Graph = &lg.graph;
            let kind = op["op"].as_str().unwrap();
            let mut e = match (&ns, kind) {
                // update_state with a subgraph's config: the subgraph's own update_state
                (Some(ns), "update") => Engine::for_namespace(&lg, store, thread, ns).unwrap(),
                _ => Engine::for_graph(&lg, store, thread),
            };
            e.seed = seed;
            let bp = |k: &str| -> Option<superstep::spec::model::Breakpoints> {
                let list: Vec<String> = op
                    .get(k)?
                    .as_array()?
                    .iter()
                    .map(|x| x.as_str().unwrap().to_string())
                    .collect();
                Some(if list == ["*"] {
                    superstep::spec::model::Breakpoints::All
                } else {
                    superstep::spec::model::Breakpoints::Nodes(list)
                })
            };
            if let Some(b) = bp("break_before") {
                e.interrupt_before = b;
            }
            if let Some(b) = bp("break_after") {
                e.interrupt_after = b;
            }
            let result: Result<Option<Pause>, EngineError> = (|| {
                if kind == "update" {
                    let values = from_view(&op["values"]).unwrap();
                    let values = if values.is_nil() { None } else { Some(values) };
                    let as_node = AsNode::parse(op.get("as_node").and_then(Json::as_str));
                    e.update_state(at.as_deref(), values, as_node)?;
                    return Ok(None);
                }
                let input = match kind {
                    "run" => Input::Value(match op.get("input") {
                        Some(i) => from_view(i).unwrap(),
                        None => graph.input.clone().unwrap(),
                    }),
                    "continue" | "replay" => Input::Continue,
                    "resume" | "command" => Input::Command {
                        update: op.get("update").map(|u| from_view(u).unwrap()),
                        goto: op
                            .get("goto")
                            .and_then(Json::as_array)
                            .map(|g| g.iter().map(|x| from_view(x).unwrap()).collect())
                            .unwrap_or_default(),
                        resume: if let Some(v) = op.get("value") {
                            Some(Resume::Plain(from_view(v).unwrap()))
                        } else if op.get("ids").is_some() {
                            Some(Resume::Map(resolved_ids.clone()))
                        } else {
                            None
                        },
                    },
                    other => panic!("unknown op {other}"),
                };
                // a subgraph checkpoint's config: its checkpoint_map addresses the root
                let at = match (&ns, &at) {
                    (Some(ns), Some(id)) => Some(e.address_subgraph(ns, id)?),
                    _ => at.clone(),
                };
                e.start(input, at.as_deref())?;
                let reports = e.run_until_pause()?;
                Ok(reports.last().and_then(|r| r.pause.clone()))
            })();
            let ev = match result {
                Ok(Some(Pause::Error(_, repr))) => {
                    json!({"thread": thread, "op": i, "error": repr.split('(').next().unwrap()})
                }
                Ok(Some(Pause::RecursionLimit(_))) => {
                    json!({"thread": thread, "op": i, "error": "GraphRecursionError"})
                }
                Ok(_) => json!({"thread": thread, "op": i, "outcome": "ok"}),
                Err(err) => json!({"thread": thread, "op": i, "error": error_kind(&err)}),
            };
            events.push(ev);
        }
    }
    events
}

/// A graph spec by name: the gallery `graphs/` first, then the test-only specs in
/// `tests/differential/graphs/` (as tests/differential/twin.py's `spec_file`).
pub fn spec_file(name: &str) -> PathBuf {
    let gallery = root().join(format!("graphs/{name}.json"));
    if gallery.exists() {
        return gallery;
    }
    let test_only = root().join(format!("tests/differential/graphs/{name}.json"));
    assert!(test_only.exists(), "no graph spec {name}.json");
    test_only
}

/// The scenario names (one per graph in graphs/ and tests/differential/graphs/, checked).
fn scenario_names() -> Vec<String> {
    let dir = root().join("tests/differential/scenarios");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "json")
                .then(|| p.file_stem().unwrap().to_string_lossy().into_owned())
        })
        .collect();
    names.sort();
    // every graph in graphs/ and tests/differential/graphs/ has a scenario
    let gallery = std::fs::read_dir(root().join("graphs")).unwrap();
    let test_only = std::fs::read_dir(root().join("tests/differential/graphs")).unwrap();
    for g in gallery.chain(test_only) {
        let p = g.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            assert!(
                names.contains(&stem),
                "graph {stem} has no differential scenario"
            );
        }
    }
    // while iterating on one graph: SUPERSTEP_DIFF_ONLY=g1,g2 (the graphs/ check above still runs)
    if let Ok(only) = std::env::var("SUPERSTEP_DIFF_ONLY") {
        let only: Vec<&str> = only.split(',').collect();
        names.retain(|n| only.contains(&n.as_str()));
    }
    names
}

/// What one comparison covered.
#[derive(Default, Debug)]
struct Counts {
    graphs: usize,
    threads: usize,
    /// Root-namespace checkpoints and their writes.
    checkpoints: usize,
    writes: usize,
    subgraph_checkpoints: usize,
    /// Postgres only: `checkpoint_blobs` rows compared.
    blobs: usize,
}

/// Every scenario played by the engine into `engine_store(name, tmp)` and compared, row by row
/// after normalisation, with the store LangGraph left for it (`expected_store(name)`) and its
/// events (`expected_dir/<name>.events.json`). Returns what was compared and the differences.
fn compare_every_graph(
    expected_dir: &Path,
    expected_store: &dyn Fn(&str) -> PathBuf,
    engine_store: &dyn Fn(&str, &Path) -> PathBuf,
) -> (Counts, Vec<String>) {
    let dir = root().join("tests/differential/scenarios");
    let names = scenario_names();
    let mut failures = Vec::new();
    let mut n = Counts {
        graphs: names.len(),
        ..Counts::default()
    };
    for name in &names {
        let scenario: Json = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap(),
        )
        .unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let db = engine_store(name, tmp.path());
        let events = play(&scenario, &db);
        let expected_db = expected_store(name);
        let expected_events: Json = serde_json::from_str(
            &std::fs::read_to_string(expected_dir.join(format!("{name}.events.json"))).unwrap(),
        )
        .unwrap();
        let lg = superstep::engine::loaded::load(&spec_file(name)).unwrap();
        let norm = Normalizer::new(&lg);
        let ours = norm.normalize(&db);
        let theirs = norm.normalize(&expected_db);
        let ev_ours: Vec<Json> = events
            .iter()
            .map(|e| json!({"thread": e["thread"], "op": e["op"], "error": e.get("error")}))
            .collect();
        let ev_theirs: Vec<Json> = expected_events
            .as_array()
            .unwrap()
            .iter()
            .map(|e| json!({"thread": e["thread"], "op": e["op"], "error": e.get("error")}))
            .collect();
        if let Some(d) = first_diff(
            &json!(ev_ours),
            &json!(ev_theirs),
            &format!("{name}.events"),
        ) {
            failures.push(d);
        }
        if let Some(d) = first_diff(&ours, &theirs, name) {
            failures.push(d);
        }
        let s = ours.to_string();
        assert!(
            !s.contains("MISMATCH"),
            "{name}: ids do not recompute in superstep's DB: {}",
            &s[s.find("MISMATCH").unwrap()..][..200.min(s.len() - s.find("MISMATCH").unwrap())]
        );
        let t = theirs.to_string();
        assert!(
            !t.contains("MISMATCH"),
            "{name}: ids do not recompute in LangGraph's DB"
        );
        for (_, th) in theirs.as_object().unwrap() {
            n.threads += 1;
            for c in th["checkpoints"].as_array().unwrap() {
                n.checkpoints += 1;
                n.writes += c["writes"].as_array().unwrap().len();
            }
            for (_, cps) in th["subgraphs"].as_object().unwrap() {
                n.subgraph_checkpoints += cps.as_array().unwrap().len();
            }
            n.blobs += th["postgres"]["blobs"].as_array().map_or(0, Vec::len);
        }
    }
    (n, failures)
}

#[test]
fn every_graph_writes_what_langgraph_writes() {
    let expected = expected_dir();
    let (n, failures) = compare_every_graph(
        &expected,
        &|name| expected_dir().join(format!("{name}.sqlite")),
        &|name, tmp| tmp.join(format!("{name}.sqlite")),
    );
    eprintln!(
        "differential: {} graphs, {} threads, {} checkpoints, {} writes compared",
        n.graphs, n.threads, n.checkpoints, n.writes
    );
    assert!(
        failures.is_empty(),
        "{} difference(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The tables, columns, indexes and migration rows of a Postgres database, as text to compare.
fn postgres_schema(url: &str) -> Json {
    let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
    let cols: Vec<String> = c
        .query(
            "SELECT table_name || '.' || column_name || ' ' || data_type || ' null=' || is_nullable
                    || ' default=' || coalesce(column_default, '-') || ' #' || ordinal_position
             FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let indexes: Vec<String> = c
        .query(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let migrations: Vec<i32> = c
        .query("SELECT v FROM checkpoint_migrations ORDER BY v", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    json!({"columns": cols, "indexes": indexes, "migrations": migrations})
}

/// The same suite on Postgres: LangGraph's side is a real PostgresSaver (run_twin.py --pg, one
/// database `diff_<graph>` each, `<graph>.pgurl` beside its events), the engine's a fresh database
/// `ss_<graph>` on the same server that superstep creates the tables in itself. Rows are compared
/// as on SQLite plus PostgresSaver's own layout: which values are inline in the checkpoint JSONB,
/// every `checkpoint_blobs` row (channel, version, type, value) and how many checkpoints share it;
/// and the schema superstep creates must be PostgresSaver.setup()'s.
///
///     SUPERSTEP_DIFF_PG=$URL bash tests/differential/generate.sh DIR
///     SUPERSTEP_PG_DIFFERENTIAL=DIR SUPERSTEP_PG_URL=$URL cargo test --test it -- --ignored differential::
#[test]
#[ignore = "needs a Postgres server and live LangGraph: run by tests/postgres/ci.sh"]
fn postgres_every_graph_writes_what_postgres_saver_writes() {
    let dir = PathBuf::from(
        std::env::var_os("SUPERSTEP_PG_DIFFERENTIAL")
            .expect("SUPERSTEP_PG_DIFFERENTIAL: generate.sh's output dir (SUPERSTEP_DIFF_PG set)"),
    );
    let admin = std::env::var("SUPERSTEP_PG_URL")
        .expect("SUPERSTEP_PG_URL: a role that may create databases");
    let url_of = |db: &str| format!("{}/{db}", admin.rsplit_once('/').unwrap().0);
    let pgurl = |name: &str| {
        std::fs::read_to_string(dir.join(format!("{name}.pgurl")))
            .unwrap_or_else(|e| panic!("{name}.pgurl: {e}"))
            .trim()
            .to_string()
    };
    let mut schema_checked = 0;
    let (n, mut failures) =
        compare_every_graph(&dir, &|name| PathBuf::from(pgurl(name)), &|name, _| {
            let db = format!("ss_{name}");
            let mut c = postgres::Client::connect(&admin, postgres::NoTls).unwrap();
            c.batch_execute(&format!("DROP DATABASE IF EXISTS \"{db}\" WITH (FORCE)"))
                .unwrap();
            c.batch_execute(&format!("CREATE DATABASE \"{db}\""))
                .unwrap();
            PathBuf::from(url_of(&db))
        });
    for name in scenario_names() {
        let (ours, theirs) = (
            postgres_schema(&url_of(&format!("ss_{name}"))),
            postgres_schema(&pgurl(&name)),
        );
        if let Some(d) = first_diff(&ours, &theirs, &format!("{name}.schema")) {
            failures.push(d);
        }
        schema_checked += 1;
    }
    eprintln!(
        "differential on Postgres: {} graphs, {} threads, {} checkpoints (+{} in subgraphs), {} writes, {} blob rows compared; {schema_checked} schemas",
        n.graphs, n.threads, n.checkpoints, n.subgraph_checkpoints, n.writes, n.blobs
    );
    // (SUPERSTEP_DIFF_ONLY: a few graphs on purpose)
    let min_graphs = if std::env::var_os("SUPERSTEP_DIFF_ONLY").is_some() {
        1
    } else {
        25
    };
    assert!(n.blobs > 0 && n.graphs >= min_graphs, "{n:?}");
    assert!(
        failures.is_empty(),
        "{} difference(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn subgraph_namespaces_are_compared() {
    // the normaliser must see the subgraph's own checkpoints, not just the root namespace
    let lg = superstep::engine::loaded::load(&root().join("graphs/subgraph.json")).unwrap();
    let norm = Normalizer::new(&lg);
    let theirs = norm.normalize(&expected_dir().join("subgraph.sqlite"));
    let subs = theirs["resumed"]["subgraphs"].as_object().unwrap();
    assert_eq!(subs.len(), 1, "{subs:?}");
    let (label, cps) = subs.iter().next().unwrap();
    assert!(label.starts_with("interview#"), "{label}");
    assert!(cps.as_array().unwrap().len() >= 3);
    assert!(cps[0]["metadata"]["parents"][""]
        .as_str()
        .unwrap()
        .starts_with('C'));
    assert!(
        theirs.to_string().contains("from subgraph"),
        "parent task should quote the subgraph's interrupt"
    );
}

#[test]
fn every_spec_reports_the_topology_langgraph_compiles() {
    // the spec's own Topology (what the inspector gets when a spec is loaded) against the one
    // common.py::topology() dumped from the twin StateGraph LangGraph compiled from the same spec
    use superstep::snapshot::topology::Topology;
    let dir = root().join("tests/differential/scenarios");
    let mut checked = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        let file = expected_dir().join(format!("{name}.topology.json"));
        let text =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let theirs = Topology::from_oracle_json(&serde_json::from_str(&text).unwrap()).unwrap();
        let lg = superstep::engine::loaded::load(&spec_file(&name)).unwrap();
        let ours = lg.graph.topology();
        assert_eq!(ours.nodes, theirs.nodes, "{name}: nodes and triggers");
        assert_eq!(ours.state_keys, theirs.state_keys, "{name}: state keys");
        checked += 1;
    }
    assert!(checked >= 25, "{checked}");
}

//! superstep's engine against real LangGraph: every scenario in tests/differential/scenarios is
//! played by the engine into a fresh DB, and the DB is compared row by row with the one LangGraph
//! wrote for the same scenario (tests/differential/expected, made by run_twin.py; `.ci/run`
//! regenerates them live and points SUPERSTEP_DIFFERENTIAL at the fresh copies).

use rmpv::Value;
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};
use superstep::engine::graph::Graph;
use superstep::engine::pregel::{Engine, Input, Pause, Resume};
use superstep::engine::update_state::AsNode;
use superstep::engine::EngineError;
use superstep::ids::{self, NULL_TASK_ID};
use superstep::store::{Checkpoint, Mode, Store};
use superstep::value::{from_view, to_view, Interrupt, Send, ViewOptions};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn expected_dir() -> PathBuf {
    std::env::var_os("SUPERSTEP_DIFFERENTIAL")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("tests/differential/expected"))
}

fn nth_checkpoint(store: &Store, thread: &str, n: usize) -> String {
    let mut stmt = store
        .conn()
        .prepare("SELECT checkpoint_id FROM checkpoints WHERE thread_id=?1 AND checkpoint_ns='' ORDER BY checkpoint_id")
        .unwrap();
    let ids: Vec<String> = stmt
        .query_map([thread], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
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
    let path = format!("~__pregel_pull, {node}");
    let tid = writes.iter().find(|w| w.task_path == path)?.task_id.clone();
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
        other => format!("Other({other})"),
    }
}

/// Play a scenario with the engine; returns the events list (same shape as run_twin.py's).
fn play(scenario: &Json, db: &Path) -> Vec<Json> {
    let name = scenario["graph"].as_str().unwrap();
    let lg = superstep::spec::load(&root().join(format!("graphs/{name}.json"))).unwrap();
    let seed = scenario["seed"].as_u64().unwrap_or(0);
    let mut events = Vec::new();
    for t in scenario["threads"].as_array().unwrap() {
        let thread = t["thread"].as_str().unwrap();
        for (i, op) in t["ops"].as_array().unwrap().iter().enumerate() {
            let store = Store::open(db, Mode::ReadWrite).unwrap();
            let at = op
                .get("checkpoint")
                .and_then(Json::as_u64)
                .map(|n| nth_checkpoint(&store, thread, n as usize));
            let mut resolved_ids = Vec::new();
            if let Some(Json::Object(m)) = op.get("ids") {
                for (node, v) in m {
                    if let Some(id) = pending_id(&store, thread, node) {
                        resolved_ids.push((id, from_view(v).unwrap()));
                    }
                }
            }
            let graph: &Graph = &lg.graph;
            let mut e = Engine::new(graph, &lg.code, store, thread);
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
            let kind = op["op"].as_str().unwrap();
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

/// Recompute ids from the DB's own checkpoint ids and replace them with stable labels.
struct Normalizer<'a> {
    graph: &'a Graph,
}

fn version_int(v: &Json) -> Json {
    match v {
        Json::String(s) => json!(s.split('.').next().unwrap().parse::<i64>().unwrap()),
        other => other.clone(),
    }
}

fn sort_sets(j: &mut Json) {
    match j {
        Json::Object(o) => {
            let is_set = matches!(
                o.get("__type__").and_then(Json::as_str),
                Some("builtins.set" | "builtins.frozenset")
            );
            for v in o.values_mut() {
                sort_sets(v);
            }
            if is_set {
                if let Some(Json::Array(items)) = o.get_mut("items") {
                    items.sort_by_key(|x| x.to_string());
                }
            }
        }
        Json::Array(a) => a.iter_mut().for_each(sort_sets),
        _ => {}
    }
}

impl Normalizer<'_> {
    fn triggers(&self, node: &str) -> Vec<String> {
        self.graph
            .node(node)
            .map(|n| n.triggers.clone())
            .unwrap_or_default()
    }

    /// Label for a write's task id, after checking it against LangGraph's formulas.
    fn task_label(
        &self,
        cp: &Checkpoint,
        step: i64,
        task_id: &str,
        task_path: &str,
    ) -> (String, Option<String>) {
        if task_id == NULL_TASK_ID {
            return ("null".into(), None);
        }
        let cid = uuid::Uuid::try_parse(&cp.id).unwrap();
        if let Some(node) = task_path.strip_prefix("~__pregel_pull, ") {
            let want = ids::pull_task_id(&cid, "", step + 1, node, &self.triggers(node));
            return if want == task_id {
                (format!("pull:{node}"), Some(node.to_string()))
            } else {
                (
                    format!("MISMATCH pull:{node} {task_id} != {want}"),
                    Some(node.to_string()),
                )
            };
        }
        if let Some(rest) = task_path.strip_prefix("~__pregel_push, ") {
            let idx: usize = rest.split(", ").next().unwrap().parse().unwrap();
            let send = match cp.value("__pregel_tasks") {
                Some(Value::Array(a)) => a.get(idx).and_then(Send::from_value),
                _ => None,
            };
            let Some(send) = send else {
                return (format!("MISMATCH push:{idx} no Send"), None);
            };
            let want = ids::push_task_id(&cid, "", step + 1, &send.node, idx);
            return if want == task_id {
                (format!("push:{idx}:{}", send.node), Some(send.node))
            } else {
                (
                    format!("MISMATCH push:{idx} {task_id} != {want}"),
                    Some(send.node),
                )
            };
        }
        if task_path.starts_with("~__interrupt__") {
            if ids::update_task_id(&cid, 0) == task_id {
                return ("update".into(), None);
            }
            for n in &self.graph.nodes {
                if ids::pull_task_id(&cid, "", step + 1, &n.name, &n.triggers) == task_id {
                    return (format!("update-as-task:{}", n.name), None);
                }
            }
            return (format!("MISMATCH update {task_id}"), None);
        }
        (format!("other:{task_id}"), None)
    }

    /// LangGraph attaches a node's plain edges from a Python set, so the relative order (and idx)
    /// of its `branch:to:*` edge writes is hash-randomised (spec §4.4). Within one task's batch,
    /// give those writes their idx values in channel order.
    fn canonical_edge_order(&self, writes: &mut [Json]) {
        use superstep::engine::graph::Writer;
        let mut tasks: Vec<String> = writes
            .iter()
            .map(|w| w["task"].as_str().unwrap_or_default().to_string())
            .collect();
        tasks.dedup();
        for t in tasks {
            let own = writes
                .iter()
                .find(|w| w["task"].as_str() == Some(t.as_str()))
                .and_then(|w| {
                    w["task_path"]
                        .as_str()
                        .and_then(|p| p.strip_prefix("~__pregel_pull, "))
                        .map(str::to_string)
                });
            // the task's own node; for update_state rows, any node whose whole edge set was written
            let in_batch = |c: &str| {
                writes
                    .iter()
                    .any(|w| w["task"].as_str() == Some(t.as_str()) && w["channel"] == c)
            };
            let node = match own {
                Some(n) => self.graph.node(&n).cloned(),
                None => self
                    .graph
                    .nodes
                    .iter()
                    .find(|n| {
                        let e: Vec<&String> = n
                            .writers
                            .iter()
                            .filter_map(|w| match w {
                                Writer::Edge(c) => Some(c),
                                _ => None,
                            })
                            .collect();
                        e.len() >= 2 && e.iter().all(|c| in_batch(c))
                    })
                    .cloned(),
            };
            let Some(node) = node else { continue };
            let edges: Vec<String> = node
                .writers
                .iter()
                .filter_map(|w| match w {
                    Writer::Edge(c) => Some(c.clone()),
                    _ => None,
                })
                .collect();
            if edges.len() < 2 {
                continue;
            }
            let pos: Vec<usize> = (0..writes.len())
                .filter(|&i| {
                    writes[i]["task"].as_str() == Some(t.as_str())
                        && edges.iter().any(|e| writes[i]["channel"] == e.as_str())
                })
                .collect();
            let mut idxs: Vec<i64> = pos
                .iter()
                .map(|&i| writes[i]["idx"].as_i64().unwrap())
                .collect();
            idxs.sort();
            let mut chans: Vec<Json> = pos.iter().map(|&i| writes[i]["channel"].clone()).collect();
            chans.sort_by_key(|c| c.to_string());
            for (k, &i) in pos.iter().enumerate() {
                writes[i]["idx"] = json!(idxs[k]);
                writes[i]["channel"] = chans[k].clone();
            }
        }
    }

    fn relabel_interrupts(&self, j: &mut Json, task_ns: &str) {
        match j {
            Json::Object(o) => {
                if o.get("__type__").and_then(Json::as_str) == Some("langgraph.types.Interrupt") {
                    if let Some(id) = o.get("id").and_then(Json::as_str) {
                        let label = (0..16)
                            .find(|k| ids::interrupt_id(task_ns, *k) == id)
                            .map(|k| format!("interrupt:{k}"))
                            .unwrap_or_else(|| format!("MISMATCH interrupt {id}"));
                        o.insert("id".into(), json!(label));
                    }
                }
                for v in o.values_mut() {
                    self.relabel_interrupts(v, task_ns);
                }
            }
            Json::Array(a) => a
                .iter_mut()
                .for_each(|x| self.relabel_interrupts(x, task_ns)),
            _ => {}
        }
    }

    fn normalize(&self, db: &Path) -> Json {
        let store = Store::open(db, Mode::ReadOnly).unwrap();
        let o = ViewOptions::default();
        let mut threads = serde_json::Map::new();
        let mut stmt = store
            .conn()
            .prepare("SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id")
            .unwrap();
        let tids: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        for tid in tids {
            let mut rows = store.history(&tid, "", None, 10_000).unwrap();
            rows.reverse();
            let labels: Vec<String> = rows.iter().map(|r| r.checkpoint_id.clone()).collect();
            let label = |id: &str| {
                labels
                    .iter()
                    .position(|x| x == id)
                    .map(|i| format!("C{i}"))
                    .unwrap_or_else(|| "?".into())
            };
            let mut out = Vec::new();
            for r in &rows {
                let cp = store.decode(r).unwrap();
                let step = r.metadata.get("step").and_then(Json::as_i64).unwrap();
                let clock = ids::clock_seq_step(&uuid::Uuid::try_parse(&r.checkpoint_id).unwrap());
                let mut values = serde_json::Map::new();
                for (k, v) in &cp.channel_values {
                    values.insert(k.clone(), to_view(v, o));
                }
                let mut values = Json::Object(values);
                sort_sets(&mut values);
                let versions: std::collections::BTreeMap<String, Json> = cp
                    .channel_versions
                    .iter()
                    .map(|(k, v)| (k.clone(), version_int(&to_view(&v.to_value(), o))))
                    .collect();
                let seen: std::collections::BTreeMap<
                    String,
                    std::collections::BTreeMap<String, Json>,
                > = cp
                    .versions_seen
                    .iter()
                    .map(|(n, m)| {
                        (
                            n.clone(),
                            m.iter()
                                .map(|(k, v)| (k.clone(), version_int(&to_view(&v.to_value(), o))))
                                .collect(),
                        )
                    })
                    .collect();
                let mut writes = Vec::new();
                for w in store.writes(&tid, "", &r.checkpoint_id).unwrap() {
                    let (task, node) = self.task_label(&cp, step, &w.task_id, &w.task_path);
                    let mut v = w.value.view(o);
                    if let Some(node) = node {
                        self.relabel_interrupts(&mut v, &ids::task_ns("", &node, &w.task_id));
                    }
                    sort_sets(&mut v);
                    writes.push(json!({"task": task, "task_path": w.task_path, "idx": w.idx, "channel": w.channel, "type": w.type_, "value": v}));
                }
                self.canonical_edge_order(&mut writes);
                writes.sort_by_key(|w| {
                    (
                        w["task_path"].to_string(),
                        w["idx"].as_i64().unwrap(),
                        w["task"].to_string(),
                    )
                });
                let mut md = Json::Object(r.metadata.clone());
                if let Some(Json::Object(p)) = md.get_mut("parents") {
                    for v in p.values_mut() {
                        *v = json!(label(v.as_str().unwrap_or("")));
                    }
                }
                out.push(json!({
                    "label": label(&r.checkpoint_id),
                    "parent": r.parent_checkpoint_id.as_deref().map(label),
                    "type": r.type_,
                    "metadata": md,
                    "clock_seq": clock,
                    "v": cp.v,
                    "channel_values": values,
                    "channel_versions": versions,
                    "versions_seen": seen,
                    "updated_channels": cp.updated_channels,
                    "writes": writes,
                }));
            }
            // writes on checkpoints that were never saved (orphans)
            let mut stmt = store
                .conn()
                .prepare(
                    "SELECT w.task_id, w.task_path, w.idx, w.channel, w.type FROM writes w LEFT JOIN checkpoints c
                     USING (thread_id, checkpoint_ns, checkpoint_id) WHERE w.thread_id=?1 AND c.checkpoint_id IS NULL
                     ORDER BY w.task_path, w.idx",
                )
                .unwrap();
            let orphans: Vec<Json> = stmt
                .query_map([&tid], |r| {
                    let task: String = r.get(0)?;
                    Ok(json!({"null_task": task == NULL_TASK_ID, "task_path": r.get::<_, String>(1)?, "idx": r.get::<_, i64>(2)?, "channel": r.get::<_, String>(3)?, "type": r.get::<_, Option<String>>(4)?}))
                })
                .unwrap()
                .map(|x| x.unwrap())
                .collect();
            threads.insert(tid, json!({"checkpoints": out, "orphan_writes": orphans}));
        }
        Json::Object(threads)
    }
}

/// First difference between two JSON trees, with its path.
fn first_diff(a: &Json, b: &Json, path: &str) -> Option<String> {
    match (a, b) {
        (Json::Object(x), Json::Object(y)) => {
            for k in x.keys().chain(y.keys()) {
                let (va, vb) = (
                    x.get(k).unwrap_or(&Json::Null),
                    y.get(k).unwrap_or(&Json::Null),
                );
                if let Some(d) = first_diff(va, vb, &format!("{path}.{k}")) {
                    return Some(d);
                }
            }
            None
        }
        (Json::Array(x), Json::Array(y)) => {
            for i in 0..x.len().max(y.len()) {
                let (va, vb) = (
                    x.get(i).unwrap_or(&Json::Null),
                    y.get(i).unwrap_or(&Json::Null),
                );
                if let Some(d) = first_diff(va, vb, &format!("{path}[{i}]")) {
                    return Some(d);
                }
            }
            None
        }
        _ if a == b => None,
        _ => Some(format!("{path}:\n    superstep: {a}\n    langgraph: {b}")),
    }
}

#[test]
fn every_graph_writes_what_langgraph_writes() {
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
    // every graph in graphs/ has a scenario
    for g in std::fs::read_dir(root().join("graphs")).unwrap() {
        let p = g.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            assert!(
                names.contains(&stem),
                "graph {stem} has no differential scenario"
            );
        }
    }
    let mut failures = Vec::new();
    let (mut n_threads, mut n_cps, mut n_writes) = (0, 0, 0);
    for name in &names {
        let scenario: Json = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap(),
        )
        .unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join(format!("{name}.sqlite"));
        let events = play(&scenario, &db);
        let expected_db = expected_dir().join(format!("{name}.sqlite"));
        let expected_events: Json = serde_json::from_str(
            &std::fs::read_to_string(expected_dir().join(format!("{name}.events.json"))).unwrap(),
        )
        .unwrap();
        let lg = superstep::spec::load(&root().join(format!("graphs/{name}.json"))).unwrap();
        let norm = Normalizer { graph: &lg.graph };
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
            n_threads += 1;
            for c in th["checkpoints"].as_array().unwrap() {
                n_cps += 1;
                n_writes += c["writes"].as_array().unwrap().len();
            }
        }
    }
    eprintln!("differential: {} graphs, {n_threads} threads, {n_cps} checkpoints, {n_writes} writes compared", names.len());
    assert!(
        failures.is_empty(),
        "{} difference(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

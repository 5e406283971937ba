//! Row-by-row normalisation of a SqliteSaver DB (or a PostgresSaver database, given by its URL) for
//! comparing superstep's and LangGraph's stores:
//! checkpoint ids become labels in creation order, timestamps are dropped, versions keep their
//! integer part, set payloads are sorted, and every task / interrupt id is recomputed from the DB's
//! own checkpoint ids (a "MISMATCH" label marks one that does not recompute).
#![allow(dead_code)]

use rmpv::Value;
use serde_json::{json, Value as Json};
use std::path::Path;
use superstep::engine::graph::Graph;
use superstep::ids::{self, NULL_TASK_ID};
use superstep::store::{Checkpoint, Mode, Store};
use superstep::value::{to_view, Send, ViewOptions};

/// A read-only connection that leaves the file and its directory as they were: a WAL file with
/// no `-wal` beside it (nobody has it open) is opened `immutable`, so no `-wal`/`-shm` appear
/// next to a committed fixture.
pub fn read_only(db: &Path) -> rusqlite::Connection {
    let mut wal = db.as_os_str().to_os_string();
    wal.push("-wal");
    let immutable = if Path::new(&wal).exists() {
        ""
    } else {
        "&immutable=1"
    };
    let abs = std::path::absolute(db).unwrap();
    rusqlite::Connection::open_with_flags(
        format!("file:{}?mode=ro{immutable}", abs.display()),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_URI,
    )
    .unwrap()
}

/// The raw rows the normaliser reads besides the store's own reads: a SQLite file (SqliteSaver's
/// tables) or a Postgres database named by its URL (PostgresSaver's tables).
pub enum Raw {
    Sqlite(rusqlite::Connection),
    Postgres(std::cell::RefCell<postgres::Client>),
}

impl Raw {
    pub fn open(db: &Path) -> Raw {
        match db.to_str().filter(|s| Store::is_server(Path::new(s))) {
            Some(url) => Raw::Postgres(std::cell::RefCell::new(
                postgres::Client::connect(url, postgres::NoTls)
                    .unwrap_or_else(|e| panic!("{url}: {e}")),
            )),
            None => Raw::Sqlite(read_only(db)),
        }
    }

    fn strings(&self, sqlite: &str, pg: &str, params: &[&str]) -> Vec<Vec<Option<String>>> {
        match self {
            Raw::Sqlite(c) => {
                let mut stmt = c.prepare(sqlite).unwrap();
                let n = stmt.column_count();
                stmt.query_map(rusqlite::params_from_iter(params.iter()), |r| {
                    (0..n)
                        .map(|i| {
                            Ok(match r.get_ref(i)? {
                                rusqlite::types::ValueRef::Null => None,
                                rusqlite::types::ValueRef::Integer(x) => Some(x.to_string()),
                                v => Some(String::from_utf8_lossy(v.as_bytes()?).into_owned()),
                            })
                        })
                        .collect()
                })
                .unwrap()
                .map(|r| r.unwrap())
                .collect()
            }
            Raw::Postgres(c) => {
                let p: Vec<&(dyn postgres::types::ToSql + Sync)> = params
                    .iter()
                    .map(|x| x as &(dyn postgres::types::ToSql + Sync))
                    .collect();
                c.borrow_mut()
                    .query(pg, &p)
                    .unwrap()
                    .iter()
                    .map(|r| (0..r.len()).map(|i| r.get(i)).collect())
                    .collect()
            }
        }
    }

    /// Thread ids, ordered.
    pub fn thread_ids(&self) -> Vec<String> {
        self.strings(
            "SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id",
            "SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id",
            &[],
        )
        .into_iter()
        .map(|r| r[0].clone().unwrap())
        .collect()
    }

    /// `(ns, checkpoint id)` of every checkpoint of a thread, by checkpoint id.
    pub fn checkpoints(&self, tid: &str) -> Vec<(String, String)> {
        self.strings(
            "SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE thread_id=?1 ORDER BY checkpoint_id",
            "SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE thread_id=$1 ORDER BY checkpoint_id COLLATE \"C\"",
            &[tid],
        )
        .into_iter()
        .map(|r| (r[0].clone().unwrap(), r[1].clone().unwrap()))
        .collect()
    }

    /// The `checkpoints.type` column (always NULL for PostgresSaver).
    pub fn checkpoint_type(&self, tid: &str, ns: &str, id: &str) -> Option<String> {
        self.strings(
            "SELECT type FROM checkpoints WHERE thread_id=?1 AND checkpoint_ns=?2 AND checkpoint_id=?3",
            "SELECT type FROM checkpoints WHERE thread_id=$1 AND checkpoint_ns=$2 AND checkpoint_id=$3",
            &[tid, ns, id],
        )
        .into_iter()
        .next()
        .and_then(|r| r[0].clone())
    }

    /// Writes on checkpoints that were never saved, by (task_path, idx).
    pub fn orphans(&self, tid: &str) -> Vec<Json> {
        let mut rows: Vec<Json> = self
            .strings(
                "SELECT w.task_id, w.task_path, w.idx, w.channel, w.type FROM writes w LEFT JOIN checkpoints c
                 USING (thread_id, checkpoint_ns, checkpoint_id) WHERE w.thread_id=?1 AND c.checkpoint_id IS NULL
                 ORDER BY w.task_path, w.idx",
                "SELECT w.task_id, w.task_path, w.idx::text, w.channel, w.type FROM checkpoint_writes w LEFT JOIN checkpoints c
                 USING (thread_id, checkpoint_ns, checkpoint_id) WHERE w.thread_id=$1 AND c.checkpoint_id IS NULL",
                &[tid],
            )
            .into_iter()
            .map(|r| {
                json!({"null_task": r[0].as_deref() == Some(NULL_TASK_ID), "task_path": r[1],
                       "idx": r[2].as_deref().unwrap().parse::<i64>().unwrap(), "channel": r[3], "type": r[4]})
            })
            .collect();
        if matches!(self, Raw::Postgres(_)) {
            // no insertion order to fall back on: the whole row is the key
            rows.sort_by_key(|r| {
                (
                    r["task_path"].to_string(),
                    r["idx"].as_i64(),
                    r["channel"].to_string(),
                    r["type"].to_string(),
                )
            });
        }
        rows
    }

    /// PostgresSaver's own layout of a thread, for what the store's reads hide: per checkpoint
    /// the JSONB's top-level keys and its inline (primitive) channel values; per blob row its
    /// channel, version (integer part), type, value and how many of the thread's checkpoints
    /// name exactly that version (blob sharing). `None` on SQLite.
    pub fn postgres_layout(
        &self,
        tid: &str,
        ns_label: &dyn Fn(&str) -> String,
        cp_label: &dyn Fn(&str, &str) -> String,
    ) -> Option<Json> {
        let Raw::Postgres(c) = self else { return None };
        let mut c = c.borrow_mut();
        let o = ViewOptions::default();
        let mut checkpoints: Vec<(String, Json)> = c
            .query(
                "SELECT checkpoint_ns, checkpoint_id, checkpoint::text FROM checkpoints WHERE thread_id=$1",
                &[&tid],
            )
            .unwrap()
            .iter()
            .map(|r| {
                let (ns, id, body): (String, String, String) = (r.get(0), r.get(1), r.get(2));
                let body: Json = serde_json::from_str(&body).unwrap();
                let mut keys: Vec<&String> = body.as_object().unwrap().keys().collect();
                keys.sort();
                (
                    format!("{} {}", ns_label(&ns), cp_label(&ns, &id)),
                    json!({"keys": keys, "inline": body["channel_values"], "id_matches": body["id"] == json!(id)}),
                )
            })
            .collect();
        checkpoints.sort_by(|a, b| a.0.cmp(&b.0));
        let mut blobs: Vec<Json> = c
            .query(
                "SELECT b.checkpoint_ns, b.channel, b.version, b.type, b.blob,
                        (SELECT count(*) FROM checkpoints c WHERE c.thread_id = b.thread_id
                           AND c.checkpoint_ns = b.checkpoint_ns
                           AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version)
                 FROM checkpoint_blobs b WHERE b.thread_id=$1",
                &[&tid],
            )
            .unwrap()
            .iter()
            .map(|r| {
                let (ns, channel, version, ty): (String, String, String, String) =
                    (r.get(0), r.get(1), r.get(2), r.get(3));
                let blob: Option<Vec<u8>> = r.get(4);
                let refs: i64 = r.get(5);
                let mut value = match ty.as_str() {
                    "empty" => json!("<empty>"),
                    _ => superstep::value::Typed::decode(&ty, blob.as_deref().unwrap_or(&[]))
                        .unwrap()
                        .view(o),
                };
                sort_sets(&mut value);
                json!({"ns": ns_label(&ns), "channel": channel,
                       "version": version_int(&json!(version)), "type": ty,
                       "value": value, "referenced_by": refs})
            })
            .collect();
        blobs.sort_by_key(|b| {
            (
                b["ns"].to_string(),
                b["channel"].to_string(),
                b["version"].as_i64(),
            )
        });
        let layout: serde_json::Map<String, Json> = checkpoints.into_iter().collect();
        Some(json!({"checkpoints": layout, "blobs": blobs}))
    }
}

/// What the normaliser needs of a graph: each node's triggers (task ids) and plain edges
/// (`branch:to:*` write order). Built from a spec's compiled graph or from a topology JSON (a
/// Python graph, as the bridge or tests/oracle/common.py dump it).
#[derive(Debug, Clone, Default)]
pub struct GraphShape {
    pub nodes: Vec<NodeShape>,
}

#[derive(Debug, Clone)]
pub struct NodeShape {
    pub name: String,
    pub triggers: Vec<String>,
    /// `branch:to:X` channels of its plain edges.
    pub edges: Vec<String>,
}

impl GraphShape {
    pub fn from_graph(g: &Graph) -> GraphShape {
        use superstep::engine::graph::Writer;
        GraphShape {
            nodes: g
                .nodes
                .iter()
                .map(|n| NodeShape {
                    name: n.name.clone(),
                    triggers: n.triggers.clone(),
                    edges: n
                        .writers
                        .iter()
                        .filter_map(|w| match w {
                            Writer::Edge(c) => Some(c.clone()),
                            _ => None,
                        })
                        .collect(),
                })
                .collect(),
        }
    }

    /// From the topology JSON (`nodes[].triggers`, `edges[]` non-conditional).
    pub fn from_topology(t: &Json) -> GraphShape {
        let edges = t["edges"].as_array().cloned().unwrap_or_default();
        GraphShape {
            nodes: t["nodes"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|n| {
                    let name = n["name"].as_str().unwrap_or_default().to_string();
                    NodeShape {
                        triggers: n["triggers"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|x| x.as_str().map(str::to_string))
                            .collect(),
                        edges: edges
                            .iter()
                            .filter(|e| {
                                e["source"].as_str() == Some(name.as_str())
                                    && e["conditional"] != json!(true)
                                    && e["target"].as_str() != Some("__end__")
                            })
                            .filter_map(|e| e["target"].as_str())
                            .map(|t| format!("branch:to:{t}"))
                            .collect(),
                        name,
                    }
                })
                .collect(),
        }
    }

    pub fn node(&self, name: &str) -> Option<&NodeShape> {
        self.nodes.iter().find(|n| n.name == name)
    }
}

/// Recompute ids from the DB's own checkpoint ids and replace them with stable labels.
pub struct Normalizer {
    pub graph: GraphShape,
    /// Subgraphs by node path (`"mid"`, `"mid|leaf"`).
    pub children: std::collections::HashMap<String, GraphShape>,
}

fn collect_children(
    lg: &superstep::engine::loaded::LoadedGraph,
    prefix: &str,
    out: &mut std::collections::HashMap<String, GraphShape>,
) {
    for (name, child) in &lg.children {
        let path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}|{name}")
        };
        out.insert(path.clone(), GraphShape::from_graph(&child.graph));
        collect_children(child, &path, out);
    }
}

fn collect_topology_children(
    t: &Json,
    prefix: &str,
    out: &mut std::collections::HashMap<String, GraphShape>,
) {
    if let Some(subs) = t["subgraph_topologies"].as_object() {
        for (name, child) in subs {
            let path = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}|{name}")
            };
            out.insert(path.clone(), GraphShape::from_topology(child));
            collect_topology_children(child, &path, out);
        }
    }
}

/// `"mid:<id>|leaf:<id>"` -> `"mid|leaf"`.
fn node_path(ns: &str) -> String {
    ns.split('|')
        .map(|p| p.split(':').next().unwrap_or(p))
        .collect::<Vec<_>>()
        .join("|")
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

impl Normalizer {
    pub fn new(lg: &superstep::engine::loaded::LoadedGraph) -> Self {
        let mut children = std::collections::HashMap::new();
        collect_children(lg, "", &mut children);
        Normalizer {
            graph: GraphShape::from_graph(&lg.graph),
            children,
        }
    }

    /// For a Python graph: its topology JSON (with `subgraph_topologies`).
    pub fn from_topology(t: &Json) -> Self {
        let mut children = std::collections::HashMap::new();
        collect_topology_children(t, "", &mut children);
        Normalizer {
            graph: GraphShape::from_topology(t),
            children,
        }
    }

    fn graph_for(&self, ns: &str) -> &GraphShape {
        if ns.is_empty() {
            return &self.graph;
        }
        self.children.get(&node_path(ns)).unwrap_or(&self.graph)
    }

    /// Label for a write's task id, after checking it against LangGraph's formulas.
    fn task_label(
        &self,
        graph: &GraphShape,
        ns: &str,
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
            let triggers = graph
                .node(node)
                .map(|n| n.triggers.clone())
                .unwrap_or_default();
            let want = ids::pull_task_id(&cid, ns, step + 1, node, &triggers);
            return if want == task_id {
                (format!("pull:{node}"), Some(node.to_string()))
            } else {
                (
                    format!("MISMATCH pull:{node} {task_id} != {want}"),
                    Some(node.to_string()),
                )
            };
        }
        // a functional-API call (a `@task` called inside a node): its id hashes the calling task's
        // path and the call's index; labelled by that path, which two runs making the same calls share
        if let Some(rest) = task_path.strip_prefix("~__pregel_push, ~__pregel_pull, ") {
            return (format!("call:{rest}"), None);
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
            let want = ids::push_task_id(&cid, ns, step + 1, &send.node, idx);
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
            for n in &graph.nodes {
                if ids::pull_task_id(&cid, ns, step + 1, &n.name, &n.triggers) == task_id {
                    return (format!("update-as-task:{}", n.name), None);
                }
            }
            return (format!("MISMATCH update {task_id}"), None);
        }
        // update_state(as_node="__input__") on a saved checkpoint stores the input's writes on it
        // under `uuid5(checkpoint_id, "__input__")` (`_store_or_fork_delta_writes`)
        if task_path.is_empty() && uuid::Uuid::new_v5(&cid, b"__input__").to_string() == task_id {
            return ("update-input".into(), None);
        }
        (format!("other:{task_id}"), None)
    }

    /// LangGraph attaches a node's plain edges from a Python set, so the relative order (and idx)
    /// of its `branch:to:*` edge writes is hash-randomised (spec §4.4). Within one task's batch,
    /// give those writes their idx values in channel order.
    fn canonical_edge_order(&self, graph: &GraphShape, writes: &mut [Json]) {
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
                Some(n) => graph.node(&n).cloned(),
                None => graph
                    .nodes
                    .iter()
                    .find(|n| n.edges.len() >= 2 && n.edges.iter().all(|c| in_batch(c)))
                    .cloned(),
            };
            let Some(node) = node else { continue };
            let edges: Vec<String> = node.edges.clone();
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

    /// Replace interrupt ids by labels: an id must recompute from its task's namespace, or be a
    /// subgraph's interrupt (verified in the subgraph's namespace) carried up by its parent task.
    fn relabel_interrupts(
        &self,
        j: &mut Json,
        task_ns: &str,
        known: &std::collections::HashMap<String, String>,
    ) {
        match j {
            Json::Object(o) => {
                if o.get("__type__").and_then(Json::as_str) == Some("langgraph.types.Interrupt") {
                    if let Some(id) = o.get("id").and_then(Json::as_str) {
                        let label = (0..16)
                            .find(|k| ids::interrupt_id(task_ns, *k) == id)
                            .map(|k| format!("interrupt:{k}"))
                            .or_else(|| known.get(id).map(|l| format!("from subgraph {l}")))
                            .unwrap_or_else(|| format!("MISMATCH interrupt {id}"));
                        o.insert("id".into(), json!(label));
                    }
                }
                for v in o.values_mut() {
                    self.relabel_interrupts(v, task_ns, known);
                }
            }
            Json::Array(a) => a
                .iter_mut()
                .for_each(|x| self.relabel_interrupts(x, task_ns, known)),
            _ => {}
        }
    }

    pub fn normalize(&self, db: &Path) -> Json {
        self.normalize_threads(db, None)
    }

    /// Only the given threads (all when `None`).
    pub fn normalize_threads(&self, db: &Path, only: Option<&[String]>) -> Json {
        let store = Store::open(db, Mode::ReadOnly).unwrap();
        // the raw rows, read with a connection of our own (the store hands out none)
        let raw = Raw::open(db);
        let o = ViewOptions::default();
        let mut threads = serde_json::Map::new();
        for tid in raw.thread_ids() {
            if only.is_some_and(|o| !o.contains(&tid)) {
                continue;
            }
            // every namespace of the thread; labels count creation order within a namespace
            // (LangGraph runs parallel subgraphs on threads: the interleaving of their
            // checkpoints with each other is not deterministic, the order inside each one is)
            let all: Vec<(String, String)> = raw.checkpoints(&tid);
            let labels: Vec<String> = all.iter().map(|(_, c)| c.clone()).collect();
            let mut per_ns: std::collections::HashMap<(String, String), String> =
                std::collections::HashMap::new();
            {
                let mut count: std::collections::HashMap<&str, usize> =
                    std::collections::HashMap::new();
                for (ns, id) in &all {
                    let k = count.entry(ns.as_str()).or_default();
                    per_ns.insert((ns.clone(), id.clone()), format!("C{k}"));
                    *k += 1;
                }
            }
            let label_in = |ns: &str, id: &str| {
                per_ns
                    .get(&(ns.to_string(), id.to_string()))
                    .cloned()
                    .unwrap_or_else(|| "?".into())
            };
            let mut namespaces: Vec<String> = Vec::new();
            for (ns, _) in &all {
                if !namespaces.contains(ns) {
                    namespaces.push(ns.clone());
                }
            }
            // deepest first, so subgraph interrupts are verified before their parents quote them
            namespaces.sort_by_key(|n| {
                std::cmp::Reverse(n.matches('|').count() + usize::from(!n.is_empty()))
            });
            let mut known: std::collections::HashMap<String, String> =
                std::collections::HashMap::new();
            let mut ns_out = serde_json::Map::new();
            let mut ordinal: std::collections::HashMap<String, usize> =
                std::collections::HashMap::new();
            let mut ns_labels: Vec<(String, String)> = Vec::new();
            {
                let mut by_first: Vec<&String> = namespaces.iter().collect();
                by_first.sort_by_key(|n| {
                    labels
                        .iter()
                        .position(|c| all.iter().any(|(x, y)| x == *n && y == c))
                });
                for n in by_first {
                    let path = node_path(n);
                    let k = ordinal.entry(path.clone()).or_default();
                    ns_labels.push((
                        n.clone(),
                        if n.is_empty() {
                            String::new()
                        } else {
                            format!("{path}#{k}")
                        },
                    ));
                    *k += 1;
                }
            }
            let mut out = Vec::new();
            for ns in &namespaces {
                let ns_label = ns_labels
                    .iter()
                    .find(|(n, _)| n == ns)
                    .map(|(_, l)| l.clone())
                    .unwrap_or_default();
                let graph = self.graph_for(ns);
                let mut rows = store.history(&tid, ns, None, 10_000).unwrap();
                rows.reverse();
                for r in &rows {
                    let cp = store.decode(r).unwrap();
                    let step = r.metadata.get("step").and_then(Json::as_i64).unwrap();
                    let clock =
                        ids::clock_seq_step(&uuid::Uuid::try_parse(&r.checkpoint_id).unwrap());
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
                                    .map(|(k, v)| {
                                        (k.clone(), version_int(&to_view(&v.to_value(), o)))
                                    })
                                    .collect(),
                            )
                        })
                        .collect();
                    let mut writes = Vec::new();
                    for w in store.writes(&tid, ns, &r.checkpoint_id).unwrap() {
                        let (task, node) =
                            self.task_label(graph, ns, &cp, step, &w.task_id, &w.task_path);
                        let mut v = w.value.view(o);
                        if let Some(node) = node {
                            let tns = ids::task_ns(ns, &node, &w.task_id);
                            // remember verified ids so the parent's copy can be checked
                            if w.channel == "__interrupt__" {
                                if let Some(items) = v.as_array() {
                                    for it in items {
                                        if let Some(id) = it.get("id").and_then(Json::as_str) {
                                            if let Some(k) =
                                                (0..16).find(|k| ids::interrupt_id(&tns, *k) == id)
                                            {
                                                known.insert(
                                                    id.to_string(),
                                                    format!("{ns_label} {task} interrupt:{k}"),
                                                );
                                            }
                                        }
                                    }
                                }
                            }
                            self.relabel_interrupts(&mut v, &tns, &known);
                        }
                        sort_sets(&mut v);
                        writes.push(json!({"task": task, "task_path": w.task_path, "idx": w.idx, "channel": w.channel, "type": w.type_, "value": v}));
                    }
                    self.canonical_edge_order(graph, &mut writes);
                    writes.sort_by_key(|w| {
                        (
                            w["task_path"].to_string(),
                            w["idx"].as_i64().unwrap(),
                            w["task"].to_string(),
                        )
                    });
                    let mut md = Json::Object(r.metadata.clone());
                    if let Some(Json::Object(p)) = md.get_mut("parents") {
                        // keys are ancestor namespaces (with task ids): use their labels
                        let relabelled: serde_json::Map<String, Json> = p
                            .iter()
                            .map(|(k, v)| {
                                let key = ns_labels
                                    .iter()
                                    .find(|(n, _)| n == k)
                                    .map(|(_, l)| l.clone())
                                    .unwrap_or_else(|| node_path(k));
                                (key, json!(label_in(k, v.as_str().unwrap_or(""))))
                            })
                            .collect();
                        *p = relabelled;
                    }
                    out.push(json!({
                        "label": label_in(ns, &r.checkpoint_id),
                        "parent": r.parent_checkpoint_id.as_deref().map(|p| label_in(ns, p)),
                        "type": raw.checkpoint_type(&r.thread_id, &r.checkpoint_ns, &r.checkpoint_id),
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
                ns_out.insert(ns_label.clone(), Json::Array(std::mem::take(&mut out)));
            }
            // writes on checkpoints that were never saved (orphans)
            let orphans = raw.orphans(&tid);
            let ns_label_of = |n: &str| {
                ns_labels
                    .iter()
                    .find(|(x, _)| x == n)
                    .map(|(_, l)| l.clone())
                    .unwrap_or_else(|| node_path(n))
            };
            let layout = raw.postgres_layout(&tid, &ns_label_of, &|ns, id| label_in(ns, id));
            let root = ns_out.remove("").unwrap_or(Json::Array(Vec::new()));
            let mut thread =
                json!({"checkpoints": root, "subgraphs": ns_out, "orphan_writes": orphans});
            if let Some(layout) = layout {
                thread["postgres"] = layout;
            }
            threads.insert(tid, thread);
        }
        Json::Object(threads)
    }
}

/// First difference between two JSON trees, with its path.
pub fn first_diff(a: &Json, b: &Json, path: &str) -> Option<String> {
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

/// A message id in a pending write: `add_messages` gives an id-less message its `uuid4()` by
/// mutating the very object the write holds, while LangGraph's background saver serialises that
/// write — so a straight `invoke` stores the id or null depending on which thread wins (a
/// ToolMessage's write: null in 2 of 5 straight runs of the prebuilt agent). The checkpoint's
/// channel values hold the id either way; in writes, a uuid4 message id is normalised to null.
pub fn null_raced_message_ids(j: &mut Json) {
    fn in_write(j: &mut Json) {
        match j {
            Json::Array(a) => a.iter_mut().for_each(in_write),
            Json::Object(m) => {
                let is_message = m.contains_key("content") && m.contains_key("type");
                if is_message {
                    if let Some(Json::String(id)) = m.get("id") {
                        if is_uuid4(id.as_bytes()) {
                            m.insert("id".into(), Json::Null);
                        }
                    }
                }
                m.values_mut().for_each(in_write);
            }
            _ => {}
        }
    }
    match j {
        Json::Array(a) => a.iter_mut().for_each(null_raced_message_ids),
        Json::Object(m) => {
            for (k, v) in m.iter_mut() {
                if k == "writes" || k == "orphan_writes" {
                    in_write(v);
                } else {
                    null_raced_message_ids(v);
                }
            }
        }
        _ => {}
    }
}

fn is_uuid4(s: &[u8]) -> bool {
    s.len() == 36
        && s.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit() && !c.is_ascii_uppercase(),
        })
        && s[14] == b'4'
        && matches!(s[19], b'8' | b'9' | b'a' | b'b')
}

/// Random ids LangGraph and LangChain mint with `uuid4()` (a message without an id gets one from
/// `add_messages`; a store key from an app's `uuid.uuid4()`): relabelled `R1`, `R2`, ... in order of
/// first appearance, so two runs that made the same rows compare equal. Checkpoint and task ids
/// (uuid6 / uuid5) are not touched.
pub fn relabel_random_ids(j: &mut Json) {
    let mut seen: Vec<String> = Vec::new();
    fn fix(s: &str, seen: &mut Vec<String>) -> Option<String> {
        let b = s.as_bytes();
        if b.len() < 36 {
            return None;
        }
        let mut out = String::new();
        let mut i = 0;
        let mut last = 0;
        while i + 36 <= b.len() {
            if is_uuid4(&b[i..i + 36]) {
                let id = &s[i..i + 36];
                let n = match seen.iter().position(|x| x == id) {
                    Some(n) => n,
                    None => {
                        seen.push(id.to_string());
                        seen.len() - 1
                    }
                };
                out.push_str(&s[last..i]);
                out.push_str(&format!("R{}", n + 1));
                i += 36;
                last = i;
            } else {
                i += 1;
            }
        }
        (last > 0).then(|| out + &s[last..])
    }
    fn walk(j: &mut Json, seen: &mut Vec<String>) {
        match j {
            Json::String(s) => {
                if let Some(f) = fix(s, seen) {
                    *s = f;
                }
            }
            Json::Array(a) => a.iter_mut().for_each(|x| walk(x, seen)),
            Json::Object(m) => {
                // keys can be ids too (a store's keys): rebuild the map with relabelled keys
                let old = std::mem::take(m);
                for (k, mut v) in old {
                    let k = fix(&k, seen).unwrap_or(k);
                    walk(&mut v, seen);
                    m.insert(k, v);
                }
            }
            _ => {}
        }
    }
    walk(j, &mut seen);
}

/// The items of LangGraph's store kept in `db` (SqliteStore / PostgresStore), read through
/// superstep's store API: `[{namespace, key, value}]` ordered by namespace, then value, then key
/// (keys an app mints with `uuid4()` differ between two runs; `relabel_random_ids` labels them in
/// this order). `Null` when the database has no store.
pub fn store_items(db: &Path) -> Json {
    let store = Store::open(db, Mode::ReadOnly).unwrap();
    let q = superstep::store::items::ItemQuery {
        limit: 100_000,
        ..Default::default()
    };
    let Some(mut items) = store
        .store_items(&q)
        .unwrap_or_else(|e| panic!("{}: {e}", db.display()))
    else {
        return Json::Null;
    };
    items.sort_by(|a, b| {
        (&a.namespace, a.value.to_string(), &a.key).cmp(&(
            &b.namespace,
            b.value.to_string(),
            &b.key,
        ))
    });
    Json::Array(
        items
            .into_iter()
            .map(|i| json!({"namespace": i.namespace, "key": i.key, "value": i.value}))
            .collect(),
    )
}

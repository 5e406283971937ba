//! The graph spec: JSON (one file per graph in `graphs/`) with node code in Starlark. Parsed by
//! hand from `serde_json::Value` so every error names its key path.
//!
//! ```json
//! {
//!   "name": "approval",
//!   "code": "approval.star",                  // or "code_inline": "def a(state): ..."
//!   "state": {
//!     "request": {},                           // last value (LangGraph: a plain key)
//!     "log": {"reducer": "add", "type": "list"},   // Annotated[list, operator.add]
//!     "scores": {"reducer": "merge", "default": {}}, // Starlark def merge(current, update)
//!     "history": {"reducer": "add", "type": "list", "delta": {"snapshot_frequency": 50}}
//!                                              // Annotated[list, DeltaChannel(operator.add, snapshot_frequency=50)]
//!   },
//!   "nodes": ["draft", {"name": "review", "retry": {"max_attempts": 3}}, {"name": "sub", "subgraph": "child.json"},
//!             {"name": "route", "destinations": ["draft", "__end__"]}],   // where its Command(goto=) may lead
//!   "edges": [["__start__", "draft"], ["draft", "review"], [["a", "b"], "c"]],
//!   "conditional_edges": [{"source": "review", "path": "route", "path_map": {"ok": "send", "no": "__end__"}}],
//!   "interrupt_before": ["send"], "interrupt_after": [],
//!   "input": {"request": "write a haiku"}
//! }
//! ```

use serde_json::{Map, Value as Json};

pub const START: &str = "__start__";
pub const END: &str = "__end__";

/// A spec error: the file, the key path, and what was expected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}: {path}: {message}")]
pub struct SpecError {
    pub file: String,
    pub path: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ReducerSpec {
    LastValue,
    Add,
    Code(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct KeySpec {
    pub name: String,
    pub reducer: ReducerSpec,
    /// Initial value of a reducer key (from `default`, or `type`'s empty value).
    pub default: Option<Json>,
    /// `DeltaChannel(reducer, snapshot_frequency=N)` (LangGraph 1.2, beta): `Some(N)`. The
    /// reducer then takes the step's writes as one batch (`reducer(state, [w1, w2])`).
    pub delta: Option<u32>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RetrySpec {
    pub max_attempts: u32,
    pub initial_interval: f64,
    pub backoff_factor: f64,
    pub max_interval: f64,
    pub jitter: bool,
    /// Python exception names that are retried; `None` = LangGraph's `default_retry_on`.
    pub retry_on: Option<Vec<String>>,
}

impl Default for RetrySpec {
    fn default() -> Self {
        RetrySpec {
            max_attempts: 3,
            initial_interval: 0.5,
            backoff_factor: 2.0,
            max_interval: 128.0,
            jitter: true,
            retry_on: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct NodeSpec {
    pub name: String,
    /// Starlark function name (defaults to the node name).
    pub func: String,
    pub retry: Option<RetrySpec>,
    /// Path of a child spec, for subgraph nodes.
    pub subgraph: Option<String>,
    /// `add_node(..., defer=True)`: runs only when nothing else is left to run.
    pub defer: bool,
    /// Where a `Command(goto=...)` it returns may lead, with an optional edge label: what
    /// LangGraph reads from a `Command[Literal["a", "b"]]` return hint or
    /// `add_node(..., destinations=...)`. Drawing only (the graph, Mermaid, the TUI's Graph pane);
    /// it does not restrict where the node may go.
    pub destinations: Option<Vec<(String, Option<String>)>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EdgeSpec {
    /// One source, or several for a waiting edge `[a, b] -> c`.
    pub sources: Vec<String>,
    pub waiting: bool,
    pub target: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BranchSpec {
    pub source: String,
    pub path: String,
    /// Path result -> destination node (or END).
    pub path_map: Option<Vec<(Json, String)>>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Breakpoints {
    None,
    All,
    Nodes(Vec<String>),
}

impl Breakpoints {
    pub fn matches(&self, node: &str) -> bool {
        match self {
            Breakpoints::None => false,
            Breakpoints::All => node != START,
            Breakpoints::Nodes(n) => n.iter().any(|x| x == node),
        }
    }
    pub fn is_empty(&self) -> bool {
        matches!(self, Breakpoints::None) || matches!(self, Breakpoints::Nodes(n) if n.is_empty())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct GraphSpec {
    pub file: String,
    pub name: String,
    pub description: String,
    /// `code` file (relative to the spec) or `None` when inline / no code.
    pub code_file: Option<String>,
    pub code_inline: Option<String>,
    pub state: Vec<KeySpec>,
    pub nodes: Vec<NodeSpec>,
    pub edges: Vec<EdgeSpec>,
    pub branches: Vec<BranchSpec>,
    pub interrupt_before: Breakpoints,
    pub interrupt_after: Breakpoints,
    pub input: Option<Json>,
}

struct Ctx<'a> {
    file: &'a str,
}

impl Ctx<'_> {
    fn err(&self, path: &str, message: impl Into<String>) -> SpecError {
        SpecError {
            file: self.file.to_string(),
            path: path.to_string(),
            message: message.into(),
        }
    }
}

fn kind(j: &Json) -> &'static str {
    match j {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

fn normalize_node(n: &str) -> String {
    match n {
        "START" => START.into(),
        "END" => END.into(),
        other => other.into(),
    }
}

const TOP_KEYS: [&str; 11] = [
    "name",
    "description",
    "code",
    "code_inline",
    "state",
    "nodes",
    "edges",
    "conditional_edges",
    "interrupt_before",
    "interrupt_after",
    "input",
];

impl GraphSpec {
    /// Parse a spec document. `file` is used in error messages.
    pub fn parse(file: &str, text: &str) -> Result<GraphSpec, SpecError> {
        let cx = Ctx { file };
        let root: Json = serde_json::from_str(text).map_err(|e| SpecError {
            file: file.to_string(),
            path: format!("line {} column {}", e.line(), e.column()),
            message: format!("invalid JSON: {e}"),
        })?;
        let Json::Object(root) = root else {
            return Err(cx.err("$", format!("expected an object, got {}", kind(&root))));
        };
        for k in root.keys() {
            if !TOP_KEYS.contains(&k.as_str()) {
                return Err(cx.err(
                    k,
                    format!("unknown key (expected one of {})", TOP_KEYS.join(", ")),
                ));
            }
        }
        let name = match root.get("name") {
            Some(Json::String(s)) if !s.is_empty() => s.clone(),
            Some(other) => {
                return Err(cx.err(
                    "name",
                    format!("expected a non-empty string, got {}", kind(other)),
                ))
            }
            None => return Err(cx.err("name", "missing (expected the graph's name)")),
        };
        let string_opt = |k: &str| -> Result<Option<String>, SpecError> {
            match root.get(k) {
                None | Some(Json::Null) => Ok(None),
                Some(Json::String(s)) => Ok(Some(s.clone())),
                Some(other) => Err(cx.err(k, format!("expected a string, got {}", kind(other)))),
            }
        };
        let description = string_opt("description")?.unwrap_or_default();
        let code_file = string_opt("code")?;
        let code_inline = string_opt("code_inline")?;
        if code_file.is_some() && code_inline.is_some() {
            return Err(cx.err(
                "code_inline",
                "give either \"code\" (a .star file) or \"code_inline\", not both",
            ));
        }
        let state = parse_state(&cx, root.get("state"))?;
        let nodes = parse_nodes(&cx, root.get("nodes"))?;
        let edges = parse_edges(&cx, root.get("edges"))?;
        let branches = parse_branches(&cx, root.get("conditional_edges"))?;
        let interrupt_before =
            parse_breakpoints(&cx, "interrupt_before", root.get("interrupt_before"))?;
        let interrupt_after =
            parse_breakpoints(&cx, "interrupt_after", root.get("interrupt_after"))?;
        let spec = GraphSpec {
            file: file.to_string(),
            name,
            description,
            code_file,
            code_inline,
            state,
            nodes,
            edges,
            branches,
            interrupt_before,
            interrupt_after,
            input: root.get("input").cloned(),
        };
        spec.validate(&cx)?;
        Ok(spec)
    }

    pub fn node(&self, name: &str) -> Option<&NodeSpec> {
        self.nodes.iter().find(|n| n.name == name)
    }

    fn validate(&self, cx: &Ctx) -> Result<(), SpecError> {
        let known = |n: &str| self.node(n).is_some();
        for (i, e) in self.edges.iter().enumerate() {
            for (j, s) in e.sources.iter().enumerate() {
                let p = if e.waiting {
                    format!("edges[{i}][0][{j}]")
                } else {
                    format!("edges[{i}][0]")
                };
                if s == END {
                    return Err(cx.err(&p, "END cannot be the start of an edge"));
                }
                if s != START && !known(s) {
                    return Err(cx.err(
                        &p,
                        format!("unknown node {s:?} (nodes: {})", self.node_names()),
                    ));
                }
                if e.waiting && s == START {
                    return Err(cx.err(&p, "START cannot be part of a waiting edge"));
                }
            }
            let p = format!("edges[{i}][1]");
            if e.target == START {
                return Err(cx.err(&p, "START cannot be the end of an edge"));
            }
            if e.target != END && !known(&e.target) {
                return Err(cx.err(
                    &p,
                    format!("unknown node {:?} (nodes: {})", e.target, self.node_names()),
                ));
            }
        }
        for (i, b) in self.branches.iter().enumerate() {
            if b.source != START && !known(&b.source) {
                return Err(cx.err(
                    &format!("conditional_edges[{i}].source"),
                    format!("unknown node {:?} (nodes: {})", b.source, self.node_names()),
                ));
            }
            for (k, dest) in b.path_map.iter().flatten() {
                if dest != END && !known(dest) {
                    return Err(cx.err(
                        &format!("conditional_edges[{i}].path_map[{k}]"),
                        format!("unknown node {dest:?} (nodes: {})", self.node_names()),
                    ));
                }
            }
        }
        for (i, n) in self.nodes.iter().enumerate() {
            for (d, _) in n.destinations.iter().flatten() {
                if d == START || (d != END && !known(d)) {
                    return Err(cx.err(
                        &format!("nodes[{i}].destinations"),
                        format!("unknown node {d:?} (nodes: {}, or END)", self.node_names()),
                    ));
                }
            }
        }
        if !self
            .edges
            .iter()
            .any(|e| e.sources.iter().any(|s| s == START))
            && !self.branches.iter().any(|b| b.source == START)
        {
            return Err(cx.err(
                "edges",
                "no edge from __start__: the graph needs an entry point, e.g. [\"__start__\", \"first_node\"]",
            ));
        }
        for (field, bp) in [
            ("interrupt_before", &self.interrupt_before),
            ("interrupt_after", &self.interrupt_after),
        ] {
            if let Breakpoints::Nodes(ns) = bp {
                for (i, n) in ns.iter().enumerate() {
                    if !known(n) {
                        return Err(cx.err(
                            &format!("{field}[{i}]"),
                            format!("unknown node {n:?} (nodes: {})", self.node_names()),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    pub fn node_names(&self) -> String {
        self.nodes
            .iter()
            .map(|n| n.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn check_name(cx: &Ctx, path: &str, n: &str) -> Result<(), SpecError> {
    if n.is_empty() {
        return Err(cx.err(path, "empty name"));
    }
    if n == START || n == END || n.starts_with("__") {
        return Err(cx.err(
            path,
            format!("{n:?} is reserved (names starting with \"__\" belong to LangGraph)"),
        ));
    }
    if let Some(c) = n.chars().find(|c| matches!(c, '|' | ':' | '+')) {
        return Err(cx.err(
            path,
            format!("{n:?} contains {c:?}, which LangGraph reserves for namespaces and channels"),
        ));
    }
    Ok(())
}

fn parse_state(cx: &Ctx, j: Option<&Json>) -> Result<Vec<KeySpec>, SpecError> {
    let Some(j) = j else {
        return Err(cx.err(
            "state",
            "missing (expected an object: state key -> {\"reducer\": ...})",
        ));
    };
    let Json::Object(m) = j else {
        return Err(cx.err("state", format!("expected an object, got {}", kind(j))));
    };
    let mut out = Vec::new();
    for (k, v) in m {
        let path = format!("state.{k}");
        check_name(cx, &path, k)?;
        let obj: Map<String, Json> = match v {
            Json::Object(o) => o.clone(),
            Json::Null => Map::new(),
            other => {
                return Err(cx.err(
                    &path,
                    format!(
                        "expected an object like {{\"reducer\": \"add\"}}, got {}",
                        kind(other)
                    ),
                ))
            }
        };
        for key in obj.keys() {
            if !["reducer", "type", "default", "delta"].contains(&key.as_str()) {
                return Err(cx.err(
                    &format!("{path}.{key}"),
                    "unknown key (expected reducer, type, default or delta)",
                ));
            }
        }
        let reducer = match obj.get("reducer") {
            None | Some(Json::Null) => ReducerSpec::LastValue,
            Some(Json::String(s)) if s == "last" || s == "last_value" => ReducerSpec::LastValue,
            Some(Json::String(s)) if s == "add" => ReducerSpec::Add,
            Some(Json::String(s)) if is_ident(s) => ReducerSpec::Code(s.clone()),
            Some(other) => {
                return Err(cx.err(
                    &format!("{path}.reducer"),
                    format!(
                    "expected \"last\", \"add\" or the name of a Starlark function, got {other}"
                ),
                ))
            }
        };
        let type_default = match obj.get("type") {
            None | Some(Json::Null) => None,
            Some(Json::String(t)) => match t.as_str() {
                "list" => Some(Json::Array(vec![])),
                "str" => Some(Json::from("")),
                "int" => Some(Json::from(0)),
                "float" => Some(Json::from(0.0)),
                "dict" => Some(Json::Object(Map::new())),
                "bool" => Some(Json::Bool(false)),
                "any" => None,
                other => {
                    return Err(cx.err(
                        &format!("{path}.type"),
                        format!("unknown type {other:?} (expected list, str, int, float, dict, bool or any)"),
                    ))
                }
            },
            Some(other) => return Err(cx.err(&format!("{path}.type"), format!("expected a string, got {}", kind(other)))),
        };
        let default = obj.get("default").cloned().or(type_default);
        if reducer == ReducerSpec::LastValue && obj.contains_key("default") {
            return Err(cx.err(
                &format!("{path}.default"),
                "a last-value key has no default in LangGraph (only reducer keys start from a value); put it in \"input\"",
            ));
        }
        let delta = parse_delta(cx, &path, &obj, &reducer)?;
        let default = match delta {
            // DeltaChannel starts from `typ()` (list unless the key says otherwise)
            Some(_) => default.or(Some(Json::Array(vec![]))),
            None => default,
        };
        out.push(KeySpec {
            name: k.clone(),
            delta,
            reducer: reducer.clone(),
            default: if reducer == ReducerSpec::LastValue {
                None
            } else {
                default
            },
        });
    }
    Ok(out)
}

/// A state key's `"delta"`: `true` (LangGraph's default `snapshot_frequency=100`) or
/// `{"snapshot_frequency": N}`; checked against what `DeltaChannel` accepts.
fn parse_delta(
    cx: &Ctx,
    path: &str,
    obj: &Map<String, Json>,
    reducer: &ReducerSpec,
) -> Result<Option<u32>, SpecError> {
    let freq = match obj.get("delta") {
        None | Some(Json::Null) | Some(Json::Bool(false)) => return Ok(None),
        Some(Json::Bool(true)) => 100,
        Some(Json::Object(o)) => {
            for k in o.keys() {
                if k != "snapshot_frequency" {
                    return Err(cx.err(
                        &format!("{path}.delta.{k}"),
                        "unknown key (expected snapshot_frequency)",
                    ));
                }
            }
            match o.get("snapshot_frequency") {
                None => 100,
                Some(n) => match n.as_u64().filter(|n| *n >= 1 && *n <= u32::MAX as u64) {
                    Some(n) => n as u32,
                    None => {
                        return Err(cx.err(
                            &format!("{path}.delta.snapshot_frequency"),
                            format!("expected a positive integer, got {n} (DeltaChannel raises ValueError: snapshot_frequency must be a positive int)"),
                        ))
                    }
                },
            }
        }
        Some(other) => {
            return Err(cx.err(
                &format!("{path}.delta"),
                format!("expected true or {{\"snapshot_frequency\": N}}, got {other}"),
            ))
        }
    };
    if *reducer == ReducerSpec::LastValue {
        return Err(cx.err(
            &format!("{path}.delta"),
            "a delta channel needs a reducer (\"add\" or a Starlark function taking the state and a list of writes)",
        ));
    }
    if obj.contains_key("default") {
        return Err(cx.err(
            &format!("{path}.default"),
            "a delta channel starts from its type's empty value (DeltaChannel has no default); drop \"default\" or set \"type\"",
        ));
    }
    let ty = obj.get("type").and_then(Json::as_str).unwrap_or("list");
    if ty == "any" {
        return Err(cx.err(
            &format!("{path}.type"),
            "a delta channel needs a concrete type (it starts from typ(), e.g. \"list\")",
        ));
    }
    if *reducer == ReducerSpec::Add && ty != "list" {
        return Err(cx.err(
            &format!("{path}.type"),
            format!("a delta channel with reducer \"add\" is operator.add(state, [writes]): the state must be a list, got type {ty:?}"),
        ));
    }
    Ok(Some(freq))
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

fn parse_retry(cx: &Ctx, path: &str, j: &Json) -> Result<RetrySpec, SpecError> {
    let Json::Object(o) = j else {
        return Err(cx.err(path, format!("expected an object, got {}", kind(j))));
    };
    let mut r = RetrySpec::default();
    for (k, v) in o {
        let p = format!("{path}.{k}");
        let num = |v: &Json| {
            v.as_f64()
                .filter(|f| *f >= 0.0)
                .ok_or_else(|| cx.err(&p, "expected a non-negative number"))
        };
        match k.as_str() {
            "max_attempts" => {
                r.max_attempts = v.as_u64().filter(|n| *n >= 1 && *n <= 1000).ok_or_else(|| cx.err(&p, "expected an integer from 1 to 1000"))?
                    as u32
            }
            "initial_interval" => r.initial_interval = num(v)?,
            "backoff_factor" => r.backoff_factor = num(v)?,
            "max_interval" => r.max_interval = num(v)?,
            "jitter" => r.jitter = v.as_bool().ok_or_else(|| cx.err(&p, "expected true or false"))?,
            "retry_on" => {
                let list = v.as_array().ok_or_else(|| cx.err(&p, "expected a list of exception names"))?;
                r.retry_on = Some(
                    list.iter()
                        .map(|x| x.as_str().map(str::to_string).ok_or_else(|| cx.err(&p, "expected exception names (strings)")))
                        .collect::<Result<_, _>>()?,
                );
            }
            _ => {
                return Err(cx.err(
                    &p,
                    "unknown key (expected max_attempts, initial_interval, backoff_factor, max_interval, jitter, retry_on)",
                ))
            }
        }
    }
    Ok(r)
}

/// `"destinations": ["a", "__end__"]` or `{"a": "label", "END": "stop"}` (LangGraph's
/// `add_node(destinations=...)`: a tuple of names, or names to edge labels).
fn parse_destinations(
    cx: &Ctx,
    path: &str,
    j: &Json,
) -> Result<Vec<(String, Option<String>)>, SpecError> {
    let out: Vec<(String, Option<String>)> = match j {
        Json::Array(a) => a
            .iter()
            .enumerate()
            .map(|(i, d)| match d {
                Json::String(s) => Ok((normalize_node(s), None)),
                other => Err(cx.err(
                    &format!("{path}[{i}]"),
                    format!("expected a node name, got {}", kind(other)),
                )),
            })
            .collect::<Result<_, _>>()?,
        Json::Object(m) => m
            .iter()
            .map(|(k, v)| match v {
                Json::String(l) => Ok((normalize_node(k), Some(l.clone()))),
                Json::Null => Ok((normalize_node(k), None)),
                other => Err(cx.err(
                    &format!("{path}.{k}"),
                    format!("expected an edge label (a string), got {}", kind(other)),
                )),
            })
            .collect::<Result<_, _>>()?,
        other => {
            return Err(cx.err(
                path,
                format!(
                    "expected an array of node names or an object node -> label, got {}",
                    kind(other)
                ),
            ))
        }
    };
    if out.is_empty() {
        return Err(cx.err(
            path,
            "empty (name where its Command(goto=...) may lead, or leave the key out)",
        ));
    }
    Ok(out)
}

fn parse_nodes(cx: &Ctx, j: Option<&Json>) -> Result<Vec<NodeSpec>, SpecError> {
    let Some(Json::Array(list)) = j else {
        return Err(cx.err(
            "nodes",
            "missing or not an array (expected [\"node\", {\"name\": ...}, ...])",
        ));
    };
    let mut out: Vec<NodeSpec> = Vec::new();
    for (i, n) in list.iter().enumerate() {
        let path = format!("nodes[{i}]");
        let node = match n {
            Json::String(s) => NodeSpec {
                name: s.clone(),
                func: s.clone(),
                retry: None,
                subgraph: None,
                defer: false,
                destinations: None,
            },
            Json::Object(o) => {
                for k in o.keys() {
                    if !["name", "fn", "retry", "subgraph", "defer", "destinations"]
                        .contains(&k.as_str())
                    {
                        return Err(cx.err(
                            &format!("{path}.{k}"),
                            "unknown key (expected name, fn, retry, subgraph, defer, destinations)",
                        ));
                    }
                }
                let name = o
                    .get("name")
                    .and_then(Json::as_str)
                    .ok_or_else(|| {
                        cx.err(
                            &format!("{path}.name"),
                            "missing (expected the node's name)",
                        )
                    })?
                    .to_string();
                let func = match o.get("fn") {
                    None => name.clone(),
                    Some(Json::String(f)) if is_ident(f) => f.clone(),
                    Some(other) => {
                        return Err(cx.err(
                            &format!("{path}.fn"),
                            format!("expected a Starlark function name, got {other}"),
                        ))
                    }
                };
                let retry = o
                    .get("retry")
                    .map(|r| parse_retry(cx, &format!("{path}.retry"), r))
                    .transpose()?;
                let subgraph = match o.get("subgraph") {
                    None => None,
                    Some(Json::String(s)) => Some(s.clone()),
                    Some(other) => {
                        return Err(cx.err(
                            &format!("{path}.subgraph"),
                            format!("expected a spec file name, got {}", kind(other)),
                        ))
                    }
                };
                let defer = match o.get("defer") {
                    None => false,
                    Some(Json::Bool(b)) => *b,
                    Some(other) => {
                        return Err(cx.err(
                            &format!("{path}.defer"),
                            format!("expected true or false, got {}", kind(other)),
                        ))
                    }
                };
                let destinations = o
                    .get("destinations")
                    .map(|d| parse_destinations(cx, &format!("{path}.destinations"), d))
                    .transpose()?;
                NodeSpec {
                    name,
                    func,
                    retry,
                    subgraph,
                    defer,
                    destinations,
                }
            }
            other => {
                return Err(cx.err(
                    &path,
                    format!("expected a node name or object, got {}", kind(other)),
                ))
            }
        };
        check_name(cx, &path, &node.name)?;
        if out.iter().any(|x| x.name == node.name) {
            return Err(cx.err(&path, format!("duplicate node {:?}", node.name)));
        }
        out.push(node);
    }
    if out.is_empty() {
        return Err(cx.err("nodes", "a graph needs at least one node"));
    }
    Ok(out)
}

fn parse_edges(cx: &Ctx, j: Option<&Json>) -> Result<Vec<EdgeSpec>, SpecError> {
    let list = match j {
        None => return Ok(Vec::new()),
        Some(Json::Array(l)) => l,
        Some(other) => {
            return Err(cx.err(
                "edges",
                format!(
                    "expected an array of [source, target] pairs, got {}",
                    kind(other)
                ),
            ))
        }
    };
    let mut out = Vec::new();
    for (i, e) in list.iter().enumerate() {
        let path = format!("edges[{i}]");
        let Some(pair) = e.as_array().filter(|p| p.len() == 2) else {
            return Err(cx.err(&path, format!("expected [source, target], got {e}")));
        };
        let target = pair[1]
            .as_str()
            .map(normalize_node)
            .ok_or_else(|| cx.err(&format!("{path}[1]"), "expected a node name"))?;
        let (sources, waiting) = match &pair[0] {
            Json::String(s) => (vec![normalize_node(s)], false),
            Json::Array(a) if !a.is_empty() => (
                a.iter()
                    .map(|s| {
                        s.as_str()
                            .map(normalize_node)
                            .ok_or_else(|| cx.err(&format!("{path}[0]"), "expected node names"))
                    })
                    .collect::<Result<Vec<_>, _>>()?,
                true,
            ),
            other => {
                return Err(cx.err(
                    &format!("{path}[0]"),
                    format!("expected a node name or a list of node names, got {other}"),
                ))
            }
        };
        out.push(EdgeSpec {
            sources,
            waiting,
            target,
        });
    }
    Ok(out)
}

fn parse_branches(cx: &Ctx, j: Option<&Json>) -> Result<Vec<BranchSpec>, SpecError> {
    let list = match j {
        None => return Ok(Vec::new()),
        Some(Json::Array(l)) => l,
        Some(other) => {
            return Err(cx.err(
                "conditional_edges",
                format!("expected an array, got {}", kind(other)),
            ))
        }
    };
    let mut out = Vec::new();
    for (i, b) in list.iter().enumerate() {
        let path = format!("conditional_edges[{i}]");
        let Json::Object(o) = b else {
            return Err(cx.err(
                &path,
                format!(
                    "expected {{\"source\", \"path\", \"path_map\"}}, got {}",
                    kind(b)
                ),
            ));
        };
        for k in o.keys() {
            if !["source", "path", "path_map"].contains(&k.as_str()) {
                return Err(cx.err(
                    &format!("{path}.{k}"),
                    "unknown key (expected source, path, path_map)",
                ));
            }
        }
        let source = o
            .get("source")
            .and_then(Json::as_str)
            .map(normalize_node)
            .ok_or_else(|| cx.err(&format!("{path}.source"), "missing (expected a node name)"))?;
        let func = o
            .get("path")
            .and_then(Json::as_str)
            .filter(|s| is_ident(s))
            .ok_or_else(|| {
                cx.err(
                    &format!("{path}.path"),
                    "missing (expected the name of a Starlark function)",
                )
            })?
            .to_string();
        let path_map = match o.get("path_map") {
            None | Some(Json::Null) => None,
            Some(Json::Object(m)) => Some(
                m.iter()
                    .map(|(k, v)| {
                        v.as_str()
                            .map(|d| (Json::from(k.as_str()), normalize_node(d)))
                            .ok_or_else(|| {
                                cx.err(&format!("{path}.path_map.{k}"), "expected a node name")
                            })
                    })
                    .collect::<Result<_, _>>()?,
            ),
            Some(Json::Array(a)) => Some(
                a.iter()
                    .map(|v| {
                        v.as_str()
                            .map(|d| (Json::from(d), normalize_node(d)))
                            .ok_or_else(|| {
                                cx.err(&format!("{path}.path_map"), "expected node names")
                            })
                    })
                    .collect::<Result<_, _>>()?,
            ),
            Some(other) => {
                return Err(cx.err(
                    &format!("{path}.path_map"),
                    format!("expected an object or a list, got {}", kind(other)),
                ))
            }
        };
        out.push(BranchSpec {
            source,
            path: func,
            path_map,
        });
    }
    Ok(out)
}

fn parse_breakpoints(cx: &Ctx, field: &str, j: Option<&Json>) -> Result<Breakpoints, SpecError> {
    match j {
        None | Some(Json::Null) => Ok(Breakpoints::None),
        Some(Json::String(s)) if s == "*" => Ok(Breakpoints::All),
        Some(Json::Array(a)) => Ok(Breakpoints::Nodes(
            a.iter()
                .enumerate()
                .map(|(i, n)| {
                    n.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| cx.err(&format!("{field}[{i}]"), "expected a node name"))
                })
                .collect::<Result<_, _>>()?,
        )),
        Some(other) => Err(cx.err(
            field,
            format!("expected a list of node names or \"*\", got {other}"),
        )),
    }
}

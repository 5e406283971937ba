//! Parsing and validating a whole spec document; the error context every parser shares.

use super::edges::{parse_branches, parse_breakpoints, parse_edges};
use super::nodes::parse_nodes;
use super::state::parse_state;
use super::{Breakpoints, GraphSpec, NodeSpec, SpecError, END, START};
use serde_json::Value as Json;

pub(super) struct Ctx<'a> {
    pub(super) file: &'a str,
}

impl Ctx<'_> {
    pub(super) fn err(&self, path: &str, message: impl Into<String>) -> SpecError {
        SpecError {
            file: self.file.to_string(),
            path: path.to_string(),
            message: message.into(),
        }
    }
}

pub(super) fn kind(j: &Json) -> &'static str {
    match j {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

pub(super) fn normalize_node(n: &str) -> String {
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

pub(super) fn check_name(cx: &Ctx, path: &str, n: &str) -> Result<(), SpecError> {
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

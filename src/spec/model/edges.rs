//! The `edges`, `conditional_edges` and `interrupt_before`/`interrupt_after` keys.

use super::parse::{kind, normalize_node, Ctx};
use super::state::is_ident;
use super::{BranchSpec, Breakpoints, EdgeSpec, SpecError};
use serde_json::Value as Json;

pub(super) fn parse_edges(cx: &Ctx, j: Option<&Json>) -> Result<Vec<EdgeSpec>, SpecError> {
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

pub(super) fn parse_branches(cx: &Ctx, j: Option<&Json>) -> Result<Vec<BranchSpec>, SpecError> {
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

pub(super) fn parse_breakpoints(
    cx: &Ctx,
    field: &str,
    j: Option<&Json>,
) -> Result<Breakpoints, SpecError> {
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

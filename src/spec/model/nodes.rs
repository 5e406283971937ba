//! The `nodes` key: names, retry policies, destinations, subgraphs.

use super::parse::{check_name, kind, normalize_node, Ctx};
use super::state::is_ident;
use super::{NodeSpec, RetrySpec, SpecError};
use serde_json::Value as Json;

pub(super) fn parse_retry(cx: &Ctx, path: &str, j: &Json) -> Result<RetrySpec, SpecError> {
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
pub(super) fn parse_destinations(
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

pub(super) fn parse_nodes(cx: &Ctx, j: Option<&Json>) -> Result<Vec<NodeSpec>, SpecError> {
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

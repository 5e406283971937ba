//! The `state` key: channels, their reducers and delta settings.

use super::parse::{check_name, kind, Ctx};
use super::{KeySpec, ReducerSpec, SpecError};
use serde_json::{Map, Value as Json};

pub(super) fn parse_state(cx: &Ctx, j: Option<&Json>) -> Result<Vec<KeySpec>, SpecError> {
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
pub(super) fn parse_delta(
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

pub(super) fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

//! Two JSON views → the paths at which they differ.
//!
//! Rules (tests/oracle/gen_compare.py computes the same over LangGraph's values):
//! * two objects recurse key by key (the first's keys in order, then the second's new ones)
//!   unless they are typed views (`__type__`) of different types, which differ as a whole;
//! * two arrays recurse index by index; a longer second array has its extra items `added`, a
//!   longer first array its extra items `removed`;
//! * anything else that is not equal is `changed`.
//!
//! A path is written from the value's root: `.name` for an identifier key, `["any key"]`
//! otherwise, `[3]` for an index; the root itself is `""`.

use serde::Serialize;
use serde_json::Value as Json;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathChange {
    pub path: String,
    pub op: Op,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub a: Option<Json>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b: Option<Json>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Added,
    Removed,
    Changed,
}

/// `.name` or `["key"]`.
pub fn key_segment(k: &str) -> String {
    let ident = k
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ident {
        format!(".{k}")
    } else {
        format!("[{}]", Json::from(k))
    }
}

/// Every path at which `a` and `b` differ, in document order.
pub fn diff(a: &Json, b: &Json) -> Vec<PathChange> {
    let mut out = Vec::new();
    walk(String::new(), a, b, &mut out);
    out
}

fn typed(o: &serde_json::Map<String, Json>) -> Option<&Json> {
    o.get("__type__")
}

fn walk(path: String, a: &Json, b: &Json, out: &mut Vec<PathChange>) {
    if a == b {
        return;
    }
    match (a, b) {
        (Json::Object(x), Json::Object(y)) if typed(x) == typed(y) => {
            for (k, v) in x {
                let p = format!("{path}{}", key_segment(k));
                match y.get(k) {
                    Some(w) => walk(p, v, w, out),
                    None => out.push(PathChange {
                        path: p,
                        op: Op::Removed,
                        a: Some(v.clone()),
                        b: None,
                    }),
                }
            }
            for (k, w) in y {
                if !x.contains_key(k) {
                    out.push(PathChange {
                        path: format!("{path}{}", key_segment(k)),
                        op: Op::Added,
                        a: None,
                        b: Some(w.clone()),
                    });
                }
            }
        }
        (Json::Array(x), Json::Array(y)) => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                walk(format!("{path}[{i}]"), v, w, out);
            }
            for (i, v) in x.iter().enumerate().skip(y.len()) {
                out.push(PathChange {
                    path: format!("{path}[{i}]"),
                    op: Op::Removed,
                    a: Some(v.clone()),
                    b: None,
                });
            }
            for (i, w) in y.iter().enumerate().skip(x.len()) {
                out.push(PathChange {
                    path: format!("{path}[{i}]"),
                    op: Op::Added,
                    a: None,
                    b: Some(w.clone()),
                });
            }
        }
        _ => out.push(PathChange {
            path,
            op: Op::Changed,
            a: Some(a.clone()),
            b: Some(b.clone()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_name_keys_indexes_and_whole_typed_values() {
        let a = json!({"x": 1, "plan": [{"s": "a"}, 2], "odd key": true, "d": {"__type__": "uuid.UUID", "value": "1"}});
        let b = json!({"x": 2, "plan": [{"s": "b"}], "new": null, "d": {"__type__": "datetime.datetime", "value": "1"}});
        let got: Vec<(String, Op)> = diff(&a, &b).into_iter().map(|c| (c.path, c.op)).collect();
        assert_eq!(
            got,
            vec![
                (".x".into(), Op::Changed),
                (".plan[0].s".into(), Op::Changed),
                (".plan[1]".into(), Op::Removed),
                ("[\"odd key\"]".into(), Op::Removed),
                (".d".into(), Op::Changed),
                (".new".into(), Op::Added),
            ]
        );
        assert_eq!(diff(&json!(1), &json!("1"))[0].path, "");
        assert!(diff(&a, &a).is_empty());
    }
}

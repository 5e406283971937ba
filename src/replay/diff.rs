//! Where two requests differ: JSON paths with the recorded and the new value, in document order
//! (object keys sorted), shown for the first divergence of a replayed run.

use serde_json::Value as Json;

/// One difference: `messages[3].content`, the recorded value, the new one (`None`: absent).
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    pub path: String,
    pub recorded: Option<Json>,
    pub now: Option<Json>,
}

/// Up to `limit` differences between the recorded request `a` and the new one `b`.
pub fn differences(a: &Json, b: &Json, limit: usize) -> Vec<Difference> {
    let mut out = Vec::new();
    walk(a, b, String::new(), limit, &mut out);
    out
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn walk(a: &Json, b: &Json, path: String, limit: usize, out: &mut Vec<Difference>) {
    if out.len() >= limit {
        return;
    }
    match (a, b) {
        (Json::Object(x), Json::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let p = join(&path, k);
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => walk(u, v, p, limit, out),
                    (u, v) => push(out, p, u.cloned(), v.cloned(), limit),
                }
            }
        }
        (Json::Array(x), Json::Array(y)) => {
            for i in 0..x.len().max(y.len()) {
                let p = format!("{path}[{i}]");
                match (x.get(i), y.get(i)) {
                    (Some(u), Some(v)) => walk(u, v, p, limit, out),
                    (u, v) => push(out, p, u.cloned(), v.cloned(), limit),
                }
            }
        }
        _ if a != b => push(
            out,
            if path.is_empty() { "$".into() } else { path },
            Some(a.clone()),
            Some(b.clone()),
            limit,
        ),
        _ => {}
    }
}

fn push(out: &mut Vec<Difference>, path: String, a: Option<Json>, b: Option<Json>, limit: usize) {
    if out.len() < limit {
        out.push(Difference {
            path,
            recorded: a,
            now: b,
        });
    }
}

/// `messages[1].content: "hi" → "hello"` (unescaped: callers escape).
pub fn line(d: &Difference) -> String {
    let show = |v: &Option<Json>| match v {
        None => "(absent)".to_string(),
        Some(v) => crate::text::head(&v.to_string(), 80).to_string(),
    };
    format!("{}: {} → {}", d.path, show(&d.recorded), show(&d.now))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn differences_name_the_path_of_each_changed_value() {
        let a = json!({"llm": "m", "messages": [{"content": "hi", "type": "human"}]});
        let b = json!({"llm": "m", "messages": [{"content": "hello", "type": "human"}, {"x": 1}]});
        let d = differences(&a, &b, 10);
        assert_eq!(d.len(), 2);
        assert_eq!(line(&d[0]), "messages[0].content: \"hi\" → \"hello\"");
        assert_eq!(line(&d[1]), "messages[1]: (absent) → {\"x\":1}");
        assert!(differences(&a, &a, 10).is_empty());
        assert_eq!(differences(&a, &b, 1).len(), 1);
    }
}

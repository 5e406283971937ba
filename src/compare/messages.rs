//! Two message lists → which messages were added, removed or edited, and for an edited AI
//! message, which tool calls. Messages are recognised by `crate::conversation` (LangChain's
//! classes in their stored shapes, and the OpenAI-style dicts apps keep).
//!
//! Matching (tests/oracle/gen_compare.py computes the same over LangGraph's values):
//! * when every message of both lists has an `id`, by id, as `add_messages` matches them:
//!   `removed` (in the first list only, its order), `edited` (in both, views differ: the
//!   top-level fields that differ, sorted), `added` (in the second only, its order);
//! * otherwise by position: an index both lists have whose views differ is `edited`, the
//!   extra tail of the longer list `added` / `removed`.
//!
//! Tool calls of an edited message are matched by their `id` (by position when one has none).

use crate::conversation::Message;
use serde::Serialize;
use serde_json::Value as Json;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum MessageChange {
    Added {
        index: usize,
        message: Json,
    },
    Removed {
        index: usize,
        message: Json,
    },
    Edited {
        index_a: usize,
        index_b: usize,
        id: Option<String>,
        fields: Vec<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        tool_calls: Option<ToolCallsChange>,
        a: Json,
        b: Json,
    },
}

/// How the tool calls of one message changed (each call as its JSON view).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCallsChange {
    pub added: Vec<Json>,
    pub removed: Vec<Json>,
    /// `[a, b]` pairs: the same call (by id / position) with other arguments or name.
    pub changed: Vec<[Json; 2]>,
}

/// Both values are lists of messages (at least one message between them; an empty list
/// beside a message list counts).
pub fn both_message_lists(a: &Json, b: &Json) -> bool {
    let (Some(x), Some(y)) = (a.as_array(), b.as_array()) else {
        return false;
    };
    (!x.is_empty() || !y.is_empty()) && x.iter().chain(y).all(|m| Message::from_view(m).is_some())
}

fn id_of(m: &Json) -> Option<String> {
    match m.get("id") {
        Some(Json::String(s)) => Some(s.clone()),
        // LangChain's own serialisation keeps the fields under kwargs
        _ => m
            .get("kwargs")
            .and_then(|k| k.get("id"))
            .and_then(Json::as_str)
            .map(str::to_string),
    }
}

/// The changes from list `a` to list `b` (both message lists).
pub fn diff(a: &[Json], b: &[Json]) -> Vec<MessageChange> {
    let all_ids = a.iter().chain(b).all(|m| id_of(m).is_some());
    let mut out = Vec::new();
    if all_ids {
        let pos = |l: &[Json], id: &str| l.iter().position(|m| id_of(m).as_deref() == Some(id));
        for (i, m) in a.iter().enumerate() {
            if pos(b, &id_of(m).unwrap_or_default()).is_none() {
                out.push(MessageChange::Removed {
                    index: i,
                    message: m.clone(),
                });
            }
        }
        for (j, m) in b.iter().enumerate() {
            let id = id_of(m).unwrap_or_default();
            match pos(a, &id) {
                Some(i) if a[i] != *m => out.push(edited(i, j, &a[i], m)),
                Some(_) => {}
                None => out.push(MessageChange::Added {
                    index: j,
                    message: m.clone(),
                }),
            }
        }
    } else {
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            if x != y {
                out.push(edited(i, i, x, y));
            }
        }
        for (i, m) in a.iter().enumerate().skip(b.len()) {
            out.push(MessageChange::Removed {
                index: i,
                message: m.clone(),
            });
        }
        for (j, m) in b.iter().enumerate().skip(a.len()) {
            out.push(MessageChange::Added {
                index: j,
                message: m.clone(),
            });
        }
    }
    out
}

fn edited(i: usize, j: usize, x: &Json, y: &Json) -> MessageChange {
    let empty = serde_json::Map::new();
    let (ox, oy) = (
        x.as_object().unwrap_or(&empty),
        y.as_object().unwrap_or(&empty),
    );
    let mut fields: Vec<String> = ox
        .keys()
        .chain(oy.keys())
        .filter(|k| ox.get(*k) != oy.get(*k))
        .cloned()
        .collect();
    fields.sort();
    fields.dedup();
    let calls = |o: &serde_json::Map<String, Json>| {
        o.get("tool_calls")
            .and_then(Json::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let tool_calls = fields
        .iter()
        .any(|f| f == "tool_calls")
        .then(|| tool_calls_diff(&calls(ox), &calls(oy)));
    MessageChange::Edited {
        index_a: i,
        index_b: j,
        id: id_of(y),
        fields,
        tool_calls,
        a: x.clone(),
        b: y.clone(),
    }
}

fn tool_calls_diff(a: &[Json], b: &[Json]) -> ToolCallsChange {
    let cid = |c: &Json| c.get("id").and_then(Json::as_str).map(str::to_string);
    let by_id = a.iter().chain(b).all(|c| cid(c).is_some());
    let mut out = ToolCallsChange {
        added: Vec::new(),
        removed: Vec::new(),
        changed: Vec::new(),
    };
    let partner = |l: &[Json], i: usize, c: &Json| -> Option<Json> {
        if by_id {
            l.iter().find(|x| cid(x) == cid(c)).cloned()
        } else {
            l.get(i).cloned()
        }
    };
    for (i, c) in a.iter().enumerate() {
        match partner(b, i, c) {
            None => out.removed.push(c.clone()),
            Some(d) if d != *c => out.changed.push([c.clone(), d]),
            Some(_) => {}
        }
    }
    for (i, d) in b.iter().enumerate() {
        if partner(a, i, d).is_none() {
            out.added.push(d.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ai(id: &str, text: &str, calls: Json) -> Json {
        json!({"__type__": "langchain_core.messages.ai.AIMessage", "content": text, "id": id, "tool_calls": calls})
    }

    #[test]
    fn by_id_added_removed_edited_with_tool_calls() {
        let call = |id: &str, q: &str| json!({"name": "search", "args": {"q": q}, "id": id});
        let a = vec![
            ai("1", "hi", json!([])),
            ai("2", "", json!([call("c1", "x"), call("c2", "y")])),
            ai("3", "bye", json!([])),
        ];
        let b = vec![
            ai("1", "hi", json!([])),
            ai("2", "", json!([call("c1", "z"), call("c3", "w")])),
            ai("4", "new", json!([])),
        ];
        let d = diff(&a, &b);
        assert!(matches!(&d[0], MessageChange::Removed { index: 2, .. }));
        let MessageChange::Edited {
            fields, tool_calls, ..
        } = &d[1]
        else {
            panic!("{d:?}")
        };
        assert_eq!(fields, &vec!["tool_calls".to_string()]);
        let tc = tool_calls.as_ref().unwrap();
        assert_eq!(
            (tc.added.len(), tc.removed.len(), tc.changed.len()),
            (1, 1, 1)
        );
        assert!(matches!(&d[2], MessageChange::Added { index: 2, .. }));
        assert!(both_message_lists(&json!(a), &json!([])));
        assert!(!both_message_lists(&json!([]), &json!([])));
        assert!(!both_message_lists(&json!([1]), &json!(b)));
    }
}

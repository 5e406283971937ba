//! What `u` starts from: the current value of the key selected in the State pane, so an edit is a
//! change, not a retype. For a list of LangChain messages it is the last message alone, with its
//! id — `add_messages` replaces the message with that id, so editing a tool call's arguments
//! rewrites that call — written as the dict LangChain builds a message from (`type`, `content`,
//! `id`, and `name`, `tool_calls`, `tool_call_id`, `response_metadata`, `additional_kwargs` when
//! set; the view's own `__type__` marker and the fields LangChain would file under
//! `additional_kwargs` are left out).

use crate::app::state::*;
use serde_json::{json, Map, Value as Json};

/// `(values JSON, a note for the editor)`, or `None` when no key is selected.
pub(super) fn proposal(s: &AppState) -> Option<(String, String)> {
    let cur = s.current.as_ref()?;
    let row = cur.values.get(s.selected(Pane::State))?;
    let (value, note) = match last_message(&row.view) {
        Some(m) => (
            json!([m]),
            format!(
                "{}: the last message with its id — add_messages replaces it; a new id appends",
                row.key
            ),
        ),
        None if s.graph.reducer_keys.contains(&row.key) => (
            row.view.clone(),
            format!(
                "{}: its current value — the key has a reducer, which gets what you apply (a list reducer appends it: edit it down)",
                row.key
            ),
        ),
        None => (
            row.view.clone(),
            format!("{}: its current value (State pane: pick another key)", row.key),
        ),
    };
    let mut obj = Map::new();
    obj.insert(row.key.clone(), value);
    Some((serde_json::to_string(&Json::Object(obj)).ok()?, note))
}

/// The last element of a list of LangChain messages (as the JSON view shows them), as the dict
/// `add_messages` turns back into that message.
fn last_message(v: &Json) -> Option<Json> {
    let m = v.as_array()?.last()?.as_object()?;
    let ty = m.get("type")?.as_str()?;
    if !matches!(
        ty,
        "human" | "ai" | "tool" | "system" | "function" | "chat" | "remove"
    ) || !m.contains_key("content")
    {
        return None;
    }
    let mut out = Map::new();
    out.insert("type".into(), json!(ty));
    out.insert("content".into(), m["content"].clone());
    for k in ["id", "name", "tool_call_id"] {
        if let Some(x) = m.get(k).filter(|x| !x.is_null()) {
            out.insert(k.into(), x.clone());
        }
    }
    for k in ["tool_calls", "response_metadata", "additional_kwargs"] {
        let set = match m.get(k) {
            Some(Json::Array(a)) => !a.is_empty(),
            Some(Json::Object(o)) => !o.is_empty(),
            _ => false,
        };
        if set {
            out.insert(k.into(), m[k].clone());
        }
    }
    Some(Json::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_list_proposes_its_last_message_with_its_id() {
        // as the JSON view shows an AIMessage with a tool call
        let view = json!([
            {"__type__": "langchain_core.messages.human.HumanMessage", "content": "where is order 42?", "type": "human", "id": "h1", "name": null, "additional_kwargs": {}, "response_metadata": {}},
            {"__type__": "langchain_core.messages.ai.AIMessage", "content": "", "additional_kwargs": {}, "response_metadata": {"model": "m"}, "type": "ai", "name": null, "id": "ai-1",
             "tool_calls": [{"name": "lookup", "args": {"order": "42"}, "id": "call-1", "type": "tool_call"}], "invalid_tool_calls": [], "usage_metadata": null}
        ]);
        assert_eq!(
            last_message(&view).unwrap(),
            json!({"type": "ai", "content": "", "id": "ai-1", "tool_calls": [{"name": "lookup", "args": {"order": "42"}, "id": "call-1", "type": "tool_call"}], "response_metadata": {"model": "m"}})
        );
        assert_eq!(last_message(&json!([1, 2])), None);
        assert_eq!(last_message(&json!([])), None);
        assert_eq!(last_message(&json!({"type": "ai"})), None);
    }
}

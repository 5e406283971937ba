//! An input proposed from a graph's input schema — the fields the bridge reads off a Python
//! graph's type hints (`bridge.py`'s `input_fields`): `N` opens with it instead of `{}`, and `M`
//! knows from it whether the graph takes a `messages` list. Every key of the schema is in the
//! proposal, with its default when it has one, else a value of its type (`""`, `0`, `false`,
//! `[]`, `{}`, the first choice of a `Literal`, a human message for a `messages` list), for the
//! user to edit before anything runs.

use serde_json::{json, Map, Value as Json};

/// The proposal for `fields` (`None`: no schema was read).
pub fn proposal(fields: &Json) -> Option<Json> {
    let list = fields.as_array().filter(|l| !l.is_empty())?;
    Some(object(list))
}

fn object(fields: &[Json]) -> Json {
    let mut m = Map::new();
    for f in fields {
        let Some(key) = f["key"].as_str() else {
            continue;
        };
        let v = match f.get("default") {
            Some(d) => d.clone(),
            None => placeholder(f),
        };
        m.insert(key.to_string(), v);
    }
    Json::Object(m)
}

fn placeholder(f: &Json) -> Json {
    match f["kind"].as_str().unwrap_or("any") {
        "str" => json!(""),
        "int" => json!(0),
        "float" => json!(0.0),
        "bool" => json!(false),
        "list" => json!([]),
        "dict" => json!({}),
        "messages" => json!([{"role": "user", "content": ""}]),
        "literal" => f["choices"]
            .as_array()
            .and_then(|c| c.first().cloned())
            .unwrap_or(Json::Null),
        "object" => object(f["fields"].as_array().map(Vec::as_slice).unwrap_or(&[])),
        _ => Json::Null,
    }
}

/// Whether an input (a proposal or a spec's input) has a `messages` key: such a graph's
/// follow-up turn is just the text of a human message.
pub fn takes_messages(input: Option<&Json>) -> bool {
    input.is_some_and(|i| i.get("messages").is_some())
}

/// LangGraph's human message for a follow-up turn, as its docs send one:
/// `{"messages": [{"role": "user", "content": TEXT}]}` (`add_messages` makes it a HumanMessage
/// with a fresh id).
pub fn human_turn(text: &str) -> Json {
    json!({"messages": [{"role": "user", "content": text}]})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_types_and_defaults() {
        // as bridge.py reads a dataclass state with a messages list, a Literal and defaults
        let fields = json!([
            {"key": "messages", "kind": "messages", "required": true},
            {"key": "name", "kind": "str", "required": true},
            {"key": "n", "kind": "int", "required": false, "default": 3},
            {"key": "mode", "kind": "literal", "choices": ["fast", "slow"], "required": false},
            {"key": "k", "kind": "int", "optional": true, "required": false, "default": null},
            {"key": "opts", "kind": "object", "required": true, "fields": [{"key": "temp", "kind": "float", "required": true}]},
            {"key": "x", "kind": "any", "required": true}
        ]);
        assert_eq!(
            proposal(&fields).unwrap(),
            json!({"messages": [{"role": "user", "content": ""}], "name": "", "n": 3, "mode": "fast", "k": null, "opts": {"temp": 0.0}, "x": null})
        );
        assert_eq!(proposal(&json!([])), None);
        assert_eq!(proposal(&Json::Null), None);
        assert!(takes_messages(proposal(&fields).as_ref()));
        assert!(!takes_messages(Some(&json!({"topic": ""}))));
    }
}

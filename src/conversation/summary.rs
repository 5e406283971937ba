//! One-line forms of messages: what a State row, a diff against the parent checkpoint or the
//! CLI's `show` says about a conversation.

use super::message::{Message, Role};
use super::render::call_text;
use super::wrap::{cut, one_line};

/// `AI "It is 18°C…"`, `AI calls search(query="…")`, `Tool calculator ✗ "Error: …"`.
pub fn message_line(m: &Message, max: usize) -> String {
    let text = one_line(&m.text());
    let quoted = |t: &str, room: usize| format!("\"{}\"", cut(t, room.max(8)));
    let mut who = m.who();
    if let Some(n) = &m.name {
        if m.role != Role::Tool {
            who = format!("{who} ({n})");
        }
    }
    let s = match m.role {
        Role::Tool => {
            let mark = if m.is_error() { "✗" } else { "✓" };
            let head = format!("Tool {} {mark} ", m.name.as_deref().unwrap_or("tool"));
            let room = max.saturating_sub(head.chars().count() + 2);
            format!("{head}{}", quoted(&text, room))
        }
        Role::Ai if text.is_empty() && !m.tool_calls.is_empty() => {
            let calls: Vec<String> = m.tool_calls.iter().map(call_text).collect();
            format!("{who} calls {}", calls.join(", "))
        }
        Role::Remove => format!("Remove {}", m.id.as_deref().unwrap_or("(all)")),
        _ if text.is_empty() => format!("{who} (no text)"),
        _ => {
            let room = max.saturating_sub(who.chars().count() + 3);
            format!("{who} {}", quoted(&text, room))
        }
    };
    cut(&s, max)
}

/// `42 msgs · last: AI "…"` for a message list (a State row, the CLI's values).
pub fn list_line(msgs: &[Message], max: usize) -> String {
    let n = msgs.len();
    let head = format!("{n} msg{} · last: ", if n == 1 { "" } else { "s" });
    match msgs.last() {
        Some(m) => format!(
            "{head}{}",
            message_line(m, max.saturating_sub(head.chars().count()))
        ),
        None => "0 msgs".into(),
    }
}

/// How the parent's messages became these: `+2 messages (AI tool_call search, Tool result)`.
/// Messages are matched by id (as `add_messages` does); without ids, the parent's list must be a
/// prefix. `None` when nothing changed.
pub fn delta_line(was: &[Message], now: &[Message]) -> Option<String> {
    let ids = |l: &[Message]| l.iter().all(|m| m.id.is_some());
    let (added, removed, changed): (Vec<&Message>, usize, usize) = if ids(was) && ids(now) {
        let old = |id: &str| was.iter().find(|m| m.id.as_deref() == Some(id));
        let added = now
            .iter()
            .filter(|m| old(m.id.as_deref().unwrap_or("")).is_none())
            .collect();
        let removed = was
            .iter()
            .filter(|w| !now.iter().any(|m| m.id == w.id))
            .count();
        let changed = now
            .iter()
            .filter(|m| old(m.id.as_deref().unwrap_or("")).is_some_and(|w| w != *m))
            .count();
        (added, removed, changed)
    } else if now.len() >= was.len() && now[..was.len()] == *was {
        (now[was.len()..].iter().collect(), 0, 0)
    } else {
        return Some(format!(
            "messages rewritten ({} → {})",
            was.len(),
            now.len()
        ));
    };
    if added.is_empty() && removed == 0 && changed == 0 {
        return None;
    }
    let mut parts = Vec::new();
    if !added.is_empty() {
        let kinds: Vec<String> = added.iter().map(|m| kind(m)).collect();
        parts.push(format!(
            "+{} message{} ({})",
            added.len(),
            if added.len() == 1 { "" } else { "s" },
            squeeze(&kinds).join(", ")
        ));
    }
    if removed > 0 {
        parts.push(format!("−{removed} removed"));
    }
    if changed > 0 {
        parts.push(format!("~{changed} edited"));
    }
    Some(parts.join(" "))
}

/// `AI tool_call search`, `Tool result`, `Tool error`, `Human`.
fn kind(m: &Message) -> String {
    match m.role {
        Role::Ai if !m.tool_calls.is_empty() => format!(
            "{} tool_call{} {}",
            m.who(),
            if m.tool_calls.len() == 1 { "" } else { "s" },
            m.tool_calls
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Role::Tool if m.is_error() => "Tool error".into(),
        Role::Tool => "Tool result".into(),
        _ => m.who(),
    }
}

/// `["Tool result", "Tool result"]` -> `["2 Tool result"]`.
fn squeeze(kinds: &[String]) -> Vec<String> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for k in kinds {
        match out.last_mut() {
            Some((last, n)) if last == k => *n += 1,
            _ => out.push((k.clone(), 1)),
        }
    }
    out.into_iter()
        .map(|(k, n)| if n == 1 { k } else { format!("{n}× {k}") })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::message::messages_in;
    use super::*;
    use serde_json::json;

    fn m(ty: &str, id: &str, extra: serde_json::Value) -> serde_json::Value {
        let mut o =
            json!({"__type__": format!("langchain_core.messages.{ty}"), "content": "", "id": id});
        for (k, v) in extra.as_object().unwrap() {
            o[k] = v.clone();
        }
        o
    }

    #[test]
    fn a_turn_is_summarised_by_what_it_added() {
        let h = m("human.HumanMessage", "h", json!({"content": "hotels?"}));
        let a = m(
            "ai.AIMessage",
            "a",
            json!({"tool_calls": [{"name": "search", "args": {"q": "louvre"}, "id": "c"}]}),
        );
        let t = m(
            "tool.ToolMessage",
            "t",
            json!({"content": "3 hotels", "tool_call_id": "c", "name": "search", "status": "success"}),
        );
        let was = messages_in(&json!([h])).unwrap();
        let now = messages_in(&json!([h, a, t])).unwrap();
        assert_eq!(
            delta_line(&was, &now).as_deref(),
            Some("+2 messages (AI tool_call search, Tool result)")
        );
        assert_eq!(delta_line(&now, &now), None);
        assert_eq!(
            list_line(&now, 80),
            "3 msgs · last: Tool search ✓ \"3 hotels\""
        );
        assert_eq!(message_line(&now[1], 80), "AI calls search(q=\"louvre\")");
    }
}

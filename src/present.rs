//! JSON views presented to people, on one line: what the TUI's rows and the CLI's human output
//! show for a value. `--json` never goes through here.
//!
//! * LangChain messages read as a conversation summary (`42 msgs · last: AI "…"`, see
//!   [`crate::conversation`]);
//! * typed leaves say their type: `datetime 2024-05-04T06:32:42+00:00`, `date 2024-05-04`,
//!   `time 06:32:42`, `timedelta 1 day, 0:00:02`, `UUID 1234…`, `Decimal 9.99`, `bytes 00ff (2 B)`,
//!   and an Enum (or any one-value constructor) as `Color "red"` — a bare string is always quoted,
//!   so `datetime …` can never be mistaken for text;
//! * everything else is compact JSON.
//!
//! Everything returned is escaped for the terminal ([`crate::text::escape`]).

use crate::conversation::{self, wrap, Message};
use serde_json::{Map, Value as Json};

/// A typed leaf: its short type name (the tag) and its value as text.
pub fn typed_leaf(j: &Json) -> Option<(String, String)> {
    let o = j.as_object()?;
    let ty = o.get("__type__")?.as_str()?;
    let short = ty.rsplit('.').next().unwrap_or(ty).to_string();
    let int = |v: &Json| v.as_i64();
    let text = match ty {
        "datetime.datetime" => o.get("value")?.as_str()?.to_string(),
        "datetime.date" => match o.get("args")?.as_array()?.as_slice() {
            [y, m, d] => format!("{:04}-{:02}-{:02}", int(y)?, int(m)?, int(d)?),
            _ => return None,
        },
        "datetime.time" => {
            let n = |k: &str| o.get(k).and_then(Json::as_i64).unwrap_or(0);
            let mut t = format!("{:02}:{:02}:{:02}", n("hour"), n("minute"), n("second"));
            if n("microsecond") != 0 {
                t.push_str(&format!(".{:06}", n("microsecond")));
            }
            if let Some(tz) = o.get("tzinfo").filter(|z| !z.is_null()) {
                t.push_str(&typed_leaf(tz).map(|(_, v)| v).unwrap_or_default());
            }
            t
        }
        "datetime.timedelta" => match o.get("args")?.as_array()?.as_slice() {
            [d, s, us] => timedelta(int(d)?, int(s)?, int(us)?),
            _ => return None,
        },
        "datetime.timezone" => {
            let args = o.get("args")?.as_array()?;
            let off = args
                .first()
                .and_then(|d| match d.get("args")?.as_array()?.as_slice() {
                    [d, s, _] => Some(int(d)? * 86_400 + int(s)?),
                    _ => None,
                })?;
            match args.get(1).and_then(Json::as_str) {
                Some(name) => name.to_string(),
                None if off == 0 => "UTC".into(),
                None => format!(
                    "{}{:02}:{:02}",
                    if off < 0 { "-" } else { "+" },
                    off.abs() / 3600,
                    off.abs() % 3600 / 60
                ),
            }
        }
        "bytes" | "bytearray" => {
            let hex = o.get("hex")?.as_str()?;
            let n = hex.len() / 2;
            format!("{} ({n} B)", wrap::cut(hex, 40))
        }
        "uuid.UUID" | "decimal.Decimal" => o.get("value")?.as_str()?.to_string(),
        "float" => o.get("value")?.as_str()?.to_string(),
        // one-value constructors (Enum, ZoneInfo, IPv4Address, SecretStr...): Type "value"
        _ if o.len() == 2 && o.get("value").is_some_and(is_scalar) => compact(o.get("value")?),
        _ => return None,
    };
    let tag = match ty {
        "float" => return Some((String::new(), text)),
        "bytes" | "bytearray" => ty.to_string(),
        _ => short,
    };
    Some((tag, text))
}

fn is_scalar(j: &Json) -> bool {
    matches!(j, Json::String(_) | Json::Number(_) | Json::Bool(_))
}

/// Python's `str(timedelta)`: `1 day, 0:00:02.000003`, `-1 day, 23:59:59`.
fn timedelta(days: i64, secs: i64, us: i64) -> String {
    let mut t = format!("{}:{:02}:{:02}", secs / 3600, secs % 3600 / 60, secs % 60);
    if us != 0 {
        t.push_str(&format!(".{us:06}"));
    }
    if days != 0 {
        t = format!("{days} day{}, {t}", if days.abs() == 1 { "" } else { "s" });
    }
    t
}

/// What a node wrote, on one line, at most `max` columns: a task's result (`{"messages": [...]}`)
/// as `messages: Tool get_weather ✓ "Paris: 18°C…"` — each key, then its value — and a list of
/// one message as that message (`AI calls search(…)`, not `1 msg · last: AI …`).
pub fn written_line(j: &Json, max: usize) -> String {
    let one = written_value;
    match j {
        Json::Object(o)
            if !o.is_empty() && !o.contains_key("__type__") && Message::from_view(j).is_none() =>
        {
            let mut out = String::new();
            for (k, v) in o {
                if !out.is_empty() {
                    out.push_str("  ");
                }
                out.push_str(&crate::text::escape(k));
                out.push_str(": ");
                let used = crate::text::width(&out);
                if used >= max {
                    break;
                }
                out.push_str(&one(v, max - used));
            }
            wrap::cut(&out, max)
        }
        _ => one(j, max),
    }
}

/// A value written to a channel, on one line: [`line`], but a list of one message is that
/// message (an `add_messages` write of one message).
pub fn written_value(j: &Json, max: usize) -> String {
    match conversation::messages_in(j) {
        Some(msgs) if msgs.len() == 1 => conversation::message_line(&msgs[0], max),
        _ => line(j, max),
    }
}

/// A value on one line, at most `max` columns.
pub fn line(j: &Json, max: usize) -> String {
    if let Some(msgs) = conversation::messages_in(j) {
        return conversation::list_line(&msgs, max);
    }
    if let Some(m) = Message::from_view(j) {
        return conversation::message_line(&m, max);
    }
    let mut out = String::new();
    write(j, &mut out, max.saturating_add(1));
    wrap::cut(&crate::text::escape(&out), max)
}

/// Compact JSON, with typed leaves and messages in their human forms, stopping once `budget`
/// characters are written (the caller cuts).
fn write(j: &Json, out: &mut String, budget: usize) {
    if out.len() > budget * 4 {
        return;
    }
    if let Some((tag, text)) = typed_leaf(j) {
        if !tag.is_empty() {
            out.push_str(&tag);
            out.push(' ');
        }
        out.push_str(&text);
        return;
    }
    if let Some(m) = Message::from_view(j) {
        out.push_str(&conversation::message_line(&m, 60));
        return;
    }
    if let Some(o) = j.as_object() {
        match o.get("__type__").and_then(Json::as_str) {
            // set({1, 2}) / frozenset / deque: their items, as Python writes them
            Some(ty @ ("builtins.set" | "builtins.frozenset" | "collections.deque")) => {
                if let Some(Json::Array(items)) = o.get("items") {
                    let short = ty.rsplit('.').next().unwrap_or(ty);
                    out.push_str(short);
                    out.push_str(if short == "deque" { "([" } else { "({" });
                    for (i, x) in items.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        write(x, out, budget);
                    }
                    out.push_str(if short == "deque" { "])" } else { "})" });
                    return;
                }
            }
            // a map with non-string keys: {1: "one"}
            Some("map") if o.len() == 2 => {
                if let Some(Json::Array(entries)) = o.get("entries") {
                    out.push('{');
                    for (i, e) in entries.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        if let Some([k, v]) = e.as_array().map(Vec::as_slice) {
                            write(k, out, budget);
                            out.push(':');
                            write(v, out, budget);
                        }
                    }
                    out.push('}');
                    return;
                }
            }
            // a dataclass / pydantic model / other tagged object: Class{fields}
            Some(ty) if !ty.is_empty() && ty != "ext" && ty != "pickle" => {
                let mut fields = o.clone();
                fields.remove("__type__");
                out.push_str(ty.rsplit('.').next().unwrap_or(ty));
                write_object(&fields, out, budget);
                return;
            }
            _ => {}
        }
    }
    match j {
        Json::Array(items) => {
            if let Some(msgs) = conversation::messages_in(j) {
                out.push('[');
                match msgs.as_slice() {
                    [one] => out.push_str(&conversation::message_line(one, 80)),
                    _ => out.push_str(&conversation::list_line(&msgs, 80)),
                }
                out.push(']');
                return;
            }
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(x, out, budget);
                if out.len() > budget * 4 {
                    break;
                }
            }
            out.push(']');
        }
        Json::Object(o) => write_object(o, out, budget),
        other => out.push_str(&compact(other)),
    }
}

fn write_object(o: &Map<String, Json>, out: &mut String, budget: usize) {
    out.push('{');
    for (i, (k, v)) in o.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&compact(&Json::String(k.clone())));
        out.push(':');
        write(v, out, budget);
        if out.len() > budget * 4 {
            break;
        }
    }
    out.push('}');
}

fn compact(j: &Json) -> String {
    serde_json::to_string(j).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn typed_leaves_say_their_type_and_strings_stay_quoted() {
        let cases = [
            (
                json!({"__type__": "uuid.UUID", "value": "12345678-1234-5678-1234-567812345678"}),
                "UUID 12345678-1234-5678-1234-567812345678",
            ),
            (
                json!({"__type__": "decimal.Decimal", "value": "9.99"}),
                "Decimal 9.99",
            ),
            (
                json!({"__type__": "datetime.date", "args": [2024, 5, 4]}),
                "date 2024-05-04",
            ),
            (
                json!({"__type__": "datetime.timedelta", "args": [1, 2, 3]}),
                "timedelta 1 day, 0:00:02.000003",
            ),
            (
                json!({"__type__": "datetime.timedelta", "args": [-1, 86399, 0]}),
                "timedelta -1 day, 23:59:59",
            ),
            (
                json!({"__type__": "datetime.time", "hour": 6, "minute": 32, "second": 42, "microsecond": 5, "tzinfo": null, "fold": 0}),
                "time 06:32:42.000005",
            ),
            (
                json!({"__type__": "__main__.Color", "value": "red"}),
                "Color \"red\"",
            ),
            (
                json!({"__type__": "bytes", "hex": "00ff"}),
                "bytes 00ff (2 B)",
            ),
            (
                json!({"when": {"__type__": "datetime.datetime", "value": "2024-05-04T06:32:42+00:00"}, "s": "2024"}),
                "{\"when\":datetime 2024-05-04T06:32:42+00:00,\"s\":\"2024\"}",
            ),
        ];
        for (j, want) in cases {
            assert_eq!(line(&j, 200), want, "{j}");
        }
    }
}

#[cfg(test)]
mod written_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_result_is_its_keys_then_values_and_one_message_is_that_message() {
        let tool = json!({"__type__": "langchain_core.messages.tool.ToolMessage",
            "content": "1024", "name": "calculator", "tool_call_id": "c1", "type": "tool"});
        let line = written_line(&json!({"messages": [tool.clone()], "n": 2}), 80);
        assert_eq!(line, "messages: Tool calculator ✓ \"1024\"  n: 2");
        assert_eq!(
            written_value(&json!([tool]), 80),
            "Tool calculator ✓ \"1024\""
        );
        // not a result: a typed leaf, a dict value as a write
        assert_eq!(written_value(&json!({"a": 1}), 80), "{\"a\":1}");
    }
}

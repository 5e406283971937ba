//! Recognising LangChain messages in JSON views.
//!
//! A message reaches us in one of three shapes:
//! * the msgpack extension LangGraph's serializer writes (the usual case): the JSON view is
//!   `{"__type__": "langchain_core.messages.ai.AIMessage", "content", "type", "name", "id", ...}`;
//! * LangChain's own serialization in `type='json'` rows: `{"lc": 1, "type": "constructor",
//!   "id": ["langchain", "schema", "messages", "AIMessage"], "kwargs": {...}}`;
//! * an OpenAI-style dict that apps keep in plain list keys: `{"role": "user", "content": "..."}`.
//!
//! Nothing here guesses beyond those shapes: an object is a message only when its class (or role)
//! is one LangChain defines.

use super::wrap::escape_lines;
use serde_json::{Map, Value as Json};

/// Who speaks: LangChain's message classes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    Human,
    Ai,
    Tool,
    System,
    Function,
    /// `ChatMessage` with its free-form role.
    Chat(String),
    /// `RemoveMessage`: deletes the message with its id when `add_messages` applies it.
    Remove,
}

impl Role {
    /// The label shown in conversations and summaries.
    pub fn label(&self) -> &str {
        match self {
            Role::Human => "Human",
            Role::Ai => "AI",
            Role::Tool => "Tool",
            Role::System => "System",
            Role::Function => "Function",
            Role::Chat(r) => r.as_str(),
            Role::Remove => "Remove",
        }
    }
}

/// A tool call of an AI message (`tool_calls`), or an invalid one (`invalid_tool_calls`, whose
/// arguments are the unparsed string and which carries the parse error).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub name: String,
    pub args: Json,
    pub id: Option<String>,
    /// Set for `invalid_tool_calls`.
    pub error: Option<String>,
}

/// One piece of a message's content: text, or a non-text block (image, tool use, reasoning...).
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Text(String),
    /// `{"type": "image_url", ...}` and friends: the block's type and its most telling field.
    Other {
        kind: String,
        detail: String,
    },
}

/// A LangChain message, read from its JSON view. Fields LangChain keeps for providers
/// (`additional_kwargs`, `response_metadata`, `usage_metadata`) are kept for the details view.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub role: Role,
    /// A `*MessageChunk` (streaming piece).
    pub chunk: bool,
    pub name: Option<String>,
    pub id: Option<String>,
    pub content: Vec<Block>,
    pub tool_calls: Vec<ToolCall>,
    pub invalid_tool_calls: Vec<ToolCall>,
    /// ToolMessage: the call it answers, and `success` / `error`.
    pub tool_call_id: Option<String>,
    pub status: Option<String>,
    pub artifact: Option<Json>,
    pub usage: Option<Json>,
    pub response_metadata: Option<Json>,
}

impl Message {
    /// The message in a JSON view, if it is one.
    pub fn from_view(j: &Json) -> Option<Message> {
        let o = j.as_object()?;
        if let Some(ty) = o.get("__type__").and_then(Json::as_str) {
            let class = ty.strip_prefix("langchain_core.messages.")?;
            let class = class.rsplit('.').next()?;
            return Message::from_fields(class, o);
        }
        if o.get("lc").and_then(Json::as_i64) == Some(1)
            && o.get("type").and_then(Json::as_str) == Some("constructor")
        {
            let id = o.get("id")?.as_array()?;
            let class = id.last()?.as_str()?;
            let is_message = id.iter().any(|p| p.as_str() == Some("messages"));
            let kwargs = o.get("kwargs")?.as_object()?;
            return if is_message {
                Message::from_fields(class, kwargs)
            } else {
                None
            };
        }
        Message::from_openai(o)
    }

    fn from_fields(class: &str, o: &Map<String, Json>) -> Option<Message> {
        let (base, chunk) = match class.strip_suffix("Chunk") {
            Some(b) => (b, true),
            None => (class, false),
        };
        let role = match base {
            "HumanMessage" => Role::Human,
            "AIMessage" => Role::Ai,
            "ToolMessage" => Role::Tool,
            "SystemMessage" => Role::System,
            "FunctionMessage" => Role::Function,
            "ChatMessage" => Role::Chat(str_field(o, "role").unwrap_or_else(|| "chat".into())),
            "RemoveMessage" => Role::Remove,
            _ => return None,
        };
        Some(Message {
            role,
            chunk,
            name: str_field(o, "name"),
            id: str_field(o, "id"),
            content: content(o.get("content")),
            tool_calls: calls(o.get("tool_calls"), false),
            invalid_tool_calls: calls(o.get("invalid_tool_calls"), true),
            tool_call_id: str_field(o, "tool_call_id"),
            status: str_field(o, "status"),
            artifact: o.get("artifact").filter(|a| !a.is_null()).cloned(),
            usage: o.get("usage_metadata").filter(|a| !a.is_null()).cloned(),
            response_metadata: o
                .get("response_metadata")
                .filter(|m| m.as_object().is_some_and(|m| !m.is_empty()))
                .cloned(),
        })
    }

    /// `{"role": "user" | "assistant" | "system" | "tool" | ..., "content": ...}`: the dict form
    /// LangChain's `convert_to_messages` accepts. Only these keys may appear.
    fn from_openai(o: &Map<String, Json>) -> Option<Message> {
        const KEYS: [&str; 6] = [
            "role",
            "content",
            "name",
            "tool_calls",
            "tool_call_id",
            "id",
        ];
        if !o.contains_key("content") || !o.keys().all(|k| KEYS.contains(&k.as_str())) {
            return None;
        }
        if !matches!(o.get("content"), Some(Json::String(_) | Json::Array(_))) {
            return None;
        }
        let role = match o.get("role")?.as_str()? {
            "user" | "human" => Role::Human,
            "assistant" | "ai" => Role::Ai,
            "system" | "developer" => Role::System,
            "tool" => Role::Tool,
            "function" => Role::Function,
            _ => return None,
        };
        Some(Message {
            role,
            chunk: false,
            name: str_field(o, "name"),
            id: str_field(o, "id"),
            content: content(o.get("content")),
            tool_calls: openai_calls(o.get("tool_calls")),
            invalid_tool_calls: Vec::new(),
            tool_call_id: str_field(o, "tool_call_id"),
            status: None,
            artifact: None,
            usage: None,
            response_metadata: None,
        })
    }

    /// The text of the message (its text blocks joined), without the non-text blocks.
    pub fn text(&self) -> String {
        let parts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|b| match b {
                Block::Text(t) => Some(t.as_str()),
                Block::Other { .. } => None,
            })
            .collect();
        parts.join("\n")
    }

    /// A ToolMessage that reports a failure.
    pub fn is_error(&self) -> bool {
        self.status.as_deref() == Some("error")
    }

    /// `AI`, `AI chunk`, `Human (alice)`: the role as the conversation names it.
    pub fn who(&self) -> String {
        let mut w = self.role.label().to_string();
        if self.chunk {
            w.push_str(" chunk");
        }
        w
    }
}

/// A list of messages: every item is a message (an empty list is not a conversation).
pub fn messages_in(j: &Json) -> Option<Vec<Message>> {
    let items = j.as_array()?;
    if items.is_empty() {
        return None;
    }
    items.iter().map(Message::from_view).collect()
}

/// Whether a value is a message or a list of messages.
pub fn is_conversation(j: &Json) -> bool {
    Message::from_view(j).is_some() || messages_in(j).is_some()
}

/// A string field, escaped for the terminal (names, ids, roles, statuses come from the DB).
fn str_field(o: &Map<String, Json>, k: &str) -> Option<String> {
    o.get(k)
        .and_then(Json::as_str)
        .map(|s| crate::text::escape(s).into_owned())
}

fn content(c: Option<&Json>) -> Vec<Block> {
    match c {
        None | Some(Json::Null) => Vec::new(),
        Some(Json::String(s)) if s.is_empty() => Vec::new(),
        Some(Json::String(s)) => vec![Block::Text(escape_lines(s))],
        Some(Json::Array(blocks)) => blocks.iter().map(block).collect(),
        Some(other) => vec![Block::Other {
            kind: "content".into(),
            detail: compact(other),
        }],
    }
}

fn block(b: &Json) -> Block {
    let Some(o) = b.as_object() else {
        return match b {
            Json::String(s) => Block::Text(escape_lines(s)),
            other => Block::Other {
                kind: "block".into(),
                detail: compact(other),
            },
        };
    };
    let kind = o.get("type").and_then(Json::as_str).unwrap_or("block");
    if let (Some(t), "text" | "output_text") = (o.get("text").and_then(Json::as_str), kind) {
        return Block::Text(escape_lines(t));
    }
    // the field that tells most about a non-text block
    let detail = match kind {
        "image_url" => o
            .get("image_url")
            .and_then(|u| u.get("url").or(Some(u)))
            .and_then(Json::as_str)
            .map(short_url),
        "image" | "file" | "audio" | "video" => o
            .get("url")
            .and_then(Json::as_str)
            .map(short_url)
            .or_else(|| {
                o.get("mime_type")
                    .and_then(Json::as_str)
                    .map(|m| format!("{m} (inline data)"))
            }),
        "thinking" => o.get("thinking").and_then(Json::as_str).map(str::to_string),
        "reasoning" => o
            .get("reasoning")
            .or_else(|| o.get("summary"))
            .map(|r| r.as_str().map(str::to_string).unwrap_or_else(|| compact(r))),
        "tool_use" | "tool_call" | "function_call" => Some(format!(
            "{}({})",
            o.get("name").and_then(Json::as_str).unwrap_or("?"),
            o.get("input")
                .or_else(|| o.get("args"))
                .or_else(|| o.get("arguments"))
                .map(compact)
                .unwrap_or_default()
        )),
        _ => None,
    };
    Block::Other {
        kind: crate::text::escape(kind).into_owned(),
        detail: crate::text::escape(&detail.unwrap_or_else(|| {
            let mut rest = o.clone();
            rest.remove("type");
            compact(&Json::Object(rest))
        }))
        .into_owned(),
    }
}

/// `data:` URLs are the image itself: show their media type, not kilobytes of base64.
fn short_url(u: &str) -> String {
    match u.strip_prefix("data:") {
        Some(rest) => format!(
            "data:{} ({} bytes inline)",
            rest.split([';', ',']).next().unwrap_or(""),
            u.len()
        ),
        None => u.to_string(),
    }
}

fn calls(c: Option<&Json>, invalid: bool) -> Vec<ToolCall> {
    let Some(Json::Array(items)) = c else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|c| {
            let o = c.as_object()?;
            Some(ToolCall {
                name: str_field(o, "name").unwrap_or_else(|| "?".into()),
                args: o.get("args").cloned().unwrap_or(Json::Null),
                id: str_field(o, "id"),
                error: if invalid {
                    Some(str_field(o, "error").unwrap_or_default())
                } else {
                    None
                },
            })
        })
        .collect()
}

/// OpenAI's `{"id", "type": "function", "function": {"name", "arguments": "<json>"}}`.
fn openai_calls(c: Option<&Json>) -> Vec<ToolCall> {
    let Some(Json::Array(items)) = c else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|c| {
            let o = c.as_object()?;
            let f = o.get("function").and_then(Json::as_object).unwrap_or(o);
            let args = match f.get("arguments").or_else(|| f.get("args")) {
                Some(Json::String(s)) => {
                    serde_json::from_str(s).unwrap_or_else(|_| Json::String(s.clone()))
                }
                Some(other) => other.clone(),
                None => Json::Null,
            };
            Some(ToolCall {
                name: str_field(f, "name").unwrap_or_else(|| "?".into()),
                args,
                id: str_field(o, "id"),
                error: None,
            })
        })
        .collect()
}

/// Compact JSON, escaped for the terminal (JSON itself leaves DEL, C1 and bidi controls as is).
pub(crate) fn compact(j: &Json) -> String {
    crate::text::escape(&serde_json::to_string(j).unwrap_or_default()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_three_shapes_are_recognised_and_other_objects_are_not() {
        let ext = json!({"__type__": "langchain_core.messages.tool.ToolMessage", "content": "1024",
            "type": "tool", "name": "calculator", "id": "t1", "tool_call_id": "c1", "artifact": null,
            "status": "success"});
        let m = Message::from_view(&ext).unwrap();
        assert_eq!(
            (&m.role, m.text(), m.tool_call_id.as_deref()),
            (&Role::Tool, "1024".into(), Some("c1"))
        );
        let lc = json!({"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessageChunk"],
            "kwargs": {"content": [{"type": "text", "text": "hi"}], "tool_calls": []}});
        let m = Message::from_view(&lc).unwrap();
        assert!(m.chunk && m.role == Role::Ai && m.text() == "hi");
        let oa = json!({"role": "assistant", "content": "", "tool_calls": [{"id": "c", "type": "function",
            "function": {"name": "f", "arguments": "{\"x\": 1}"}}]});
        let m = Message::from_view(&oa).unwrap();
        assert_eq!(m.tool_calls[0].args, json!({"x": 1}));
        // what a DB holds reaches the terminal escaped: content, names, call names and arguments
        let hostile = json!({"__type__": "langchain_core.messages.ai.AIMessage",
            "content": "ok\u{1b}]0;pwned\u{7}\nline 2\u{202e}", "name": "b\u{1b}[2Jot",
            "tool_calls": [{"name": "x\u{7}", "args": {"k": "\u{9b}31m"}, "id": "c"}]});
        let m = Message::from_view(&hostile).unwrap();
        assert_eq!(m.text(), "ok\\e]0;pwned\\a\nline 2\\u{202e}");
        assert_eq!(m.name.as_deref(), Some("b\\e[2Jot"));
        let call = super::super::render::call_text(&m.tool_calls[0]);
        assert!(!call.chars().any(|c| c.is_control()), "{call:?}");
        for not in [
            json!({"role": "user", "content": "x", "extra": 1}),
            json!({"__type__": "langchain_core.documents.base.Document", "page_content": "x"}),
            json!({"__type__": "__main__.AIMessage", "content": "x"}),
            json!([]),
        ] {
            assert!(!is_conversation(&not), "{not}");
        }
    }
}

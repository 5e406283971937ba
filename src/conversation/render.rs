//! A list of messages laid out as a conversation, in lines of styled segments that the TUI and
//! the CLI each paint their own way.
//!
//! ```text
//! #0  System  You are a concise travel assistant.
//! #1  Human   What's the weather in Paris, and what is 2**10?
//! #2  AI      → get_weather(city="Paris")
//! #3  Tool      ✓ Paris: 18°C, light rain, wind 12 km/h from the south-west
//!             → calculator(expression="2**10")
//! #4  Tool      ✓ 1024
//! #5  AI      It is 18°C with light rain in Paris right now, so take an umbrella. And
//!             2**10 is 1024.
//! ```
//!
//! Each tool result sits under the call it answers (matched by `tool_call_id`), whatever its
//! place in the list; the gutter still gives its index. Ids, token usage and provider metadata
//! are shown on demand (`Options::details`).

use super::message::{compact, Block, Message, Role, ToolCall};
use super::wrap::{width, wrap};
use serde_json::Value as Json;

/// What a segment means; each front end picks its colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Plain,
    Dim,
    Human,
    Ai,
    Tool,
    System,
    /// Function, Chat and Remove messages.
    OtherRole,
    /// A tool call (name and arguments).
    Call,
    Ok,
    Error,
}

impl Tone {
    pub fn of(role: &Role) -> Tone {
        match role {
            Role::Human => Tone::Human,
            Role::Ai => Tone::Ai,
            Role::Tool => Tone::Tool,
            Role::System => Tone::System,
            _ => Tone::OtherRole,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Seg {
    pub text: String,
    pub tone: Tone,
}

fn seg(text: impl Into<String>, tone: Tone) -> Seg {
    Seg {
        text: text.into(),
        tone,
    }
}

/// One line of a conversation: its segments, the message it belongs to (index in the list) and
/// where in that message it points (`""`, `.content`, `.tool_calls[1]`), for breadcrumbs.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub segs: Vec<Seg>,
    pub msg: usize,
    pub part: String,
}

impl Line {
    pub fn text(&self) -> String {
        self.segs.iter().map(|s| s.text.as_str()).collect()
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Columns available.
    pub width: usize,
    /// Ids, tool call ids, token usage, provider metadata, artifacts.
    pub details: bool,
    /// `#3` in the gutter (off for a single message shown alone).
    pub numbered: bool,
}

/// The conversation of `msgs`, numbered from `first` (their index in the whole list).
pub fn render(msgs: &[Message], first: usize, o: Options) -> Vec<Line> {
    let last = first + msgs.len().saturating_sub(1);
    let num_w = if o.numbered {
        format!("#{last}").len()
    } else {
        0
    };
    let who_w = msgs
        .iter()
        .map(|m| width(&m.who()))
        .max()
        .unwrap_or(5)
        .clamp(6, 12);
    let gutter = if o.numbered { num_w + 2 } else { 0 } + who_w + 2;
    let text_w = o.width.saturating_sub(gutter).max(16);
    let lay = Layout {
        num_w,
        who_w,
        gutter,
        text_w,
        details: o.details,
    };
    // tool results go under their call: which messages answer which call id
    let answered_by = |id: &str| -> Option<usize> {
        msgs.iter()
            .position(|m| m.role == Role::Tool && m.tool_call_id.as_deref() == Some(id))
    };
    let mut placed = vec![false; msgs.len()];
    for (i, m) in msgs.iter().enumerate() {
        if m.role == Role::Ai {
            for c in &m.tool_calls {
                if let Some(j) = c.id.as_deref().and_then(answered_by) {
                    if j > i {
                        placed[j] = true;
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    for (i, m) in msgs.iter().enumerate() {
        if placed[i] {
            continue;
        }
        let idx = first + i;
        let mut head = Some((idx, m));
        let mut lines: Vec<Line> = Vec::new();
        // the text (and non-text blocks)
        let mut body: Vec<Vec<Seg>> = Vec::new();
        let mut lead = Vec::new();
        if let Some(n) = &m.name {
            if m.role != Role::Tool && m.role != Role::Function {
                lead.push(seg(format!("({n}) "), Tone::Dim));
            }
        }
        match m.role {
            Role::Tool => {
                lead.push(seg(
                    format!("{} ", m.name.as_deref().unwrap_or("tool")),
                    Tone::Tool,
                ));
                lead.push(status_mark(m));
            }
            Role::Function => lead.push(seg(
                format!("{}: ", m.name.as_deref().unwrap_or("function")),
                Tone::OtherRole,
            )),
            Role::Remove => lead.push(seg(
                format!(
                    "removes message {}",
                    m.id.as_deref().unwrap_or("(no id: removes all)")
                ),
                Tone::Dim,
            )),
            _ => {}
        }
        let tone = if m.role == Role::Tool && m.is_error() {
            Tone::Error
        } else {
            Tone::Plain
        };
        body.extend(lay.flow(lead, &m.content, tone, 0));
        for (k, l) in body.into_iter().enumerate() {
            lines.push(lay.line(head.take(), l, idx, if k == 0 { "" } else { ".content" }, 0));
        }
        if o.details && !m.tool_calls.is_empty() {
            lines.extend(lay.details(m, idx, 0));
        }
        // tool calls, each with its result under it
        for (k, c) in m.tool_calls.iter().enumerate() {
            let mut segs = call_segs(c, Tone::Call, "→ ");
            if o.details {
                if let Some(id) = &c.id {
                    segs.push(seg(format!("  id {id}"), Tone::Dim));
                }
            }
            let result = c.id.as_deref().and_then(answered_by).filter(|j| *j > i);
            if result.is_none() && m.role == Role::Ai && o.numbered {
                segs.push(seg("  · no result yet", Tone::Dim));
            }
            for l in lay.wrap_segs(segs, 0) {
                lines.push(lay.line(head.take(), l, idx, &format!(".tool_calls[{k}]"), 0));
            }
            if let Some(j) = result {
                let t = &msgs[j];
                let lead = vec![status_mark(t)];
                let tone = if t.is_error() {
                    Tone::Error
                } else {
                    Tone::Plain
                };
                let mut first_line = true;
                for l in lay.flow(lead, &t.content, tone, 2) {
                    let who = first_line.then_some((first + j, t));
                    first_line = false;
                    lines.push(lay.line(who, l, first + j, "", 2));
                }
                if o.details {
                    lines.extend(lay.details(t, first + j, 2));
                }
            }
        }
        for (k, c) in m.invalid_tool_calls.iter().enumerate() {
            let mut segs = call_segs(c, Tone::Error, "✗ invalid call ");
            segs.push(seg(
                format!(" — {}", c.error.as_deref().unwrap_or("")),
                Tone::Error,
            ));
            for l in lay.wrap_segs(segs, 0) {
                lines.push(lay.line(head.take(), l, idx, &format!(".invalid_tool_calls[{k}]"), 0));
            }
        }
        if lines.is_empty() {
            lines.push(lay.line(head.take(), vec![seg("(empty)", Tone::Dim)], idx, "", 0));
        }
        if o.details && m.tool_calls.is_empty() {
            lines.extend(lay.details(m, idx, 0));
        }
        out.extend(lines);
    }
    out
}

struct Layout {
    num_w: usize,
    who_w: usize,
    gutter: usize,
    text_w: usize,
    details: bool,
}

impl Layout {
    /// A line with its gutter: `#3  Tool  ` on a message's first line, blanks after.
    fn line(
        &self,
        who: Option<(usize, &Message)>,
        segs: Vec<Seg>,
        msg: usize,
        part: &str,
        indent: usize,
    ) -> Line {
        let mut all = Vec::with_capacity(segs.len() + 3);
        match who {
            Some((i, m)) => {
                if self.num_w > 0 {
                    all.push(seg(
                        format!("{:<w$}  ", format!("#{i}"), w = self.num_w),
                        Tone::Dim,
                    ));
                }
                all.push(seg(
                    format!("{:<w$}  ", m.who(), w = self.who_w),
                    Tone::of(&m.role),
                ));
            }
            None => all.push(seg(" ".repeat(self.gutter), Tone::Plain)),
        }
        if indent > 0 {
            all.push(seg(" ".repeat(indent), Tone::Plain));
        }
        all.extend(segs);
        Line {
            segs: all,
            msg,
            part: part.to_string(),
        }
    }

    /// `lead` then the content blocks, wrapped to the text column (minus `indent`).
    fn flow(&self, lead: Vec<Seg>, content: &[Block], tone: Tone, indent: usize) -> Vec<Vec<Seg>> {
        let mut segs = lead;
        let mut first = true;
        let mut out = Vec::new();
        for b in content {
            match b {
                Block::Text(t) => {
                    // a new paragraph per text block; newlines inside are kept
                    if !first {
                        out.extend(self.wrap_segs(std::mem::take(&mut segs), indent));
                    }
                    segs.push(seg(t.clone(), tone));
                }
                Block::Other { kind, detail } => {
                    if !first {
                        out.extend(self.wrap_segs(std::mem::take(&mut segs), indent));
                    }
                    segs.push(seg(format!("[{kind}] "), Tone::Dim));
                    segs.push(seg(detail.clone(), Tone::Dim));
                }
            }
            first = false;
        }
        if !segs.is_empty() {
            out.extend(self.wrap_segs(segs, indent));
        }
        out
    }

    /// Wrap a run of segments to the text column, keeping each piece's tone.
    fn wrap_segs(&self, segs: Vec<Seg>, indent: usize) -> Vec<Vec<Seg>> {
        let max = self.text_w.saturating_sub(indent).max(8);
        let text: String = segs.iter().map(|s| s.text.as_str()).collect();
        // the tone of each char, by position
        let mut tones = Vec::with_capacity(text.len());
        for s in &segs {
            for _ in s.text.chars() {
                tones.push(s.tone);
            }
        }
        let wrapped = wrap(&text, max);
        // map wrapped lines back onto the original chars (wrap only drops spaces and newlines)
        let chars: Vec<char> = text.chars().collect();
        let mut pos = 0;
        let mut out = Vec::new();
        for l in wrapped {
            let mut line: Vec<Seg> = Vec::new();
            for c in l.chars() {
                while pos < chars.len() && chars[pos] != c {
                    pos += 1;
                }
                let tone = tones.get(pos).copied().unwrap_or(Tone::Plain);
                match line.last_mut() {
                    Some(s) if s.tone == tone => s.text.push(c),
                    _ => line.push(seg(c.to_string(), tone)),
                }
                pos += 1;
            }
            out.push(line);
        }
        out
    }

    /// The details line(s) of a message: id, tool call id, usage, model, artifact.
    fn details(&self, m: &Message, msg: usize, indent: usize) -> Vec<Line> {
        if !self.details {
            return Vec::new();
        }
        let mut parts = Vec::new();
        if let Some(id) = &m.id {
            parts.push(format!("id {id}"));
        }
        if let Some(t) = &m.tool_call_id {
            parts.push(format!("tool_call_id {t}"));
        }
        if let Some(u) = &m.usage {
            let n = |k: &str| u.get(k).and_then(Json::as_i64);
            match (n("total_tokens"), n("input_tokens"), n("output_tokens")) {
                (Some(t), Some(i), Some(o)) => parts.push(format!("{t} tokens ({i} in, {o} out)")),
                _ => parts.push(format!("usage {}", compact(u))),
            }
        }
        if let Some(r) = &m.response_metadata {
            for k in ["model_name", "model", "finish_reason", "stop_reason"] {
                if let Some(v) = r.get(k).and_then(Json::as_str) {
                    parts.push(format!("{k} {v}"));
                }
            }
        }
        if let Some(a) = &m.artifact {
            parts.push(format!("artifact {}", compact(a)));
        }
        if parts.is_empty() {
            parts.push("no id".into());
        }
        self.wrap_segs(vec![seg(parts.join(" · "), Tone::Dim)], indent)
            .into_iter()
            .map(|l| self.line(None, l, msg, "", indent))
            .collect()
    }
}

fn status_mark(m: &Message) -> Seg {
    match m.status.as_deref() {
        Some("error") => seg("✗ ", Tone::Error),
        _ => seg("✓ ", Tone::Ok),
    }
}

/// `name(k="v", n=2)`; arguments that are not an object as JSON.
pub fn call_text(c: &ToolCall) -> String {
    let args = match &c.args {
        Json::Object(o) => o
            .iter()
            .map(|(k, v)| format!("{k}={}", compact(v)))
            .collect::<Vec<_>>()
            .join(", "),
        Json::Null => String::new(),
        Json::String(s) if c.error.is_some() => s.clone(),
        other => compact(other),
    };
    format!("{}({args})", c.name)
}

fn call_segs(c: &ToolCall, tone: Tone, prefix: &str) -> Vec<Seg> {
    vec![seg(format!("{prefix}{}", call_text(c)), tone)]
}

#[cfg(test)]
mod tests {
    use super::super::message::messages_in;
    use super::*;
    use serde_json::json;

    fn msg(ty: &str, extra: Json) -> Json {
        let mut o = json!({"__type__": format!("langchain_core.messages.{ty}"), "content": "",
            "additional_kwargs": {}, "response_metadata": {}, "name": null, "id": null});
        for (k, v) in extra.as_object().unwrap() {
            o[k] = v.clone();
        }
        o
    }

    #[test]
    fn tool_results_sit_under_their_calls_and_unanswered_calls_say_so() {
        let list = json!([
            msg(
                "human.HumanMessage",
                json!({"content": "weather and maths?"})
            ),
            msg(
                "ai.AIMessage",
                json!({"tool_calls": [
                {"name": "get_weather", "args": {"city": "Paris"}, "id": "c1", "type": "tool_call"},
                {"name": "calculator", "args": {"expression": "2**10"}, "id": "c2", "type": "tool_call"},
                {"name": "search", "args": {"q": "x"}, "id": "c3", "type": "tool_call"}]})
            ),
            msg(
                "tool.ToolMessage",
                json!({"content": "1024", "tool_call_id": "c2", "name": "calculator", "status": "success"})
            ),
            msg(
                "tool.ToolMessage",
                json!({"content": "rain", "tool_call_id": "c1", "name": "get_weather", "status": "error"})
            ),
        ]);
        let m = messages_in(&list).unwrap();
        let lines: Vec<String> = render(
            &m,
            0,
            Options {
                width: 80,
                details: false,
                numbered: true,
            },
        )
        .iter()
        .map(Line::text)
        .collect();
        assert_eq!(
            lines,
            [
                "#0  Human   weather and maths?",
                "#1  AI      → get_weather(city=\"Paris\")",
                "#3  Tool      ✗ rain",
                "            → calculator(expression=\"2**10\")",
                "#2  Tool      ✓ 1024",
                "            → search(q=\"x\")  · no result yet",
            ]
        );
    }
}

//! The value viewer's model: a document (text sections and JSON values) laid out as lines for the
//! viewer's width, with a cursor, folding, search and the path of every line. Pure; `update`
//! drives it and `ui::viewer` draws `lines` as they are.
//!
//! A value is laid out as a tree — one line per scalar (`key  value`, long strings wrapped under
//! their column), one head line per object or array (`▾ key  {3 keys}`), foldable (`▸`, with a
//! one-line preview). LangChain messages, wherever they sit, are laid out as a conversation
//! ([`crate::conversation`]); Enter on a message shows its raw fields under it. `raw` lays every
//! value out as a plain tree.

use super::state::TextInput;
use crate::conversation::{self, wrap, Message};
use crate::present;
use serde_json::Value as Json;
use std::collections::BTreeSet;

/// Children shown per object or array; the rest is one `… N more` line (`y` copies them all).
pub const MAX_CHILDREN: usize = 2_000;
/// Lines laid out at most, whatever the value: the viewer stays bounded.
pub const MAX_LINES: usize = 200_000;

/// What a piece of a line is, for the theme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ink {
    Plain,
    Dim,
    /// An object key or an array index.
    Key,
    Str,
    Num,
    /// true / false / null.
    Lit,
    /// A typed leaf's type tag (`datetime`, `UUID`) and its value.
    Tag,
    Typed,
    /// ▾ / ▸.
    Fold,
    /// A section heading (`was:`).
    Head,
    Conv(conversation::Tone),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub text: String,
    pub ink: Ink,
}

fn span(text: impl Into<String>, ink: Ink) -> Span {
    Span {
        text: text.into(),
        ink,
    }
}

/// One laid-out line: what it shows and which node it belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct VLine {
    pub spans: Vec<Span>,
    /// Section index and JSON pointer of the node (`/messages/41/tool_calls/0`); `None` for
    /// text lines.
    pub node: Option<(usize, String)>,
    /// `messages[41].tool_calls[0].args`.
    pub crumb: String,
    /// What Enter toggles here: a container's pointer (fold), or a message's pointer with
    /// `#raw` (its raw fields).
    pub toggle: Option<String>,
}

impl VLine {
    pub fn text(&self) -> String {
        self.spans.iter().map(|s| s.text.as_str()).collect()
    }
}

/// A part of what the viewer shows.
#[derive(Debug, Clone, PartialEq)]
pub enum Section {
    /// Plain lines (wrapped): headers, run details.
    Text(Vec<String>),
    /// A value, under its label (the state key, `result`, `was`...).
    Value { label: String, value: Json },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Viewer {
    pub title: String,
    pub sections: Vec<Section>,
    /// Nodes the user toggled: folded containers, or messages shown with their raw fields.
    pub toggled: BTreeSet<(usize, String)>,
    /// Every value as a plain tree (no conversations, no typed leaves).
    pub raw: bool,
    /// Message ids, token usage, provider metadata.
    pub details: bool,
    pub width: usize,
    pub height: usize,
    pub lines: Vec<VLine>,
    pub cursor: usize,
    pub scroll: usize,
    /// `/` being typed.
    pub find: Option<TextInput>,
    pub query: Option<String>,
    /// Lines matching `query`.
    pub hits: Vec<usize>,
    /// The laid-out lines were cut at [`MAX_LINES`].
    pub cut: bool,
}

impl Viewer {
    pub fn new(title: String, sections: Vec<Section>, width: usize, height: usize) -> Viewer {
        let mut v = Viewer {
            title,
            sections,
            toggled: BTreeSet::new(),
            raw: false,
            details: false,
            width: width.max(20),
            height: height.max(1),
            lines: Vec::new(),
            cursor: 0,
            scroll: 0,
            find: None,
            query: None,
            hits: Vec::new(),
            cut: false,
        };
        v.layout();
        v
    }

    /// A document whose first value is a conversation opens at its newest message, with the
    /// later values (the parent's conversation under `was`) folded.
    pub fn open_at_conversation_end(&mut self) {
        let values: Vec<usize> = (0..self.sections.len())
            .filter(|i| matches!(self.sections[*i], Section::Value { .. }))
            .collect();
        let Some(&first) = values.first() else {
            return;
        };
        let is_conv = |v: &Json| conversation::messages_in(v).is_some();
        if !matches!(&self.sections[first], Section::Value { value, .. } if is_conv(value)) {
            return;
        }
        for &i in &values[1..] {
            self.toggled.insert((i, String::new()));
        }
        self.layout();
        let mine = |l: &VLine| l.node.as_ref().is_some_and(|(s, _)| *s == first);
        let Some(last) = self.lines.iter().rposition(mine) else {
            return;
        };
        // the cursor on the newest message's first line; scrolled to the end when the message fits
        // in the viewer, else to the message's first line (a long answer is read from its start)
        let head = self.lines[..=last]
            .iter()
            .rposition(|l| mine(l) && l.toggle.is_some())
            .unwrap_or(last);
        if last - head < self.height {
            self.move_to(last);
            self.cursor = head;
        } else {
            self.cursor = head;
            self.scroll = head;
        }
        self.follow();
    }

    /// Lay the document out again (after a fold, a mode switch or a resize), keeping the cursor
    /// on the same node.
    pub fn layout(&mut self) {
        let keep = self.lines.get(self.cursor).and_then(|l| l.node.clone());
        let offset = keep
            .as_ref()
            .map(|k| {
                self.lines[..self.cursor]
                    .iter()
                    .rev()
                    .take_while(|l| l.node.as_ref() == Some(k))
                    .count()
            })
            .unwrap_or(0);
        let mut out = Out {
            lines: Vec::new(),
            cut: false,
        };
        for (i, s) in self.sections.iter().enumerate() {
            if out.full() {
                break;
            }
            match s {
                Section::Text(lines) => {
                    for l in lines {
                        for w in wrap::wrap(&wrap::escape_lines(l), self.width) {
                            out.push(VLine {
                                spans: vec![span(w, Ink::Plain)],
                                node: None,
                                crumb: String::new(),
                                toggle: None,
                            });
                        }
                    }
                }
                Section::Value { label, value } => {
                    let lay = Lay {
                        sec: i,
                        raw: self.raw,
                        details: self.details,
                        width: self.width,
                        toggled: &self.toggled,
                        sections: &self.sections,
                    };
                    let crumb = label.clone();
                    lay.value(&mut out, Some(label), value, "", &crumb, 0);
                }
            }
        }
        self.cut = out.cut;
        self.lines = out.lines;
        // the same line of that node when it still has it (wrapped narrower or wider, a node
        // has more or fewer lines), else its last: never a line of the next node
        self.cursor = match keep {
            Some(k) => {
                let same = |l: &VLine| l.node.as_ref() == Some(&k);
                match self.lines.iter().position(same) {
                    Some(p) => {
                        let n = self.lines[p..].iter().take_while(|l| same(l)).count();
                        p + offset.min(n - 1)
                    }
                    None => self.cursor,
                }
            }
            None => self.cursor,
        }
        .min(self.lines.len().saturating_sub(1));
        if let Some(q) = self.query.clone() {
            self.hits = self.matches(&q);
        }
        self.follow();
    }

    /// Keep the cursor in view.
    pub fn follow(&mut self) {
        if self.cursor < self.scroll {
            self.scroll = self.cursor;
        } else if self.cursor >= self.scroll + self.height {
            self.scroll = self.cursor + 1 - self.height;
        }
        let max = self.lines.len().saturating_sub(self.height);
        self.scroll = self.scroll.min(max);
    }

    pub fn move_by(&mut self, delta: i64) {
        let last = self.lines.len().saturating_sub(1) as i64;
        self.cursor = (self.cursor as i64 + delta).clamp(0, last.max(0)) as usize;
        self.follow();
    }

    pub fn move_to(&mut self, row: usize) {
        self.cursor = row.min(self.lines.len().saturating_sub(1));
        self.follow();
    }

    /// Enter: fold / unfold the node under the cursor (or the nearest one above it).
    pub fn toggle(&mut self) -> bool {
        let Some(i) = (0..=self.cursor.min(self.lines.len().saturating_sub(1)))
            .rev()
            .find(|i| self.lines[*i].toggle.is_some())
        else {
            return false;
        };
        let (Some((sec, _)), Some(key)) = (&self.lines[i].node, &self.lines[i].toggle) else {
            return false;
        };
        let key = (*sec, key.clone());
        if !self.toggled.remove(&key) {
            self.toggled.insert(key);
        }
        self.cursor = i;
        self.layout();
        true
    }

    /// Fold every node that can fold (`false`: unfold everything).
    pub fn fold_all(&mut self, fold: bool) {
        self.toggled.clear();
        if fold {
            // fold the children of each section's root, so the top level stays readable
            for l in &self.lines {
                if let (Some(key), Some((sec, _))) = (&l.toggle, &l.node) {
                    if key.matches('/').count() == 1 && !key.ends_with("#raw") {
                        self.toggled.insert((*sec, key.clone()));
                    }
                }
            }
        }
        self.layout();
    }

    /// The JSON of a node.
    pub fn node_value(&self, sec: usize, ptr: &str) -> Option<&Json> {
        match self.sections.get(sec)? {
            Section::Value { value, .. } => value.pointer(ptr),
            Section::Text(_) => None,
        }
    }

    /// The node under the cursor: its path and its JSON.
    pub fn current(&self) -> Option<(String, &Json)> {
        let l = self.lines.get(self.cursor)?;
        let (sec, ptr) = l.node.as_ref()?;
        Some((l.crumb.clone(), self.node_value(*sec, ptr)?))
    }

    fn matches(&self, q: &str) -> Vec<usize> {
        let q = q.to_lowercase();
        self.lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.text().to_lowercase().contains(&q))
            .map(|(i, _)| i)
            .collect()
    }

    /// Search the laid-out lines; the cursor goes to the first match at or after it.
    pub fn search(&mut self, q: &str) -> usize {
        self.hits = self.matches(q);
        self.query = Some(q.to_string());
        if let Some(h) = self
            .hits
            .iter()
            .find(|h| **h >= self.cursor)
            .or(self.hits.first())
        {
            self.cursor = *h;
            self.follow();
        }
        self.hits.len()
    }

    /// n / N: the next / previous match, wrapping around.
    pub fn search_step(&mut self, fwd: bool) -> Option<usize> {
        if self.hits.is_empty() {
            return None;
        }
        let next = if fwd {
            self.hits
                .iter()
                .find(|h| **h > self.cursor)
                .or(self.hits.first())
        } else {
            self.hits
                .iter()
                .rev()
                .find(|h| **h < self.cursor)
                .or(self.hits.last())
        };
        self.cursor = *next?;
        self.follow();
        self.hits.iter().position(|h| *h == self.cursor)
    }

    /// Which match the cursor is on (1-based), for the status.
    pub fn hit_pos(&self) -> Option<usize> {
        self.hits
            .iter()
            .position(|h| *h == self.cursor)
            .map(|p| p + 1)
    }
}

struct Out {
    lines: Vec<VLine>,
    cut: bool,
}

impl Out {
    fn full(&self) -> bool {
        self.lines.len() >= MAX_LINES
    }
    fn push(&mut self, l: VLine) {
        if self.full() {
            self.cut = true;
            return;
        }
        self.lines.push(l);
    }
}

/// Laying out one section's value.
#[derive(Clone, Copy)]
struct Lay<'a> {
    sec: usize,
    raw: bool,
    details: bool,
    width: usize,
    toggled: &'a BTreeSet<(usize, String)>,
    sections: &'a [Section],
}

fn escape_key(k: &str) -> String {
    k.replace('~', "~0").replace('/', "~1")
}

fn child_crumb(crumb: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
    match (crumb.is_empty(), plain) {
        (true, true) => key.to_string(),
        (false, true) => format!("{crumb}.{key}"),
        (_, false) => format!(
            "{crumb}[{}]",
            serde_json::to_string(key).unwrap_or_default()
        ),
    }
}

impl<'a> Lay<'a> {
    fn folded(&self, key: &str) -> bool {
        self.toggled.contains(&(self.sec, key.to_string()))
    }

    fn line(&self, spans: Vec<Span>, ptr: &str, crumb: &str, toggle: Option<String>) -> VLine {
        VLine {
            spans,
            node: Some((self.sec, ptr.to_string())),
            crumb: crumb.to_string(),
            toggle,
        }
    }

    fn node_value(&self, ptr: &str) -> Option<&'a Json> {
        match self.sections.get(self.sec)? {
            Section::Value { value, .. } => value.pointer(ptr),
            Section::Text(_) => None,
        }
    }

    /// A value under `label` (none for array items laid out by their parent) at `depth`.
    fn value(
        &self,
        out: &mut Out,
        label: Option<&str>,
        j: &Json,
        ptr: &str,
        crumb: &str,
        depth: usize,
    ) {
        if out.full() {
            out.cut = true;
            return;
        }
        let ind = "  ".repeat(depth);
        let width = self.width.saturating_sub(ind.len()).max(16);
        if !self.raw {
            if let Some(msgs) = conversation::messages_in(j) {
                self.conversation(out, label, &msgs, ptr, crumb, depth, true);
                return;
            }
            if let Some(m) = Message::from_view(j) {
                self.conversation(out, label, &[m], ptr, crumb, depth, false);
                return;
            }
        }
        let is_container = match j {
            Json::Object(o) => !o.is_empty() && (self.raw || present::typed_leaf(j).is_none()),
            Json::Array(a) => !a.is_empty(),
            _ => false,
        };
        if !is_container {
            self.scalar(out, label, j, ptr, crumb, depth, 0);
            return;
        }
        let folded = self.folded(ptr);
        let count = match j {
            Json::Object(o) => {
                let n = o.len() - usize::from(o.contains_key("__type__"));
                let ty = o
                    .get("__type__")
                    .and_then(Json::as_str)
                    .map(|t| format!("{} ", t.rsplit('.').next().unwrap_or(t)))
                    .unwrap_or_default();
                format!("{ty}{{{n} key{}}}", if n == 1 { "" } else { "s" })
            }
            Json::Array(a) => format!("[{} item{}]", a.len(), if a.len() == 1 { "" } else { "s" }),
            _ => String::new(),
        };
        let mut spans = vec![
            span(ind.clone(), Ink::Plain),
            span(if folded { "▸ " } else { "▾ " }, Ink::Fold),
        ];
        if let Some(l) = label {
            spans.push(span(format!("{}  ", crate::text::escape(l)), Ink::Key));
        }
        spans.push(span(crate::text::escape(&count).into_owned(), Ink::Dim));
        if folded {
            let room = width.saturating_sub(
                2 + label.map_or(0, |l| wrap::width(l) + 2) + wrap::width(&count) + 2,
            );
            spans.push(span(
                format!("  {}", present::line(j, room.max(10))),
                Ink::Dim,
            ));
        }
        out.push(self.line(spans, ptr, crumb, Some(ptr.to_string())));
        if folded {
            return;
        }
        match j {
            Json::Object(o) => self.object_children(out, o, ptr, crumb, depth + 1),
            Json::Array(a) => {
                let kw = format!("[{}]", a.len().saturating_sub(1)).len();
                for (n, v) in a.iter().enumerate() {
                    if n >= MAX_CHILDREN {
                        self.more(out, a.len() - n, ptr, crumb, depth + 1);
                        break;
                    }
                    let cp = format!("{ptr}/{n}");
                    let cc = format!("{crumb}[{n}]");
                    let key = format!("[{n}]");
                    if self.is_scalar(v) {
                        self.scalar(out, Some(&key), v, &cp, &cc, depth + 1, kw);
                    } else {
                        self.value(out, Some(&key), v, &cp, &cc, depth + 1);
                    }
                }
            }
            _ => {}
        }
    }

    /// The fields of an object, scalars aligned on one column.
    fn object_children(
        &self,
        out: &mut Out,
        o: &serde_json::Map<String, Json>,
        ptr: &str,
        crumb: &str,
        depth: usize,
    ) {
        let kw = o
            .keys()
            .filter(|k| *k != "__type__" || self.raw)
            .map(|k| wrap::width(k))
            .max()
            .unwrap_or(0)
            .min(24);
        for (n, (k, v)) in o.iter().enumerate() {
            if k == "__type__" && !self.raw {
                continue;
            }
            if n >= MAX_CHILDREN {
                self.more(out, o.len() - n, ptr, crumb, depth);
                break;
            }
            let cp = format!("{ptr}/{}", escape_key(k));
            let cc = child_crumb(crumb, k);
            if self.is_scalar(v) {
                self.scalar(out, Some(k), v, &cp, &cc, depth, kw);
            } else {
                self.value(out, Some(k), v, &cp, &cc, depth);
            }
        }
    }

    fn is_scalar(&self, v: &Json) -> bool {
        match v {
            Json::Object(o) => {
                o.is_empty()
                    || (!self.raw
                        && present::typed_leaf(v).is_some()
                        && Message::from_view(v).is_none())
            }
            Json::Array(a) => a.is_empty(),
            _ => true,
        }
    }

    fn more(&self, out: &mut Out, n: usize, ptr: &str, crumb: &str, depth: usize) {
        out.push(self.line(
            vec![
                span("  ".repeat(depth), Ink::Plain),
                span(format!("… {n} more (y copies the whole value)"), Ink::Dim),
            ],
            ptr,
            crumb,
            None,
        ));
    }

    /// `key  value`, the value wrapped under its own column.
    #[allow(clippy::too_many_arguments)]
    fn scalar(
        &self,
        out: &mut Out,
        label: Option<&str>,
        j: &Json,
        ptr: &str,
        crumb: &str,
        depth: usize,
        key_w: usize,
    ) {
        let ind = "  ".repeat(depth);
        let key = label.map(|l| format!("{l:<key_w$}  ")).unwrap_or_default();
        let col = ind.len() + wrap::width(&key);
        let room = self.width.saturating_sub(col).max(12);
        // (tag, text, ink)
        let (tag, text, ink) = match j {
            Json::String(s) => (None, s.clone(), Ink::Str),
            Json::Number(n) => (None, n.to_string(), Ink::Num),
            Json::Bool(b) => (None, b.to_string(), Ink::Lit),
            Json::Null => (None, "null".into(), Ink::Lit),
            Json::Object(o) if o.is_empty() => (None, "{}".into(), Ink::Dim),
            Json::Array(_) => (None, "[]".into(), Ink::Dim),
            other => match (self.raw, present::typed_leaf(other)) {
                (false, Some((t, v))) => ((!t.is_empty()).then_some(t), v, Ink::Typed),
                _ => (
                    None,
                    serde_json::to_string(other).unwrap_or_default(),
                    Ink::Plain,
                ),
            },
        };
        let quoted = matches!(j, Json::String(_));
        let mut first_room = room;
        if let Some(t) = &tag {
            first_room = first_room.saturating_sub(wrap::width(t) + 1);
        }
        // newlines stay line breaks, every other control character is made visible
        let text = wrap::escape_lines(&text);
        let body = if quoted { format!("\"{text}\"") } else { text };
        let mut pieces = wrap::wrap(&body, first_room.max(8));
        if pieces.len() > 1 && first_room != room {
            // rewrap what follows the first line at the full width
            let rest = pieces[1..].join(" ");
            pieces.truncate(1);
            pieces.extend(wrap::wrap(&rest, room));
        }
        for (i, p) in pieces.into_iter().enumerate() {
            let mut spans = Vec::new();
            if i == 0 {
                spans.push(span(ind.clone(), Ink::Plain));
                if !key.is_empty() {
                    spans.push(span(key.clone(), Ink::Key));
                }
                if let Some(t) = &tag {
                    spans.push(span(format!("{t} "), Ink::Tag));
                }
            } else {
                spans.push(span(" ".repeat(col), Ink::Plain));
            }
            spans.push(span(p, ink));
            out.push(self.line(spans, ptr, crumb, None));
        }
    }

    /// Messages as a conversation: a head line under the label (foldable), then the
    /// conversation; a message the user opened shows its raw fields after its lines.
    #[allow(clippy::too_many_arguments)]
    fn conversation(
        &self,
        out: &mut Out,
        label: Option<&str>,
        msgs: &[Message],
        ptr: &str,
        crumb: &str,
        depth: usize,
        list: bool,
    ) {
        let ind = "  ".repeat(depth);
        let folded = self.folded(ptr);
        if let Some(l) = label {
            let summary = if list {
                conversation::list_line(msgs, self.width.saturating_sub(l.len() + 6))
            } else {
                conversation::message_line(&msgs[0], self.width.saturating_sub(l.len() + 6))
            };
            out.push(self.line(
                vec![
                    span(ind.clone(), Ink::Plain),
                    span(if folded { "▸ " } else { "▾ " }, Ink::Fold),
                    span(format!("{}  ", crate::text::escape(l)), Ink::Key),
                    span(summary, Ink::Dim),
                ],
                ptr,
                crumb,
                Some(ptr.to_string()),
            ));
            if folded {
                return;
            }
        }
        let lines = conversation::render(
            msgs,
            0,
            conversation::Options {
                width: self.width.saturating_sub(ind.len() + 2),
                details: self.details,
                numbered: list,
            },
        );
        let msg_ptr = |i: usize| {
            if list {
                format!("{ptr}/{i}")
            } else {
                ptr.to_string()
            }
        };
        let msg_crumb = |i: usize| {
            if list {
                format!("{crumb}[{i}]")
            } else {
                crumb.to_string()
            }
        };
        // where each message's last line is: its raw fields go after it
        let mut last = vec![0usize; msgs.len()];
        for (n, l) in lines.iter().enumerate() {
            last[l.msg] = n;
        }
        let mut seen = vec![false; msgs.len()];
        for (n, l) in lines.iter().enumerate() {
            let first = !seen[l.msg];
            seen[l.msg] = true;
            let mut spans = vec![span(format!("{ind}  "), Ink::Plain)];
            spans.extend(
                l.segs
                    .iter()
                    .map(|s| span(s.text.clone(), Ink::Conv(s.tone))),
            );
            let mp = msg_ptr(l.msg);
            let raw_key = format!("{mp}#raw");
            out.push(self.line(
                spans,
                &format!("{mp}{}", part_pointer(&l.part)),
                &format!("{}{}", msg_crumb(l.msg), l.part),
                first.then(|| raw_key.clone()),
            ));
            if n == last[l.msg] && self.folded(&raw_key) {
                // the message's own fields, as stored
                let raw = Lay { raw: true, ..*self };
                if let Some(Json::Object(o)) = self.node_value(&mp) {
                    raw.object_children(out, o, &mp, &msg_crumb(l.msg), depth + 3);
                }
            }
        }
    }
}

/// `.tool_calls[1]` -> `/tool_calls/1`.
fn part_pointer(part: &str) -> String {
    let mut out = String::new();
    for piece in part.split('.').filter(|p| !p.is_empty()) {
        match piece.split_once('[') {
            Some((k, rest)) => {
                out.push('/');
                out.push_str(k);
                out.push('/');
                out.push_str(rest.trim_end_matches(']'));
            }
            None => {
                out.push('/');
                out.push_str(piece);
            }
        }
    }
    out
}

//! Provenance: for a state key — or a path in it, such as one message of a list — the write
//! rows that produced each contribution to its value, walking the checkpoint's lineage
//! ([`super::lineage`]) from the root. Each parent → child transition that changed the tracked
//! value is a contribution; the rows that explain it are the parent's pending writes on the key
//! (LangGraph stores a step's writes on the checkpoint the step started from, and an
//! `update_state`'s on the checkpoint it updated), named by [`super::origin`].
//!
//! What is tracked:
//! * `KEY`: the key's whole value. A list that grew has its new items split among the writes
//!   that appended them (`indexes`); a message list matches new and edited messages to the write
//!   holding their id, as `add_messages` does.
//! * `KEY.N` / `KEY[N]` (negative counts from the end) on a message list: that message, by its
//!   id, wherever it sat in older checkpoints; on any other list, the item at that index.
//! * `KEY.name`, `KEY["odd key"]`, deeper paths: the value at that path.

use super::address::{source_of, step_of};
use super::lineage::lineage;
use super::origin::{self, Origin, WriteRef};
use super::CompareError;
use crate::conversation::Message;
use crate::inspect::Thread;
use crate::store::{CheckpointRow, Store};
use serde::Serialize;
use serde_json::Value as Json;

/// One step of a path.
#[derive(Debug, Clone, PartialEq)]
pub enum Seg {
    Key(String),
    Index(i64),
}

/// `KEY[.path]` split into the key and the path; `keys` are the state keys (a key that itself
/// contains `.` or `[` is taken whole).
pub fn parse_path(text: &str, keys: &[String]) -> Result<(String, Vec<Seg>), String> {
    if keys.iter().any(|k| k == text) {
        return Ok((text.to_string(), Vec::new()));
    }
    let cut = text.find(['.', '[']).unwrap_or(text.len());
    let (key, mut rest) = text.split_at(cut);
    if key.is_empty() {
        return Err(format!(
            "{text:?}: expected KEY[.path] (e.g. messages.-1, plan[0].step)"
        ));
    }
    let mut segs = Vec::new();
    while !rest.is_empty() {
        let at = text.len() - rest.len() + 1;
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            let (name, tail) = r.split_at(end);
            if name.is_empty() {
                return Err(format!("{text:?}: empty path segment at column {at}"));
            }
            segs.push(match name.parse::<i64>() {
                Ok(i) => Seg::Index(i),
                Err(_) => Seg::Key(name.to_string()),
            });
            rest = tail;
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r
                .find(']')
                .ok_or_else(|| format!("{text:?}: '[' at column {at} is not closed with ']'"))?;
            let inner = &r[..end];
            let seg = if let Ok(i) = inner.trim().parse::<i64>() {
                Seg::Index(i)
            } else if let Ok(Json::String(s)) = serde_json::from_str::<Json>(inner) {
                Seg::Key(s)
            } else {
                return Err(format!(
                    "{text:?}: [{inner}] at column {at}: expected an index or a quoted key"
                ));
            };
            segs.push(seg);
            rest = &r[end + 1..];
        } else {
            return Err(format!(
                "{text:?}: unexpected {:?} at column {at}",
                &rest[..1]
            ));
        }
    }
    Ok((key.to_string(), segs))
}

/// The value at `path` in `v`.
pub fn at_path<'a>(v: &'a Json, path: &[Seg]) -> Option<&'a Json> {
    let mut cur = v;
    for s in path {
        cur = match (s, cur) {
            (Seg::Key(k), Json::Object(o)) => o.get(k)?,
            (Seg::Index(i), Json::Array(a)) => {
                let i = if *i < 0 { a.len() as i64 + i } else { *i };
                a.get(usize::try_from(i).ok()?)?
            }
            _ => return None,
        };
    }
    Some(cur)
}

fn id_of(m: &Json) -> Option<&str> {
    m.get("id").and_then(Json::as_str)
}

/// Whether write `w` (a message or a list of them) holds message `m` of the state: the same
/// id, or — a message written without an id, which `add_messages` gives one — the same message
/// but for the id.
fn holds(w: &WriteRef, m: &Json) -> bool {
    let same = |x: &Json| {
        if id_of(x).is_some() {
            return id_of(x) == id_of(m);
        }
        match (x, m) {
            (Json::Object(a), Json::Object(b)) => {
                a.len() <= b.len() && b.iter().all(|(k, v)| k == "id" || a.get(k) == Some(v))
            }
            _ => false,
        }
    };
    match &w.value {
        Json::Array(a) => a.iter().any(same),
        x => same(x),
    }
}

/// What is followed through the lineage.
enum Track {
    Whole,
    /// A message of a list by id, then a path inside it.
    Message {
        id: String,
        rest: Vec<Seg>,
    },
    Path(Vec<Seg>),
}

impl Track {
    fn value(&self, v: Option<&Json>) -> Option<Json> {
        let v = v?;
        match self {
            Track::Whole => Some(v.clone()),
            Track::Message { id, rest } => v
                .as_array()?
                .iter()
                .find(|m| id_of(m) == Some(id))
                .and_then(|m| at_path(m, rest))
                .cloned(),
            Track::Path(p) => at_path(v, p).cloned(),
        }
    }
}

/// One transition that changed the tracked value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Contribution {
    /// The checkpoint that first holds the change, its step and source.
    pub checkpoint_id: String,
    pub step: Option<i64>,
    pub source: Option<String>,
    /// The checkpoint whose pending writes hold the rows (`None`: the lineage's first).
    pub parent_checkpoint_id: Option<String>,
    pub origin: Origin,
    /// The row (`None` when no row on the key explains the change).
    pub write: Option<WriteRef>,
    /// For a list: the indexes (in the child's list) of the items this write put there.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub indexes: Vec<usize>,
}

/// `superstep why --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Provenance {
    pub thread_id: String,
    pub checkpoint_ns: String,
    pub checkpoint_id: String,
    pub key: String,
    /// The path as written after the key (`""`: the whole key).
    pub path: String,
    /// The message id a message path was resolved to.
    pub message_id: Option<String>,
    /// The tracked value at the checkpoint (`null` when absent).
    pub value: Json,
    pub reducer: Option<String>,
    /// Oldest first; the last one produced the value the checkpoint holds.
    pub contributions: Vec<Contribution>,
}

/// Which items of `now` (a list) each write on the key put there, given the list before.
fn split_items(before: Option<&Json>, now: &Json, writes: &[WriteRef]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); writes.len()];
    let Some(items) = now.as_array() else {
        return out;
    };
    let empty = Vec::new();
    let old = before.and_then(Json::as_array).unwrap_or(&empty);
    let all_ids = items.iter().chain(old).all(|m| id_of(m).is_some())
        && items.iter().any(|m| Message::from_view(m).is_some());
    if all_ids {
        // add_messages: a new or edited message comes from the write that holds its id
        for (i, m) in items.iter().enumerate() {
            let was = old.iter().find(|o| id_of(o) == id_of(m));
            if was == Some(m) {
                continue;
            }
            if let Some(k) = writes.iter().rposition(|w| holds(w, m)) {
                out[k].push(i);
            }
        }
        return out;
    }
    if items.len() < old.len() || items[..old.len()] != old[..] {
        return out;
    }
    let mut pos = old.len();
    for (k, w) in writes.iter().enumerate() {
        let chunk: Vec<&Json> = match &w.value {
            Json::Array(a) => a.iter().collect(),
            x => vec![x],
        };
        let fits = items.len() >= pos + chunk.len()
            && items[pos..pos + chunk.len()]
                .iter()
                .zip(&chunk)
                .all(|(x, y)| x == *y);
        if fits {
            out[k].extend(pos..pos + chunk.len());
            pos += chunk.len();
        }
    }
    out
}

/// Provenance of `key` (and `path` in it) at checkpoint `head` of `thread`.
pub fn why(
    store: &Store,
    thread: &Thread,
    head: &CheckpointRow,
    key: &str,
    path: &[Seg],
    path_text: &str,
) -> Result<Provenance, CompareError> {
    let rows = lineage(store, head)?;
    let snaps = rows
        .iter()
        .map(|r| thread.snapshot_of(r, false))
        .collect::<Result<Vec<_>, _>>()?;
    let value_of = |i: usize| -> Option<Json> {
        snaps[i]
            .values
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| crate::value::to_view(v, crate::value::ViewOptions::default()))
    };
    let last = rows.len() - 1;
    let now = value_of(last);
    let known = snaps.iter().any(|s| s.values.iter().any(|(k, _)| k == key));
    if !known {
        let keys: Vec<String> = snaps[last].values.iter().map(|(k, _)| k.clone()).collect();
        return Err(CompareError::msg(format!(
            "{}: thread {:?}: no state key {key:?} in this checkpoint's lineage (keys: {})",
            store.label(),
            head.thread_id,
            keys.join(", ")
        )));
    }
    let mut message_id = None;
    let track = match path.split_first() {
        None => Track::Whole,
        Some((Seg::Index(i), rest)) => {
            let msgs = now
                .as_ref()
                .filter(|v| crate::conversation::messages_in(v).is_some());
            match msgs
                .and_then(|v| at_path(v, &[Seg::Index(*i)]))
                .and_then(id_of)
            {
                Some(id) => {
                    message_id = Some(id.to_string());
                    Track::Message {
                        id: id.to_string(),
                        rest: rest.to_vec(),
                    }
                }
                None => Track::Path(path.to_vec()),
            }
        }
        Some(_) => Track::Path(path.to_vec()),
    };
    let tracked = |i: usize| track.value(value_of(i).as_ref());
    if now.is_some() && !path.is_empty() && tracked(last).is_none() {
        return Err(CompareError::msg(format!(
            "{}: thread {:?}: {key}{path_text}: no such path in the value at checkpoint {}",
            store.label(),
            head.thread_id,
            head.checkpoint_id
        )));
    }
    let mut contributions = Vec::new();
    for i in 0..rows.len() {
        let (before, after) = (if i == 0 { None } else { tracked(i - 1) }, tracked(i));
        if before == after {
            continue;
        }
        let row = &rows[i];
        let base = |origin, write, indexes| Contribution {
            checkpoint_id: row.checkpoint_id.clone(),
            step: step_of(row),
            source: source_of(row),
            parent_checkpoint_id: (i > 0).then(|| rows[i - 1].checkpoint_id.clone()),
            origin,
            write,
            indexes,
        };
        if i == 0 {
            contributions.push(base(Origin::Checkpoint, None, Vec::new()));
            continue;
        }
        let parent = &rows[i - 1];
        // the rows that can have made this child: a step's (nodes, the input's __start__, a
        // Command) for a `loop` checkpoint, an update task's for an `update` one
        let source = source_of(row);
        let fits = |w: &WriteRef| match source.as_deref() {
            Some("loop") => w.origin != Origin::UpdateState,
            Some("update") => w.origin == Origin::UpdateState,
            _ => false,
        };
        let writes: Vec<WriteRef> = store
            .writes(
                &parent.thread_id,
                &parent.checkpoint_ns,
                &parent.checkpoint_id,
            )?
            .iter()
            .filter(|w| w.channel == key && w.cut.is_none())
            .map(|w| origin::name(w, &snaps[i - 1]))
            .filter(fits)
            .collect();
        // no row: the value came with the checkpoint (an update_state whose writes LangGraph
        // did not store, a fork's copy, an input checkpoint)
        let bare = match source.as_deref() {
            Some("update") => Origin::UpdateState,
            Some("input") => Origin::Input,
            _ => Origin::Checkpoint,
        };
        if writes.is_empty() {
            contributions.push(base(bare, None, Vec::new()));
            continue;
        }
        let chosen: Vec<(WriteRef, Vec<usize>)> = match (&track, after.as_ref()) {
            (Track::Whole, Some(v)) if v.is_array() => {
                let split = split_items(before.as_ref(), v, &writes);
                if split.iter().all(Vec::is_empty) {
                    writes.into_iter().map(|w| (w, Vec::new())).collect()
                } else {
                    writes
                        .into_iter()
                        .zip(split)
                        .filter(|(_, ix)| !ix.is_empty())
                        .collect()
                }
            }
            (Track::Message { id, .. }, _) => {
                let whole = value_of(i)
                    .and_then(|v| v.as_array()?.iter().find(|m| id_of(m) == Some(id)).cloned());
                match whole.and_then(|m| writes.iter().rposition(|w| holds(w, &m))) {
                    Some(k) => vec![(writes[k].clone(), Vec::new())],
                    None => {
                        contributions.push(base(bare, None, Vec::new()));
                        continue;
                    }
                }
            }
            _ => writes.into_iter().map(|w| (w, Vec::new())).collect(),
        };
        for (w, ix) in chosen {
            contributions.push(base(w.origin, Some(w), ix));
        }
    }
    Ok(Provenance {
        thread_id: head.thread_id.clone(),
        checkpoint_ns: head.checkpoint_ns.clone(),
        checkpoint_id: head.checkpoint_id.clone(),
        key: key.to_string(),
        path: path_text.to_string(),
        message_id,
        value: tracked(last).unwrap_or(Json::Null),
        reducer: thread.reducer_label(key),
        contributions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_parse_with_dots_brackets_and_negative_indexes() {
        let keys = vec!["messages".to_string(), "a.b".to_string()];
        assert_eq!(
            parse_path("messages.-1", &keys).unwrap(),
            ("messages".into(), vec![Seg::Index(-1)])
        );
        assert_eq!(
            parse_path("plan[2].x[\"odd key\"]", &keys).unwrap(),
            (
                "plan".into(),
                vec![
                    Seg::Index(2),
                    Seg::Key("x".into()),
                    Seg::Key("odd key".into())
                ]
            )
        );
        assert_eq!(parse_path("a.b", &keys).unwrap(), ("a.b".into(), vec![]));
        let e = parse_path("plan[2", &keys).unwrap_err();
        assert!(e.contains("column 5"), "{e}");
        assert!(parse_path("plan..x", &keys)
            .unwrap_err()
            .contains("column 5"));
    }
}

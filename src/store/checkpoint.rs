//! The checkpoint dict (spec §2), decoded structurally from its envelope.

use crate::value::{Typed, ValueError};
use rmpv::Value;
use std::cmp::Ordering;

/// A channel version. SqliteSaver writes `"{n:032}.{frac}"` strings; other savers write ints or
/// floats. Versions compare within one kind; the null version is smaller than every version.
#[derive(Debug, Clone, PartialEq)]
pub enum Version {
    Str(String),
    Int(i64),
    Float(f64),
}

impl Version {
    pub fn from_value(v: &Value) -> Option<Version> {
        match v {
            Value::String(s) => s.as_str().map(|s| Version::Str(s.to_string())),
            Value::Integer(i) => i.as_i64().map(Version::Int),
            Value::F64(f) => Some(Version::Float(*f)),
            Value::F32(f) => Some(Version::Float(*f as f64)),
            _ => None,
        }
    }

    pub fn to_value(&self) -> Value {
        match self {
            Version::Str(s) => Value::from(s.as_str()),
            Version::Int(i) => Value::from(*i),
            Version::Float(f) => Value::F64(*f),
        }
    }

    /// The integer part: the only meaningful part of a SqliteSaver version.
    pub fn number(&self) -> i64 {
        match self {
            Version::Str(s) => s
                .split('.')
                .next()
                .and_then(|p| p.parse().ok())
                .unwrap_or(0),
            Version::Int(i) => *i,
            Version::Float(f) => *f as i64,
        }
    }

    /// LangGraph's trigger rule for one available channel `ch` of a node (`_triggers`): a node
    /// that never ran (`seen` is `None`) is triggered; otherwise only by a channel whose version
    /// is newer than the one its `versions_seen` records. The engine (`engine::tasks`) and the
    /// inspector (`snapshot::triggers`) both ask this.
    pub fn triggers(
        version: Option<&Version>,
        seen: Option<&[(String, Version)]>,
        ch: &str,
    ) -> bool {
        match seen {
            None => true,
            Some(seen) => Version::gt(version, Version::seen(seen, ch)),
        }
    }

    /// The version of `ch` a node's `versions_seen` records.
    pub fn seen<'a>(seen: &'a [(String, Version)], ch: &str) -> Option<&'a Version> {
        seen.iter().find(|(k, _)| k == ch).map(|(_, v)| v)
    }

    /// `a > b` the way Python compares them (strings as strings); `None` is the null version.
    pub fn gt(a: Option<&Version>, b: Option<&Version>) -> bool {
        match (a, b) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(a), Some(b)) => a.partial_cmp(b) == Some(Ordering::Greater),
        }
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        match (self, other) {
            (Version::Str(a), Version::Str(b)) => Some(a.cmp(b)),
            (Version::Int(a), Version::Int(b)) => Some(a.cmp(b)),
            (Version::Float(a), Version::Float(b)) => a.partial_cmp(b),
            (Version::Int(a), Version::Float(b)) => (*a as f64).partial_cmp(b),
            (Version::Float(a), Version::Int(b)) => a.partial_cmp(&(*b as f64)),
            // mixed kinds never happen within one saver; order by the integer part
            (a, b) => Some(a.number().cmp(&b.number())),
        }
    }
}

/// A decoded checkpoint blob. Maps keep their stored order.
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    pub v: i64,
    pub ts: String,
    pub id: String,
    pub channel_values: Vec<(String, Value)>,
    pub channel_versions: Vec<(String, Version)>,
    pub versions_seen: Vec<(String, Vec<(String, Version)>)>,
    /// `None` when absent or nil (fork, update, legacy).
    pub updated_channels: Option<Vec<String>>,
}

fn map_entries(v: &Value, what: &str) -> Result<Vec<(String, Value)>, String> {
    match v {
        Value::Map(m) => m
            .iter()
            .map(|(k, v)| {
                k.as_str()
                    .map(|k| (k.to_string(), v.clone()))
                    .ok_or_else(|| format!("{what} has a non-string key"))
            })
            .collect(),
        Value::Nil => Ok(Vec::new()),
        _ => Err(format!("{what} is not a map")),
    }
}

fn versions(v: &Value, what: &str) -> Result<Vec<(String, Version)>, String> {
    map_entries(v, what)?
        .into_iter()
        .map(|(k, v)| {
            Version::from_value(&v)
                .map(|ver| (k.clone(), ver))
                .ok_or_else(|| format!("{what}[{k:?}] is not a version"))
        })
        .collect()
}

impl Checkpoint {
    /// Decode `(type, blob)` of a `checkpoints` row and apply LangGraph's load-time migration of
    /// `v < 4` `pending_sends` into `__pregel_tasks` (spec §2.5).
    pub fn decode(type_: &str, blob: &[u8]) -> Result<Checkpoint, String> {
        let typed = Typed::decode(type_, blob).map_err(|e: ValueError| e.to_string())?;
        Checkpoint::from_typed(typed)
    }

    /// As [`Checkpoint::decode`], from an already decoded envelope.
    pub fn from_typed(typed: Typed) -> Result<Checkpoint, String> {
        let Some(Value::Map(fields)) = typed.as_value() else {
            return Err("checkpoint is not a map".into());
        };
        let get = |k: &str| {
            fields
                .iter()
                .find(|(fk, _)| fk.as_str() == Some(k))
                .map(|(_, v)| v)
        };
        let v = get("v").and_then(Value::as_i64).unwrap_or(1);
        let ts = get("ts").and_then(Value::as_str).unwrap_or("").to_string();
        let id = get("id")
            .and_then(Value::as_str)
            .ok_or("checkpoint has no id")?
            .to_string();
        let channel_values = map_entries(
            get("channel_values").unwrap_or(&Value::Nil),
            "channel_values",
        )?;
        let channel_versions = versions(
            get("channel_versions").unwrap_or(&Value::Nil),
            "channel_versions",
        )?;
        let versions_seen =
            map_entries(get("versions_seen").unwrap_or(&Value::Nil), "versions_seen")?
                .into_iter()
                .map(|(node, m)| {
                    Ok((
                        node.clone(),
                        versions(&m, &format!("versions_seen[{node:?}]"))?,
                    ))
                })
                .collect::<Result<Vec<_>, String>>()?;
        let updated_channels = match get("updated_channels") {
            Some(Value::Array(a)) => Some(
                a.iter()
                    .map(|c| {
                        c.as_str()
                            .map(str::to_string)
                            .ok_or("updated_channels holds a non-string")
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            _ => None,
        };
        let sends = match get("pending_sends") {
            Some(Value::Array(sends)) if v < 4 => sends.clone(),
            _ => Vec::new(),
        };
        let mut cp = Checkpoint {
            v,
            ts,
            id,
            channel_values,
            channel_versions,
            versions_seen,
            updated_channels,
        };
        cp.migrate_sends(sends, None);
        Ok(cp)
    }

    /// LangGraph's load-time migration of a `v < 4` checkpoint's pending sends
    /// (`_migrate_pending_sends`, spec §2.5): they become `__pregel_tasks`' value, at the
    /// checkpoint's newest channel version (`fresh` when it has none and the saver takes a new
    /// one). Nothing to migrate: nothing changes.
    pub fn migrate_sends(&mut self, sends: Vec<Value>, fresh: Option<Version>) {
        if sends.is_empty() {
            return;
        }
        let newest = self
            .channel_versions
            .iter()
            .map(|(_, v)| v.clone())
            .reduce(|a, b| {
                if Version::gt(Some(&b), Some(&a)) {
                    b
                } else {
                    a
                }
            })
            .or(fresh);
        self.channel_values.retain(|(k, _)| k != "__pregel_tasks");
        self.channel_values
            .push(("__pregel_tasks".into(), Value::Array(sends)));
        if let Some(newest) = newest {
            self.channel_versions.retain(|(k, _)| k != "__pregel_tasks");
            self.channel_versions
                .push(("__pregel_tasks".into(), newest));
        }
    }

    pub fn value(&self, ch: &str) -> Option<&Value> {
        self.channel_values
            .iter()
            .find(|(k, _)| k == ch)
            .map(|(_, v)| v)
    }

    pub fn version(&self, ch: &str) -> Option<&Version> {
        self.channel_versions
            .iter()
            .find(|(k, _)| k == ch)
            .map(|(_, v)| v)
    }

    pub fn seen(&self, node: &str) -> Option<&Vec<(String, Version)>> {
        self.versions_seen
            .iter()
            .find(|(k, _)| k == node)
            .map(|(_, v)| v)
    }
}

/// A checkpoint about to be saved, borrowed from whoever holds it (the engine's channels):
/// `create_checkpoint(...)`'s fields in LangGraph's key order. Each backend encodes it its own
/// way ([`super::Backend::encode_checkpoint`]).
#[derive(Debug)]
pub struct CheckpointRef<'a> {
    pub v: i64,
    pub ts: &'a str,
    pub id: &'a str,
    /// Channels with a value, in channel order.
    pub channel_values: Vec<(&'a str, std::borrow::Cow<'a, Value>)>,
    pub channel_versions: &'a [(String, Version)],
    pub versions_seen: &'a [(String, Vec<(String, Version)>)],
    pub updated_channels: Option<&'a [String]>,
    /// `new_versions` of `put`: the channels whose version is newer than at the previous save.
    pub new_versions: Vec<(&'a str, &'a Version)>,
    /// About how long the encoded checkpoint will be (the last one's length): buffers start
    /// there instead of doubling their way up.
    pub size_hint: usize,
}

/// SqliteSaver's blob: `serde.dumps_typed(checkpoint)` — the whole checkpoint as one msgpack
/// map, channel values included.
pub fn encode_msgpack(cp: &CheckpointRef<'_>) -> Vec<u8> {
    use rmp::encode::{write_array_len, write_map_len, write_nil, write_sint, write_str};
    let mut buf: Vec<u8> = Vec::with_capacity(512.max(cp.size_hint + 256));
    let w = &mut buf;
    let versions = |w: &mut Vec<u8>, m: &[(String, Version)]| {
        write_map_len(w, m.len() as u32).unwrap();
        for (k, v) in m {
            write_str(w, k).unwrap();
            rmpv::encode::write_value(w, &v.to_value()).unwrap();
        }
    };
    write_map_len(w, 7).unwrap();
    write_str(w, "v").unwrap();
    write_sint(w, cp.v).unwrap();
    write_str(w, "ts").unwrap();
    write_str(w, cp.ts).unwrap();
    write_str(w, "id").unwrap();
    write_str(w, cp.id).unwrap();
    write_str(w, "channel_values").unwrap();
    write_map_len(w, cp.channel_values.len() as u32).unwrap();
    for (k, v) in &cp.channel_values {
        write_str(w, k).unwrap();
        rmpv::encode::write_value(w, v).unwrap();
    }
    write_str(w, "channel_versions").unwrap();
    versions(w, cp.channel_versions);
    write_str(w, "versions_seen").unwrap();
    write_map_len(w, cp.versions_seen.len() as u32).unwrap();
    for (k, m) in cp.versions_seen {
        write_str(w, k).unwrap();
        versions(w, m);
    }
    write_str(w, "updated_channels").unwrap();
    match cp.updated_channels {
        Some(u) => {
            write_array_len(w, u.len() as u32).unwrap();
            for c in u {
                write_str(w, c).unwrap();
            }
        }
        None => write_nil(w).unwrap(),
    }
    buf
}

//! PostgresSaver's row shape: a checkpoint's JSONB with inline primitives and its blobs, both ways.

use super::*;

/// A JSON value (an inline primitive or a version) as msgpack.
pub(super) fn json_to_value(j: &Json) -> Value {
    match j {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Boolean(*b),
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                Value::F64(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Json::String(s) => Value::from(s.as_str()),
        Json::Array(a) => Value::Array(a.iter().map(json_to_value).collect()),
        Json::Object(o) => Value::Map(
            o.iter()
                .map(|(k, v)| (Value::from(k.as_str()), json_to_value(v)))
                .collect(),
        ),
    }
}

pub(super) fn versions_of(j: Option<&Json>, what: &str) -> Result<Vec<(String, Version)>, String> {
    match j {
        None | Some(Json::Null) => Ok(Vec::new()),
        Some(Json::Object(m)) => m
            .iter()
            .map(|(k, v)| {
                Version::from_value(&json_to_value(v))
                    .map(|ver| (k.clone(), ver))
                    .ok_or_else(|| format!("{what}[{k:?}] is not a version"))
            })
            .collect(),
        Some(_) => Err(format!("{what} is not an object")),
    }
}

/// The checkpoint LangGraph loads from a row: the JSON, its inline values, then the blobs of its
/// channel versions (a blob wins over an inline value; `empty` means no value), then the pending
/// sends of a v < 4 checkpoint.
pub(super) fn decode_body(body: &Body) -> Result<Checkpoint, String> {
    let j: Json = serde_json::from_str(&body.checkpoint)
        .map_err(|e| format!("checkpoint is not JSON: {e}"))?;
    let Json::Object(o) = &j else {
        return Err("checkpoint is not a JSON object".into());
    };
    let v = o.get("v").and_then(Json::as_i64).unwrap_or(1);
    let mut channel_values: Vec<(String, Value)> = match o.get("channel_values") {
        Some(Json::Object(m)) => m
            .iter()
            .map(|(k, v)| (k.clone(), json_to_value(v)))
            .collect(),
        None | Some(Json::Null) => Vec::new(),
        Some(_) => return Err("channel_values is not an object".into()),
    };
    for (ch, ty, blob) in &body.blobs {
        if ty == "empty" {
            continue;
        }
        let value = Typed::decode(ty, blob.as_deref().unwrap_or(&[]))
            .map_err(|e| format!("blob of channel {ch:?}: {e}"))?
            .into_value();
        match channel_values.iter_mut().find(|(k, _)| k == ch) {
            Some((_, old)) => *old = value,
            None => channel_values.push((ch.clone(), value)),
        }
    }
    let channel_versions = versions_of(o.get("channel_versions"), "channel_versions")?;
    // the parent's `__pregel_tasks` writes of a v < 4 checkpoint
    let sends = body
        .sends
        .iter()
        .flatten()
        .map(|(ty, b)| Typed::decode(ty, b).map(Typed::into_value))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("pending send: {e}"))?;
    let versions_seen = match o.get("versions_seen") {
        Some(Json::Object(m)) => m
            .iter()
            .map(|(node, vs)| {
                Ok((
                    node.clone(),
                    versions_of(Some(vs), &format!("versions_seen[{node:?}]"))?,
                ))
            })
            .collect::<Result<Vec<_>, String>>()?,
        None | Some(Json::Null) => Vec::new(),
        Some(_) => return Err("versions_seen is not an object".into()),
    };
    let updated_channels = match o.get("updated_channels") {
        Some(Json::Array(a)) => Some(
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
    // the load-time migration of a legacy `pending_sends` list (ShallowPostgresSaver hands it
    // over in the checkpoint), as for every saver
    let legacy = o.get("pending_sends").filter(|_| v < 4).cloned();
    let mut cp = Checkpoint {
        v,
        ts: o.get("ts").and_then(Json::as_str).unwrap_or("").to_string(),
        id: o
            .get("id")
            .and_then(Json::as_str)
            .ok_or("checkpoint has no id")?
            .to_string(),
        channel_values,
        channel_versions,
        versions_seen,
        updated_channels,
    };
    // PostgresSaver takes a fresh random version when there is none: any version will do
    cp.migrate_sends(sends, Some(Version::Str(format!("{:032}.{:016}", 1, 0))));
    if let Some(Json::Array(sends)) = legacy {
        if cp.value("__pregel_tasks").is_none() {
            cp.migrate_sends(sends.iter().map(json_to_value).collect(), None);
        }
    }
    Ok(cp)
}

pub(super) type BlobRow = (String, String, String, Option<Vec<u8>>);

/// `PostgresSaver.put`: the checkpoint JSON with primitive values inline, and a blob row for each
/// other channel in `new_versions` (the other channels' blobs are already stored at their
/// versions, shared).
pub(super) fn split_checkpoint(cp: &CheckpointRef<'_>) -> Result<(Json, Vec<BlobRow>), String> {
    let mut inline = serde_json::Map::new();
    let mut blobs = Vec::new();
    for (k, v) in &cp.channel_values {
        let v: &Value = v;
        // a DeltaChannel's `_DeltaSnapshot` goes to a blob and leaves an inline `true` marker
        let delta_snapshot =
            matches!(v, Value::Ext(code, _) if *code == crate::value::ext::EXT_DELTA_SNAPSHOT);
        if delta_snapshot {
            inline.insert(k.to_string(), Json::Bool(true));
        }
        if is_primitive(v) {
            inline.insert(
                k.to_string(),
                primitive_json(v).map_err(|e| format!("channel {k:?}: {e}"))?,
            );
        } else if let Some((_, ver)) = cp.new_versions.iter().find(|(c, _)| c == k) {
            let mut enc = Vec::new();
            crate::value::encrypted_ciphers(v, &mut enc);
            if !enc.is_empty() {
                // an opaque EncryptedSerializer envelope cannot be written back as it was read
                return Err(format!(
                    "channel {k:?} holds a value LangGraph's EncryptedSerializer wrote ({}): superstep has no key and cannot step on it",
                    enc.join(", ")
                ));
            }
            let (ty, bytes) = Typed::Value(v.clone()).encode();
            blobs.push((
                k.to_string(),
                version_text(ver),
                ty.to_string(),
                Some(bytes),
            ));
        }
    }
    let versions = |m: &[(String, Version)]| {
        Json::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), version_json(v)))
                .collect(),
        )
    };
    let mut o = serde_json::Map::new();
    o.insert("v".into(), Json::from(cp.v));
    o.insert("ts".into(), Json::from(cp.ts));
    o.insert("id".into(), Json::from(cp.id));
    o.insert("channel_values".into(), Json::Object(inline));
    o.insert("channel_versions".into(), versions(cp.channel_versions));
    o.insert(
        "versions_seen".into(),
        Json::Object(
            cp.versions_seen
                .iter()
                .map(|(n, m)| (n.clone(), versions(m)))
                .collect(),
        ),
    );
    o.insert(
        "updated_channels".into(),
        match cp.updated_channels {
            Some(u) => Json::from(u.to_vec()),
            None => Json::Null,
        },
    );
    Ok((Json::Object(o), blobs))
}

/// PostgresSaver's inline test: `v is None or isinstance(v, (str, int, float, bool))`.
pub(super) fn is_primitive(v: &Value) -> bool {
    matches!(
        v,
        Value::Nil
            | Value::Boolean(_)
            | Value::Integer(_)
            | Value::F32(_)
            | Value::F64(_)
            | Value::String(_)
    )
}

/// `Jsonb(value)`: psycopg's `json.dumps` of an inline primitive. Non-finite floats are not
/// JSON: PostgresSaver fails on them; so does this.
pub(super) fn primitive_json(v: &Value) -> Result<Json, String> {
    Ok(match v {
        Value::Nil => Json::Null,
        Value::Boolean(b) => Json::Bool(*b),
        Value::Integer(i) => match (i.as_i64(), i.as_u64()) {
            (Some(i), _) => Json::from(i),
            (None, Some(u)) => Json::from(u),
            _ => return Err("integer out of range".into()),
        },
        Value::F32(f) => float_json(*f as f64)?,
        Value::F64(f) => float_json(*f)?,
        Value::String(s) => Json::String(
            s.as_str()
                .ok_or("a str channel value that is not UTF-8")?
                .to_string(),
        ),
        _ => return Err("not a primitive".into()),
    })
}

pub(super) fn float_json(f: f64) -> Result<Json, String> {
    serde_json::Number::from_f64(f)
        .map(Json::Number)
        .ok_or_else(|| format!("{f} cannot be stored in JSONB (PostgresSaver fails the same way)"))
}

pub(super) fn version_text(v: &Version) -> String {
    match v {
        Version::Str(s) => s.clone(),
        Version::Int(i) => i.to_string(),
        Version::Float(f) => f.to_string(),
    }
}

pub(super) fn version_json(v: &Version) -> Json {
    match v {
        Version::Str(s) => Json::from(s.as_str()),
        Version::Int(i) => Json::from(*i),
        Version::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
    }
}

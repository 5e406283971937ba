//! The JSON *view* of a stored value: plain msgpack maps to plain JSON; everything JSON cannot
//! hold, and every Python type carried by an extension, becomes a tagged object
//! `{"__type__": "<module>.<Class>", ...}` that keeps the module and class name.
//!
//! | msgpack / ext | view |
//! |---|---|
//! | nil, bool, int, str | as is |
//! | float | number; NaN/±inf -> `{"__type__":"float","value":"nan"|"inf"|"-inf"}` |
//! | bin | `{"__type__":"bytes","hex"}` |
//! | map with a non-str key | `{"__type__":"map","entries":[[k,v],..]}` |
//! | ext 0 uuid.UUID | `{"__type__":"uuid.UUID","value":"8-4-4-4-12"}` |
//! | ext 0 set / frozenset / deque | `{"__type__":"builtins.set","items":[..]}` |
//! | ext 0 other (Enum, Decimal, ...) | `{"__type__":"mod.Name","value":arg}` |
//! | ext 1 Send | `{"__type__":"langgraph.types.Send","node","arg"(,"timeout")}` |
//! | ext 1 other | `{"__type__":"mod.Name","args":[..]}` |
//! | ext 2 / 4 / 5 (dataclass, Interrupt, pydantic, LangChain messages) | `{"__type__":"mod.Name", ...fields}` |
//! | ext 3 datetime.fromisoformat | `{"__type__":"datetime.datetime","value":"<ISO>"}` |
//! | ext 3 other | `{"__type__":"mod.Name","value","method"}` |
//! | ext 6 | `{"__type__":"numpy.ndarray","dtype","shape","order","hex"}` |
//! | ext 7 | `{"__type__":"langgraph.DeltaSnapshot","value"}` |
//! | unknown ext / bad payload | `{"__type__":"ext","code","hex"}` |
//! | pickle envelope | `{"__type__":"pickle","hex"}` (never unpickled) |

use super::ext::{Ext, ENCRYPTED_PSEUDO_EXT, PICKLE_PSEUDO_EXT};
use super::{Typed, ValueError};
use rmpv::Value;
use serde_json::{json, Map, Value as Json};

/// Limits for previews. The default shows everything.
#[derive(Debug, Clone, Copy)]
pub struct ViewOptions {
    /// Longest string / byte run shown before it is cut (with a marker).
    pub max_bytes: usize,
}

impl Default for ViewOptions {
    fn default() -> Self {
        ViewOptions {
            max_bytes: usize::MAX,
        }
    }
}

fn tagged(ty: &str) -> Map<String, Json> {
    let mut m = Map::new();
    m.insert("__type__".into(), Json::from(ty));
    m
}

fn hex_of(b: &[u8], opts: ViewOptions) -> String {
    let n = b.len().min(opts.max_bytes);
    let mut s: String = b[..n].iter().map(|x| format!("{x:02x}")).collect();
    if n < b.len() {
        s.push_str(&format!("…(+{} bytes)", b.len() - n));
    }
    s
}

fn float_view(f: f64) -> Json {
    if f.is_finite() {
        serde_json::Number::from_f64(f)
            .map(Json::Number)
            .unwrap_or(Json::Null)
    } else {
        let v = if f.is_nan() {
            "nan"
        } else if f > 0.0 {
            "inf"
        } else {
            "-inf"
        };
        Json::Object(tagged_with("float", [("value", Json::from(v))]))
    }
}

fn tagged_with<const N: usize>(ty: &str, fields: [(&str, Json); N]) -> Map<String, Json> {
    let mut m = tagged(ty);
    for (k, v) in fields {
        m.insert(k.into(), v);
    }
    m
}

fn str_view(s: &str, opts: ViewOptions) -> Json {
    if s.len() <= opts.max_bytes {
        return Json::from(s);
    }
    let mut cut = opts.max_bytes;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    Json::from(format!("{}…(+{} bytes)", &s[..cut], s.len() - cut))
}

/// Escape invalid UTF-8 as `\xNN`, keep valid runs.
fn escape_invalid_utf8(b: &[u8]) -> String {
    let mut out = String::new();
    for chunk in b.utf8_chunks() {
        out.push_str(chunk.valid());
        for x in chunk.invalid() {
            out.push_str(&format!("\\x{x:02x}"));
        }
    }
    out
}

/// The JSON view of one msgpack value.
pub fn to_view(v: &Value, opts: ViewOptions) -> Json {
    match v {
        Value::Nil => Json::Null,
        Value::Boolean(b) => Json::Bool(*b),
        Value::Integer(i) => match (i.as_u64(), i.as_i64()) {
            (Some(u), _) => Json::from(u),
            (_, Some(s)) => Json::from(s),
            _ => Json::Null,
        },
        Value::F32(f) => float_view(*f as f64),
        Value::F64(f) => float_view(*f),
        Value::String(s) => match s.as_str() {
            Some(s) => str_view(s, opts),
            None => Json::Object(tagged_with(
                "str",
                [(
                    "escaped",
                    str_view(&escape_invalid_utf8(s.as_bytes()), opts),
                )],
            )),
        },
        Value::Binary(b) => {
            Json::Object(tagged_with("bytes", [("hex", Json::from(hex_of(b, opts)))]))
        }
        Value::Array(a) => Json::Array(a.iter().map(|x| to_view(x, opts)).collect()),
        Value::Map(entries) => {
            if entries.iter().all(|(k, _)| k.as_str().is_some()) {
                let mut m = Map::new();
                for (k, val) in entries {
                    m.insert(k.as_str().unwrap().to_string(), to_view(val, opts));
                }
                Json::Object(m)
            } else {
                let list = entries
                    .iter()
                    .map(|(k, val)| Json::Array(vec![to_view(k, opts), to_view(val, opts)]))
                    .collect();
                Json::Object(tagged_with("map", [("entries", Json::Array(list))]))
            }
        }
        Value::Ext(code, data) => ext_view(*code, data, opts),
    }
}

fn ext_view(code: i8, data: &[u8], opts: ViewOptions) -> Json {
    if code == ENCRYPTED_PSEUDO_EXT {
        if let Some((ty, bytes)) = encrypted_parts(data) {
            let (serializer, cipher) = ty.split_once('+').unwrap_or((ty.as_str(), ""));
            return Json::Object(tagged_with(
                "encrypted",
                [
                    ("serializer", Json::from(serializer)),
                    ("cipher", Json::from(cipher)),
                    ("bytes", Json::from(bytes)),
                ],
            ));
        }
    }
    if code == PICKLE_PSEUDO_EXT {
        return Json::Object(tagged_with(
            "pickle",
            [("hex", Json::from(hex_of(data, opts)))],
        ));
    }
    let obj = match Ext::parse(code, data) {
        Ext::Opaque { code, data } => tagged_with(
            "ext",
            [
                ("code", Json::from(code)),
                ("hex", Json::from(hex_of(&data, opts))),
            ],
        ),
        Ext::DeltaSnapshot(v) => {
            tagged_with("langgraph.DeltaSnapshot", [("value", to_view(&v, opts))])
        }
        Ext::Numpy {
            dtype,
            shape,
            order,
            data,
        } => tagged_with(
            "numpy.ndarray",
            [
                ("dtype", Json::from(dtype)),
                (
                    "shape",
                    Json::Array(shape.iter().map(|x| to_view(x, opts)).collect()),
                ),
                ("order", Json::from(order)),
                ("hex", Json::from(hex_of(&data, opts))),
            ],
        ),
        Ext::Constructor {
            code,
            module,
            name,
            arg,
            method,
        } => {
            let ty = format!("{module}.{name}");
            match code {
                0 => match (ty.as_str(), &arg) {
                    ("uuid.UUID", Value::String(s)) if s.as_str().is_some() => {
                        let hex = s.as_str().unwrap();
                        let shown = uuid::Uuid::try_parse(hex)
                            .map(|u| u.hyphenated().to_string())
                            .unwrap_or_else(|_| hex.to_string());
                        tagged_with(&ty, [("value", Json::from(shown))])
                    }
                    ("builtins.set" | "builtins.frozenset" | "collections.deque", _) => {
                        tagged_with(&ty, [("items", to_view(&arg, opts))])
                    }
                    _ => tagged_with(&ty, [("value", to_view(&arg, opts))]),
                },
                1 => match (ty.as_str(), &arg) {
                    ("langgraph.types.Send", Value::Array(a)) if a.len() >= 2 => {
                        let mut m = tagged_with(
                            &ty,
                            [
                                ("node", to_view(&a[0], opts)),
                                ("arg", to_view(&a[1], opts)),
                            ],
                        );
                        if let Some(t) = a.get(2) {
                            m.insert("timeout".into(), to_view(t, opts));
                        }
                        m
                    }
                    (_, Value::Array(_)) => tagged_with(&ty, [("args", to_view(&arg, opts))]),
                    _ => return opaque(code, data, opts),
                },
                2 | 4 | 5 => match &arg {
                    Value::Map(fields) => {
                        let mut m = tagged(&ty);
                        for (k, v) in fields {
                            let key = match k.as_str() {
                                Some(k) => k.to_string(),
                                None => return opaque(code, data, opts),
                            };
                            m.insert(key, to_view(v, opts));
                        }
                        m
                    }
                    _ => return opaque(code, data, opts),
                },
                3 => {
                    // a datetime stays tagged, like the other one-value types (UUID, Decimal):
                    // the ISO string alone would read as text
                    if ty == "datetime.datetime" && method.as_deref() == Some("fromisoformat") {
                        if let Some(s) = arg.as_str() {
                            return Json::Object(tagged_with(&ty, [("value", Json::from(s))]));
                        }
                    }
                    tagged_with(
                        &ty,
                        [
                            ("value", to_view(&arg, opts)),
                            ("method", method.map(Json::from).unwrap_or(Json::Null)),
                        ],
                    )
                }
                _ => return opaque(code, data, opts),
            }
        }
    };
    Json::Object(obj)
}

fn opaque(code: i8, data: &[u8], opts: ViewOptions) -> Json {
    Json::Object(tagged_with(
        "ext",
        [
            ("code", Json::from(code)),
            ("hex", Json::from(hex_of(data, opts))),
        ],
    ))
}

/// The `(type, ciphertext length)` of an encrypted envelope's pseudo-ext data.
fn encrypted_parts(data: &[u8]) -> Option<(String, usize)> {
    match super::decode_msgpack(data).ok()? {
        Value::Array(a) => match a.as_slice() {
            [Value::String(t), Value::Binary(b)] => Some((t.as_str()?.to_string(), b.len())),
            _ => None,
        },
        _ => None,
    }
}

/// Whether a value holds an envelope LangGraph's `EncryptedSerializer` wrote (shown opaque);
/// its cipher names, for a note.
pub fn encrypted_ciphers(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Ext(code, data) if *code == ENCRYPTED_PSEUDO_EXT => {
            if let Some((ty, _)) = encrypted_parts(data) {
                if !out.contains(&ty) {
                    out.push(ty);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| encrypted_ciphers(x, out)),
        Value::Map(m) => m.iter().for_each(|(k, x)| {
            encrypted_ciphers(k, out);
            encrypted_ciphers(x, out)
        }),
        _ => {}
    }
}

impl Typed {
    /// The JSON view of an envelope.
    pub fn view(&self, opts: ViewOptions) -> Json {
        match self {
            Typed::Null => Json::Null,
            Typed::Bytes(b) => json!({"__type__": "bytes", "hex": hex_of(b, opts)}),
            Typed::ByteArray(b) => json!({"__type__": "bytearray", "hex": hex_of(b, opts)}),
            Typed::Pickle(b) => json!({"__type__": "pickle", "hex": hex_of(b, opts)}),
            Typed::Value(v) => to_view(v, opts),
        }
    }
}

/// Plain JSON -> msgpack value (what `json.loads` then `ormsgpack.packb` would give): integers
/// stay integers, other numbers are float64, objects are str-keyed maps in order.
pub fn from_plain_json(j: &Json) -> Result<Value, ValueError> {
    Ok(match j {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Boolean(*b),
        Json::Number(n) => {
            if let Some(u) = n.as_u64() {
                Value::from(u)
            } else if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(f) = n.as_f64() {
                // serde_json reads integer literals beyond 64 bits as floats (LangGraph would
                // refuse them: "Integer exceeds 64-bit range"); they arrive here as floats.
                Value::F64(f)
            } else {
                return Err(ValueError::Encode(format!("number {n}")));
            }
        }
        Json::String(s) => Value::from(s.as_str()),
        Json::Array(a) => Value::Array(a.iter().map(from_plain_json).collect::<Result<_, _>>()?),
        Json::Object(o) => Value::Map(
            o.iter()
                .map(|(k, v)| Ok((Value::from(k.as_str()), from_plain_json(v)?)))
                .collect::<Result<_, ValueError>>()?,
        ),
    })
}

/// The inverse of [`to_view`] for values a user can type as JSON: plain JSON, plus the tagged
/// forms that have one unambiguous msgpack encoding (`bytes`, non-finite `float`, `map` with
/// non-string keys, `datetime.datetime` as LangGraph's ext 3 `fromisoformat`). Other tagged
/// objects stay plain maps.
pub fn from_view(j: &Json) -> Result<Value, ValueError> {
    if let Json::Object(o) = j {
        match o.get("__type__").and_then(Json::as_str) {
            Some("bytes") if o.len() == 2 => {
                if let Some(hex) = o.get("hex").and_then(Json::as_str) {
                    return unhex(hex).map(Value::Binary);
                }
            }
            Some("float") if o.len() == 2 => match o.get("value").and_then(Json::as_str) {
                Some("nan") => return Ok(Value::F64(f64::NAN)),
                Some("inf") => return Ok(Value::F64(f64::INFINITY)),
                Some("-inf") => return Ok(Value::F64(f64::NEG_INFINITY)),
                _ => {}
            },
            Some("datetime.datetime") if o.len() == 2 => {
                if let Some(iso) = o.get("value").and_then(Json::as_str) {
                    return Ok(super::ext::constructor(
                        super::ext::EXT_METHOD_SINGLE_ARG,
                        "datetime",
                        "datetime",
                        Value::from(iso),
                        Some("fromisoformat"),
                    ));
                }
            }
            Some("map") if o.len() == 2 => {
                if let Some(Json::Array(entries)) = o.get("entries") {
                    let mut m = Vec::new();
                    for e in entries {
                        match e {
                            Json::Array(kv) if kv.len() == 2 => {
                                m.push((from_view(&kv[0])?, from_view(&kv[1])?))
                            }
                            _ => {
                                return Err(ValueError::Encode(
                                    "map entries must be [key, value] pairs".into(),
                                ))
                            }
                        }
                    }
                    return Ok(Value::Map(m));
                }
            }
            _ => {}
        }
        return Ok(Value::Map(
            o.iter()
                .map(|(k, v)| Ok((Value::from(k.as_str()), from_view(v)?)))
                .collect::<Result<_, ValueError>>()?,
        ));
    }
    match j {
        Json::Array(a) => Ok(Value::Array(
            a.iter().map(from_view).collect::<Result<_, _>>()?,
        )),
        other => from_plain_json(other),
    }
}

fn unhex(s: &str) -> Result<Vec<u8>, ValueError> {
    if !s.len().is_multiple_of(2) || !s.bytes().all(|c| c.is_ascii_hexdigit()) {
        return Err(ValueError::Encode(format!("not a hex string: {s:?}")));
    }
    Ok((0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect())
}

/// A `type='json'` blob as `json.loads(data, object_hook=reviver)` reads it: plain JSON, except
/// that `{"lc": 2, "type": "constructor", "id": [...module, name], "args": [...]}` objects of the
/// safe types with a one-argument msgpack form (`uuid.UUID`, `decimal.Decimal`, `builtins.set`,
/// `builtins.frozenset`, `collections.deque`) become the extension value LangGraph's msgpack would
/// hold for the revived object. Other envelopes stay plain maps (LangGraph leaves unsafe ones as
/// is; the remaining safe ones are listed as a known gap in the README).
pub fn from_json_envelope(j: &Json) -> Result<Value, ValueError> {
    match j {
        Json::Array(a) => Ok(Value::Array(
            a.iter().map(from_json_envelope).collect::<Result<_, _>>()?,
        )),
        Json::Object(o) => {
            if let Some(v) = revive_lc2(o) {
                return Ok(v);
            }
            Ok(Value::Map(
                o.iter()
                    .map(|(k, v)| Ok((Value::from(k.as_str()), from_json_envelope(v)?)))
                    .collect::<Result<_, ValueError>>()?,
            ))
        }
        other => from_plain_json(other),
    }
}

fn revive_lc2(o: &Map<String, Json>) -> Option<Value> {
    if o.get("lc") != Some(&Json::from(2))
        || o.get("type").and_then(Json::as_str) != Some("constructor")
    {
        return None;
    }
    let id: Vec<&str> = o
        .get("id")?
        .as_array()?
        .iter()
        .map(Json::as_str)
        .collect::<Option<_>>()?;
    let (name, module) = id.split_last()?;
    let module = module.join(".");
    let args = o.get("args").and_then(Json::as_array);
    if o.get("kwargs").is_some_and(|k| !k.is_null()) {
        return None;
    }
    let arg = args.filter(|a| a.len() == 1).map(|a| &a[0])?;
    let payload = match (module.as_str(), *name) {
        ("uuid", "UUID") => {
            let u = uuid::Uuid::try_parse(arg.as_str()?).ok()?;
            Value::from(u.simple().to_string())
        }
        ("decimal", "Decimal") => Value::from(match arg {
            Json::String(s) => s.clone(),
            Json::Number(n) => n.to_string(),
            _ => return None,
        }),
        ("builtins", "set" | "frozenset") | ("collections", "deque") => {
            let items = arg.as_array()?;
            Value::Array(
                items
                    .iter()
                    .map(from_json_envelope)
                    .collect::<Result<_, _>>()
                    .ok()?,
            )
        }
        _ => return None,
    };
    Some(super::ext::constructor(0, &module, name, payload, None))
}

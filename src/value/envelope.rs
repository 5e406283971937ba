//! The typed envelope `(type, bytes)` stored in `checkpoints.type/checkpoint` and
//! `writes.type/value` (spec §12.1).

use super::ValueError;
use rmpv::Value;

/// Depth budget when decoding msgpack (rmpv spends two units per container level, so about 254
/// nested levels, as deep as ormsgpack itself writes); deeper input is reported as corrupt instead of exhausting the stack.
pub const MAX_DEPTH: usize = 512;

/// A decoded envelope. `Msgpack` holds the structural value (ext types kept as
/// [`Value::Ext`]); see [`super::to_view`] for the JSON view.
#[derive(Debug, Clone, PartialEq)]
pub enum Typed {
    /// `type='null'`: Python `None`.
    Null,
    /// `type='bytes'`.
    Bytes(Vec<u8>),
    /// `type='bytearray'`.
    ByteArray(Vec<u8>),
    /// `type='msgpack'`, or `type='json'` converted to the same structural form.
    Value(Value),
    /// `type='pickle'`: never unpickled, kept opaque.
    Pickle(Vec<u8>),
}

/// Whether a stored `type` is an envelope LangGraph's `EncryptedSerializer` wrote:
/// `<serializer>+<cipher>` (a `null+…` one holds no bytes: it is None whatever the key).
pub fn is_encrypted_type(type_: &str) -> bool {
    !type_.starts_with("null+")
        && type_
            .split_once('+')
            .is_some_and(|(s, c)| !s.is_empty() && !c.is_empty())
}

impl Typed {
    /// Decode `(type, bytes)` the way `JsonPlusSerializer.loads_typed` accepts them, without
    /// reviving any Python object.
    pub fn decode(type_: &str, bytes: &[u8]) -> Result<Typed, ValueError> {
        match type_ {
            "null" => Ok(Typed::Null),
            "bytes" => Ok(Typed::Bytes(bytes.to_vec())),
            "bytearray" => Ok(Typed::ByteArray(bytes.to_vec())),
            "pickle" => Ok(Typed::Pickle(bytes.to_vec())),
            "msgpack" => decode_msgpack(bytes).map(Typed::Value),
            "json" => {
                let j: serde_json::Value =
                    serde_json::from_slice(bytes).map_err(|e| ValueError::Json(e.to_string()))?;
                Ok(Typed::Value(super::view::from_json_envelope(&j)?))
            }
            // EncryptedSerializer: `<serializer>+<cipher>` over the ciphertext; no key, so opaque
            // (a `null` envelope has no bytes to encrypt: it is None whatever the key)
            other if other.starts_with("null+") => Ok(Typed::Null),
            other if is_encrypted_type(other) => {
                let payload = Value::Array(vec![Value::from(other), Value::Binary(bytes.to_vec())]);
                Ok(Typed::Value(Value::Ext(
                    crate::value::ext::ENCRYPTED_PSEUDO_EXT,
                    encode_msgpack(&payload),
                )))
            }
            other => Err(ValueError::UnknownType(other.to_string())),
        }
    }

    /// Encode the way `JsonPlusSerializer.dumps_typed` does: `None` -> `("null", b"")`,
    /// everything else msgpack.
    pub fn encode(&self) -> (&'static str, Vec<u8>) {
        match self {
            Typed::Null => ("null", Vec::new()),
            Typed::Bytes(b) => ("bytes", b.clone()),
            Typed::ByteArray(b) => ("bytearray", b.clone()),
            Typed::Pickle(b) => ("pickle", b.clone()),
            Typed::Value(Value::Nil) => ("null", Vec::new()),
            Typed::Value(v) => ("msgpack", encode_msgpack(v)),
        }
    }

    /// The value as a msgpack value: `None` is nil, top-level bytes become bin.
    pub fn into_value(self) -> Value {
        match self {
            Typed::Null => Value::Nil,
            Typed::Bytes(b) | Typed::ByteArray(b) => Value::Binary(b),
            Typed::Pickle(b) => Value::Ext(crate::value::ext::PICKLE_PSEUDO_EXT, b),
            Typed::Value(v) => v,
        }
    }

    pub fn as_value(&self) -> Option<&Value> {
        match self {
            Typed::Value(v) => Some(v),
            _ => None,
        }
    }
}

/// Decode one msgpack value that must span the whole buffer. The reserved marker 0xc1 is an
/// error, as in ormsgpack (`ValueError: invalid type Reserved`); rmpv alone would read it as nil.
pub fn decode_msgpack(bytes: &[u8]) -> Result<Value, ValueError> {
    if bytes.contains(&0xc1) {
        if let Some(at) = reserved_marker(bytes) {
            return Err(ValueError::Msgpack(format!(
                "reserved marker 0xc1 at byte {at} (LangGraph: ValueError('invalid type Reserved'))"
            )));
        }
    }
    let mut rd = bytes;
    let v = rmpv::decode::read_value_with_max_depth(&mut rd, MAX_DEPTH)
        .map_err(|e| ValueError::Msgpack(e.to_string()))?;
    if !rd.is_empty() {
        return Err(ValueError::Trailing(rd.len()));
    }
    Ok(v)
}

/// Offset of a 0xc1 marker where a value starts (not inside a string, binary or ext payload),
/// walking the markers without building anything. Truncated input ends the walk (the decoder
/// reports it).
fn reserved_marker(bytes: &[u8]) -> Option<usize> {
    fn be(b: &[u8], at: usize, n: usize) -> Option<usize> {
        let s = b.get(at..at + n)?;
        Some(s.iter().fold(0usize, |a, &x| (a << 8) | x as usize))
    }
    let mut at = 0usize;
    // values still to read (containers add their items)
    let mut todo: usize = 1;
    while todo > 0 {
        todo -= 1;
        let m = *bytes.get(at)?;
        at += 1;
        let (skip, items) = match m {
            0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => (0, 0),
            0xc1 => return Some(at - 1),
            0x80..=0x8f => (0, 2 * (m & 0x0f) as usize),
            0x90..=0x9f => (0, (m & 0x0f) as usize),
            0xa0..=0xbf => ((m & 0x1f) as usize, 0),
            0xc4 | 0xd9 => (1 + be(bytes, at, 1)?, 0),
            0xc5 | 0xda => (2 + be(bytes, at, 2)?, 0),
            0xc6 | 0xdb => (4 + be(bytes, at, 4)?, 0),
            0xc7 => (2 + be(bytes, at, 1)?, 0),
            0xc8 => (3 + be(bytes, at, 2)?, 0),
            0xc9 => (5 + be(bytes, at, 4)?, 0),
            0xca | 0xce | 0xd2 => (4, 0),
            0xcb | 0xcf | 0xd3 => (8, 0),
            0xcc | 0xd0 => (1, 0),
            0xcd | 0xd1 => (2, 0),
            0xd4 => (2, 0),
            0xd5 => (3, 0),
            0xd6 => (5, 0),
            0xd7 => (9, 0),
            0xd8 => (17, 0),
            0xdc => (2, be(bytes, at, 2)?),
            0xdd => (4, be(bytes, at, 4)?),
            0xde => (2, 2 * be(bytes, at, 2)?),
            0xdf => (4, 2 * be(bytes, at, 4)?),
        };
        at = at.checked_add(skip)?;
        todo = todo.checked_add(items)?;
        if at > bytes.len() {
            return None;
        }
    }
    None
}

/// Encode with the smallest standard encodings, as ormsgpack does (ints by magnitude, floats
/// always float64 when the value holds an F64, fixext framing when the length allows).
pub fn encode_msgpack(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    rmpv::encode::write_value(&mut out, v).expect("writing to a Vec cannot fail");
    out
}

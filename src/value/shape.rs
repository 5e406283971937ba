//! The shape of a msgpack checkpoint without its values: which channels hold a value, how many
//! bytes each value takes, which are `_DeltaSnapshot`s, and the small maps around them (`v`,
//! `channel_versions`). A walk over markers and length prefixes that builds no value: strings,
//! binaries and extension payloads are skipped by their length, containers item by item (for
//! `superstep du`, which sizes gigabytes of checkpoints this way).

use super::capped::{kind, Kind};
use super::ext::EXT_DELTA_SNAPSHOT;
use super::ValueError;
use rmp::decode::RmpRead;
use rmp::Marker;
use std::io::{Read, Seek, SeekFrom};

/// One `channel_values` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueSpan {
    pub key: String,
    /// The value's encoded length (what LangGraph's serializer wrote for it).
    pub bytes: u64,
    /// A DeltaChannel's `_DeltaSnapshot` (msgpack ext 7).
    pub delta_snapshot: bool,
}

/// See the module documentation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckpointShape {
    /// The checkpoint format (`v`).
    pub v: Option<i64>,
    pub values: Vec<ValueSpan>,
    /// `channel_versions`, each version as text (`str(version)` for a number).
    pub versions: Vec<(String, String)>,
}

/// Keys longer than this are not channel names a saver wrote: skipped, not read.
const MAX_KEY: u64 = 64 * 1024;

fn err(e: impl std::fmt::Display) -> ValueError {
    ValueError::Msgpack(e.to_string())
}

fn marker<R: Read>(rd: &mut R) -> Result<Marker, ValueError> {
    rmp::decode::read_marker(rd).map_err(|e| err(format!("{e:?}")))
}

/// The length a marker announces (items of a container, bytes of a string, binary or
/// extension payload), reading its length prefix.
fn length<R: Read>(m: Marker, rd: &mut R) -> Result<u64, ValueError> {
    Ok(match m {
        Marker::FixStr(n) | Marker::FixArray(n) | Marker::FixMap(n) => u64::from(n),
        Marker::Str8 | Marker::Bin8 | Marker::Ext8 => u64::from(rd.read_data_u8().map_err(err)?),
        Marker::Str16 | Marker::Bin16 | Marker::Array16 | Marker::Map16 | Marker::Ext16 => {
            u64::from(rd.read_data_u16().map_err(err)?)
        }
        Marker::Str32 | Marker::Bin32 | Marker::Array32 | Marker::Map32 | Marker::Ext32 => {
            u64::from(rd.read_data_u32().map_err(err)?)
        }
        Marker::FixExt1 => 1,
        Marker::FixExt2 => 2,
        Marker::FixExt4 => 4,
        Marker::FixExt8 => 8,
        Marker::FixExt16 => 16,
        _ => 0,
    })
}

fn forward<R: Seek>(rd: &mut R, n: u64) -> Result<(), ValueError> {
    let n = i64::try_from(n).map_err(|_| err("length out of range"))?;
    rd.seek(SeekFrom::Current(n)).map(|_| ()).map_err(err)
}

/// Skip the value whose marker `first` was just read; returns whether it was a
/// `_DeltaSnapshot`. Containers are walked with a count of values still to skip, so nesting
/// costs no stack.
fn skip_rest<R: Read + Seek>(rd: &mut R, first: Marker) -> Result<bool, ValueError> {
    let mut pending: u64 = 0;
    let mut m = first;
    let mut snapshot = false;
    let mut top = true;
    loop {
        match kind(m)? {
            Kind::Inline => {}
            Kind::Fixed(n) => forward(rd, n)?,
            Kind::Str | Kind::Bin => {
                let n = length(m, rd)?;
                forward(rd, n)?;
            }
            Kind::Array => pending += length(m, rd)?,
            Kind::Map => pending += 2 * length(m, rd)?,
            Kind::Ext => {
                let n = length(m, rd)?;
                let code = rd.read_data_i8().map_err(err)?;
                snapshot |= top && code == EXT_DELTA_SNAPSHOT;
                forward(rd, n)?;
            }
        }
        top = false;
        if pending == 0 {
            return Ok(snapshot);
        }
        pending -= 1;
        m = marker(rd)?;
    }
}

/// A string key, or `None` (skipped) for another type or an implausibly long one.
fn key<R: Read + Seek>(rd: &mut R) -> Result<Option<String>, ValueError> {
    let m = marker(rd)?;
    if !matches!(kind(m)?, Kind::Str) {
        skip_rest(rd, m)?;
        return Ok(None);
    }
    let n = length(m, rd)?;
    if n > MAX_KEY {
        forward(rd, n)?;
        return Ok(None);
    }
    let mut b = vec![0u8; n as usize];
    rd.read_exact(&mut b).map_err(err)?;
    Ok(Some(String::from_utf8_lossy(&b).into_owned()))
}

/// A small scalar as text (a version: int, float or string); `None` for anything else (skipped).
fn scalar<R: Read + Seek>(rd: &mut R) -> Result<Option<String>, ValueError> {
    let m = marker(rd)?;
    Ok(Some(match m {
        Marker::FixPos(n) => n.to_string(),
        Marker::FixNeg(n) => n.to_string(),
        Marker::U8 => rd.read_data_u8().map_err(err)?.to_string(),
        Marker::U16 => rd.read_data_u16().map_err(err)?.to_string(),
        Marker::U32 => rd.read_data_u32().map_err(err)?.to_string(),
        Marker::U64 => rd.read_data_u64().map_err(err)?.to_string(),
        Marker::I8 => rd.read_data_i8().map_err(err)?.to_string(),
        Marker::I16 => rd.read_data_i16().map_err(err)?.to_string(),
        Marker::I32 => rd.read_data_i32().map_err(err)?.to_string(),
        Marker::I64 => rd.read_data_i64().map_err(err)?.to_string(),
        Marker::F32 => rd.read_data_f32().map_err(err)?.to_string(),
        Marker::F64 => {
            let f = rd.read_data_f64().map_err(err)?;
            // Python's str() of a float always has a point or an exponent
            if f.fract() == 0.0 && f.abs() < 1e16 {
                format!("{f:.1}")
            } else {
                f.to_string()
            }
        }
        Marker::FixStr(_) | Marker::Str8 | Marker::Str16 | Marker::Str32 => {
            let n = length(m, rd)?;
            if n > MAX_KEY {
                forward(rd, n)?;
                return Ok(None);
            }
            let mut b = vec![0u8; n as usize];
            rd.read_exact(&mut b).map_err(err)?;
            String::from_utf8_lossy(&b).into_owned()
        }
        other => {
            skip_rest(rd, other)?;
            return Ok(None);
        }
    }))
}

/// The length of a map at the reader, or `None` (the value skipped) when it is not a map.
fn map_len<R: Read + Seek>(rd: &mut R) -> Result<Option<u64>, ValueError> {
    let m = marker(rd)?;
    if matches!(kind(m)?, Kind::Map) {
        return length(m, rd).map(Some);
    }
    skip_rest(rd, m)?;
    Ok(None)
}

/// The shape of the msgpack checkpoint map at the reader's position, `len` bytes long (a skip
/// past the end is an error, not a short read).
pub fn checkpoint_shape<R: Read + Seek>(
    rd: &mut R,
    len: u64,
) -> Result<CheckpointShape, ValueError> {
    let start = rd.stream_position().map_err(err)?;
    let shape = walk(rd)?;
    let end = rd.stream_position().map_err(err)?;
    if end - start > len {
        return Err(err(format!(
            "the checkpoint ends after {len} bytes, inside a value that needs {}",
            end - start
        )));
    }
    Ok(shape)
}

fn walk<R: Read + Seek>(rd: &mut R) -> Result<CheckpointShape, ValueError> {
    let mut shape = CheckpointShape::default();
    let Some(n) = map_len(rd)? else {
        return Err(err("the checkpoint is not a map"));
    };
    for _ in 0..n {
        match key(rd)?.as_deref() {
            Some("v") => shape.v = scalar(rd)?.and_then(|s| s.parse().ok()),
            Some("channel_values") => {
                for _ in 0..map_len(rd)?.unwrap_or(0) {
                    let k = key(rd)?;
                    let start = rd.stream_position().map_err(err)?;
                    let m = marker(rd)?;
                    let delta_snapshot = skip_rest(rd, m)?;
                    let bytes = rd.stream_position().map_err(err)? - start;
                    if let Some(key) = k {
                        shape.values.push(ValueSpan {
                            key,
                            bytes,
                            delta_snapshot,
                        });
                    }
                }
            }
            Some("channel_versions") => {
                for _ in 0..map_len(rd)?.unwrap_or(0) {
                    let k = key(rd)?;
                    if let (Some(k), Some(v)) = (k, scalar(rd)?) {
                        shape.versions.push((k, v));
                    }
                }
            }
            _ => {
                let m = marker(rd)?;
                skip_rest(rd, m)?;
            }
        }
    }
    Ok(shape)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::encode_msgpack;
    use rmpv::Value;
    use std::io::Cursor;

    fn s(x: &str) -> Value {
        Value::from(x)
    }

    #[test]
    fn values_are_measured_by_their_encoded_length_and_snapshots_told_apart() {
        let messages = Value::Array(vec![
            Value::Ext(
                5,
                encode_msgpack(&Value::Array(vec![s("m"), s("AIMessage")])),
            ),
            Value::Map(vec![(s("k"), Value::Binary(vec![7; 300]))]),
        ]);
        let snap = Value::Ext(EXT_DELTA_SNAPSHOT, encode_msgpack(&Value::Array(vec![])));
        let cp = Value::Map(vec![
            (s("v"), Value::from(4)),
            (s("ts"), s("2025")),
            (
                s("channel_values"),
                Value::Map(vec![
                    (s("messages"), messages.clone()),
                    (s("log"), snap.clone()),
                    (s("n"), Value::from(70000)),
                ]),
            ),
            (
                s("channel_versions"),
                Value::Map(vec![
                    (s("messages"), s("00000000000000000000000000000002.0.5")),
                    (s("n"), Value::from(3)),
                    (s("f"), Value::F64(2.0)),
                ]),
            ),
            (s("versions_seen"), Value::Map(vec![])),
        ]);
        let bytes = encode_msgpack(&cp);
        let len = bytes.len() as u64;
        let mut rd = Cursor::new(bytes);
        let shape = checkpoint_shape(&mut rd, len).unwrap();
        assert_eq!(shape.v, Some(4));
        let span = |v: &Value| encode_msgpack(v).len() as u64;
        assert_eq!(
            shape.values,
            vec![
                ValueSpan {
                    key: "messages".into(),
                    bytes: span(&messages),
                    delta_snapshot: false
                },
                ValueSpan {
                    key: "log".into(),
                    bytes: span(&snap),
                    delta_snapshot: true
                },
                ValueSpan {
                    key: "n".into(),
                    bytes: span(&Value::from(70000)),
                    delta_snapshot: false
                },
            ]
        );
        assert_eq!(
            shape.versions,
            vec![
                (
                    "messages".into(),
                    "00000000000000000000000000000002.0.5".into()
                ),
                ("n".into(), "3".into()),
                ("f".into(), "2.0".into()),
            ]
        );
    }

    #[test]
    fn a_truncated_checkpoint_is_an_error() {
        let cp = Value::Map(vec![(
            s("channel_values"),
            Value::Map(vec![(s("a"), Value::Binary(vec![1; 100]))]),
        )]);
        let bytes = encode_msgpack(&cp);
        // cut before a marker: the read fails
        let mut rd = Cursor::new(bytes[..20].to_vec());
        assert!(checkpoint_shape(&mut rd, 20).is_err());
        // cut inside a binary: a cursor seeks past its end without complaint, the length says
        let mut rd = Cursor::new(bytes[..24].to_vec());
        let r = checkpoint_shape(&mut rd, 24);
        assert!(r.unwrap_err().to_string().contains("ends after 24 bytes"));
    }
}

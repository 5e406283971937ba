//! A bounded preview of a msgpack value too large to load (a 500 MB string in a state channel):
//! decoded from a `Read + Seek` stream (SQLite's incremental blob I/O), with long strings and
//! byte runs cut, long arrays and maps cut, and whatever was cut *skipped by seeking*, so memory
//! stays bounded whatever the blob's size. Built on rmp's marker-level reader; the result is an
//! ordinary [`rmpv::Value`] (ext payloads, which are nested msgpack, are previewed the same way
//! and re-encoded), plus how much was left out.

use super::{encode_msgpack, ValueError, MAX_DEPTH};
use rmp::decode::RmpRead;
use rmp::Marker;
use rmpv::Value;
use std::io::{Read, Seek, SeekFrom};

/// What a preview keeps.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Longest string / byte run kept (bytes).
    pub max_str: usize,
    /// Most items kept per array or map.
    pub max_items: usize,
    /// Total items decoded before everything further is skipped.
    pub max_total_items: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_str: 64 * 1024,
            max_items: 1000,
            max_total_items: 100_000,
        }
    }
}

/// A preview and what it left out.
#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    pub value: Value,
    /// Bytes of strings/byte runs not loaded.
    pub bytes_skipped: u64,
    /// Array/map items not loaded.
    pub items_skipped: u64,
}

impl Preview {
    pub fn truncated(&self) -> bool {
        self.bytes_skipped > 0 || self.items_skipped > 0
    }
}

/// The text appended to a cut string.
pub fn cut_marker(total: u64) -> String {
    format!("… [cut by superstep: {total} bytes in all]")
}

struct Decoder<'a, R> {
    rd: &'a mut R,
    limits: Limits,
    items: usize,
    bytes_skipped: u64,
    items_skipped: u64,
}

fn err<E: std::fmt::Display>(e: E) -> ValueError {
    ValueError::Msgpack(e.to_string())
}

/// Preview the msgpack value at the reader's position.
pub fn preview<R: Read + Seek>(rd: &mut R, limits: Limits) -> Result<Preview, ValueError> {
    let mut d = Decoder {
        rd,
        limits,
        items: 0,
        bytes_skipped: 0,
        items_skipped: 0,
    };
    let value = d.value(0)?;
    Ok(Preview {
        value,
        bytes_skipped: d.bytes_skipped,
        items_skipped: d.items_skipped,
    })
}

impl<R: Read + Seek> Decoder<'_, R> {
    fn skip_bytes(&mut self, n: u64) -> Result<(), ValueError> {
        if n > 0 {
            let n = i64::try_from(n).map_err(err)?;
            self.rd.seek(SeekFrom::Current(n)).map_err(err)?;
        }
        Ok(())
    }

    fn read_bytes(&mut self, n: usize) -> Result<Vec<u8>, ValueError> {
        let mut buf = vec![0u8; n];
        self.rd.read_exact(&mut buf).map_err(err)?;
        Ok(buf)
    }

    /// A length-prefixed run: keep up to `max_str` bytes, seek past the rest.
    fn run(&mut self, len: u32) -> Result<(Vec<u8>, u64), ValueError> {
        let keep = (len as usize).min(self.limits.max_str);
        let buf = self.read_bytes(keep)?;
        let rest = u64::from(len) - keep as u64;
        self.skip_bytes(rest)?;
        self.bytes_skipped += rest;
        Ok((buf, rest))
    }

    fn string(&mut self, len: u32) -> Result<Value, ValueError> {
        let (mut buf, rest) = self.run(len)?;
        if rest == 0 {
            // the same Utf8String rmpv builds (invalid UTF-8 kept as bytes)
            let mut framed = Vec::with_capacity(buf.len() + 5);
            rmp::encode::write_str_len(&mut framed, len).map_err(err)?;
            framed.extend_from_slice(&buf);
            return rmpv::decode::read_value(&mut framed.as_slice()).map_err(err);
        }
        // cut at a character boundary, then say so in the text itself
        if let Err(e) = std::str::from_utf8(&buf) {
            if e.error_len().is_none() {
                buf.truncate(e.valid_up_to());
            }
        }
        let mut s = String::from_utf8_lossy(&buf).into_owned();
        s.push_str(&cut_marker(u64::from(len)));
        Ok(Value::from(s))
    }

    fn len_of(&mut self, m: Marker) -> Result<u32, ValueError> {
        Ok(match m {
            Marker::FixStr(n) | Marker::FixArray(n) | Marker::FixMap(n) => u32::from(n),
            Marker::Str8 | Marker::Bin8 => u32::from(self.rd.read_data_u8().map_err(err)?),
            Marker::Str16 | Marker::Bin16 | Marker::Array16 | Marker::Map16 => {
                u32::from(self.rd.read_data_u16().map_err(err)?)
            }
            Marker::Str32 | Marker::Bin32 | Marker::Array32 | Marker::Map32 => {
                self.rd.read_data_u32().map_err(err)?
            }
            _ => 0,
        })
    }

    fn value(&mut self, depth: usize) -> Result<Value, ValueError> {
        if depth * 2 > MAX_DEPTH {
            return Err(ValueError::Msgpack("nesting too deep".into()));
        }
        let m = rmp::decode::read_marker(self.rd).map_err(|e| err(e.0))?;
        Ok(match kind(m)? {
            Kind::Inline | Kind::Fixed(_) => self.scalar(m)?,
            Kind::Str => {
                let len = self.len_of(m)?;
                self.string(len)?
            }
            Kind::Bin => {
                let len = self.len_of(m)?;
                Value::Binary(self.run(len)?.0)
            }
            Kind::Array => {
                let len = self.len_of(m)?;
                let mut out = Vec::new();
                for i in 0..len {
                    if self.keep(i) {
                        out.push(self.value(depth + 1)?);
                    } else {
                        self.skip(depth + 1)?;
                        self.items_skipped += 1;
                    }
                }
                if out.len() < len as usize {
                    out.push(Value::from(format!(
                        "… [cut by superstep: {} more items]",
                        len as usize - out.len()
                    )));
                }
                Value::Array(out)
            }
            Kind::Map => {
                let len = self.len_of(m)?;
                let mut out = Vec::new();
                for i in 0..len {
                    if self.keep(i) {
                        let k = self.value(depth + 1)?;
                        let v = self.value(depth + 1)?;
                        out.push((k, v));
                    } else {
                        self.skip(depth + 1)?;
                        self.skip(depth + 1)?;
                        self.items_skipped += 1;
                    }
                }
                if out.len() < len as usize {
                    out.push((
                        Value::from("…"),
                        Value::from(format!(
                            "[cut by superstep: {} more entries]",
                            len as usize - out.len()
                        )),
                    ));
                }
                Value::Map(out)
            }
            Kind::Ext => {
                let len = self.ext_len(m)?;
                let ty = self.rd.read_data_i8().map_err(err)?;
                if len as usize <= self.limits.max_str {
                    Value::Ext(ty, self.read_bytes(len as usize)?)
                } else {
                    // LangGraph's ext payloads are msgpack themselves: preview that, re-encode it
                    let start = self.rd.stream_position().map_err(err)?;
                    let inner = self.value(depth + 1)?;
                    let end = start + u64::from(len);
                    self.rd.seek(SeekFrom::Start(end)).map_err(err)?;
                    Value::Ext(ty, encode_msgpack(&inner))
                }
            }
        })
    }

    /// A nil, bool, int or float (`kind` Inline or Fixed) read after its marker.
    fn scalar(&mut self, m: Marker) -> Result<Value, ValueError> {
        let rd = &mut *self.rd;
        Ok(match m {
            Marker::Null => Value::Nil,
            Marker::True => Value::Boolean(true),
            Marker::False => Value::Boolean(false),
            Marker::FixPos(n) => Value::from(n),
            Marker::FixNeg(n) => Value::from(n),
            Marker::U8 => Value::from(rd.read_data_u8().map_err(err)?),
            Marker::U16 => Value::from(rd.read_data_u16().map_err(err)?),
            Marker::U32 => Value::from(rd.read_data_u32().map_err(err)?),
            Marker::U64 => Value::from(rd.read_data_u64().map_err(err)?),
            Marker::I8 => Value::from(rd.read_data_i8().map_err(err)?),
            Marker::I16 => Value::from(rd.read_data_i16().map_err(err)?),
            Marker::I32 => Value::from(rd.read_data_i32().map_err(err)?),
            Marker::I64 => Value::from(rd.read_data_i64().map_err(err)?),
            Marker::F32 => Value::F32(rd.read_data_f32().map_err(err)?),
            Marker::F64 => Value::F64(rd.read_data_f64().map_err(err)?),
            other => return Err(ValueError::Msgpack(format!("{other:?} is not a scalar"))),
        })
    }

    fn ext_len(&mut self, m: Marker) -> Result<u32, ValueError> {
        Ok(match m {
            Marker::FixExt1 => 1,
            Marker::FixExt2 => 2,
            Marker::FixExt4 => 4,
            Marker::FixExt8 => 8,
            Marker::FixExt16 => 16,
            Marker::Ext8 => u32::from(self.rd.read_data_u8().map_err(err)?),
            Marker::Ext16 => u32::from(self.rd.read_data_u16().map_err(err)?),
            _ => self.rd.read_data_u32().map_err(err)?,
        })
    }

    /// Whether item `i` of a container is decoded (or skipped).
    fn keep(&mut self, i: u32) -> bool {
        if (i as usize) < self.limits.max_items && self.items < self.limits.max_total_items {
            self.items += 1;
            true
        } else {
            false
        }
    }

    /// Seek past one value without building it.
    fn skip(&mut self, depth: usize) -> Result<(), ValueError> {
        if depth * 2 > MAX_DEPTH {
            return Err(ValueError::Msgpack("nesting too deep".into()));
        }
        let m = rmp::decode::read_marker(self.rd).map_err(|e| err(e.0))?;
        match kind(m)? {
            Kind::Inline => {}
            Kind::Fixed(n) => self.skip_bytes(n)?,
            Kind::Str | Kind::Bin => {
                let len = self.len_of(m)?;
                self.skip_bytes(u64::from(len))?;
                self.bytes_skipped += u64::from(len);
            }
            Kind::Array => {
                for _ in 0..self.len_of(m)? {
                    self.skip(depth + 1)?;
                }
            }
            Kind::Map => {
                for _ in 0..self.len_of(m)? {
                    self.skip(depth + 1)?;
                    self.skip(depth + 1)?;
                }
            }
            Kind::Ext => {
                let len = self.ext_len(m)?;
                self.skip_bytes(1 + u64::from(len))?;
            }
        }
        Ok(())
    }
}

/// What follows a marker: the grouping both `value` and `skip` dispatch on.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    /// nil, true, false, fixints: nothing follows
    Inline,
    /// an int or float of this many bytes
    Fixed(u64),
    Str,
    Bin,
    Array,
    Map,
    Ext,
}

pub(crate) fn kind(m: Marker) -> Result<Kind, ValueError> {
    Ok(match m {
        Marker::Null | Marker::True | Marker::False | Marker::FixPos(_) | Marker::FixNeg(_) => {
            Kind::Inline
        }
        Marker::U8 | Marker::I8 => Kind::Fixed(1),
        Marker::U16 | Marker::I16 => Kind::Fixed(2),
        Marker::U32 | Marker::I32 | Marker::F32 => Kind::Fixed(4),
        Marker::U64 | Marker::I64 | Marker::F64 => Kind::Fixed(8),
        Marker::FixStr(_) | Marker::Str8 | Marker::Str16 | Marker::Str32 => Kind::Str,
        Marker::Bin8 | Marker::Bin16 | Marker::Bin32 => Kind::Bin,
        Marker::FixArray(_) | Marker::Array16 | Marker::Array32 => Kind::Array,
        Marker::FixMap(_) | Marker::Map16 | Marker::Map32 => Kind::Map,
        Marker::FixExt1
        | Marker::FixExt2
        | Marker::FixExt4
        | Marker::FixExt8
        | Marker::FixExt16
        | Marker::Ext8
        | Marker::Ext16
        | Marker::Ext32 => Kind::Ext,
        Marker::Reserved => return Err(ValueError::Msgpack("reserved marker 0xc1".into())),
    })
}

/// A buffered reader whose relative seeks stay inside its buffer when they can. A preview's
/// skips are many small seeks, and `std::io::BufReader::seek` throws its buffer away on each:
/// through SQLite's blob I/O a 2 M-entry map over the preview threshold took 62 s (LangGraph's
/// `get_tuple` loads it whole in 2.2 s).
pub struct Window<R> {
    inner: std::io::BufReader<R>,
    pos: u64,
}

impl<R: Read + Seek> Window<R> {
    /// `inner` read from its current position, `capacity` bytes at a time.
    pub fn new(mut inner: R, capacity: usize) -> std::io::Result<Self> {
        let pos = inner.stream_position()?;
        Ok(Window {
            inner: std::io::BufReader::with_capacity(capacity, inner),
            pos,
        })
    }
}

impl<R: Read> Read for Window<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<R: Read + Seek> Seek for Window<R> {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let by = match to {
            SeekFrom::Current(n) => n,
            SeekFrom::Start(p) => i64::try_from(p)
                .ok()
                .and_then(|p| p.checked_sub(self.pos as i64))
                .ok_or_else(|| std::io::Error::other("seek out of range"))?,
            SeekFrom::End(_) => {
                self.pos = self.inner.seek(to)?;
                return Ok(self.pos);
            }
        };
        let to = self
            .pos
            .checked_add_signed(by)
            .ok_or_else(|| std::io::Error::other("seek before the start"))?;
        self.inner.seek_relative(by)?;
        self.pos = to;
        Ok(to)
    }

    fn stream_position(&mut self) -> std::io::Result<u64> {
        Ok(self.pos)
    }
}

/// How many msgpack values (containers, their items, scalars) the value at the start of
/// `bytes` holds, counting no further than `limit + 1`: a walk that builds nothing, to tell a
/// small blob that decodes into millions of values (15 MB of `None`s) from an ordinary one.
/// Malformed input stops the count; decoding it reports the fault.
pub fn count_values(bytes: &[u8], limit: u64) -> u64 {
    let mut rd = bytes;
    let mut pending: u64 = 1;
    let mut seen: u64 = 0;
    let skip = |rd: &mut &[u8], n: u64| -> bool {
        match usize::try_from(n).ok().filter(|n| *n <= rd.len()) {
            Some(n) => {
                *rd = &rd[n..];
                true
            }
            None => false,
        }
    };
    while pending > 0 && seen <= limit {
        pending -= 1;
        let Ok(m) = rmp::decode::read_marker(&mut rd) else {
            break;
        };
        seen += 1;
        let Ok(k) = kind(m) else { break };
        let len = |rd: &mut &[u8]| -> Option<u64> {
            Some(match m {
                Marker::FixStr(n) | Marker::FixArray(n) | Marker::FixMap(n) => u64::from(n),
                Marker::Str8 | Marker::Bin8 | Marker::Ext8 => u64::from(rd.read_data_u8().ok()?),
                Marker::Str16 | Marker::Bin16 | Marker::Array16 | Marker::Map16 | Marker::Ext16 => {
                    u64::from(rd.read_data_u16().ok()?)
                }
                Marker::Str32 | Marker::Bin32 | Marker::Array32 | Marker::Map32 | Marker::Ext32 => {
                    u64::from(rd.read_data_u32().ok()?)
                }
                Marker::FixExt1 => 1,
                Marker::FixExt2 => 2,
                Marker::FixExt4 => 4,
                Marker::FixExt8 => 8,
                Marker::FixExt16 => 16,
                _ => 0,
            })
        };
        let ok = match k {
            Kind::Inline => true,
            Kind::Fixed(n) => skip(&mut rd, n),
            Kind::Str | Kind::Bin => len(&mut rd).is_some_and(|n| skip(&mut rd, n)),
            Kind::Array => len(&mut rd).map(|n| pending += n).is_some(),
            Kind::Map => len(&mut rd).map(|n| pending += 2 * n).is_some(),
            // LangGraph's ext payloads (codes 0..=6) are msgpack: counted as what they hold
            Kind::Ext => match (len(&mut rd), rd.read_data_i8()) {
                (Some(_), Ok(0..=6)) => {
                    pending += 1;
                    true
                }
                (Some(n), Ok(_)) => skip(&mut rd, n),
                _ => false,
            },
        };
        if !ok {
            break;
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn pv(v: &Value, limits: Limits) -> Preview {
        let bytes = encode_msgpack(v);
        let mut c = Cursor::new(bytes.clone());
        let p = preview(&mut c, limits).unwrap();
        assert_eq!(
            c.position() as usize,
            bytes.len(),
            "the whole value was consumed"
        );
        p
    }

    #[test]
    fn small_values_come_back_unchanged() {
        let v = Value::Map(vec![
            (
                Value::from("a"),
                Value::from(vec![Value::from(1), Value::F64(2.5)]),
            ),
            (
                Value::from("b"),
                Value::Ext(5, encode_msgpack(&Value::from("x"))),
            ),
            (Value::from("c"), Value::Binary(vec![1, 2, 3])),
            (Value::from(-7), Value::Nil),
        ]);
        let p = pv(&v, Limits::default());
        assert_eq!(p.value, v);
        assert!(!p.truncated());
    }

    #[test]
    fn long_strings_arrays_and_ext_payloads_are_cut_and_skipped() {
        let big = "é".repeat(5000); // 10,000 bytes
        let v = Value::Map(vec![
            (Value::from("s"), Value::from(big.as_str())),
            (
                Value::from("l"),
                Value::from((0..50).map(Value::from).collect::<Vec<_>>()),
            ),
            (
                Value::from("m"),
                Value::Ext(
                    5,
                    encode_msgpack(&Value::from(vec![Value::from(big.as_str())])),
                ),
            ),
            (Value::from("after"), Value::from(1)),
        ]);
        let limits = Limits {
            max_str: 101,
            max_items: 10,
            max_total_items: 1000,
        };
        let p = pv(&v, limits);
        let Value::Map(m) = &p.value else { panic!() };
        let s = m[0].1.as_str().unwrap();
        assert!(s.starts_with(&"é".repeat(50)), "cut on a char boundary");
        assert!(s.ends_with("[cut by superstep: 10000 bytes in all]"), "{s}");
        let Value::Array(l) = &m[1].1 else { panic!() };
        assert_eq!(l.len(), 11);
        assert_eq!(l[10].as_str(), Some("… [cut by superstep: 40 more items]"));
        let Value::Ext(5, inner) = &m[2].1 else {
            panic!()
        };
        let inner = crate::value::decode_msgpack(inner).unwrap();
        assert!(inner[0].as_str().unwrap().ends_with("bytes in all]"));
        assert_eq!(
            m[3].1,
            Value::from(1),
            "what follows a cut value is read correctly"
        );
        assert_eq!(p.items_skipped, 40);
        assert_eq!(p.bytes_skipped, 2 * (10_000 - 101));
    }

    #[test]
    fn truncated_input_is_an_error_not_a_panic() {
        let bytes = encode_msgpack(&Value::from("abcdef"));
        let mut c = Cursor::new(bytes[..3].to_vec());
        assert!(preview(&mut c, Limits::default()).is_err());
    }

    /// A stream that counts the reads and seeks reaching it (SQLite's blob I/O, where each is a
    /// call into the B-tree).
    struct Counting {
        c: Cursor<Vec<u8>>,
        reads: usize,
        seeks: usize,
    }

    impl Read for Counting {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.reads += 1;
            self.c.read(buf)
        }
    }

    impl Seek for Counting {
        fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
            self.seeks += 1;
            self.c.seek(to)
        }
    }

    /// Issue 15 item 6: a map of 200,000 small entries (the 2 M of the report, scaled) is
    /// previewed with reads proportional to its size, not one buffer refill per skipped item
    /// (`BufReader::seek` drops its buffer: 400,000 refills of 64 KiB).
    #[test]
    fn skipping_many_small_items_reads_the_stream_once() {
        let n = 200_000;
        let v = Value::Map(
            (0..n)
                .map(|i| (Value::from(format!("k{i:07}")), Value::from(i)))
                .collect(),
        );
        let bytes = encode_msgpack(&v);
        let len = bytes.len();
        let mut inner = Counting {
            c: Cursor::new(bytes),
            reads: 0,
            seeks: 0,
        };
        let mut w = Window::new(&mut inner, 64 * 1024).unwrap();
        let p = preview(&mut w, Limits::default()).unwrap();
        assert_eq!(w.stream_position().unwrap() as usize, len);
        drop(w);
        let Value::Map(m) = &p.value else { panic!() };
        assert_eq!(m.len(), 1001);
        assert_eq!(m[999].0.as_str(), Some("k0000999"));
        assert_eq!(p.items_skipped, n as u64 - 1000);
        let calls = inner.reads + inner.seeks;
        assert!(
            calls <= 2 * (len / (64 * 1024) + 2),
            "{} reads and {} seeks for {len} bytes",
            inner.reads,
            inner.seeks
        );
    }

    #[test]
    fn window_seeks_land_where_a_plain_stream_would() {
        let data: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
        let mut w = Window::new(Cursor::new(data.clone()), 64).unwrap();
        let mut b = [0u8; 3];
        for (to, at) in [
            (SeekFrom::Current(5), 5u64),
            (SeekFrom::Current(100), 108),
            (SeekFrom::Current(-50), 61),
            (SeekFrom::Start(9000), 9000),
            (SeekFrom::Start(10), 10),
            (SeekFrom::End(-3), 9997),
        ] {
            assert_eq!(w.seek(to).unwrap(), at);
            w.read_exact(&mut b).unwrap();
            assert_eq!(b[..], data[at as usize..at as usize + 3]);
        }
        assert!(w.seek(SeekFrom::Current(-20_000)).is_err());
    }

    #[test]
    fn values_are_counted_without_building_them() {
        let nones = encode_msgpack(&Value::Array(vec![Value::Nil; 5000]));
        assert_eq!(count_values(&nones, 1_000_000), 5001);
        assert_eq!(
            count_values(&nones, 100),
            101,
            "the count stops past the limit"
        );
        let v = Value::Map(vec![
            (Value::from("s"), Value::from("x".repeat(300))),
            (Value::from("b"), Value::Binary(vec![0; 70_000])),
            (Value::from("f"), Value::F64(1.5)),
            // a LangGraph ext (constructor, args) holding a list: counted inside
            (
                Value::from("e"),
                Value::Ext(
                    0,
                    encode_msgpack(&Value::Array(vec![
                        Value::from("builtins"),
                        Value::from("set"),
                        Value::Array(vec![Value::from(1); 10]),
                    ])),
                ),
            ),
            (Value::from("t"), Value::Ext(-1, vec![0; 8])),
        ]);
        // map 1 + 5 keys + s, b, f + e (ext 1 + array 1 + 2 strs + array 1 + 10) + t
        assert_eq!(count_values(&encode_msgpack(&v), 1000), 1 + 5 + 3 + 15 + 1);
        assert_eq!(
            count_values(&[0x92, 0xc0], 1000),
            2,
            "a truncated array stops the count"
        );
        assert_eq!(count_values(&[0xc1], 1000), 1);
    }
}

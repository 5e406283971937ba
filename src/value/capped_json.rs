//! A bounded preview of a JSON document too large to load (a 100 MB `metadata` column): parsed
//! from a byte stream with the same limits as [`super::capped`] — strings cut at 64 KiB, arrays
//! and objects at 1,000 items (100,000 in all) — and whatever is cut read past without being
//! kept, so memory stays bounded whatever the document's size. Cut strings end with the
//! [`super::capped::cut_marker`]; a cut array or object ends with a marker item
//! (`"… [cut by superstep: N more items]"`, under the key `"…"` in an object).

use super::capped::{cut_marker, Limits};
use serde_json::{Map, Value};
use std::io::Read;

/// A preview and what it left out.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPreview {
    pub value: Value,
    pub bytes_skipped: u64,
    pub items_skipped: u64,
}

const MAX_DEPTH: usize = 254;

struct Parser<R> {
    rd: R,
    buf: Vec<u8>,
    at: usize,
    end: usize,
    /// Bytes consumed before `buf`.
    base: u64,
    limits: Limits,
    items: usize,
    bytes_skipped: u64,
    items_skipped: u64,
}

/// Parse the JSON document in `rd`, keeping what `limits` allow.
pub fn preview<R: Read>(rd: R, limits: Limits) -> Result<JsonPreview, String> {
    let mut p = Parser {
        rd,
        buf: vec![0; 64 * 1024],
        at: 0,
        end: 0,
        base: 0,
        limits,
        items: 0,
        bytes_skipped: 0,
        items_skipped: 0,
    };
    let value = p.value(0, true)?.unwrap_or(Value::Null);
    p.ws()?;
    if let Some(b) = p.peek()? {
        return Err(p.fail(&format!("trailing character {:?}", b as char)));
    }
    Ok(JsonPreview {
        value,
        bytes_skipped: p.bytes_skipped,
        items_skipped: p.items_skipped,
    })
}

/// The kept start of a string: contiguous, whole characters, at most `max` bytes.
struct Kept {
    out: Vec<u8>,
    total: u64,
    full: bool,
    max: usize,
}

impl Kept {
    fn push_run(&mut self, run: &[u8]) {
        self.total += run.len() as u64;
        if self.full {
            return;
        }
        let room = self.max - self.out.len();
        if run.len() <= room {
            self.out.extend_from_slice(run);
            return;
        }
        // cut at a character boundary; nothing after it is kept
        let mut take = room;
        while take > 0 && (run[take] & 0xC0) == 0x80 {
            take -= 1;
        }
        self.out.extend_from_slice(&run[..take]);
        self.full = true;
    }
}

fn more_items(n: u64) -> String {
    format!("… [cut by superstep: {n} more items]")
}

impl<R: Read> Parser<R> {
    fn fail(&self, what: &str) -> String {
        format!(
            "invalid JSON at byte {}: {what}",
            self.base + self.at as u64
        )
    }

    /// Refill the buffer when it is used up; false at the end of the input.
    fn fill(&mut self) -> Result<bool, String> {
        if self.at < self.end {
            return Ok(true);
        }
        self.base += self.end as u64;
        self.at = 0;
        self.end = loop {
            match self.rd.read(&mut self.buf) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.to_string()),
            }
        };
        Ok(self.end > 0)
    }

    fn peek(&mut self) -> Result<Option<u8>, String> {
        Ok(if self.fill()? {
            Some(self.buf[self.at])
        } else {
            None
        })
    }

    fn next(&mut self) -> Result<u8, String> {
        if !self.fill()? {
            return Err(self.fail("unexpected end"));
        }
        let b = self.buf[self.at];
        self.at += 1;
        Ok(b)
    }

    fn ws(&mut self) -> Result<(), String> {
        while self.fill()? {
            match self.buf[self.at..self.end]
                .iter()
                .position(|b| !matches!(b, b' ' | b'\n' | b'\r' | b'\t'))
            {
                Some(i) => {
                    self.at += i;
                    return Ok(());
                }
                None => self.at = self.end,
            }
        }
        Ok(())
    }

    fn expect(&mut self, word: &[u8]) -> Result<(), String> {
        for &w in word {
            if self.next()? != w {
                return Err(self.fail("unexpected character"));
            }
        }
        Ok(())
    }

    /// A value; `keep == false` reads past it (counting what it held as skipped).
    fn value(&mut self, depth: usize, keep: bool) -> Result<Option<Value>, String> {
        if depth > MAX_DEPTH {
            return Err(self.fail("nested deeper than 254 levels"));
        }
        self.ws()?;
        let b = self.peek()?.ok_or_else(|| self.fail("unexpected end"))?;
        let v = match b {
            b'n' => {
                self.expect(b"null")?;
                Value::Null
            }
            b't' => {
                self.expect(b"true")?;
                Value::Bool(true)
            }
            b'f' => {
                self.expect(b"false")?;
                Value::Bool(false)
            }
            b'"' => {
                let s = self.string(keep)?;
                Value::String(s)
            }
            b'[' => return self.array(depth, keep),
            b'{' => return self.object(depth, keep),
            b'-' | b'0'..=b'9' if !keep => {
                self.skip_number()?;
                return Ok(None);
            }
            b'-' | b'0'..=b'9' => self.number()?,
            _ => return Err(self.fail(&format!("unexpected character {:?}", b as char))),
        };
        Ok(keep.then_some(v))
    }

    fn skip_number(&mut self) -> Result<(), String> {
        while self.fill()? {
            let chunk = &self.buf[self.at..self.end];
            match chunk
                .iter()
                .position(|b| !matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
            {
                Some(i) => {
                    self.at += i;
                    return Ok(());
                }
                None => self.at = self.end,
            }
        }
        Ok(())
    }

    fn number(&mut self) -> Result<Value, String> {
        let mut t = String::new();
        while let Some(b @ (b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')) = self.peek()? {
            if t.len() > 4096 {
                return Err(self.fail("number too long"));
            }
            t.push(b as char);
            self.next()?;
        }
        serde_json::from_str::<Value>(&t).map_err(|e| self.fail(&e.to_string()))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let mut n = 0u32;
        for _ in 0..4 {
            let b = self.next()?;
            let d = (b as char)
                .to_digit(16)
                .ok_or_else(|| self.fail("bad \\u escape"))?;
            n = n * 16 + d;
        }
        Ok(n)
    }

    /// A string: the first `max_str` bytes kept (never cutting a character), the rest read past.
    fn string(&mut self, keep: bool) -> Result<String, String> {
        self.next()?; // "
        let max = if keep { self.limits.max_str } else { 0 };
        let mut k = Kept {
            out: Vec::new(),
            total: 0,
            full: max == 0,
            max,
        };
        loop {
            // a run of plain bytes at once (no quote, backslash or control character)
            if !self.fill()? {
                return Err(self.fail("unexpected end in a string"));
            }
            let chunk = &self.buf[self.at..self.end];
            let run = chunk
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .unwrap_or(chunk.len());
            if run > 0 {
                k.push_run(&chunk[..run]);
                self.at += run;
                continue;
            }
            match self.next()? {
                b'"' => break,
                b'\\' => {
                    let e = self.next()?;
                    let c: char = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            let cp = if (0xD800..0xDC00).contains(&hi) {
                                self.expect(b"\\u")?;
                                let lo = self.hex4()?;
                                0x10000 + ((hi - 0xD800) << 10) + (lo.wrapping_sub(0xDC00) & 0x3FF)
                            } else {
                                hi
                            };
                            char::from_u32(cp).unwrap_or('\u{FFFD}')
                        }
                        _ => return Err(self.fail("bad escape")),
                    };
                    let mut buf = [0u8; 4];
                    k.push_run(c.encode_utf8(&mut buf).as_bytes());
                }
                _ => return Err(self.fail("control character in a string")),
            }
        }
        let kept = k.out.len() as u64;
        let mut s = String::from_utf8_lossy(&k.out).into_owned();
        if keep && k.total > kept {
            self.bytes_skipped += k.total - kept;
            s.push_str(&cut_marker(k.total));
        } else if !keep {
            self.bytes_skipped += k.total;
        }
        Ok(s)
    }

    /// Read past the rest of an array or object (positioned before an item or the closing
    /// bracket) without keeping anything: one scan for the matching `close`, strings and nesting
    /// tracked, items counted. The skipped text is not validated.
    fn skip_rest(&mut self, close: u8) -> Result<u64, String> {
        let mut depth = 0usize;
        let mut in_str = false;
        let mut esc = false;
        let mut commas = 0u64;
        let mut any = false;
        let start = self.base + self.at as u64;
        while self.fill()? {
            let mut i = self.at;
            while i < self.end {
                let b = self.buf[i];
                i += 1;
                if in_str {
                    if esc {
                        esc = false;
                    } else if b == b'\\' {
                        esc = true;
                    } else if b == b'"' {
                        in_str = false;
                    }
                    continue;
                }
                match b {
                    b'"' => {
                        in_str = true;
                        any = true;
                    }
                    b'[' | b'{' => {
                        depth += 1;
                        any = true;
                        if depth > MAX_DEPTH {
                            self.at = i;
                            return Err(self.fail("nested deeper than 254 levels"));
                        }
                    }
                    b']' | b'}' if depth > 0 => depth -= 1,
                    b']' | b'}' => {
                        self.at = i;
                        if b != close {
                            return Err(self.fail("mismatched bracket"));
                        }
                        self.bytes_skipped += self.base + self.at as u64 - start;
                        return Ok(if any { commas + 1 } else { 0 });
                    }
                    b',' if depth == 0 => commas += 1,
                    b' ' | b'\n' | b'\r' | b'\t' => {}
                    _ => any = true,
                }
            }
            self.at = self.end;
        }
        Err(self.fail("unexpected end"))
    }

    fn room(&self) -> bool {
        self.items < self.limits.max_total_items
    }

    fn array(&mut self, depth: usize, keep: bool) -> Result<Option<Value>, String> {
        self.next()?; // [
        let mut out = Vec::new();
        let mut skipped = 0u64;
        self.ws()?;
        if self.peek()? == Some(b']') {
            self.next()?;
            return Ok(keep.then_some(Value::Array(out)));
        }
        loop {
            let k = keep && out.len() < self.limits.max_items && self.room();
            if !k {
                skipped += self.skip_rest(b']')?;
                break;
            }
            self.items += 1;
            match self.value(depth + 1, k)? {
                Some(v) => out.push(v),
                None => skipped += 1,
            }
            self.ws()?;
            match self.next()? {
                b',' => continue,
                b']' => break,
                _ => return Err(self.fail("expected , or ] in an array")),
            }
        }
        if keep && skipped > 0 {
            self.items_skipped += skipped;
            out.push(Value::String(more_items(skipped)));
        } else if !keep {
            self.items_skipped += skipped;
        }
        Ok(keep.then_some(Value::Array(out)))
    }

    fn object(&mut self, depth: usize, keep: bool) -> Result<Option<Value>, String> {
        self.next()?; // {
        let mut out = Map::new();
        let mut skipped = 0u64;
        self.ws()?;
        if self.peek()? == Some(b'}') {
            self.next()?;
            return Ok(keep.then_some(Value::Object(out)));
        }
        loop {
            self.ws()?;
            let k = keep && out.len() < self.limits.max_items && self.room();
            if !k {
                skipped += self.skip_rest(b'}')?;
                break;
            }
            if self.peek()? != Some(b'"') {
                return Err(self.fail("expected a string key"));
            }
            let key = self.string(k)?;
            self.ws()?;
            if self.next()? != b':' {
                return Err(self.fail("expected : in an object"));
            }
            if k {
                self.items += 1;
            }
            match self.value(depth + 1, k)? {
                Some(v) => {
                    out.insert(key, v);
                }
                None => skipped += 1,
            }
            self.ws()?;
            match self.next()? {
                b',' => continue,
                b'}' => break,
                _ => return Err(self.fail("expected , or } in an object")),
            }
        }
        if keep && skipped > 0 {
            self.items_skipped += skipped;
            out.insert("…".into(), Value::String(more_items(skipped)));
        } else if !keep {
            self.items_skipped += skipped;
        }
        Ok(keep.then_some(Value::Object(out)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(s: &str, limits: Limits) -> JsonPreview {
        preview(s.as_bytes(), limits).unwrap()
    }

    #[test]
    fn small_documents_come_back_whole() {
        for s in [
            r#"{"source":"loop","step":3,"parents":{},"x":[1,2.5,-3e2,true,false,null,"é\u00e9\ud83c\udf89\n"]}"#,
            "[]",
            "{}",
            "\"s\"",
            "12",
        ] {
            let want: Value = serde_json::from_str(s).unwrap();
            let got = p(s, Limits::default());
            assert_eq!(got.value, want, "{s}");
            assert_eq!((got.bytes_skipped, got.items_skipped), (0, 0));
        }
    }

    #[test]
    fn long_strings_and_lists_are_cut_and_counted() {
        let limits = Limits {
            max_str: 4,
            max_items: 3,
            max_total_items: 100,
        };
        let got = p(
            r#"{"a":"abcdefé","b":[1,2,3,4,5,[6,7]],"c":1,"d":2}"#,
            limits,
        );
        assert_eq!(
            got.value,
            json!({"a": format!("abcd{}", cut_marker(8)), "b": [1, 2, 3, more_items(3)], "c": 1, "…": more_items(1)})
        );
        // the cut items of each list: 3 in "b" (4, 5, [6, 7]) + "d"
        assert_eq!(got.items_skipped, 4);
        assert!(got.bytes_skipped >= 4);
        // never inside a character
        let got = p(r#""abcé""#, limits);
        assert_eq!(got.value, json!(format!("abc{}", cut_marker(5))));
    }

    #[test]
    fn bad_json_is_an_error_with_a_position() {
        for s in ["[1,", "{\"a\" 1}", "[1 2]", "nul", "\"\\q\"", "[1]x"] {
            let e = preview(s.as_bytes(), Limits::default()).unwrap_err();
            assert!(e.starts_with("invalid JSON at byte"), "{s}: {e}");
        }
        let deep = "[".repeat(1000);
        assert!(preview(deep.as_bytes(), Limits::default()).is_err());
    }
}

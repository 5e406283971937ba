//! Terminal-safe text: the one escaping function for every human-facing string (CLI stdout,
//! stderr, the TUI), and cutting/padding by display width.
//!
//! Anything read from a checkpoint DB (thread ids, node names, state keys, namespaces, task ids,
//! values, error texts) may hold terminal control sequences: OSC 0 retitles the terminal, OSC 52
//! writes the clipboard, `ESC[2J` clears the screen, a bare CR or BS overwrites what was printed,
//! U+202E reverses the rest of the line, zero-width characters make two different ids look equal.
//! [`escape`] makes every such character visible — `\e`, `\n`, `\x7f`, `\u{9b}`, `\u{202e}` — the
//! way `git` and `ls --quoting-style=escape` do, and keeps printable Unicode (accents, CJK, emoji)
//! as it is. A backslash is not doubled, so JSON previews read as JSON; where an exact spelling
//! matters (thread ids) the listing says that a name was escaped.
//!
//! Widths: a terminal cell is not a byte nor a `char`. [`width`], [`cut`], [`pad`] and [`fit`]
//! measure display columns (`unicode-width`), never cut inside a character, and expect escaped
//! text (an escaped string has no zero-width controls left to confuse the count).

use std::borrow::Cow;
use unicode_width::UnicodeWidthChar;

/// Does `c` get escaped whatever its neighbours? (Control, format, separator, invisible filler,
/// noncharacter.) Variation selectors and ZWJ depend on context: see [`escape`].
fn always_escaped(c: char) -> bool {
    let u = c as u32;
    matches!(u,
        // C0, DEL, C1
        0x00..=0x1F | 0x7F..=0x9F
        // soft hyphen, combining grapheme joiner
        | 0xAD | 0x34F
        // Arabic/Syriac format characters, ALM
        | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x890..=0x891 | 0x8E2
        // Hangul fillers (invisible letters)
        | 0x115F | 0x1160 | 0x3164 | 0xFFA0
        // Khmer inherent vowels, Mongolian free variation selectors and vowel separator
        | 0x17B4 | 0x17B5 | 0x180B..=0x180F
        // zero-width space, ZWNJ, LRM, RLM (ZWJ 0x200D is contextual)
        | 0x200B | 0x200C | 0x200E | 0x200F
        // line/paragraph separators, bidi embeddings and overrides
        | 0x2028..=0x202E
        // word joiner, invisible operators, bidi isolates, deprecated format characters
        | 0x2060..=0x206F
        // BOM / zero-width no-break space, interlinear annotations
        | 0xFEFF | 0xFFF9..=0xFFFB
        // noncharacters
        | 0xFDD0..=0xFDEF
        // other format characters (Kaithi, Egyptian hieroglyph controls, shorthand, musical)
        | 0x110BD | 0x110CD | 0x13430..=0x1343F | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A
        // language tag and tag characters
        | 0xE0001 | 0xE0020..=0xE007F
    ) || (u & 0xFFFE) == 0xFFFE
}

fn is_variation_selector(c: char) -> bool {
    matches!(c as u32, 0xFE00..=0xFE0F | 0xE0100..=0xE01EF)
}

/// Emoji-ish: what a zero-width joiner legitimately joins (👩‍💻, 🏳️‍🌈).
fn is_pictographic(c: char) -> bool {
    matches!(c as u32, 0x2300..=0x23FF | 0x2600..=0x27BF | 0x2B00..=0x2BFF | 0x1F000..=0x1FAFF)
}

/// Skin-tone modifiers and variation selectors may sit between an emoji and its ZWJ.
fn is_emoji_modifier(c: char) -> bool {
    matches!(c as u32, 0x1F3FB..=0x1F3FF | 0xFE0E | 0xFE0F)
}

/// True if [`escape`] would change `s`.
pub fn needs_escape(s: &str) -> bool {
    if s.bytes().all(|b| (0x20..0x7F).contains(&b)) {
        return false;
    }
    first_escaped(s).is_some()
}

/// Byte offset of the first character [`escape`] rewrites.
fn first_escaped(s: &str) -> Option<usize> {
    let mut ctx = Ctx::default();
    let mut it = s.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        if ctx.escapes(c, it.peek().map(|&(_, n)| n)) {
            return Some(i);
        }
        ctx.kept(c);
    }
    None
}

/// What precedes a character in the output: escaping decisions depend on it for variation
/// selectors and ZWJ. Following the output (an escaped character leaves ASCII behind) makes
/// [`escape`] a fixed point.
#[derive(Default)]
struct Ctx {
    prev: Option<char>,
    /// the last character that is not an emoji modifier: what a ZWJ after modifiers joins
    base: Option<char>,
}

impl Ctx {
    fn escapes(&self, c: char, next: Option<char>) -> bool {
        if always_escaped(c) {
            return true;
        }
        if is_variation_selector(c) {
            // kept after a visible non-ASCII character (❤️, 葛󠄀); alone or after ASCII it is
            // only an invisible difference between two names
            return !self
                .prev
                .is_some_and(|p| !p.is_ascii() && !is_variation_selector(p) && p != '\u{200D}');
        }
        if c == '\u{200D}' {
            // kept inside an emoji sequence only
            return !(self.base.is_some_and(is_pictographic) && next.is_some_and(is_pictographic));
        }
        false
    }

    fn kept(&mut self, c: char) {
        self.prev = Some(c);
        if !is_emoji_modifier(c) {
            self.base = Some(c);
        }
    }

    fn escaped(&mut self) {
        self.prev = Some('}');
        self.base = Some('}');
    }
}

fn push_escaped(out: &mut String, c: char) {
    use std::fmt::Write;
    match c {
        '\0' => out.push_str("\\0"),
        '\x07' => out.push_str("\\a"),
        '\x08' => out.push_str("\\b"),
        '\t' => out.push_str("\\t"),
        '\n' => out.push_str("\\n"),
        '\x0B' => out.push_str("\\v"),
        '\x0C' => out.push_str("\\f"),
        '\r' => out.push_str("\\r"),
        '\x1B' => out.push_str("\\e"),
        c if (c as u32) < 0x20 || c == '\x7F' => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

/// `s` with every control and invisible character made visible: C0 controls as `\e`, `\n`,
/// `\r`, `\t`, `\a`, `\b`, `\0`, `\v`, `\f` or `\x01`; DEL as `\x7f`; C1 controls, bidi
/// embeddings/overrides/isolates, zero-width and other format characters, line/paragraph
/// separators, invisible fillers and noncharacters as `\u{202e}`. Printable Unicode is kept;
/// a zero-width joiner is kept inside an emoji sequence and a variation selector after a
/// non-ASCII character. The result contains no byte a terminal acts on.
pub fn escape(s: &str) -> Cow<'_, str> {
    if s.bytes().all(|b| (0x20..0x7F).contains(&b)) {
        return Cow::Borrowed(s);
    }
    let Some(first) = first_escaped(s) else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 8);
    out.push_str(&s[..first]);
    let mut ctx = Ctx::default();
    for c in s[..first].chars() {
        ctx.kept(c);
    }
    let mut it = s[first..].chars().peekable();
    while let Some(c) = it.next() {
        if ctx.escapes(c, it.peek().copied()) {
            push_escaped(&mut out, c);
            ctx.escaped();
        } else {
            out.push(c);
            ctx.kept(c);
        }
    }
    Cow::Owned(out)
}

/// `s` without the characters [`escape`] would rewrite (for a single terminal cell, where an
/// escape would not fit: the TUI's last line of defence).
pub fn strip(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut ctx = Ctx::default();
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if !ctx.escapes(c, it.peek().copied()) {
            out.push(c);
            ctx.kept(c);
        }
    }
    out
}

/// Bytes that may not be UTF-8 (a BLOB or invalid text from a DB): valid runs as [`escape`]
/// shows them, every invalid byte as `\xNN`.
pub fn escape_bytes(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len());
    for chunk in b.utf8_chunks() {
        out.push_str(&escape(chunk.valid()));
        for x in chunk.invalid() {
            out.push_str(&format!("\\x{x:02x}"));
        }
    }
    out
}

/// The CLI's stdout, made terminal-safe whatever was written to it: a control character (but
/// newline and tab), DEL, a C1 control or an invisible character becomes a JSON escape
/// (`\u001b`, `\u202e`, a surrogate pair above U+FFFF), a byte that is not UTF-8 becomes
/// `\xNN`. Human output is escaped before it gets here ([`escape`]); what this changes is JSON
/// output, where serde leaves DEL, C1 controls and bidi overrides raw inside strings — the JSON
/// stays the same document (outside strings JSON is ASCII), and the terminal stays safe.
/// With `colour`, SGR sequences (`ESC [ digits ; … m`, what our own colouring writes) pass.
pub struct SafeWriter<W: std::io::Write> {
    inner: W,
    colour: bool,
    /// An incomplete UTF-8 sequence at the end of the last write.
    pending: Vec<u8>,
}

impl<W: std::io::Write> SafeWriter<W> {
    pub fn new(inner: W, colour: bool) -> Self {
        SafeWriter {
            inner,
            colour,
            pending: Vec::new(),
        }
    }

    pub fn into_inner(mut self) -> std::io::Result<W> {
        self.flush_pending()?;
        Ok(self.inner)
    }

    fn flush_pending(&mut self) -> std::io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let mut out = String::new();
        for b in std::mem::take(&mut self.pending) {
            out.push_str(&format!("\\x{b:02x}"));
        }
        self.inner.write_all(out.as_bytes())
    }
}

fn safe_byte(b: u8) -> bool {
    (0x20..0x7F).contains(&b) || b == b'\n' || b == b'\t'
}

fn push_json_escape(out: &mut Vec<u8>, c: char) {
    let mut units = [0u16; 2];
    for u in c.encode_utf16(&mut units) {
        out.extend_from_slice(format!("\\u{u:04x}").as_bytes());
    }
}

/// Length of the SGR sequence (`ESC [ 0-9; m`) at the start of `s`, if there is one.
fn sgr_len(s: &str) -> Option<usize> {
    let rest = s.strip_prefix("\x1b[")?;
    let n = rest
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';')
        .count();
    (rest.as_bytes().get(n) == Some(&b'm')).then_some(n + 3)
}

fn escape_json_into(out: &mut Vec<u8>, s: &str, colour: bool) {
    let mut ctx = Ctx::default();
    let mut it = s.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        if colour && c == '\x1b' {
            if let Some(n) = sgr_len(&s[i..]) {
                out.extend_from_slice(&s.as_bytes()[i..i + n]);
                while it.peek().is_some_and(|&(j, _)| j < i + n) {
                    it.next();
                }
                ctx.escaped();
                continue;
            }
        }
        if c != '\n' && c != '\t' && ctx.escapes(c, it.peek().map(|&(_, n)| n)) {
            push_json_escape(out, c);
            ctx.escaped();
        } else {
            let mut b = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
            ctx.kept(c);
        }
    }
}

impl<W: std::io::Write> std::io::Write for SafeWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.pending.is_empty() && buf.iter().all(|&b| safe_byte(b)) {
            self.inner.write_all(buf)?;
            return Ok(buf.len());
        }
        let mut data = std::mem::take(&mut self.pending);
        data.extend_from_slice(buf);
        let mut out = Vec::with_capacity(data.len() + 16);
        let mut rest = &data[..];
        while !rest.is_empty() {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    escape_json_into(&mut out, s, self.colour);
                    rest = &[];
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    // valid_up_to is a char boundary
                    let valid = std::str::from_utf8(valid).unwrap_or_default();
                    escape_json_into(&mut out, valid, self.colour);
                    match e.error_len() {
                        None => {
                            self.pending = after.to_vec();
                            rest = &[];
                        }
                        Some(n) => {
                            for b in &after[..n] {
                                out.extend_from_slice(format!("\\x{b:02x}").as_bytes());
                            }
                            rest = &after[n..];
                        }
                    }
                }
            }
        }
        self.inner.write_all(&out)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Display width of one character (0 for what a terminal does not advance over).
fn char_width(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// Display width in terminal columns (of escaped text).
pub fn width(s: &str) -> usize {
    s.chars().map(char_width).sum()
}

/// At most `max` columns: `s` itself, or its start cut at a character boundary plus `…`.
pub fn cut(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max || width(s) <= max {
        // a string of n bytes is at most n columns wide
        return Cow::Borrowed(s);
    }
    if max == 0 {
        return Cow::Borrowed("");
    }
    let mut used = 0;
    let mut end = 0;
    for (i, c) in s.char_indices() {
        let w = char_width(c);
        if used + w > max - 1 {
            break;
        }
        used += w;
        end = i + c.len_utf8();
    }
    let mut t = String::with_capacity(end + 3);
    t.push_str(&s[..end]);
    t.push('…');
    Cow::Owned(t)
}

/// `s` padded with spaces to at least `w` columns (never cut).
pub fn pad(s: &str, w: usize) -> String {
    let n = width(s);
    let mut t = String::with_capacity(s.len() + w.saturating_sub(n));
    t.push_str(s);
    for _ in n..w {
        t.push(' ');
    }
    t
}

/// Exactly `w` columns: cut with `…` or padded (a wide character that does not fit leaves a
/// space).
pub fn fit(s: &str, w: usize) -> String {
    pad(&cut(s, w), w)
}

/// The first `n` characters of `s` (never inside a character).
pub fn head(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// The last `n` characters of `s`.
pub fn tail(s: &str, n: usize) -> &str {
    if n == 0 {
        return "";
    }
    match s.char_indices().rev().nth(n - 1) {
        Some((i, _)) => &s[i..],
        None => s,
    }
}

/// A checkpoint or task id shortened for a column: a 36-character id (uuid6 ids share their
/// time prefix; the clock-seq and node groups tell them apart) as its first 8 and last 12
/// characters, anything else as it is. Escaped.
pub fn short_id(id: &str) -> String {
    if id.chars().count() == 36 {
        format!("{}…{}", escape(head(id, 8)), escape(tail(id, 12)))
    } else {
        escape(id).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The escape sequences a hostile DB can carry (also used by the integration tests).
    const CATALOGUE: &[&str] = &[
        "\x1b]0;pwned\x07",
        "\x1b]52;c;cHduZWQ=\x07",
        "\x1b[2J\x1b[H",
        "\x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\",
        "\x07\x08\r\n\t\x0b\x0c\0",
        "\u{9b}31m\u{9d}0;x\u{9c}",
        "\x7f",
        "abc\u{202e}fed",
        "a\u{200b}b\u{200c}c\u{200d}d\u{2060}e\u{feff}f",
        "\u{2066}x\u{2069}\u{2028}\u{2029}",
        "\u{e0041}\u{e007f}",
        "\u{fe0f}lead",
    ];

    fn terminal_safe(s: &str) -> bool {
        !s.chars().any(|c| c.is_control() || always_escaped(c))
    }

    #[test]
    fn every_catalogue_payload_comes_out_visible() {
        for p in CATALOGUE {
            let e = escape(p);
            assert!(terminal_safe(&e), "{p:?} -> {e:?}");
            assert_ne!(e, *p);
        }
        assert_eq!(escape("\x1b]0;x\x07"), "\\e]0;x\\a");
        assert_eq!(escape("a\r\nb\tc\0"), "a\\r\\nb\\tc\\0");
        assert_eq!(escape("\x7f\x01"), "\\x7f\\x01");
        assert_eq!(escape("\u{9b}2J"), "\\u{9b}2J");
        assert_eq!(escape("ab\u{202e}cd"), "ab\\u{202e}cd");
        assert_eq!(escape("a\u{200b}b"), "a\\u{200b}b");
        assert_eq!(escape("a\u{200d}b"), "a\\u{200d}b");
        assert_eq!(escape("x\u{fe0f}"), "x\\u{fe0f}");
        // a selector after a selector is not "after a visible character"
        assert_eq!(escape("\u{fe0f}\u{fe0f}"), "\\u{fe0f}\\u{fe0f}");
        assert_eq!(escape("é\u{fe0f}\u{fe0f}"), "é\u{fe0f}\\u{fe0f}");
    }

    #[test]
    fn printable_unicode_is_kept() {
        for s in [
            "plain ascii ~!@#$%^&*()",
            "café naïve e\u{301}",
            "日本語のスレッド",
            "emoji 🎉 👩\u{200d}💻 ❤\u{fe0f} 👍🏽",
            "back\\slash \"quoted\"",
            "ümlaut ß ﬁ Ω ∑",
        ] {
            assert!(matches!(escape(s), Cow::Borrowed(_)), "{s:?}");
            assert!(!needs_escape(s));
        }
    }

    #[test]
    fn invalid_utf8_bytes_are_hex() {
        assert_eq!(escape_bytes(b"a\xffb\x1b"), "a\\xffb\\e");
        assert_eq!(escape_bytes("é".as_bytes()), "é");
    }

    #[test]
    fn the_safe_writer_keeps_json_valid_and_the_terminal_safe() {
        use std::io::Write;
        let v = serde_json::json!({"t\u{202e}": ["\x1b]0;x\x07", "\u{9b}\x7f", "\u{e0041}", "ok é 🎉"]});
        let mut w = SafeWriter::new(Vec::new(), false);
        serde_json::to_writer_pretty(&mut w, &v).unwrap();
        let out = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert!(
            out.chars()
                .all(|c| c == '\n' || !(c.is_control() || always_escaped(c))),
            "{out}"
        );
        assert!(
            out.contains("\\u202e")
                && out.contains("\\u009b\\u007f")
                && out.contains("\\udb40\\udc41")
        );
        let back: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(back, v);
        // a character split across two writes, a stray invalid byte
        let mut w = SafeWriter::new(Vec::new(), false);
        let rlo = "\u{202e}".as_bytes();
        w.write_all(&rlo[..1]).unwrap();
        w.write_all(&rlo[1..]).unwrap();
        w.write_all(b"a\x9bb\x1b\tc\n").unwrap();
        let out = w.into_inner().unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\\u202ea\\x9bb\\u001b\tc\n"
        );
        // our own colours pass when colour is on, nothing else does
        let mut w = SafeWriter::new(Vec::new(), true);
        w.write_all(b"\x1b[1m\x1b[38;5;9mred\x1b[0m \x1b]0;t\x07 \x1b[2J")
            .unwrap();
        let out = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert_eq!(
            out,
            "\x1b[1m\x1b[38;5;9mred\x1b[0m \\u001b]0;t\\u0007 \\u001b[2J"
        );
    }

    #[test]
    fn widths_and_cuts_never_split_a_character() {
        assert_eq!(width("日本"), 4);
        assert_eq!(width("e\u{301}"), 1);
        assert_eq!(cut("日本語", 5), "日本…");
        assert_eq!(cut("日本語", 6), "日本語");
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("abc", 0), "");
        assert_eq!(fit("日本語", 4), "日… ");
        assert_eq!(width(&fit("日本語", 4)), 4);
        assert_eq!(fit("ab", 4), "ab  ");
        assert_eq!(pad("日", 3), "日 ");
        assert_eq!(head("abcdefgé", 8), "abcdefgé");
        assert_eq!(head("é", 0), "");
        assert_eq!(tail("aé", 1), "é");
        assert_eq!(tail("aé", 5), "aé");
    }

    #[test]
    fn short_ids_cut_by_characters() {
        let id = "1f1ee4ae-0ad3-6090-8000-ea1fd43f2aa2";
        assert_eq!(short_id(id), "1f1ee4ae…ea1fd43f2aa2");
        // a multi-byte character across byte 8 and byte 24 (36 characters, more bytes)
        let id = "1f1ee4aé-0ad3-6090-8000-éa1fd43f2aa2";
        assert_eq!(short_id(id), "1f1ee4aé…éa1fd43f2aa2");
        // 36 bytes with a multi-byte character: not 36 characters, shown whole
        let id = "1f1ee4aé-0ad3-6090-8000-a1fd43f2aa2";
        assert_eq!(id.len(), 36);
        assert_eq!(short_id(id), id);
        assert_eq!(short_id("abc\x1b"), "abc\\e");
    }
}

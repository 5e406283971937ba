//! The escaping function and the width-based cutting (issue 15 items 1 and 4). Properties: no
//! panic; escaped text holds no control or invisible character and is a fixed point; text that
//! needs no escaping is returned as it is; cuts stay within their width at character
//! boundaries; short ids and the stdout adapter are terminal-safe; the adapter keeps JSON the
//! same document.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::io::Write;
use superstep::text::{
    cut, escape, escape_bytes, fit, head, needs_escape, pad, short_id, strip, tail, width,
    SafeWriter,
};

fn safe(s: &str) -> bool {
    !s.chars().any(|c| {
        c.is_control()
            || matches!(c, '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{206f}' | '\u{feff}' | '\u{e0000}'..='\u{e007f}')
    })
}

fuzz_target!(|data: &[u8]| {
    let (w, bytes) = match data.split_first() {
        Some((w, rest)) => (*w as usize, rest),
        None => return,
    };
    let e = escape_bytes(bytes);
    assert!(safe(&e), "escape_bytes {bytes:?} -> {e:?}");
    let Ok(s) = std::str::from_utf8(bytes) else {
        // the stdout adapter takes any bytes, split anywhere
        let mut out = SafeWriter::new(Vec::new(), false);
        let (a, b) = bytes.split_at(w.min(bytes.len()));
        out.write_all(a).unwrap();
        out.write_all(b).unwrap();
        let o = out.into_inner().unwrap();
        let o = String::from_utf8(o).expect("adapter output is UTF-8");
        assert!(safe(&o.replace(['\n', '\t'], "")), "adapter {bytes:?} -> {o:?}");
        return;
    };
    let e = escape(s);
    assert!(safe(&e), "escape {s:?} -> {e:?}");
    assert_eq!(escape(&e), e, "escape is not a fixed point for {s:?}");
    assert_eq!(needs_escape(s), e != s);
    assert!(safe(&strip(s)), "strip {s:?}");
    // widths: cut within w, at a character boundary, a prefix of the text
    let c = cut(&e, w);
    assert!(width(&c) <= w, "cut {e:?} {w} -> {c:?}");
    let body = c.strip_suffix('…').unwrap_or(&c);
    assert!(e.starts_with(body));
    let f = fit(&e, w);
    assert_eq!(width(&f), w, "fit {e:?} {w} -> {f:?}");
    assert!(width(&pad(&e, w)) >= w);
    assert!(head(s, w).chars().count() <= w && s.starts_with(head(s, w)));
    assert!(tail(s, w).chars().count() <= w && s.ends_with(tail(s, w)));
    let id = short_id(s);
    assert!(safe(&id), "short_id {s:?} -> {id:?}");
    // the stdout adapter: JSON in, the same JSON out, terminal-safe
    let j = serde_json::Value::String(s.to_string());
    let mut out = SafeWriter::new(Vec::new(), false);
    serde_json::to_writer(&mut out, &j).unwrap();
    let o = String::from_utf8(out.into_inner().unwrap()).unwrap();
    assert!(safe(&o), "adapter {s:?} -> {o:?}");
    let back: serde_json::Value = serde_json::from_str(&o).unwrap();
    assert_eq!(back, j);
});

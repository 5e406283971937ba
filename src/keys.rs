//! Keys as a store holds them and as a person reads and types them: the address forms of keys
//! that are not UTF-8 text. Shared by the stores (which bind a form back to the stored value)
//! and every listing (CLI, TUI), so the TUI's drawing needs nothing from `store/`.

/// A key (thread id, namespace, checkpoint id, task id) that SQLite stores as a BLOB, or as TEXT
/// that is not UTF-8, is named by an address form: `blob:<hex>` / `bytes:<hex>` (LangGraph
/// writes `str`, so only a foreign writer makes these). The listing prints it, `-t` takes it,
/// and the SQLite backend binds it back to the stored value.
pub const BLOB_KEY: &str = "blob:";
pub const BYTES_KEY: &str = "bytes:";

/// The stored value an address form stands for: `(is_blob, bytes)`; `None` for a plain key.
pub fn raw_key(key: &str) -> Option<(bool, Vec<u8>)> {
    let (blob, hex) = if let Some(h) = key.strip_prefix(BLOB_KEY) {
        (true, h)
    } else {
        (false, key.strip_prefix(BYTES_KEY)?)
    };
    if hex.len() % 2 != 0 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16))
        .collect::<Result<Vec<u8>, _>>()
        .ok()?;
    // `bytes:` names TEXT that is not UTF-8; valid UTF-8 would have been shown as itself
    if !blob && std::str::from_utf8(&bytes).is_ok() {
        return None;
    }
    Some((blob, bytes))
}

/// A key for a human: itself, escaped; an address form as its bytes escaped followed by the
/// form (`b0001\xff (bytes:6230303031ff)`), so the listing shows both what is stored and what
/// `-t` takes.
pub fn key_label(key: &str) -> String {
    match raw_key(key) {
        Some((_, b)) => format!("{} ({key})", crate::text::escape_bytes(&b)),
        None => crate::text::escape(key).into_owned(),
    }
}

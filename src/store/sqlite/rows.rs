//! Reading rows: a `checkpoints` row's columns, keys as SQLite typed them, blob previews.

/// The bounded preview of a msgpack blob already in memory (one holding too many values).
pub(super) fn preview_loaded(bytes: &[u8]) -> Result<rmpv::Value, crate::value::ValueError> {
    let mut c = std::io::Cursor::new(bytes);
    crate::value::capped::preview(&mut c, crate::value::capped::Limits::default()).map(|p| p.value)
}

pub(super) struct RawRow {
    pub(super) thread_id: String,
    pub(super) checkpoint_ns: String,
    pub(super) checkpoint_id: String,
    pub(super) parent_checkpoint_id: Option<String>,
    pub(super) type_: Option<String>,
    pub(super) checkpoint: Vec<u8>,
    pub(super) metadata: Option<Vec<u8>>,
    pub(super) len: u64,
    pub(super) rowid: i64,
    /// Bytes of the metadata column (`octet_length`).
    pub(super) metadata_len: u64,
}

pub(super) fn raw_row(r: &rusqlite::Row) -> rusqlite::Result<RawRow> {
    Ok(RawRow {
        thread_id: key(r, 0)?,
        checkpoint_ns: key(r, 1)?,
        checkpoint_id: key(r, 2)?,
        parent_checkpoint_id: match r.get_ref(3)? {
            rusqlite::types::ValueRef::Null => None,
            _ => Some(key(r, 3)?),
        },
        type_: r.get::<_, Option<String>>(4)?,
        checkpoint: blob(r, 5)?,
        metadata: match r.get_ref(6)? {
            rusqlite::types::ValueRef::Null => None,
            rusqlite::types::ValueRef::Blob(b) | rusqlite::types::ValueRef::Text(b) => {
                Some(b.to_vec())
            }
            other => Some(format!("{other:?}").into_bytes()),
        },
        len: r.get::<_, Option<i64>>(7)?.unwrap_or(0) as u64,
        rowid: r.get(8)?,
        metadata_len: r.get::<_, Option<i64>>(9)?.unwrap_or(0) as u64,
    })
}

/// A key column (thread id, namespace, checkpoint id, task id): UTF-8 text as it is; a BLOB or
/// TEXT that is not UTF-8 (a foreign writer's; LangGraph writes `str`) by its address form,
/// `blob:<hex>` / `bytes:<hex>`, which the queries bind back to the stored value ([`Alt`]).
pub(super) fn key(r: &rusqlite::Row, i: usize) -> rusqlite::Result<String> {
    use rusqlite::types::ValueRef;
    Ok(match r.get_ref(i)? {
        ValueRef::Text(b) => match std::str::from_utf8(b) {
            Ok(s) => s.to_string(),
            Err(_) => format!("{}{}", crate::store::BYTES_KEY, hex(b)),
        },
        ValueRef::Blob(b) => format!("{}{}", crate::store::BLOB_KEY, hex(b)),
        ValueRef::Integer(n) => n.to_string(),
        ValueRef::Real(f) => f.to_string(),
        ValueRef::Null => String::new(),
    })
}

pub(super) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The stored value a key's address form stands for (bound next to the key as text: `k IN
/// (?text, ?alt)`), or NULL when the key is plain text.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Alt {
    None,
    Blob(Vec<u8>),
    Text(Vec<u8>),
}

impl Alt {
    pub(super) fn of(key: &str) -> Alt {
        match crate::store::raw_key(key) {
            Some((true, b)) => Alt::Blob(b),
            Some((false, b)) => Alt::Text(b),
            None => Alt::None,
        }
    }

    /// The value to compare a paging bound with: the stored value, or the key as text.
    pub(super) fn or_text(self, key: &str) -> Alt {
        match self {
            Alt::None => Alt::Text(key.as_bytes().to_vec()),
            a => a,
        }
    }
}

impl rusqlite::ToSql for Alt {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, Value, ValueRef};
        Ok(match self {
            Alt::None => ToSqlOutput::Owned(Value::Null),
            Alt::Blob(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
            Alt::Text(b) => ToSqlOutput::Borrowed(ValueRef::Text(b)),
        })
    }
}

/// TEXT that may hold invalid UTF-8 or be stored as a BLOB: read leniently.
pub(super) fn text(r: &rusqlite::Row, i: usize) -> rusqlite::Result<String> {
    use rusqlite::types::ValueRef;
    Ok(match r.get_ref(i)? {
        ValueRef::Text(b) | ValueRef::Blob(b) => String::from_utf8_lossy(b).into_owned(),
        ValueRef::Integer(n) => n.to_string(),
        ValueRef::Real(f) => f.to_string(),
        ValueRef::Null => String::new(),
    })
}

pub(super) fn blob(r: &rusqlite::Row, i: usize) -> rusqlite::Result<Vec<u8>> {
    use rusqlite::types::ValueRef;
    Ok(match r.get_ref(i)? {
        ValueRef::Text(b) | ValueRef::Blob(b) => b.to_vec(),
        ValueRef::Null => Vec::new(),
        other => format!("{other:?}").into_bytes(),
    })
}

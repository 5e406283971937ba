//! rusqlite access to the SqliteSaver tables. Every query is keyed by the primary key
//! `(thread_id, checkpoint_ns, checkpoint_id)` and paged; nothing loads a whole DB.

use super::StoreError;
use crate::value::Typed;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How the store opens the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Inspection: SQLite read-only; never creates, migrates or checkpoints anything.
    ReadOnly,
    /// The engine's mode: creates the schema if absent (WAL, as SqliteSaver.setup does).
    ReadWrite,
}

/// One `checkpoints` row with its metadata parsed (the blob is decoded on demand).
#[derive(Debug, Clone)]
pub struct CheckpointRow {
    pub thread_id: String,
    pub checkpoint_ns: String,
    pub checkpoint_id: String,
    pub parent_checkpoint_id: Option<String>,
    pub type_: Option<String>,
    /// The blob; empty when it is too big to load (see `big`).
    pub checkpoint: Vec<u8>,
    /// Parsed metadata JSON; `{}` for SQL NULL or an empty blob.
    pub metadata: serde_json::Map<String, serde_json::Value>,
    /// Inspection only: the blob is larger than [`PREVIEW_OVER`] bytes and was not loaded;
    /// `(rowid, length)`. Decoding it streams a bounded preview (see `value::capped`).
    pub big: Option<(i64, u64)>,
}

/// Inspection loads blobs up to this size whole; larger ones are previewed from a stream.
pub const PREVIEW_OVER: u64 = 16 * 1024 * 1024;

/// One `writes` row, value decoded.
#[derive(Debug, Clone)]
pub struct WriteRow {
    pub task_id: String,
    pub task_path: String,
    pub idx: i64,
    pub channel: String,
    pub type_: Option<String>,
    pub value: Typed,
    /// The stored value was larger than [`PREVIEW_OVER`] bytes: `value` is a bounded preview
    /// of it and this is its length.
    pub cut: Option<u64>,
}

/// A thread in the root namespace, for `superstep threads`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ThreadSummary {
    pub thread_id: String,
    pub checkpoints: i64,
    pub latest_checkpoint_id: String,
    /// Number of checkpoints in subgraph namespaces of this thread.
    pub subgraph_checkpoints: i64,
}

pub struct Store {
    conn: Connection,
    path: PathBuf,
    has_task_path: bool,
    immutable: bool,
    /// Blobs longer than this are previewed, not loaded (`u64::MAX` for the engine's mode: it
    /// needs whole values).
    preview_over: u64,
    /// `rowid`, or `0` for tables without one.
    rowid: &'static str,
}

/// What tells that another process changed the file: SQLite's `data_version` (commits by any
/// other connection, WAL or not), and the file's size and mtime plus whether a `-wal` exists (an
/// `immutable` connection sees neither).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    data_version: i64,
    len: u64,
    mtime: Option<std::time::SystemTime>,
    pub wal: bool,
}

const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

impl Store {
    /// Open a checkpoint DB. `ReadOnly` requires an existing LangGraph checkpoint database and
    /// never writes to it or its directory (see `open_flags`).
    pub fn open(path: &Path, mode: Mode) -> Result<Store, StoreError> {
        let shown = path.display().to_string();
        if mode == Mode::ReadOnly && !path.is_file() {
            return Err(StoreError::Missing { path: shown });
        }
        let wal_header = if mode == Mode::ReadOnly {
            check_header(path)?
        } else {
            false
        };
        let conn = open_conn(path, mode, wal_header).map_err(|e| sql_err(&shown, e))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| sql_err(&shown, e))?;
        if mode == Mode::ReadWrite {
            create_schema(&conn).map_err(|e| sql_err(&shown, e))?;
        }
        let tables = table_columns(&conn).map_err(|e| classify(&shown, e))?;
        for table in ["checkpoints", "writes"] {
            if !tables.iter().any(|(t, _)| t == table) {
                return Err(StoreError::NotCheckpointDb { path: shown, table });
            }
        }
        let has_task_path = tables
            .iter()
            .any(|(t, c)| t == "writes" && c == "task_path");
        // a foreign file whose tables have no rowid cannot stream blobs: load them whole
        let without_rowid: bool = conn
            .query_row(
                "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table'
                 AND name IN ('checkpoints', 'writes') AND upper(sql) LIKE '%WITHOUT%ROWID%')",
                [],
                |r| r.get(0),
            )
            .map_err(|e| classify(&shown, e))?;
        Ok(Store {
            rowid: if without_rowid { "0" } else { "rowid" },
            preview_over: if mode == Mode::ReadOnly && !without_rowid {
                PREVIEW_OVER
            } else {
                i64::MAX as u64
            },
            immutable: mode == Mode::ReadOnly && wal_header && !sidecar(path, "-wal").exists(),
            conn,
            path: path.to_path_buf(),
            has_task_path,
        })
    }

    /// Opened `immutable=1` (a WAL file nobody had open): it will not see later writers, so a
    /// caller that notices a `-wal` appear should open the file again.
    pub fn is_immutable(&self) -> bool {
        self.immutable
    }

    /// See [`Stamp`]. Cheap: one pragma and two `stat`s.
    pub fn stamp(&self) -> Result<Stamp, StoreError> {
        let data_version = self
            .conn
            .query_row("PRAGMA data_version", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        let meta = std::fs::metadata(&self.path).ok();
        Ok(Stamp {
            data_version,
            len: meta.as_ref().map_or(0, |m| m.len()),
            mtime: meta.and_then(|m| m.modified().ok()),
            wal: sidecar(&self.path, "-wal").exists(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    fn err(&self, e: rusqlite::Error) -> StoreError {
        sql_err(&self.path.display().to_string(), e)
    }

    /// Threads of the root namespace, ordered by thread id, `limit` at a time after `after`.
    pub fn threads(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<ThreadSummary>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT thread_id,
                        SUM(checkpoint_ns = ''),
                        MAX(CASE WHEN checkpoint_ns = '' THEN checkpoint_id END),
                        SUM(checkpoint_ns <> '')
                 FROM checkpoints WHERE thread_id > ?1
                 GROUP BY thread_id ORDER BY thread_id LIMIT ?2",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![after.unwrap_or(""), limit as i64], |r| {
                Ok(ThreadSummary {
                    thread_id: text(r, 0)?,
                    checkpoints: r.get::<_, Option<i64>>(1)?.unwrap_or(0),
                    latest_checkpoint_id: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
                    subgraph_checkpoints: r.get::<_, Option<i64>>(3)?.unwrap_or(0),
                })
            })
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for r in rows {
            out.push(r.map_err(|e| self.err(e))?);
        }
        // An empty thread id sorts first and is not > ''; fetch it separately on the first page.
        if after.is_none() {
            if let Some(t) = self.thread_summary("")? {
                out.insert(0, t);
                out.truncate(limit);
            }
        }
        Ok(out)
    }

    fn thread_summary(&self, thread_id: &str) -> Result<Option<ThreadSummary>, StoreError> {
        self.conn
            .query_row(
                "SELECT COUNT(*), SUM(checkpoint_ns = ''),
                        MAX(CASE WHEN checkpoint_ns = '' THEN checkpoint_id END), SUM(checkpoint_ns <> '')
                 FROM checkpoints WHERE thread_id = ?1",
                [thread_id],
                |r| {
                    let n: i64 = r.get(0)?;
                    Ok((n > 0).then(|| ThreadSummary {
                        thread_id: thread_id.to_string(),
                        checkpoints: r.get::<_, Option<i64>>(1).ok().flatten().unwrap_or(0),
                        latest_checkpoint_id: r.get::<_, Option<String>>(2).ok().flatten().unwrap_or_default(),
                        subgraph_checkpoints: r.get::<_, Option<i64>>(3).ok().flatten().unwrap_or(0),
                    }))
                },
            )
            .map_err(|e| self.err(e))
    }

    /// Whether the thread has any checkpoint (in any namespace).
    pub fn thread_exists(&self, thread_id: &str) -> Result<bool, StoreError> {
        self.conn
            .query_row(
                "SELECT EXISTS(SELECT 1 FROM checkpoints WHERE thread_id = ?1)",
                [thread_id],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }

    /// Checkpoint namespaces of a thread (`""` first).
    pub fn namespaces(&self, thread_id: &str) -> Result<Vec<String>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = ?1 ORDER BY checkpoint_ns")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([thread_id], |r| text(r, 0))
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// `get_tuple`: the addressed checkpoint, or the latest one of `(thread, ns)`.
    pub fn checkpoint(
        &self,
        thread_id: &str,
        ns: &str,
        checkpoint_id: Option<&str>,
    ) -> Result<Option<CheckpointRow>, StoreError> {
        let (big, rowid) = (self.preview_over, self.rowid);
        let sql_by_id = &format!("SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, CASE WHEN length(checkpoint) > {big} THEN NULL ELSE checkpoint END, metadata, length(checkpoint), {rowid}
             FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3");
        let sql_latest = &format!("SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, CASE WHEN length(checkpoint) > {big} THEN NULL ELSE checkpoint END, metadata, length(checkpoint), {rowid}
             FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2 ORDER BY checkpoint_id DESC LIMIT 1");
        let row = match checkpoint_id {
            Some(id) => self
                .conn
                .prepare_cached(sql_by_id)
                .and_then(|mut s| s.query_row(params![thread_id, ns, id], raw_row).optional()),
            None => self
                .conn
                .prepare_cached(sql_latest)
                .and_then(|mut s| s.query_row(params![thread_id, ns], raw_row).optional()),
        }
        .map_err(|e| self.err(e))?;
        row.map(|r| self.finish_row(r)).transpose()
    }

    /// `list`: checkpoints of `(thread, ns)` newest first, strictly older than `before`, at most
    /// `limit`.
    pub fn history(
        &self,
        thread_id: &str,
        ns: &str,
        before: Option<&str>,
        limit: usize,
    ) -> Result<Vec<CheckpointRow>, StoreError> {
        let (big, rowid) = (self.preview_over, self.rowid);
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, CASE WHEN length(checkpoint) > {big} THEN NULL ELSE checkpoint END, metadata, length(checkpoint), {rowid}
                 FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND (?3 IS NULL OR checkpoint_id < ?3)
                 ORDER BY checkpoint_id DESC LIMIT ?4"
            ))
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(
                params![thread_id, ns, before, limit.min(i64::MAX as usize) as i64],
                raw_row,
            )
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for r in rows {
            out.push(self.finish_row(r.map_err(|e| self.err(e))?)?);
        }
        Ok(out)
    }

    /// Pending writes of one checkpoint, sorted like `writes_sort_key`: `(task_path, task_id, idx)`.
    pub fn writes(
        &self,
        thread_id: &str,
        ns: &str,
        checkpoint_id: &str,
    ) -> Result<Vec<WriteRow>, StoreError> {
        let sql = if self.has_task_path {
            "task_path, task_id, idx"
        } else {
            "task_id, idx"
        };
        let sql = format!(
            "SELECT task_id, {}, idx, channel, type, CASE WHEN length(value) > {} THEN NULL ELSE value END, length(value), {} FROM writes
             WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3 ORDER BY {sql}",
            if self.has_task_path { "task_path" } else { "''" },
            self.preview_over,
            self.rowid
        );
        let mut stmt = self.conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![thread_id, ns, checkpoint_id], |r| {
                Ok((
                    text(r, 0)?,
                    text(r, 1)?,
                    r.get::<_, i64>(2)?,
                    text(r, 3)?,
                    r.get::<_, Option<String>>(4)?,
                    blob(r, 5)?,
                    r.get::<_, Option<i64>>(6)?.unwrap_or(0) as u64,
                    r.get::<_, i64>(7)?,
                ))
            })
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for r in rows {
            let (task_id, task_path, idx, channel, type_, bytes, len, rowid) =
                r.map_err(|e| self.err(e))?;
            let ty = type_.as_deref().unwrap_or("null");
            let cut = (len > self.preview_over).then_some(len);
            let decoded = if cut.is_some() {
                self.preview_blob("writes", "value", rowid, ty)
            } else {
                Typed::decode(ty, &bytes)
            };
            let value = decoded.map_err(|e| {
                StoreError::Corrupt {
                    path: self.path.display().to_string(),
                    what: "write value",
                    location: format!(
                        "writes(thread_id={thread_id:?}, checkpoint_ns={ns:?}, checkpoint_id={checkpoint_id}, task_id={task_id}, idx={idx})"
                    ),
                    detail: e.to_string(),
                }
            })?;
            out.push(WriteRow {
                task_id,
                task_path,
                idx,
                channel,
                type_,
                value,
                cut,
            });
        }
        Ok(out)
    }

    fn finish_row(&self, r: RawRow) -> Result<CheckpointRow, StoreError> {
        let metadata = parse_metadata(r.metadata.as_deref()).map_err(|detail| {
            self.corrupt_checkpoint(
                "metadata",
                &r.thread_id,
                &r.checkpoint_ns,
                &r.checkpoint_id,
                detail,
            )
        })?;
        Ok(CheckpointRow {
            thread_id: r.thread_id,
            checkpoint_ns: r.checkpoint_ns,
            checkpoint_id: r.checkpoint_id,
            parent_checkpoint_id: r.parent_checkpoint_id,
            type_: r.type_,
            checkpoint: r.checkpoint,
            metadata,
            big: (r.len > self.preview_over).then_some((r.rowid, r.len)),
        })
    }

    /// Decode a row's checkpoint blob, reporting where a corrupt one lives.
    pub fn decode(&self, row: &CheckpointRow) -> Result<super::Checkpoint, StoreError> {
        let ty = row.type_.as_deref().unwrap_or("msgpack");
        let decoded = match row.big {
            Some((rowid, _)) => self
                .preview_blob("checkpoints", "checkpoint", rowid, ty)
                .map_err(|e| e.to_string())
                .and_then(super::Checkpoint::from_typed),
            None => super::Checkpoint::decode(ty, &row.checkpoint),
        };
        decoded.map_err(|detail| {
            self.corrupt_checkpoint(
                "checkpoint blob",
                &row.thread_id,
                &row.checkpoint_ns,
                &row.checkpoint_id,
                detail,
            )
        })
    }

    /// A bounded preview of a blob too big to load, streamed with SQLite's incremental blob
    /// I/O: msgpack is previewed structurally; other types keep their first bytes.
    fn preview_blob(
        &self,
        table: &'static str,
        column: &'static str,
        rowid: i64,
        type_: &str,
    ) -> Result<Typed, crate::value::ValueError> {
        use crate::value::capped;
        use crate::value::ValueError;
        use std::io::Read;
        let blob = self
            .conn
            .blob_open(rusqlite::MAIN_DB, table, column, rowid, true)
            .map_err(|e| ValueError::Msgpack(format!("cannot stream the blob: {e}")))?;
        let mut rd = std::io::BufReader::with_capacity(64 * 1024, blob);
        let limits = capped::Limits::default();
        let head = |rd: &mut std::io::BufReader<rusqlite::blob::Blob>| {
            let mut b = Vec::new();
            rd.take(limits.max_str as u64)
                .read_to_end(&mut b)
                .map(|_| b)
                .map_err(|e| ValueError::Msgpack(e.to_string()))
        };
        match type_ {
            "msgpack" => capped::preview(&mut rd, limits).map(|p| Typed::Value(p.value)),
            "bytes" => head(&mut rd).map(Typed::Bytes),
            "bytearray" => head(&mut rd).map(Typed::ByteArray),
            "pickle" => head(&mut rd).map(Typed::Pickle),
            "null" => Ok(Typed::Null),
            "json" => Err(ValueError::Json(
                "a JSON value this large is not previewed (only msgpack is streamed)".into(),
            )),
            other => Err(ValueError::UnknownType(other.to_string())),
        }
    }

    /// A corrupt field of one `checkpoints` row, located by its primary key.
    fn corrupt_checkpoint(
        &self,
        what: &'static str,
        thread_id: &str,
        ns: &str,
        checkpoint_id: &str,
        detail: String,
    ) -> StoreError {
        StoreError::Corrupt {
            path: self.path.display().to_string(),
            what,
            location: format!(
                "checkpoints(thread_id={thread_id:?}, checkpoint_ns={ns:?}, checkpoint_id={checkpoint_id})"
            ),
            detail,
        }
    }
}

struct RawRow {
    thread_id: String,
    checkpoint_ns: String,
    checkpoint_id: String,
    parent_checkpoint_id: Option<String>,
    type_: Option<String>,
    checkpoint: Vec<u8>,
    metadata: Option<Vec<u8>>,
    len: u64,
    rowid: i64,
}

fn raw_row(r: &rusqlite::Row) -> rusqlite::Result<RawRow> {
    Ok(RawRow {
        thread_id: text(r, 0)?,
        checkpoint_ns: text(r, 1)?,
        checkpoint_id: text(r, 2)?,
        parent_checkpoint_id: r.get::<_, Option<String>>(3)?,
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
    })
}

/// TEXT that may hold invalid UTF-8 or be stored as a BLOB: read leniently.
fn text(r: &rusqlite::Row, i: usize) -> rusqlite::Result<String> {
    use rusqlite::types::ValueRef;
    Ok(match r.get_ref(i)? {
        ValueRef::Text(b) | ValueRef::Blob(b) => String::from_utf8_lossy(b).into_owned(),
        ValueRef::Integer(n) => n.to_string(),
        ValueRef::Real(f) => f.to_string(),
        ValueRef::Null => String::new(),
    })
}

fn blob(r: &rusqlite::Row, i: usize) -> rusqlite::Result<Vec<u8>> {
    use rusqlite::types::ValueRef;
    Ok(match r.get_ref(i)? {
        ValueRef::Text(b) | ValueRef::Blob(b) => b.to_vec(),
        ValueRef::Null => Vec::new(),
        other => format!("{other:?}").into_bytes(),
    })
}

/// Metadata is a JSON BLOB; SQL NULL or empty means `{}` (spec §1.3).
pub fn parse_metadata(
    raw: Option<&[u8]>,
) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let Some(raw) = raw else {
        return Ok(Default::default());
    };
    if raw.iter().all(u8::is_ascii_whitespace) {
        return Ok(Default::default());
    }
    match serde_json::from_slice::<serde_json::Value>(raw) {
        Ok(serde_json::Value::Object(m)) => Ok(m),
        Ok(serde_json::Value::Null) => Ok(Default::default()),
        Ok(other) => Err(format!("metadata is JSON but not an object: {other}")),
        Err(e) => Err(format!("metadata is not JSON: {e}")),
    }
}

fn sql_err(path: &str, e: rusqlite::Error) -> StoreError {
    StoreError::Sqlite {
        path: path.to_string(),
        detail: e.to_string(),
    }
}

fn classify(path: &str, e: rusqlite::Error) -> StoreError {
    let detail = e.to_string();
    if detail.contains("file is not a database") || detail.contains("malformed") {
        StoreError::NotSqlite {
            path: path.to_string(),
            detail,
        }
    } else {
        sql_err(path, e)
    }
}

/// Reject files that are not SQLite before SQLite sees them; returns whether the header says
/// WAL mode (file format version bytes 18/19 = 2).
fn check_header(path: &Path) -> Result<bool, StoreError> {
    use std::io::Read;
    let shown = path.display().to_string();
    let mut f = std::fs::File::open(path).map_err(|e| StoreError::Sqlite {
        path: shown.clone(),
        detail: e.to_string(),
    })?;
    let mut head = [0u8; 20];
    let mut n = 0;
    while n < head.len() {
        let k = f.read(&mut head[n..]).map_err(|e| StoreError::Sqlite {
            path: shown.clone(),
            detail: e.to_string(),
        })?;
        if k == 0 {
            break;
        }
        n += k;
    }
    if n == 0 {
        return Err(StoreError::NotSqlite {
            path: shown,
            detail: "empty file".into(),
        });
    }
    if n < 20 || &head[..16] != b"SQLite format 3\0" {
        return Err(StoreError::NotSqlite {
            path: shown,
            detail: "no SQLite header".into(),
        });
    }
    Ok(head[18] == 2 || head[19] == 2)
}

/// Read-only opens use SQLite's read-only mode, which never writes the file. A WAL-mode
/// database with no `-wal` file (nobody has it open) would still get `-wal`/`-shm` files created
/// next to it, so it is opened `immutable=1` instead and the directory stays byte-identical. When a
/// `-wal` exists a writer may be live, and the normal read-only path (which sees its committed
/// frames and honours its locks) is used; rollback-journal databases always use it.
fn open_conn(path: &Path, mode: Mode, wal_header: bool) -> rusqlite::Result<Connection> {
    match mode {
        Mode::ReadWrite => Connection::open(path),
        Mode::ReadOnly => {
            let immutable = wal_header && !sidecar(path, "-wal").exists();
            let uri = format!(
                "file:{}?mode=ro{}",
                uri_path(path),
                if immutable { "&immutable=1" } else { "" }
            );
            Connection::open_with_flags(
                uri,
                OpenFlags::SQLITE_OPEN_READ_ONLY
                    | OpenFlags::SQLITE_OPEN_URI
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
        }
    }
}

pub(crate) fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

fn uri_path(path: &Path) -> String {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = String::new();
    for b in abs.to_string_lossy().bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn table_columns(conn: &Connection) -> rusqlite::Result<Vec<(String, String)>> {
    let mut stmt = conn.prepare(
        "SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p
         WHERE m.type = 'table' AND m.name IN ('checkpoints', 'writes')",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}

/// SqliteSaver.setup(): WAL plus the two tables (spec §1.1).
fn create_schema(conn: &Connection) -> rusqlite::Result<()> {
    conn.pragma_update(None, "journal_mode", "WAL")?;
    // both tables in one transaction: a process killed here leaves all or nothing
    conn.execute_batch(
        "BEGIN;
        CREATE TABLE IF NOT EXISTS checkpoints (
            thread_id TEXT NOT NULL,
            checkpoint_ns TEXT NOT NULL DEFAULT '',
            checkpoint_id TEXT NOT NULL,
            parent_checkpoint_id TEXT,
            type TEXT,
            checkpoint BLOB,
            metadata BLOB,
            PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
        );
        CREATE TABLE IF NOT EXISTS writes (
            thread_id TEXT NOT NULL,
            checkpoint_ns TEXT NOT NULL DEFAULT '',
            checkpoint_id TEXT NOT NULL,
            task_id TEXT NOT NULL,
            task_path TEXT NOT NULL DEFAULT '',
            idx INTEGER NOT NULL,
            channel TEXT NOT NULL,
            type TEXT,
            value BLOB,
            PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
        );
        COMMIT;",
    )?;
    match conn.execute(
        "ALTER TABLE writes ADD COLUMN task_path TEXT NOT NULL DEFAULT ''",
        [],
    ) {
        Ok(_) => Ok(()),
        Err(e) if e.to_string().contains("duplicate column") => Ok(()),
        Err(e) => Err(e),
    }
}

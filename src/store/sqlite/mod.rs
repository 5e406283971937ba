//! The SQLite backend: `SqliteSaver`'s file (spec §1). Every query is keyed by the primary key
//! `(thread_id, checkpoint_ns, checkpoint_id)` and paged; nothing loads a whole DB.

use super::{
    parse_metadata, Backend, CheckpointRef, CheckpointRow, EncodedCheckpoint, EncodedWrites, Mode,
    Stamp, StoreError, ThreadSummary, WriteRow,
};
use crate::value::Typed;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

mod backend;
mod doctor;
mod errors;
mod open;
pub mod own;
mod rows;
mod schema;
use errors::*;
pub(crate) use open::sidecar;
use open::*;
use rows::*;
use schema::*;
pub use schema::{create_sqlite_schema, sqlite_has_no_tables};

/// Inspection loads blobs up to this size whole; larger ones are previewed from a stream.
pub const PREVIEW_OVER: u64 = 16 * 1024 * 1024;

/// Metadata (JSON text) larger than this is previewed from a stream: parsed whole, a JSON
/// document takes tens of times its size in memory (a 40 MB array of numbers: over 1 GB).
pub const META_OVER: u64 = 1024 * 1024;

/// Inspection decodes a blob under [`PREVIEW_OVER`] whole only when it holds at most this many
/// msgpack values: 15 MB of `None`s is 15 M values, 1.7 GB once decoded and shown.
pub const DENSE_OVER: u64 = 1_000_000;

/// A SqliteSaver file.
pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
    label: String,
    has_task_path: bool,
    immutable: bool,
    /// Blobs longer than this are previewed, not loaded (`u64::MAX` for the engine's mode: it
    /// needs whole values).
    preview_over: u64,
    /// Blobs holding more values than this are previewed from memory ([`DENSE_OVER`];
    /// `u64::MAX` for the engine's mode).
    dense_over: u64,
    /// `rowid`, or `0` for tables without one.
    rowid: &'static str,
    /// The multi-row INSERT texts made so far, by (REPLACE?, rows).
    writes_sql: RefCell<HashMap<(bool, usize), String>>,
    /// A leftover WAL pair is read from a private copy (see [`PrivateCopy`]).
    _copy: Option<PrivateCopy>,
    /// The opened file's (device, inode): a file moved over the path is another one.
    ident: Option<(u64, u64)>,
    /// Opened for a prune ([`Mode::Maintain`]) while another process had the file open: its
    /// pid (0 when the lock does not say).
    opened_by_other: Option<i32>,
}

/// A `checkpoints` row's checkpoint as SQLite holds it.
struct Body {
    type_: Option<String>,
    /// The blob; empty when it is too big to load (see `big`).
    blob: Vec<u8>,
    /// The blob is larger than the preview limit and was not loaded: `(rowid, length)`.
    big: Option<(i64, u64)>,
    /// The blob was loaded but holds more than [`DENSE_OVER`] values: previewed from memory.
    dense: bool,
}

const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

impl SqliteStore {
    /// Open a checkpoint DB. `ReadOnly` requires an existing LangGraph checkpoint database and
    /// never writes to it or its directory (see `open_flags`).
    pub fn open(path: &Path, mode: Mode) -> Result<SqliteStore, StoreError> {
        let shown = path.display().to_string();
        check_kind(path, mode)?;
        if mode != Mode::ReadOnly {
            check_writable(path)?;
        }
        if mode == Mode::Maintain {
            check_header(path)?;
            // before this process's own connection takes locks the probe would also see
            let other = SqliteStore::other_process(path);
            let conn = Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .map_err(|e| sql_err(&shown, e))?;
            let mut store = SqliteStore::with_connection(conn, path, mode, false)?;
            store.opened_by_other = other;
            return Ok(store);
        }
        let wal_header = if mode == Mode::ReadOnly {
            check_header(path)?
        } else {
            false
        };
        let leftover = mode == Mode::ReadOnly
            && wal_header
            && sidecar(path, "-wal").exists()
            && !wal_in_use(path);
        if leftover {
            let copy = PrivateCopy::of(path).map_err(|e| StoreError::Sqlite {
                path: shown.clone(),
                detail: format!(
                    "a -wal nobody has open is next to it; copying the pair to a private directory to read it (the directory is left alone) failed: {e}"
                ),
            })?;
            let conn = open_conn(&copy.db, mode, wal_header).map_err(|e| sql_err(&shown, e))?;
            let mut store = SqliteStore::with_connection(conn, path, mode, wal_header)?;
            // the copy will not see later writers: reopen on a change, as for immutable
            store.immutable = true;
            store._copy = Some(copy);
            return Ok(store);
        }
        let conn = open_conn(path, mode, wal_header).map_err(|e| sql_err(&shown, e))?;
        SqliteStore::with_connection(conn, path, mode, wal_header)
    }

    /// A store on a connection the caller opened (an in-memory database, or one with its own
    /// pragmas); `ReadWrite` creates the schema as [`SqliteStore::open`] does.
    pub fn from_connection(conn: Connection, mode: Mode) -> Result<SqliteStore, StoreError> {
        let path = PathBuf::from(conn.path().filter(|p| !p.is_empty()).unwrap_or(":memory:"));
        SqliteStore::with_connection(conn, &path, mode, false)
    }

    /// Give the connection back (the store is gone): for benchmarks and tests that read what
    /// was written to an in-memory database.
    pub fn into_connection(self) -> Connection {
        self.conn
    }

    fn with_connection(
        conn: Connection,
        path: &Path,
        mode: Mode,
        wal_header: bool,
    ) -> Result<SqliteStore, StoreError> {
        let shown = path.display().to_string();
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
        Ok(SqliteStore {
            rowid: if without_rowid { "0" } else { "rowid" },
            preview_over: if mode == Mode::ReadOnly && !without_rowid {
                PREVIEW_OVER
            } else {
                i64::MAX as u64
            },
            dense_over: if mode == Mode::ReadOnly {
                DENSE_OVER
            } else {
                u64::MAX
            },
            immutable: mode == Mode::ReadOnly && wal_header && !sidecar(path, "-wal").exists(),
            conn,
            path: path.to_path_buf(),
            label: shown,
            has_task_path,
            writes_sql: Default::default(),
            _copy: None,
            ident: file_ident(path).ok(),
            opened_by_other: None,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, e: rusqlite::Error) -> StoreError {
        sql_err(&self.label, e)
    }

    /// Whether a thread id stored as exactly this UTF-8 text exists (an address form may also
    /// be a real thread id; the real one wins).
    fn text_thread_exists(&self, thread_id: &str) -> Result<bool, StoreError> {
        if super::raw_key(thread_id).is_none() {
            return Ok(true);
        }
        self.conn
            .prepare_cached("SELECT EXISTS(SELECT 1 FROM checkpoints WHERE thread_id = ?1)")
            .and_then(|mut s| s.query_row([thread_id], |r| r.get(0)))
            .map_err(|e| self.err(e))
    }

    /// The stored value a thread id's address form stands for, unless a thread has exactly that
    /// text as its id.
    fn alt_thread(&self, thread_id: &str) -> Result<Alt, StoreError> {
        Ok(match Alt::of(thread_id) {
            Alt::None => Alt::None,
            _ if self.text_thread_exists(thread_id)? => Alt::None,
            a => a,
        })
    }

    fn thread_summary(&self, thread_id: &str) -> Result<Option<ThreadSummary>, StoreError> {
        self.conn
            .query_row(
                "SELECT COUNT(*), SUM(checkpoint_ns = ''),
                        MAX(CASE WHEN checkpoint_ns = '' THEN checkpoint_id END), SUM(checkpoint_ns <> '')
                 FROM checkpoints WHERE thread_id IN (?1, ?2)",
                params![thread_id, self.alt_thread(thread_id)?],
                |r| {
                    let n: i64 = r.get(0)?;
                    Ok((n > 0).then(|| ThreadSummary {
                        thread_id: thread_id.to_string(),
                        checkpoints: r.get::<_, Option<i64>>(1).ok().flatten().unwrap_or(0),
                        latest_checkpoint_id: key(r, 2).unwrap_or_default(),
                        subgraph_checkpoints: r.get::<_, Option<i64>>(3).ok().flatten().unwrap_or(0),
                    }))
                },
            )
            .map_err(|e| self.err(e))
    }

    fn finish_row(&self, r: RawRow) -> Result<CheckpointRow, StoreError> {
        let meta_big = r.metadata_len > META_OVER;
        let metadata = match meta_big {
            true => self.preview_metadata(r.rowid),
            false => parse_metadata(r.metadata.as_deref()),
        };
        let metadata = metadata.map_err(|detail| {
            self.corrupt_checkpoint(
                "metadata",
                &r.thread_id,
                &r.checkpoint_ns,
                &r.checkpoint_id,
                detail,
            )
        })?;
        let big = (r.len > self.preview_over).then_some((r.rowid, r.len));
        let dense =
            big.is_none() && self.dense(r.type_.as_deref().unwrap_or("msgpack"), &r.checkpoint);
        Ok(CheckpointRow {
            thread_id: r.thread_id,
            checkpoint_ns: r.checkpoint_ns,
            checkpoint_id: r.checkpoint_id,
            parent_checkpoint_id: r.parent_checkpoint_id,
            metadata,
            preview_of: big.map(|(_, len)| len).or(dense.then_some(r.len)),
            metadata_preview_of: meta_big.then_some(r.metadata_len),
            body: Arc::new(Body {
                type_: r.type_,
                blob: r.checkpoint,
                big,
                dense,
            }),
        })
    }

    /// A bounded preview of metadata too big to parse whole ([`META_OVER`]), streamed with
    /// SQLite's incremental blob I/O (a generated column cannot be streamed: said so).
    fn preview_metadata(
        &self,
        rowid: i64,
    ) -> Result<serde_json::Map<String, serde_json::Value>, String> {
        let blob = self
            .conn
            .blob_open(rusqlite::MAIN_DB, "checkpoints", "metadata", rowid, true)
            .map_err(|e| {
                format!("metadata over {META_OVER} bytes that cannot be streamed ({e}; a generated column?)")
            })?;
        let p = crate::value::capped_json::preview(blob, crate::value::capped::Limits::default())
            .map_err(|e| format!("metadata is not JSON: {e}"))?;
        match p.value {
            serde_json::Value::Object(m) => Ok(m),
            serde_json::Value::Null => Ok(Default::default()),
            other => Err(format!(
                "metadata is JSON but not an object: {}",
                crate::text::cut(&other.to_string(), 200)
            )),
        }
    }

    /// Whether a loaded blob of this type holds more than `dense_over` values (a walk that
    /// builds nothing; only blobs with more bytes than that can).
    fn dense(&self, type_: &str, bytes: &[u8]) -> bool {
        type_ == "msgpack"
            && bytes.len() as u64 > self.dense_over
            && crate::value::capped::count_values(bytes, self.dense_over) > self.dense_over
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
        use crate::value::ValueError;
        let blob = self
            .conn
            .blob_open(rusqlite::MAIN_DB, table, column, rowid, true)
            .map_err(|e| ValueError::Msgpack(format!("cannot stream the blob: {e}")))?;
        // relative seeks stay in the window: a preview skips item by item
        let mut rd = crate::value::capped::Window::new(blob, 64 * 1024)
            .map_err(|e| ValueError::Msgpack(format!("cannot stream the blob: {e}")))?;
        super::preview_stream(&mut rd, type_)
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
            path: self.label.clone(),
            what,
            location: checkpoint_location(thread_id, ns, checkpoint_id),
            detail,
        }
    }
}

/// A `checkpoints` row, named by its primary key.
fn checkpoint_location(thread_id: &str, ns: &str, checkpoint_id: &str) -> String {
    format!(
        "checkpoints(thread_id={thread_id:?}, checkpoint_ns={ns:?}, checkpoint_id={checkpoint_id})"
    )
}

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
}

#[cfg(unix)]
fn file_ident(path: &Path) -> std::io::Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path)?;
    Ok((m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_ident(path: &Path) -> std::io::Result<(u64, u64)> {
    std::fs::metadata(path).map(|_| (0, 0))
}

/// A WAL-mode file with a `-wal` that no process has open (a writer crashed or was killed, or
/// the `-shm` was deleted): SQLite would create a `-shm` next to it, or rewrite a stale one, to
/// read it. To leave the directory as it is, the file and its `-wal` are copied into a private
/// directory (mode 0700, removed when the store is dropped) and the copy is read.
struct PrivateCopy {
    dir: PathBuf,
    db: PathBuf,
}

impl PrivateCopy {
    fn of(path: &Path) -> std::io::Result<PrivateCopy> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "superstep-wal-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let mut b = std::fs::DirBuilder::new();
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            b.mode(0o700);
        }
        b.create(&dir)?;
        let copy = PrivateCopy {
            db: dir.join("db.sqlite"),
            dir,
        };
        std::fs::copy(path, &copy.db)?;
        std::fs::copy(sidecar(path, "-wal"), sidecar(&copy.db, "-wal"))?;
        Ok(copy)
    }
}

impl Drop for PrivateCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A descriptor of `path` for superstep's own looks at a database (its header, its lock bytes),
/// opened once per file and **never closed**. POSIX drops every `fcntl` lock a process holds on a
/// file when *any* of its descriptors of that file is closed — SQLite's too: a connection of this
/// process to the same file (the engine's writer beside a reader, the TUI's) would silently lose
/// its locks. On the `-shm` that is the dead-man-switch lock: another process then believes it
/// is the first, truncates the `-shm` this process has mapped, and our next access dies with
/// SIGBUS (seen as `continue` killed by signal 7 when two CLI steppers raced). SQLite's own unix
/// VFS defers closing for the same reason. Keyed by (device, inode): a file replaced under the
/// path is another entry; the table grows by one small entry per distinct file looked at.
#[cfg(unix)]
fn probe(path: &Path) -> std::io::Result<Arc<std::fs::File>> {
    use std::sync::{Mutex, OnceLock};
    type Kept = HashMap<(u64, u64), Arc<std::fs::File>>;
    static OPEN: OnceLock<Mutex<Kept>> = OnceLock::new();
    let table = OPEN.get_or_init(Default::default);
    let mut table = table.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(f) = file_ident(path).ok().and_then(|id| table.get(&id)) {
        return Ok(f.clone());
    }
    let f = Arc::new(std::fs::File::open(path)?);
    let id = {
        use std::os::unix::fs::MetadataExt;
        let m = f.metadata()?;
        (m.dev(), m.ino())
    };
    match table.entry(id) {
        // the path changed between stat and open to a file already kept: use the kept one, and
        // keep the new descriptor open as well (closing it would drop the locks, as above)
        std::collections::hash_map::Entry::Occupied(e) => {
            std::mem::forget(f);
            Ok(e.get().clone())
        }
        std::collections::hash_map::Entry::Vacant(e) => Ok(e.insert(f).clone()),
    }
}

#[cfg(not(unix))]
fn probe(path: &Path) -> std::io::Result<Arc<std::fs::File>> {
    std::fs::File::open(path).map(Arc::new)
}

#[cfg(unix)]
fn read_at(f: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(f, buf, at)
}

#[cfg(not(unix))]
fn read_at(f: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f: &std::fs::File = f;
    f.seek(SeekFrom::Start(at))?;
    f.read(buf)
}

/// Whether some process has the WAL-mode database open: it holds a read lock on the `-shm`
/// file's dead-man-switch byte (SQLite's unix VFS: offset 128), or a lock on the database
/// file's lock bytes (offset 2^30, 512 bytes). No `-shm` file means no shared-memory reader.
#[cfg(unix)]
fn wal_in_use(path: &Path) -> bool {
    fn locked(file: &Path, start: i64, len: i64) -> bool {
        use std::os::unix::io::AsRawFd;
        let Ok(f) = probe(file) else {
            return false;
        };
        // SAFETY: a zeroed flock is a valid argument; F_GETLK only fills it in
        let mut fl: libc::flock = unsafe { std::mem::zeroed() };
        fl.l_type = libc::F_WRLCK as libc::c_short;
        fl.l_whence = libc::SEEK_SET as libc::c_short;
        fl.l_start = start as libc::off_t;
        fl.l_len = len as libc::off_t;
        // an open-file-description query also reports this process's own POSIX locks (the
        // TUI's engine connection holds the file in the same process)
        #[cfg(target_os = "linux")]
        let cmd = libc::F_OFD_GETLK;
        #[cfg(not(target_os = "linux"))]
        let cmd = libc::F_GETLK;
        // SAFETY: a valid open descriptor and a valid flock (l_pid 0, as F_OFD_GETLK requires)
        let r = unsafe { libc::fcntl(f.as_raw_fd(), cmd, &mut fl) };
        r == 0 && fl.l_type != libc::F_UNLCK as libc::c_short
    }
    let shm = sidecar(path, "-shm");
    (shm.exists() && locked(&shm, 120, 16)) || locked(path, 0x4000_0000, 512)
}

#[cfg(not(unix))]
fn wal_in_use(_path: &Path) -> bool {
    true
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
        if mode == Mode::ReadWrite {
            check_writable(path)?;
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

impl Backend for SqliteStore {
    fn label(&self) -> &str {
        &self.label
    }

    fn kind(&self) -> &'static str {
        "SQLite"
    }

    /// SQLite's `data_version` (commits by any other connection, WAL or not), and the file's
    /// size and mtime plus whether a `-wal` exists (an `immutable` connection sees neither).
    /// Cheap: one pragma and two `stat`s.
    fn stamp(&self) -> Result<Stamp, StoreError> {
        let data_version: i64 = self
            .conn
            .query_row("PRAGMA data_version", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        let meta = std::fs::metadata(&self.path).ok();
        let mtime = meta
            .as_ref()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        Ok(Stamp(vec![
            data_version as u128,
            meta.as_ref().map_or(0, |m| m.len() as u128),
            mtime,
            sidecar(&self.path, "-wal").exists() as u128,
        ]))
    }

    /// Opened `immutable=1` (a WAL file nobody had open): it will not see later writers.
    fn needs_reopen(&self) -> bool {
        self.immutable
    }

    fn set_lock_wait(&self, wait: Duration) {
        let _ = self.conn.busy_timeout(wait);
    }

    fn presence(&self) -> super::Presence {
        match (file_ident(&self.path), self.ident) {
            (Err(e), Some(_)) if e.kind() == std::io::ErrorKind::NotFound => super::Presence::Gone,
            (Ok(now), Some(was)) if now != was => super::Presence::Replaced,
            _ => super::Presence::Same,
        }
    }

    fn encode_checkpoint(
        &self,
        ns: &str,
        parent: Option<&str>,
        cp: &CheckpointRef<'_>,
        metadata: String,
    ) -> EncodedCheckpoint {
        EncodedCheckpoint {
            ns: ns.to_string(),
            id: cp.id.to_string(),
            parent: parent.map(str::to_string),
            checkpoint: super::encode_msgpack(cp),
            metadata,
            blobs: Vec::new(),
        }
    }

    /// `BEGIN IMMEDIATE`: the write lock is taken before the head is checked, so no other writer
    /// can slip in between the check and the writes. BEGIN/COMMIT are cached statements:
    /// parsing them anew each superstep costs more than the inserts of a small step.
    fn begin_write(&self) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("BEGIN IMMEDIATE")
            .and_then(|mut s| s.execute([]))
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// `PRAGMA data_version`: changes when another connection commits.
    fn write_token(&self) -> Result<Option<i64>, StoreError> {
        self.conn
            .prepare_cached("PRAGMA data_version")
            .and_then(|mut s| s.query_row([], |r| r.get(0)))
            .map(Some)
            .map_err(|e| self.err(e))
    }

    fn head(&self, thread_id: &str) -> Result<Option<String>, StoreError> {
        self.conn
            .prepare_cached(
                "SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ''",
            )
            .and_then(|mut s| s.query_row([thread_id], |r| r.get(0)))
            .map_err(|e| self.err(e))
    }

    /// `put`: INSERT OR REPLACE the checkpoint row.
    fn put_checkpoint(&self, thread_id: &str, cp: &EncodedCheckpoint) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
                 VALUES (?1, ?2, ?3, ?4, 'msgpack', ?5, ?6)",
            )
            .and_then(|mut s| {
                s.execute(params![
                    thread_id,
                    cp.ns,
                    cp.id,
                    cp.parent,
                    cp.checkpoint,
                    cp.metadata.as_bytes()
                ])
            })
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// `put_writes`: one multi-row INSERT per batch (up to [`WRITES_PER_STATEMENT`] rows): rows
    /// are inserted in order with the same conflict rule, so the result is what a statement per
    /// row leaves, at a fraction of the per-statement cost.
    fn put_writes(&self, thread_id: &str, w: &EncodedWrites) -> Result<(), StoreError> {
        let run = || -> rusqlite::Result<()> {
            for chunk in w.rows.chunks(WRITES_PER_STATEMENT) {
                let mut cache = self.writes_sql.borrow_mut();
                let sql = cache
                    .entry((w.replace, chunk.len()))
                    .or_insert_with(|| writes_sql(w.replace, chunk.len()));
                let mut stmt = self.conn.prepare_cached(sql)?;
                drop(cache);
                stmt.raw_bind_parameter(1, thread_id)?;
                stmt.raw_bind_parameter(2, &w.ns)?;
                stmt.raw_bind_parameter(3, &w.checkpoint_id)?;
                stmt.raw_bind_parameter(4, &w.task_id)?;
                stmt.raw_bind_parameter(5, &w.task_path)?;
                for (i, (idx, channel, ty, bytes)) in chunk.iter().enumerate() {
                    let at = 6 + 4 * i;
                    stmt.raw_bind_parameter(at, idx)?;
                    stmt.raw_bind_parameter(at + 1, channel)?;
                    stmt.raw_bind_parameter(at + 2, ty)?;
                    stmt.raw_bind_parameter(at + 3, bytes)?;
                }
                stmt.raw_execute()?;
            }
            Ok(())
        };
        run().map_err(|e| self.err(e))
    }

    fn commit_write(&self) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("COMMIT")
            .and_then(|mut c| c.execute([]))
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    fn rollback_write(&self) {
        let _ = self.conn.execute_batch("ROLLBACK");
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }

    /// Threads of the root namespace, ordered by thread id, `limit` at a time after `after`.
    fn threads(&self, after: Option<&str>, limit: usize) -> Result<Vec<ThreadSummary>, StoreError> {
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
        // page by the raw key: a thread id that is a BLOB or not UTF-8 is named by its address
        // form, which stands for the stored value (comparing the form itself would repeat or
        // skip rows: every BLOB sorts after every TEXT)
        let bound = match after {
            Some(a) if !self.text_thread_exists(a)? => Alt::of(a).or_text(a),
            Some(a) => Alt::Text(a.as_bytes().to_vec()),
            None => Alt::Text(Vec::new()),
        };
        let rows = stmt
            .query_map(params![bound, limit as i64], |r| {
                Ok(ThreadSummary {
                    thread_id: key(r, 0)?,
                    checkpoints: r.get::<_, Option<i64>>(1)?.unwrap_or(0),
                    latest_checkpoint_id: key(r, 2)?,
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

    /// Whether the thread has any checkpoint (in any namespace).
    fn thread_exists(&self, thread_id: &str) -> Result<bool, StoreError> {
        self.conn
            .query_row(
                "SELECT EXISTS(SELECT 1 FROM checkpoints WHERE thread_id IN (?1, ?2))",
                params![thread_id, self.alt_thread(thread_id)?],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }

    /// Checkpoint namespaces of a thread (`""` first).
    fn namespaces(&self, thread_id: &str) -> Result<Vec<String>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id IN (?1, ?2) ORDER BY checkpoint_ns")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![thread_id, self.alt_thread(thread_id)?], |r| {
                key(r, 0)
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// `get_tuple`: the addressed checkpoint, or the latest one of `(thread, ns)`.
    fn checkpoint(
        &self,
        thread_id: &str,
        ns: &str,
        checkpoint_id: Option<&str>,
    ) -> Result<Option<CheckpointRow>, StoreError> {
        let (big, rowid) = (self.preview_over, self.rowid);
        let sql_by_id = &format!("SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, CASE WHEN length(checkpoint) > {big} THEN NULL ELSE checkpoint END, CASE WHEN octet_length(metadata) > {META_OVER} THEN NULL ELSE metadata END, length(checkpoint), {rowid}, octet_length(metadata)
             FROM checkpoints WHERE thread_id IN (?1, ?4) AND checkpoint_ns IN (?2, ?5) AND checkpoint_id IN (?3, ?6)");
        let sql_latest = &format!("SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, CASE WHEN length(checkpoint) > {big} THEN NULL ELSE checkpoint END, CASE WHEN octet_length(metadata) > {META_OVER} THEN NULL ELSE metadata END, length(checkpoint), {rowid}, octet_length(metadata)
             FROM checkpoints WHERE thread_id IN (?1, ?3) AND checkpoint_ns IN (?2, ?4) ORDER BY checkpoint_id DESC LIMIT 1");
        let alt = self.alt_thread(thread_id)?;
        let row = match checkpoint_id {
            Some(id) => self.conn.prepare_cached(sql_by_id).and_then(|mut s| {
                s.query_row(
                    params![thread_id, ns, id, alt, Alt::of(ns), Alt::of(id)],
                    raw_row,
                )
                .optional()
            }),
            None => self.conn.prepare_cached(sql_latest).and_then(|mut s| {
                s.query_row(params![thread_id, ns, alt, Alt::of(ns)], raw_row)
                    .optional()
            }),
        }
        .map_err(|e| self.err(e))?;
        row.map(|r| self.finish_row(r)).transpose()
    }

    /// `list`: checkpoints of `(thread, ns)` newest first, strictly older than `before`, at most
    /// `limit`.
    fn history(
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
                "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, CASE WHEN length(checkpoint) > {big} THEN NULL ELSE checkpoint END, CASE WHEN octet_length(metadata) > {META_OVER} THEN NULL ELSE metadata END, length(checkpoint), {rowid}, octet_length(metadata)
                 FROM checkpoints WHERE thread_id IN (?1, ?5) AND checkpoint_ns IN (?2, ?6) AND (?3 IS NULL OR checkpoint_id < ?3)
                 ORDER BY checkpoint_id DESC LIMIT ?4"
            ))
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(
                params![
                    thread_id,
                    ns,
                    // page by the raw key (see `threads`)
                    before.map(|b| Alt::of(b).or_text(b)),
                    limit.min(i64::MAX as usize) as i64,
                    self.alt_thread(thread_id)?,
                    Alt::of(ns)
                ],
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
    fn writes(
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
             WHERE thread_id IN (?1, ?4) AND checkpoint_ns IN (?2, ?5) AND checkpoint_id IN (?3, ?6) ORDER BY {sql}",
            if self.has_task_path { "task_path" } else { "''" },
            self.preview_over,
            self.rowid
        );
        let mut stmt = self.conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(
                params![
                    thread_id,
                    ns,
                    checkpoint_id,
                    self.alt_thread(thread_id)?,
                    Alt::of(ns),
                    Alt::of(checkpoint_id)
                ],
                |r| {
                    Ok((
                        key(r, 0)?,
                        text(r, 1)?,
                        r.get::<_, i64>(2)?,
                        text(r, 3)?,
                        r.get::<_, Option<String>>(4)?,
                        blob(r, 5)?,
                        r.get::<_, Option<i64>>(6)?.unwrap_or(0) as u64,
                        r.get::<_, i64>(7)?,
                    ))
                },
            )
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for r in rows {
            let (task_id, task_path, idx, channel, type_, bytes, len, rowid) =
                r.map_err(|e| self.err(e))?;
            let ty = type_.as_deref().unwrap_or("null");
            let big = len > self.preview_over;
            let dense = !big && self.dense(ty, &bytes);
            let cut = (big || dense).then_some(len);
            let decoded = if big {
                self.preview_blob("writes", "value", rowid, ty)
            } else if dense {
                preview_loaded(&bytes).map(Typed::Value)
            } else {
                Typed::decode(ty, &bytes)
            };
            let value = decoded.map_err(|e| {
                StoreError::Corrupt {
                    path: self.label.clone(),
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

    /// Decode a row's checkpoint blob, reporting where a corrupt one lives.
    fn decode(&self, row: &CheckpointRow) -> Result<super::Checkpoint, StoreError> {
        let decoded = match row.body.downcast_ref::<Body>() {
            None => Err("the row was not read from this SQLite store".to_string()),
            Some(body) => {
                let ty = body.type_.as_deref().unwrap_or("msgpack");
                if crate::value::is_encrypted_type(ty) {
                    return Err(StoreError::Encrypted {
                        path: self.label.clone(),
                        location: checkpoint_location(
                            &row.thread_id,
                            &row.checkpoint_ns,
                            &row.checkpoint_id,
                        ),
                        type_: ty.to_string(),
                    });
                }
                match body.big {
                    Some((rowid, _)) => self
                        .preview_blob("checkpoints", "checkpoint", rowid, ty)
                        .map_err(|e| e.to_string())
                        .and_then(super::Checkpoint::from_typed),
                    None if body.dense => preview_loaded(&body.blob)
                        .map_err(|e| e.to_string())
                        .and_then(|v| super::Checkpoint::from_typed(Typed::Value(v))),
                    None => super::Checkpoint::decode(ty, &body.blob),
                }
            }
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
}

/// The bounded preview of a msgpack blob already in memory (one holding too many values).
fn preview_loaded(bytes: &[u8]) -> Result<rmpv::Value, crate::value::ValueError> {
    let mut c = std::io::Cursor::new(bytes);
    crate::value::capped::preview(&mut c, crate::value::capped::Limits::default()).map(|p| p.value)
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
    /// Bytes of the metadata column (`octet_length`).
    metadata_len: u64,
}

fn raw_row(r: &rusqlite::Row) -> rusqlite::Result<RawRow> {
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
fn key(r: &rusqlite::Row, i: usize) -> rusqlite::Result<String> {
    use rusqlite::types::ValueRef;
    Ok(match r.get_ref(i)? {
        ValueRef::Text(b) => match std::str::from_utf8(b) {
            Ok(s) => s.to_string(),
            Err(_) => format!("{}{}", super::BYTES_KEY, hex(b)),
        },
        ValueRef::Blob(b) => format!("{}{}", super::BLOB_KEY, hex(b)),
        ValueRef::Integer(n) => n.to_string(),
        ValueRef::Real(f) => f.to_string(),
        ValueRef::Null => String::new(),
    })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The stored value a key's address form stands for (bound next to the key as text: `k IN
/// (?text, ?alt)`), or NULL when the key is plain text.
#[derive(Debug, Clone, PartialEq)]
enum Alt {
    None,
    Blob(Vec<u8>),
    Text(Vec<u8>),
}

impl Alt {
    fn of(key: &str) -> Alt {
        match super::raw_key(key) {
            Some((true, b)) => Alt::Blob(b),
            Some((false, b)) => Alt::Text(b),
            None => Alt::None,
        }
    }

    /// The value to compare a paging bound with: the stored value, or the key as text.
    fn or_text(self, key: &str) -> Alt {
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

fn sql_err(path: &str, e: rusqlite::Error) -> StoreError {
    if e.sqlite_error_code() == Some(rusqlite::ErrorCode::TooBig) {
        return StoreError::Sqlite {
            path: path.to_string(),
            detail: format!(
                "reading it would make SQLite build a value over {} MiB (a generated column? stored values that large are streamed, not built): not loaded",
                BUILD_LIMIT >> 20
            ),
        };
    }
    // SQLITE_READONLY_ROLLBACK: a hot journal that a read-only connection may not roll back
    if e.sqlite_error().is_some_and(|x| x.extended_code == 776) {
        return StoreError::Sqlite {
            path: path.to_string(),
            detail: format!(
                "a hot rollback journal ({path}-journal) is next to it: a process crashed or was \
                 killed in the middle of writing, and SQLite must roll that write back before the \
                 file can be read, which read-only inspection will not do. Recover with one \
                 write-capable open (e.g. sqlite3 {path} 'PRAGMA quick_check', or the LangGraph \
                 app), keeping the -journal file beside it until then (deleting it corrupts the \
                 file); then inspect again"
            ),
        };
    }
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

/// What the path is, before anything opens it (opening a FIFO would block): missing (an error
/// for inspection; the engine creates it), a regular file, or something that cannot be a
/// checkpoint file — a directory, a device (`/dev/null`, `/dev/zero`), a FIFO, a socket.
fn check_kind(path: &Path, mode: Mode) -> Result<(), StoreError> {
    let shown = || path.display().to_string();
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return match mode {
                Mode::ReadOnly => Err(StoreError::Missing { path: shown() }),
                Mode::ReadWrite => Ok(()),
            };
        }
        Err(e) => {
            return Err(StoreError::Sqlite {
                path: shown(),
                detail: e.to_string(),
            })
        }
    };
    let ft = meta.file_type();
    if ft.is_file() {
        return Ok(());
    }
    let what = if ft.is_dir() {
        "it is a directory"
    } else {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if ft.is_char_device() {
                "it is a character device"
            } else if ft.is_block_device() {
                "it is a block device"
            } else if ft.is_fifo() {
                "it is a named pipe"
            } else if ft.is_socket() {
                "it is a socket"
            } else {
                "it is not a regular file"
            }
        }
        #[cfg(not(unix))]
        "it is not a regular file"
    };
    Err(StoreError::NotSqlite {
        path: shown(),
        detail: what.to_string(),
    })
}

/// The engine writes: refuse before SQLite opens anything (which would leave `-wal` / `-shm`
/// files it cannot use, and report "attempt to write a readonly database" at the first step)
/// when the file, or the directory its journal goes in, is not writable by this process.
fn check_writable(path: &Path) -> Result<(), StoreError> {
    let err = |detail: String| StoreError::Sqlite {
        path: path.display().to_string(),
        detail,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if path.exists() && !writable(path) {
        return Err(err(
            "the file is read-only for this user: the engine writes a checkpoint per superstep \
             (make it writable, or inspect it: superstep threads/history/show --db FILE)"
                .into(),
        ));
    }
    if !writable(dir) {
        return Err(err(format!(
            "the directory {} is read-only for this user: SQLite keeps its journal (-wal, -shm) \
             next to the file (copy the file somewhere writable, or inspect it: superstep \
             threads/history/show --db FILE)",
            dir.display()
        )));
    }
    Ok(())
}

/// `access(W_OK)`: whether this process may write the path (root may write a 0444 file).
#[cfg(unix)]
fn writable(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a NUL-terminated path; access() only reads it
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

#[cfg(not(unix))]
fn writable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.permissions().readonly())
}

/// Reject files that are not SQLite before SQLite sees them; returns whether the header says
/// WAL mode (file format version bytes 18/19 = 2).
fn check_header(path: &Path) -> Result<bool, StoreError> {
    let shown = path.display().to_string();
    let f = probe(path).map_err(|e| StoreError::Sqlite {
        path: shown.clone(),
        detail: e.to_string(),
    })?;
    let mut head = [0u8; 20];
    let mut n = 0;
    while n < head.len() {
        let k = read_at(&f, &mut head[n..], n as u64).map_err(|e| StoreError::Sqlite {
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
            let conn = Connection::open_with_flags(
                uri,
                OpenFlags::SQLITE_OPEN_READ_ONLY
                    | OpenFlags::SQLITE_OPEN_URI
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )?;
            // inspection never needs SQLite to build a value this large (bigger blobs are
            // streamed): a generated column computing gigabytes fails instead of eating memory
            conn.set_limit(rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH, BUILD_LIMIT)?;
            Ok(conn)
        }
    }
}

/// The largest string or blob SQLite may build for an inspection query.
const BUILD_LIMIT: i32 = 64 * 1024 * 1024;

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

/// Rows per multi-row INSERT into `writes` (9 columns, 5 shared: 5 + 4 x 64 parameters).
const WRITES_PER_STATEMENT: usize = 64;

/// `INSERT OR IGNORE|REPLACE INTO writes ... VALUES (...), (...)` for `rows` rows; the thread,
/// namespace, checkpoint, task id and path are ?1..?5 in every row, each row's idx, channel,
/// type and value the next four parameters.
fn writes_sql(replace: bool, rows: usize) -> String {
    let mut sql = format!(
        "INSERT OR {} INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value) VALUES ",
        if replace { "REPLACE" } else { "IGNORE" }
    );
    for i in 0..rows {
        let at = 6 + 4 * i;
        if i > 0 {
            sql.push_str(", ");
        }
        sql.push_str(&format!(
            "(?1, ?2, ?3, ?4, ?5, ?{at}, ?{}, ?{}, ?{})",
            at + 1,
            at + 2,
            at + 3
        ));
    }
    sql
}

/// A SQLite file with no tables at all (created, then its process was killed before the schema).
pub fn sqlite_has_no_tables(path: &Path) -> bool {
    Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .and_then(|c| {
            c.query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| {
                r.get::<_, i64>(0)
            })
        })
        .map(|n| n == 0)
        .unwrap_or(false)
}

/// `SqliteSaver.setup()` on a connection the caller owns: WAL plus the two tables (spec §1.1).
pub fn create_sqlite_schema(conn: &Connection) -> rusqlite::Result<()> {
    create_schema(conn)
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

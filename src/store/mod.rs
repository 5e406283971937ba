//! Checkpoint stores: the tables a LangGraph checkpointer leaves (spec §1), behind one trait.
//!
//! [`Backend`] is the seam: the inspector, the snapshot layer, the TUI and the engine's saver talk
//! to a [`Store`] (a boxed backend), never to a database client. SQLite (`SqliteSaver`'s file)
//! is the first backend. A backend reads rows and hands them back in one shape
//! ([`CheckpointRow`], [`WriteRow`]); what a checkpoint looks like on disk (one msgpack blob, or
//! JSON plus per-channel blobs) stays inside the backend, which alone decodes it
//! ([`Backend::decode`]) and encodes it ([`Backend::encode_checkpoint`]).
//!
//! Writing is one transaction per superstep: `begin_write`, the head check, `put_checkpoint` /
//! `put_writes`, `commit_write` (the engine's `saver` drives it).

mod checkpoint;
pub mod items;
pub mod postgres;
pub mod sizes;
mod sqlite;

pub use checkpoint::{encode_msgpack, Checkpoint, CheckpointRef, Version};
/// superstep's own SQLite files beside a store (the recorded calls).
pub use sqlite::own as sqlite_own;
pub use sqlite::{
    create_sqlite_schema, sqlite_has_no_tables, SqliteStore, DENSE_OVER, META_OVER, PREVIEW_OVER,
};

use std::any::Any;
use std::path::Path;
use std::sync::Arc;

/// Errors reading or writing the checkpoint database. `path` names the store: a file path, or
/// (for a server) the connection target without its password.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: no such file")]
    Missing { path: String },
    #[error("{path}: not a SQLite database ({detail})")]
    NotSqlite { path: String, detail: String },
    #[error("{path}: SQLite, but not a LangGraph checkpoint database (missing table {table})")]
    NotCheckpointDb { path: String, table: &'static str },
    #[error("{path}: {detail}")]
    Sqlite { path: String, detail: String },
    /// A server database without any of LangGraph's tables (the engine may create them).
    #[error("{path}: {kind}, but not a LangGraph checkpoint database (no checkpoint tables)")]
    NoTables { path: String, kind: &'static str },
    /// A database server's answer (or silence): `path` is the store's label, never a password.
    #[error("{path}: {detail}")]
    Server { path: String, detail: String },
    #[error("{path}: corrupt {what} in {location}: {detail}")]
    Corrupt {
        path: String,
        what: &'static str,
        location: String,
        detail: String,
    },
    /// A checkpoint LangGraph's `EncryptedSerializer` wrote (its `type` is
    /// `<serializer>+<cipher>`): without the key nothing inside it can be read.
    #[error(
        "{path}: the checkpoint in {location} is encrypted (type {type_:?}, written by LangGraph's \
         EncryptedSerializer): superstep has no key to decrypt it, so its channel values, versions \
         and tasks cannot be shown (`threads` still lists the thread)"
    )]
    Encrypted {
        path: String,
        location: String,
        type_: String,
    },
    /// A checkpoint a saver with `JsonPlusSerializer(pickle_fallback=True)` pickled (msgpack
    /// could not encode something in it). Unpickling runs code: superstep never does it itself;
    /// LangGraph reads it through the bridge when the graph that wrote it is given.
    #[error(
        "{path}: the checkpoint in {location} is pickled (type \"pickle\": its saver's serializer was \
         JsonPlusSerializer(pickle_fallback=True) and msgpack could not encode a value in it), not \
         corrupt: superstep does not unpickle it (that runs code) — continue/run/resume/replay with \
         the graph that wrote it (`continue app.py:graph -t THREAD`): LangGraph reads and steps it \
         through the bridge with the app's own serializer, and the CLI shows its get_state"
    )]
    Pickled { path: String, location: String },
    /// A prune found another process writing the store.
    #[error(
        "{path}: {detail}: prune changes nothing while another process may be writing the store \
         (stop the app or the other superstep, or run again when it is idle)"
    )]
    InUse { path: String, detail: String },
}

/// How a store is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Inspection: read-only; never creates, migrates or checkpoints anything.
    ReadOnly,
    /// The engine's mode: creates the schema if absent (as the saver's `setup()` does).
    ReadWrite,
    /// `prune --yes`: an existing checkpoint store opened for writing; nothing is created,
    /// migrated or converted.
    Maintain,
}

/// One `checkpoints` row with its metadata parsed. The checkpoint itself is decoded on demand by
/// the backend that read it ([`Store::decode`]).
#[derive(Clone)]
pub struct CheckpointRow {
    pub thread_id: String,
    pub checkpoint_ns: String,
    pub checkpoint_id: String,
    pub parent_checkpoint_id: Option<String>,
    /// Parsed metadata JSON; `{}` for SQL NULL or an empty blob.
    pub metadata: serde_json::Map<String, serde_json::Value>,
    /// Inspection only: the stored checkpoint is this many bytes, more than [`PREVIEW_OVER`], and
    /// was not loaded; decoding it gives a bounded preview (see `value::capped`).
    pub preview_of: Option<u64>,
    /// Inspection only: the metadata is this many bytes, more than the backend parses whole;
    /// `metadata` is a bounded preview of it.
    pub metadata_preview_of: Option<u64>,
    /// The checkpoint as the backend read it; only that backend looks inside.
    pub(crate) body: Arc<dyn Any + Send + Sync>,
}

impl std::fmt::Debug for CheckpointRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckpointRow")
            .field("thread_id", &self.thread_id)
            .field("checkpoint_ns", &self.checkpoint_ns)
            .field("checkpoint_id", &self.checkpoint_id)
            .field("parent_checkpoint_id", &self.parent_checkpoint_id)
            .field("metadata", &self.metadata)
            .field("preview_of", &self.preview_of)
            .finish_non_exhaustive()
    }
}

/// One pending write, value decoded.
#[derive(Debug, Clone)]
pub struct WriteRow {
    pub task_id: String,
    pub task_path: String,
    pub idx: i64,
    pub channel: String,
    pub type_: Option<String>,
    pub value: crate::value::Typed,
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

pub use crate::keys::{key_label, raw_key, BLOB_KEY, BYTES_KEY};

/// See [`Backend::presence`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    Same,
    /// Another file is at the path now (another device/inode).
    Replaced,
    /// Nothing is at the path now.
    Gone,
}

/// What tells that another process changed the store since the last look. Opaque: two stamps
/// of one store compare equal when nothing observable changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp(pub(crate) Vec<u128>);

/// A checkpoint encoded for its backend, ready to be written (`put`).
#[derive(Debug, Clone)]
pub struct EncodedCheckpoint {
    pub ns: String,
    pub id: String,
    pub parent: Option<String>,
    /// The `checkpoints.checkpoint` column.
    pub checkpoint: Vec<u8>,
    /// The `checkpoints.metadata` column (JSON text).
    pub metadata: String,
    /// Side rows a backend keeps per channel version (none for SQLite): channel, version,
    /// type, blob.
    pub blobs: Vec<(String, String, String, Option<Vec<u8>>)>,
}

/// One task's `put_writes` batch: rows `(idx, channel, type, value)`. `replace`: every write is
/// a special channel (upsert on conflict); otherwise existing rows are kept.
#[derive(Debug, Clone)]
pub struct EncodedWrites {
    pub ns: String,
    pub checkpoint_id: String,
    pub task_id: String,
    pub task_path: String,
    pub rows: Vec<(i64, String, &'static str, Vec<u8>)>,
    pub replace: bool,
}

/// A checkpoint store: the rows a LangGraph checkpointer left, read page by page, and written
/// the way that checkpointer writes them. Every read is keyed by the primary key and paged;
/// nothing loads a whole store.
pub trait Backend {
    /// The store as messages name it: a file path, or a server URL without its password.
    fn label(&self) -> &str;
    /// What kind of store this is, for the CLI and TUI (`SQLite`, …).
    fn kind(&self) -> &'static str;

    /// Threads of the root namespace, ordered by thread id, `limit` at a time after `after`.
    fn threads(&self, after: Option<&str>, limit: usize) -> Result<Vec<ThreadSummary>, StoreError>;
    /// Whether the thread has any checkpoint (in any namespace).
    fn thread_exists(&self, thread_id: &str) -> Result<bool, StoreError>;
    /// Checkpoint namespaces of a thread (`""` first).
    fn namespaces(&self, thread_id: &str) -> Result<Vec<String>, StoreError>;
    /// `get_tuple`: the addressed checkpoint, or the latest one of `(thread, ns)`.
    fn checkpoint(
        &self,
        thread_id: &str,
        ns: &str,
        checkpoint_id: Option<&str>,
    ) -> Result<Option<CheckpointRow>, StoreError>;
    /// `list`: checkpoints of `(thread, ns)` newest first, strictly older than `before`, at
    /// most `limit`.
    fn history(
        &self,
        thread_id: &str,
        ns: &str,
        before: Option<&str>,
        limit: usize,
    ) -> Result<Vec<CheckpointRow>, StoreError>;
    /// Pending writes of one checkpoint, sorted like `writes_sort_key`: `(task_path, task_id, idx)`.
    fn writes(
        &self,
        thread_id: &str,
        ns: &str,
        checkpoint_id: &str,
    ) -> Result<Vec<WriteRow>, StoreError>;
    /// Decode a row this backend read, reporting where a corrupt one lives.
    fn decode(&self, row: &CheckpointRow) -> Result<Checkpoint, StoreError>;

    /// Whether decoded checkpoints keep the saver's channel order (the graph's channel order),
    /// from which node order can be guessed without the graph.
    fn keeps_channel_order(&self) -> bool {
        true
    }

    /// See [`Stamp`]; cheap enough to call several times a second.
    fn stamp(&self) -> Result<Stamp, StoreError>;
    /// This handle will not see later writers (a SQLite file opened `immutable`): a caller that
    /// notices a change should open the store again.
    fn needs_reopen(&self) -> bool {
        false
    }
    /// Whether the store is still the one that was opened: a file may have been replaced (a
    /// new file moved over the path) or deleted since; this handle still reads the old one.
    fn presence(&self) -> Presence {
        Presence::Same
    }
    /// How long a read waits for another process's lock before giving up (SQLite's busy
    /// timeout; 5 s by default). The TUI waits briefly, shows what it has, and retries.
    fn set_lock_wait(&self, _wait: std::time::Duration) {}

    /// Encode a checkpoint the way this backend's saver stores it.
    /// `metadata` is the JSON text the saver stores (`json.dumps` of the metadata).
    fn encode_checkpoint(
        &self,
        ns: &str,
        parent: Option<&str>,
        cp: &CheckpointRef<'_>,
        metadata: String,
    ) -> EncodedCheckpoint;
    /// Start the transaction of one superstep, holding off other writers until it ends.
    fn begin_write(&self) -> Result<(), StoreError>;
    /// A number that changes whenever another connection commits (SQLite's `data_version`);
    /// `None` when the backend cannot tell cheaply (then the head is always checked).
    fn write_token(&self) -> Result<Option<i64>, StoreError>;
    /// The thread's newest root checkpoint id, as the open transaction sees it.
    fn head(&self, thread_id: &str) -> Result<Option<String>, StoreError>;
    fn put_checkpoint(&self, thread_id: &str, cp: &EncodedCheckpoint) -> Result<(), StoreError>;
    fn put_writes(&self, thread_id: &str, w: &EncodedWrites) -> Result<(), StoreError>;
    fn commit_write(&self) -> Result<(), StoreError>;
    /// Abandon the open transaction (errors are ignored: there is nothing left to undo).
    fn rollback_write(&self);

    /// The doctor (`du`, `prune`): every thread's rows with their stored sizes and references
    /// ([`sizes::ThreadSizes`]), one thread at a time in thread-id order, no value decoded;
    /// threads `want` refuses are passed over before their checkpoints are looked into.
    fn scan_sizes(
        &self,
        want: &dyn Fn(&str) -> bool,
        visit: &mut dyn FnMut(sizes::ThreadSizes) -> Result<(), StoreError>,
    ) -> Result<(), StoreError>;
    /// The database's own sizes: the file or database, free space; per table when `tables`
    /// (which may read every page).
    fn space(&self, tables: bool) -> Result<sizes::Space, StoreError>;
    /// Start a prune's one transaction (a store opened [`Mode::Maintain`]); refused with
    /// [`StoreError::InUse`] while another process is writing the store. `commit_write` /
    /// `rollback_write` end it.
    fn begin_prune(&self) -> Result<(), StoreError>;
    /// Delete a thread's rows inside the prune's transaction.
    fn remove(&self, r: &sizes::Removal) -> Result<sizes::Deleted, StoreError>;
    /// Give the freed space back (`VACUUM`), after the prune's transaction.
    fn vacuum(&self) -> Result<(), StoreError>;

    /// The backend itself, to take back a concrete store (see [`Store::into_sqlite`]).
    fn into_any(self: Box<Self>) -> Box<dyn Any>;

    /// LangGraph's key-value store kept in the same database (`SqliteStore` / `PostgresStore`,
    /// see [`items`]): its namespaces with their item counts; `None` when there is no store.
    fn store_namespaces(&self) -> Result<Option<Vec<items::NamespaceCount>>, StoreError> {
        Ok(None)
    }
    /// The store's items `q` selects, by namespace and key; `None` when there is no store.
    fn store_items(&self, _q: &items::ItemQuery) -> Result<Option<Vec<items::Item>>, StoreError> {
        Ok(None)
    }
}

/// A checkpoint store, whatever its backend.
pub struct Store {
    backend: Box<dyn Backend>,
}

impl Store {
    /// Open a checkpoint store: a `postgresql://` / `postgres://` URL is a Postgres database
    /// (`PostgresSaver`'s tables), anything else a SQLite file. `ReadOnly` requires an existing
    /// LangGraph checkpoint store and never writes to it (nor to a file's directory).
    pub fn open(path: &Path, mode: Mode) -> Result<Store, StoreError> {
        if let Some(url) = path.to_str().filter(|s| postgres::is_postgres_url(s)) {
            let pg = postgres::PostgresStore::open(url, mode)?;
            return Ok(Store::from_backend(Box::new(pg)));
        }
        Ok(Store::from_backend(Box::new(SqliteStore::open(
            path, mode,
        )?)))
    }

    /// Whether `path` names a store on a server (a Postgres URL) rather than a file.
    pub fn is_server(path: &Path) -> bool {
        path.to_str().is_some_and(postgres::is_postgres_url)
    }

    pub fn from_backend(backend: Box<dyn Backend>) -> Store {
        Store { backend }
    }

    /// The SQLite store inside, if that is the backend (benchmarks take its connection back).
    pub fn into_sqlite(self) -> Option<SqliteStore> {
        self.backend
            .into_any()
            .downcast::<SqliteStore>()
            .ok()
            .map(|b| *b)
    }
}

/// Every [`Backend`] method is called on the store itself.
impl std::ops::Deref for Store {
    type Target = dyn Backend;

    fn deref(&self) -> &(dyn Backend + 'static) {
        self.backend.as_ref()
    }
}

/// A bounded preview of a stored value too big to load whole, read from a stream (SQLite's
/// incremental blob I/O, Postgres `substring()` chunks): msgpack is previewed structurally
/// (`value::capped`); other types keep their first bytes.
pub(crate) fn preview_stream<R: std::io::Read + std::io::Seek>(
    rd: &mut R,
    type_: &str,
) -> Result<crate::value::Typed, crate::value::ValueError> {
    use crate::value::{capped, Typed, ValueError};
    use std::io::Read;
    let limits = capped::Limits::default();
    let head = |rd: &mut R| {
        let mut b = Vec::new();
        rd.take(limits.max_str as u64)
            .read_to_end(&mut b)
            .map(|_| b)
            .map_err(|e| ValueError::Msgpack(e.to_string()))
    };
    match type_ {
        "msgpack" => capped::preview(rd, limits).map(|p| Typed::Value(p.value)),
        "bytes" => head(rd).map(Typed::Bytes),
        "bytearray" => head(rd).map(Typed::ByteArray),
        "pickle" => head(rd).map(Typed::Pickle),
        "null" => Ok(Typed::Null),
        "json" => Err(ValueError::Json(
            "a JSON value this large is not previewed (only msgpack is streamed)".into(),
        )),
        other => Err(ValueError::UnknownType(other.to_string())),
    }
}

/// Metadata is JSON; SQL NULL, empty or JSON `null` mean `{}` (spec §1.3).
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

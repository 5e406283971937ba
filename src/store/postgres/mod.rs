//! The Postgres backend: `PostgresSaver`'s tables (langgraph-checkpoint-postgres 3.2, migration
//! levels 0–9) and `ShallowPostgresSaver`'s (levels 0–7), read with the `postgres` crate.
//!
//! * `checkpoints`: the checkpoint as JSONB with primitive channel values (None, str, int,
//!   float, bool) inline; metadata JSONB; `type` always NULL.
//! * `checkpoint_blobs`: one row per (channel, version), shared by every checkpoint at that
//!   version; types `empty` (no value) and `null` besides the serializer's.
//! * `checkpoint_writes`: `blob`, and `task_path` from migration 9 on.
//!
//! Inspection runs every read in a `READ ONLY` transaction on a session whose
//! `default_transaction_read_only` is on; it never runs `setup()` or any DDL. A connection the
//! server dropped is opened again on the next call.

mod target;
mod tls;

pub use target::{is_postgres_url, Env, Host, ProcessEnv, SslMode, Target};

use super::{
    parse_metadata, Backend, Checkpoint, CheckpointRef, CheckpointRow, EncodedCheckpoint,
    EncodedWrites, Mode, Stamp, StoreError, ThreadSummary, Version, WriteRow,
};
use crate::value::Typed;
use postgres::{Client, NoTls, Row};
use rmpv::Value;
use serde_json::Value as Json;
use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::time::Duration;

/// The newest `checkpoint_migrations` level of each layout this backend reads.
pub const KNOWN_LEVEL: i32 = 9;
pub const KNOWN_SHALLOW_LEVEL: i32 = 7;

/// PostgresSaver.setup()'s migrations (langgraph-checkpoint-postgres 3.2.0, `base.MIGRATIONS`),
/// run by the engine on a database without the tables.
const MIGRATIONS: [&str; 10] = [
    "CREATE TABLE IF NOT EXISTS checkpoint_migrations (
    v INTEGER PRIMARY KEY
);",
    "CREATE TABLE IF NOT EXISTS checkpoints (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    type TEXT,
    checkpoint JSONB NOT NULL,
    metadata JSONB NOT NULL DEFAULT '{}',
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);",
    "CREATE TABLE IF NOT EXISTS checkpoint_blobs (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    channel TEXT NOT NULL,
    version TEXT NOT NULL,
    type TEXT NOT NULL,
    blob BYTEA,
    PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
);",
    "CREATE TABLE IF NOT EXISTS checkpoint_writes (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    channel TEXT NOT NULL,
    type TEXT,
    blob BYTEA NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);",
    "ALTER TABLE checkpoint_blobs ALTER COLUMN blob DROP not null;",
    "SELECT 1;",
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoints_thread_id_idx ON checkpoints(thread_id);",
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoint_blobs_thread_id_idx ON checkpoint_blobs(thread_id);",
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoint_writes_thread_id_idx ON checkpoint_writes(thread_id);",
    "ALTER TABLE checkpoint_writes ADD COLUMN IF NOT EXISTS task_path TEXT NOT NULL DEFAULT '';",
];

/// The checkpoint of one `checkpoints` row as Postgres holds it.
struct Body {
    /// `checkpoint::text` (JSONB's own key order).
    checkpoint: String,
    /// The blobs of its channel versions: channel, type, blob.
    blobs: Vec<(String, String, Option<Vec<u8>>)>,
    /// Blobs over `PREVIEW_OVER` bytes, not loaded: previewed by streaming them on decode.
    big: Vec<BigBlob>,
    /// v < 4 only: the parent's `__pregel_tasks` writes (type, blob), migrated into the
    /// checkpoint as PostgresSaver does.
    sends: Option<Vec<(String, Vec<u8>)>>,
}

/// A `checkpoint_blobs` value too big to load whole (inspection only).
struct BigBlob {
    channel: String,
    type_: String,
    /// `None` in ShallowPostgresSaver's layout (blobs by channel alone).
    version: Option<String>,
    len: u64,
}

/// Fetch this much of a big value per query while previewing it.
const CHUNK: u64 = 256 * 1024;

/// A `Read + Seek` view of a value on the server, read in bounded `substring()` chunks: `fetch`
/// gets `(0-based offset, length)`.
struct Chunked<F> {
    fetch: F,
    len: u64,
    pos: u64,
    buf: Vec<u8>,
    at: u64,
}

impl<F: FnMut(u64, u64) -> std::io::Result<Vec<u8>>> std::io::Read for Chunked<F> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.pos >= self.len || out.is_empty() {
            return Ok(0);
        }
        if self.pos < self.at || self.pos >= self.at + self.buf.len() as u64 {
            self.buf = (self.fetch)(self.pos, CHUNK.min(self.len - self.pos))?;
            self.at = self.pos;
            if self.buf.is_empty() {
                return Ok(0);
            }
        }
        let off = (self.pos - self.at) as usize;
        let k = out.len().min(self.buf.len() - off);
        out[..k].copy_from_slice(&self.buf[off..off + k]);
        self.pos += k as u64;
        Ok(k)
    }
}

impl<F> std::io::Seek for Chunked<F> {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        let (base, d) = match to {
            std::io::SeekFrom::Start(n) => (0i128, n as i128),
            std::io::SeekFrom::Current(d) => (self.pos as i128, d as i128),
            std::io::SeekFrom::End(d) => (self.len as i128, d as i128),
        };
        let p = base + d;
        if p < 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "seek before the start",
            ));
        }
        self.pos = p as u64;
        Ok(self.pos)
    }
}

/// A PostgresSaver (or ShallowPostgresSaver) database.
pub struct PostgresStore {
    client: RefCell<Client>,
    target: Target,
    /// The TLS connector `sslmode` asks for (`None`: plain text).
    tls: Option<tls::Connector>,
    label: String,
    mode: Mode,
    shallow: bool,
    has_task_path: bool,
    /// A write transaction is open (`begin_write` .. `commit_write`).
    writing: Cell<bool>,
    /// Values over this many bytes are previewed, not loaded (`PREVIEW_OVER` when inspecting;
    /// the engine loads everything).
    big: u64,
}

const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The select list of one checkpoint row: its blobs as aligned arrays (LangGraph's `SELECT_SQL`
/// joins the same rows: each channel version's blob, by primary key; ShallowPostgresSaver's
/// by channel alone). Nothing over `big` bytes is sent: a blob comes as NULL with its length
/// and version beside it (previewed on decode by streaming it), and a checkpoint JSON over `big`
/// (inline strings are PostgresSaver's "primitives") comes with every inline string over 64 KiB
/// cut the way `value::capped` cuts, its full length last.
fn checkpoint_cols(shallow: bool, big: u64) -> String {
    let (id, parent, version_join) = if shallow {
        ("c.checkpoint ->> 'id'", "NULL::text", "")
    } else {
        (
            "c.checkpoint_id",
            "c.parent_checkpoint_id",
            " AND bl.version = v.value",
        )
    };
    let max_str = crate::value::capped::Limits::default().max_str;
    format!(
        "c.thread_id, c.checkpoint_ns, {id}, {parent},
    CASE WHEN octet_length(t.txt) > {big} THEN jsonb_set(c.checkpoint, '{{channel_values}}', coalesce((
        SELECT jsonb_object_agg(e.key, CASE WHEN jsonb_typeof(e.value) = 'string' AND octet_length(e.value #>> '{{}}') > {max_str}
            THEN to_jsonb(left(e.value #>> '{{}}', {max_str}) || '… [cut by superstep: ' || octet_length(e.value #>> '{{}}') || ' bytes in all]')
            ELSE e.value END)
        FROM jsonb_each(c.checkpoint -> 'channel_values') e), '{{}}'::jsonb))::text ELSE t.txt END,
    c.metadata::text, b.channels, b.types, b.blobs, b.lens, b.versions, octet_length(t.txt)::int8
    FROM checkpoints c CROSS JOIN LATERAL (SELECT c.checkpoint::text AS txt OFFSET 0) t
    LEFT JOIN LATERAL (
        SELECT array_agg(bl.channel) AS channels, array_agg(bl.type) AS types,
            array_agg(CASE WHEN octet_length(bl.blob) > {big} THEN NULL ELSE bl.blob END) AS blobs,
            array_agg(octet_length(bl.blob)::int8) AS lens, array_agg(v.value) AS versions
        FROM jsonb_each_text(c.checkpoint -> 'channel_versions') v
        JOIN checkpoint_blobs bl ON bl.thread_id = c.thread_id AND bl.checkpoint_ns = c.checkpoint_ns
            AND bl.channel = v.key{version_join}
    ) b ON true"
    )
}

impl PostgresStore {
    /// Connect to the store `url` names (with libpq's environment and pgpass) and check that it
    /// holds LangGraph's tables at a migration level this backend knows. `ReadWrite` (the
    /// engine) creates the tables on a database that has none, as `setup()` does.
    pub fn open(url: &str, mode: Mode) -> Result<PostgresStore, StoreError> {
        let target = Target::parse(url, &ProcessEnv).map_err(|detail| StoreError::Server {
            path: redact(url),
            detail,
        })?;
        let label = target.label();
        let tls = tls::connector(&target).map_err(|detail| StoreError::Server {
            path: label.clone(),
            detail,
        })?;
        let client =
            connect(&target, tls.as_ref(), mode).map_err(|e| classify(&label, &target, &e))?;
        let mut store = PostgresStore {
            client: RefCell::new(client),
            target,
            tls,
            label,
            mode,
            shallow: false,
            has_task_path: false,
            writing: Cell::new(false),
            big: if mode == Mode::ReadOnly {
                super::PREVIEW_OVER
            } else {
                i64::MAX as u64
            },
        };
        store.check_schema()?;
        Ok(store)
    }

    fn err(&self, e: postgres::Error) -> StoreError {
        classify(&self.label, &self.target, &e)
    }

    fn server(&self, detail: impl Into<String>) -> StoreError {
        StoreError::Server {
            path: self.label.clone(),
            detail: detail.into(),
        }
    }

    /// Which of LangGraph's layouts the tables have, at which migration level; refuse what is
    /// not a checkpoint database or newer than known.
    fn check_schema(&mut self) -> Result<(), StoreError> {
        let cols = self.columns()?;
        let has = |t: &str| cols.iter().any(|(tt, _)| tt == t);
        let col = |t: &str, c: &str| cols.iter().any(|(tt, cc)| tt == t && cc == c);
        if !has("checkpoints") && !has("checkpoint_writes") && !has("checkpoint_blobs") {
            if self.mode == Mode::ReadWrite {
                self.setup()?;
                return self.check_schema();
            }
            return Err(StoreError::NoTables {
                path: self.label.clone(),
                kind: "Postgres",
            });
        }
        for t in ["checkpoints", "checkpoint_blobs", "checkpoint_writes"] {
            if !has(t) {
                return Err(self.server(format!(
                    "Postgres, but not a LangGraph checkpoint database (missing table {t})"
                )));
            }
        }
        self.shallow = !col("checkpoints", "checkpoint_id");
        self.has_task_path = col("checkpoint_writes", "task_path");
        let known = if self.shallow {
            KNOWN_SHALLOW_LEVEL
        } else {
            KNOWN_LEVEL
        };
        if has("checkpoint_migrations") {
            let level: Option<i32> = self
                .client
                .borrow_mut()
                .query_one("SELECT max(v) FROM checkpoint_migrations", &[])
                .map_err(|e| self.err(e))?
                .get(0);
            if let Some(level) = level.filter(|l| *l > known) {
                return Err(self.server(format!(
                    "checkpoint_migrations is at level {level}, newer than superstep knows ({known}, langgraph-checkpoint-postgres 3.2{}): nothing was read",
                    if self.shallow { ", ShallowPostgresSaver" } else { "" }
                )));
            }
        }
        if self.shallow && self.mode == Mode::ReadWrite {
            return Err(self.server(
                "a ShallowPostgresSaver database keeps only the latest checkpoint: superstep inspects it but does not step on it",
            ));
        }
        Ok(())
    }

    /// The columns of LangGraph's tables as `search_path` resolves them (as PostgresSaver's
    /// unqualified names do).
    fn columns(&self) -> Result<Vec<(String, String)>, StoreError> {
        let rows = self
            .client
            .borrow_mut()
            .query(
                "SELECT c.relname::text, a.attname::text FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
                 WHERE c.oid IN (to_regclass('checkpoints'), to_regclass('checkpoint_blobs'),
                                 to_regclass('checkpoint_writes'), to_regclass('checkpoint_migrations'))
                   AND a.attnum > 0 AND NOT a.attisdropped",
                &[],
            )
            .map_err(|e| self.err(e))?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    /// `PostgresSaver.setup()`: every migration in order, each recorded (autocommit, as
    /// `CREATE INDEX CONCURRENTLY` requires).
    fn setup(&self) -> Result<(), StoreError> {
        let mut c = self.client.borrow_mut();
        c.batch_execute(MIGRATIONS[0]).map_err(|e| self.err(e))?;
        let level: Option<i32> = c
            .query_one("SELECT max(v) FROM checkpoint_migrations", &[])
            .map_err(|e| self.err(e))?
            .get(0);
        let from = level.map_or(0, |l| l + 1);
        for (v, m) in MIGRATIONS.iter().enumerate().skip(from as usize) {
            c.batch_execute(m).map_err(|e| self.err(e))?;
            c.execute(
                "INSERT INTO checkpoint_migrations (v) VALUES ($1)",
                &[&(v as i32)],
            )
            .map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// Run `f` on the client in one `READ ONLY` transaction (or inside the open write
    /// transaction). A connection the server dropped is opened again first.
    fn read<T>(
        &self,
        f: impl FnOnce(&mut Client) -> Result<T, postgres::Error>,
    ) -> Result<T, StoreError> {
        let mut c = self.client.borrow_mut();
        if self.writing.get() {
            return f(&mut c).map_err(|e| self.err(e));
        }
        if c.is_closed() {
            *c = connect(&self.target, self.tls.as_ref(), self.mode).map_err(|e| self.err(e))?;
        }
        c.batch_execute("BEGIN READ ONLY ISOLATION LEVEL REPEATABLE READ")
            .map_err(|e| self.err(e))?;
        match f(&mut c) {
            Ok(out) => {
                c.batch_execute("COMMIT").map_err(|e| self.err(e))?;
                Ok(out)
            }
            Err(e) => {
                let _ = c.batch_execute("ROLLBACK");
                Err(self.err(e))
            }
        }
    }

    fn rows_to_checkpoints(
        &self,
        c: &mut Client,
        rows: Vec<Row>,
    ) -> Result<Vec<CheckpointRow>, postgres::Error> {
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            out.push(self.finish_row(c, r)?);
        }
        Ok(out)
    }

    fn finish_row(&self, c: &mut Client, r: Row) -> Result<CheckpointRow, postgres::Error> {
        let thread_id: String = r.get(0);
        let checkpoint_ns: String = r.get(1);
        let checkpoint_id: Option<String> = r.get(2);
        let parent: Option<String> = r.get(3);
        let checkpoint: String = r.get(4);
        let metadata: Option<String> = r.get(5);
        let channels: Option<Vec<String>> = r.get(6);
        let types: Option<Vec<String>> = r.get(7);
        let blobs: Option<Vec<Option<Vec<u8>>>> = r.get(8);
        let lens: Option<Vec<Option<i64>>> = r.get(9);
        let versions: Option<Vec<String>> = r.get(10);
        let json_len: Option<i64> = r.get(11);
        let (mut small, mut big) = (Vec::new(), Vec::new());
        for ((((c, t), b), len), v) in channels
            .unwrap_or_default()
            .into_iter()
            .zip(types.unwrap_or_default())
            .zip(blobs.unwrap_or_default())
            .zip(lens.unwrap_or_default())
            .zip(versions.unwrap_or_default())
        {
            match len.map(|l| l as u64).filter(|l| *l > self.big) {
                Some(len) => big.push(BigBlob {
                    channel: c,
                    type_: t,
                    version: (!self.shallow).then_some(v),
                    len,
                }),
                None => small.push((c, t, b)),
            }
        }
        let blobs = small;
        // what was not loaded: the big blobs, and a checkpoint JSON whose long strings were cut
        let left_out: u64 = big.iter().map(|b| b.len).sum::<u64>()
            + json_len
                .map(|l| l as u64)
                .filter(|l| *l > self.big)
                .unwrap_or(0);
        // PostgresSaver migrates a v < 4 checkpoint's pending sends from its parent's writes
        let old = serde_json::from_str::<Json>(&checkpoint)
            .ok()
            .and_then(|j| j.get("v").and_then(Json::as_i64))
            .is_some_and(|v| v < 4);
        let sends = match (&parent, old, self.shallow) {
            (Some(p), true, false) => Some(
                c.query(
                    &format!(
                        "SELECT type, blob FROM checkpoint_writes WHERE thread_id = $1 AND checkpoint_id = $2
                     AND channel = '__pregel_tasks' ORDER BY {}task_id, idx",
                        if self.has_task_path { "task_path, " } else { "" }
                    ),
                    &[&thread_id, p],
                )?
                .iter()
                .map(|w| {
                    (
                        w.get::<_, Option<String>>(0).unwrap_or_default(),
                        w.get(1),
                    )
                })
                .collect(),
            ),
            _ => None,
        };
        Ok(CheckpointRow {
            metadata: parse_metadata(metadata.as_deref().map(str::as_bytes)).unwrap_or_default(),
            thread_id,
            checkpoint_ns,
            checkpoint_id: checkpoint_id.unwrap_or_default(),
            parent_checkpoint_id: parent,
            preview_of: (left_out > 0).then_some(left_out),
            metadata_preview_of: None,
            body: Arc::new(Body {
                checkpoint,
                blobs,
                big,
                sends,
            }),
        })
    }

    fn corrupt(&self, what: &'static str, row: &CheckpointRow, detail: String) -> StoreError {
        StoreError::Corrupt {
            path: self.label.clone(),
            what,
            location: format!(
                "checkpoints(thread_id={:?}, checkpoint_ns={:?}, checkpoint_id={})",
                row.thread_id, row.checkpoint_ns, row.checkpoint_id
            ),
            detail,
        }
    }

    fn cols(&self) -> String {
        checkpoint_cols(self.shallow, self.big)
    }

    fn sql_checkpoint_by_id(&self) -> String {
        let cols = self.cols();
        if self.shallow {
            format!("SELECT {cols} WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint ->> 'id' = $3")
        } else {
            format!("SELECT {cols} WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = $3")
        }
    }

    fn sql_latest(&self) -> String {
        let cols = self.cols();
        if self.shallow {
            format!("SELECT {cols} WHERE c.thread_id = $1 AND c.checkpoint_ns = $2")
        } else {
            format!("SELECT {cols} WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 ORDER BY c.checkpoint_id DESC LIMIT 1")
        }
    }

    /// A bounded preview of a value too big to load, streamed in `substring()` chunks from the
    /// row `sql` selects (`$1..` = `key`, then the 1-based offset and the length).
    fn preview_value(
        c: &mut Client,
        sql: &str,
        key: &[&(dyn postgres::types::ToSql + Sync)],
        len: u64,
        type_: &str,
    ) -> Result<Typed, crate::value::ValueError> {
        let stmt = c.prepare(sql).map_err(|e| {
            crate::value::ValueError::Msgpack(format!("cannot stream the value: {e}"))
        })?;
        let mut rd = Chunked {
            fetch: |off: u64, n: u64| -> std::io::Result<Vec<u8>> {
                let (from, count) = (off as i64 + 1, n as i64);
                let mut params: Vec<&(dyn postgres::types::ToSql + Sync)> = key.to_vec();
                params.push(&from);
                params.push(&count);
                let row = c.query_one(&stmt, &params).map_err(std::io::Error::other)?;
                Ok(row.get::<_, Option<Vec<u8>>>(0).unwrap_or_default())
            },
            len,
            pos: 0,
            buf: Vec::new(),
            at: 0,
        };
        super::preview_stream(&mut rd, type_)
    }
}

/// Connect (over TLS when `tls` is given, as `sslmode` asks); an inspecting session is read-only
/// from its first statement on.
fn connect(
    t: &Target,
    tls: Option<&tls::Connector>,
    mode: Mode,
) -> Result<Client, postgres::Error> {
    let mut cfg = postgres::Config::new();
    match &t.host {
        Host::Tcp(h) => cfg.host(h),
        Host::Unix(d) => cfg.host_path(d),
    };
    cfg.port(t.port)
        .user(&t.user)
        .dbname(&t.dbname)
        .application_name(t.application_name.as_deref().unwrap_or("superstep"))
        .connect_timeout(t.connect_timeout.unwrap_or(CONNECT_TIMEOUT))
        .ssl_mode(match (tls, t.sslmode) {
            (None, _) | (_, SslMode::Disable) => postgres::config::SslMode::Disable,
            // libpq's `allow` tries plain text first; tokio-postgres only knows TLS-first
            (_, SslMode::Allow | SslMode::Prefer) => postgres::config::SslMode::Prefer,
            (_, SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull) => {
                postgres::config::SslMode::Require
            }
        });
    if let Some(p) = &t.password {
        cfg.password(p);
    }
    if let Some(o) = &t.options {
        cfg.options(o);
    }
    let mut c = match tls {
        Some(tls) => cfg.connect(tls.clone())?,
        None => cfg.connect(NoTls)?,
    };
    if mode == Mode::ReadOnly {
        c.batch_execute("SET default_transaction_read_only = on")?;
    }
    Ok(c)
}

/// A URL that did not parse, shown without anything that may be a password.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => format!("{}://…{}", &url[..s], &url[at..]),
        _ => url.split('?').next().unwrap_or(url).to_string(),
    }
}

/// One line saying what went wrong, in the terms of the store (never the password).
fn classify(label: &str, t: &Target, e: &postgres::Error) -> StoreError {
    use postgres::error::SqlState;
    let detail = if let Some(db) = e.as_db_error() {
        let code = db.code();
        if *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
            && db.message().contains("pg_hba.conf")
        {
            format!(
                "the server's pg_hba.conf admits no connection for user {:?} from here{} ({})",
                t.user,
                if db.message().contains("no encryption") {
                    " without TLS (try sslmode=require)"
                } else {
                    ""
                },
                db.message()
            )
        } else if *code == SqlState::INVALID_PASSWORD
            || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
        {
            format!(
                "authentication failed for user {:?}{} ({})",
                t.user,
                match &t.password_from {
                    Some(f) => format!(", password from {f}"),
                    None => ", no password given (URL, PGPASSWORD or ~/.pgpass)".into(),
                },
                db.message()
            )
        } else if *code == SqlState::INVALID_CATALOG_NAME {
            format!("database {:?} does not exist", t.dbname)
        } else if *code == SqlState::READ_ONLY_SQL_TRANSACTION {
            format!("refused a write in a read-only session: {}", db.message())
        } else {
            format!("{}: {}", db.severity(), db.message())
        }
    } else if e.is_closed() {
        "the connection to the server was lost (it is opened again on the next try)".into()
    } else {
        let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
        let mut io = None;
        while let Some(s) = source {
            if let Some(i) = s.downcast_ref::<std::io::Error>() {
                io = Some(i.kind());
            }
            source = s.source();
        }
        let place = match &t.host {
            Host::Tcp(h) => format!("{h}:{}", t.port),
            Host::Unix(d) => format!("{}/.s.PGSQL.{}", d.display(), t.port),
        };
        match io {
            Some(std::io::ErrorKind::ConnectionRefused) | Some(std::io::ErrorKind::NotFound) => {
                format!("cannot connect: no server at {place} (is it running?)")
            }
            Some(std::io::ErrorKind::TimedOut) => format!("cannot connect: {place} timed out"),
            _ => tls::explain(e, t).unwrap_or_else(|| e.to_string()),
        }
    };
    StoreError::Server {
        path: label.to_string(),
        detail,
    }
}

/// A JSON value (an inline primitive or a version) as msgpack.
fn json_to_value(j: &Json) -> Value {
    match j {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Boolean(*b),
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                Value::F64(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Json::String(s) => Value::from(s.as_str()),
        Json::Array(a) => Value::Array(a.iter().map(json_to_value).collect()),
        Json::Object(o) => Value::Map(
            o.iter()
                .map(|(k, v)| (Value::from(k.as_str()), json_to_value(v)))
                .collect(),
        ),
    }
}

fn versions_of(j: Option<&Json>, what: &str) -> Result<Vec<(String, Version)>, String> {
    match j {
        None | Some(Json::Null) => Ok(Vec::new()),
        Some(Json::Object(m)) => m
            .iter()
            .map(|(k, v)| {
                Version::from_value(&json_to_value(v))
                    .map(|ver| (k.clone(), ver))
                    .ok_or_else(|| format!("{what}[{k:?}] is not a version"))
            })
            .collect(),
        Some(_) => Err(format!("{what} is not an object")),
    }
}

/// The checkpoint LangGraph loads from a row: the JSON, its inline values, then the blobs of its
/// channel versions (a blob wins over an inline value; `empty` means no value), then the pending
/// sends of a v < 4 checkpoint.
fn decode_body(body: &Body) -> Result<Checkpoint, String> {
    let j: Json = serde_json::from_str(&body.checkpoint)
        .map_err(|e| format!("checkpoint is not JSON: {e}"))?;
    let Json::Object(o) = &j else {
        return Err("checkpoint is not a JSON object".into());
    };
    let v = o.get("v").and_then(Json::as_i64).unwrap_or(1);
    let mut channel_values: Vec<(String, Value)> = match o.get("channel_values") {
        Some(Json::Object(m)) => m
            .iter()
            .map(|(k, v)| (k.clone(), json_to_value(v)))
            .collect(),
        None | Some(Json::Null) => Vec::new(),
        Some(_) => return Err("channel_values is not an object".into()),
    };
    for (ch, ty, blob) in &body.blobs {
        if ty == "empty" {
            continue;
        }
        let value = Typed::decode(ty, blob.as_deref().unwrap_or(&[]))
            .map_err(|e| format!("blob of channel {ch:?}: {e}"))?
            .into_value();
        match channel_values.iter_mut().find(|(k, _)| k == ch) {
            Some((_, old)) => *old = value,
            None => channel_values.push((ch.clone(), value)),
        }
    }
    let mut channel_versions = versions_of(o.get("channel_versions"), "channel_versions")?;
    if let Some(sends) = body.sends.as_ref().filter(|s| !s.is_empty()) {
        let packets = sends
            .iter()
            .map(|(ty, b)| Typed::decode(ty, b).map(Typed::into_value))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("pending send: {e}"))?;
        channel_values.retain(|(k, _)| k != "__pregel_tasks");
        channel_values.push(("__pregel_tasks".into(), Value::Array(packets)));
        let max = channel_versions
            .iter()
            .map(|(_, v)| v.clone())
            .reduce(|a, b| {
                if Version::gt(Some(&b), Some(&a)) {
                    b
                } else {
                    a
                }
            });
        channel_versions.retain(|(k, _)| k != "__pregel_tasks");
        // PostgresSaver takes a fresh random version when there is none: any version will do
        channel_versions.push((
            "__pregel_tasks".into(),
            max.unwrap_or_else(|| Version::Str(format!("{:032}.{:016}", 1, 0))),
        ));
    }
    let versions_seen = match o.get("versions_seen") {
        Some(Json::Object(m)) => m
            .iter()
            .map(|(node, vs)| {
                Ok((
                    node.clone(),
                    versions_of(Some(vs), &format!("versions_seen[{node:?}]"))?,
                ))
            })
            .collect::<Result<Vec<_>, String>>()?,
        None | Some(Json::Null) => Vec::new(),
        Some(_) => return Err("versions_seen is not an object".into()),
    };
    let updated_channels = match o.get("updated_channels") {
        Some(Json::Array(a)) => Some(
            a.iter()
                .map(|c| {
                    c.as_str()
                        .map(str::to_string)
                        .ok_or("updated_channels holds a non-string")
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
        _ => None,
    };
    // the load-time migration of a legacy `pending_sends` list (ShallowPostgresSaver hands it
    // over in the checkpoint), as for every saver
    let legacy = o.get("pending_sends").filter(|_| v < 4).cloned();
    let mut cp = Checkpoint {
        v,
        ts: o.get("ts").and_then(Json::as_str).unwrap_or("").to_string(),
        id: o
            .get("id")
            .and_then(Json::as_str)
            .ok_or("checkpoint has no id")?
            .to_string(),
        channel_values,
        channel_versions,
        versions_seen,
        updated_channels,
    };
    if let Some(Json::Array(sends)) = legacy {
        if !sends.is_empty() && cp.value("__pregel_tasks").is_none() {
            let max = cp
                .channel_versions
                .iter()
                .map(|(_, v)| v.clone())
                .reduce(|a, b| {
                    if Version::gt(Some(&b), Some(&a)) {
                        b
                    } else {
                        a
                    }
                });
            cp.channel_values.push((
                "__pregel_tasks".into(),
                Value::Array(sends.iter().map(json_to_value).collect()),
            ));
            if let Some(max) = max {
                cp.channel_versions.push(("__pregel_tasks".into(), max));
            }
        }
    }
    Ok(cp)
}

type BlobRow = (String, String, String, Option<Vec<u8>>);

/// `PostgresSaver.put`: the checkpoint JSON with primitive values inline, and a blob row for each
/// other channel in `new_versions` (the other channels' blobs are already stored at their
/// versions, shared).
fn split_checkpoint(cp: &CheckpointRef<'_>) -> Result<(Json, Vec<BlobRow>), String> {
    let mut inline = serde_json::Map::new();
    let mut blobs = Vec::new();
    for (k, v) in &cp.channel_values {
        let v: &Value = v;
        // a DeltaChannel's `_DeltaSnapshot` goes to a blob and leaves an inline `true` marker
        let delta_snapshot =
            matches!(v, Value::Ext(code, _) if *code == crate::value::ext::EXT_DELTA_SNAPSHOT);
        if delta_snapshot {
            inline.insert(k.to_string(), Json::Bool(true));
        }
        if is_primitive(v) {
            inline.insert(
                k.to_string(),
                primitive_json(v).map_err(|e| format!("channel {k:?}: {e}"))?,
            );
        } else if let Some((_, ver)) = cp.new_versions.iter().find(|(c, _)| c == k) {
            let mut enc = Vec::new();
            crate::value::encrypted_ciphers(v, &mut enc);
            if !enc.is_empty() {
                // an opaque EncryptedSerializer envelope cannot be written back as it was read
                return Err(format!(
                    "channel {k:?} holds a value LangGraph's EncryptedSerializer wrote ({}): superstep has no key and cannot step on it",
                    enc.join(", ")
                ));
            }
            let (ty, bytes) = Typed::Value(v.clone()).encode();
            blobs.push((
                k.to_string(),
                version_text(ver),
                ty.to_string(),
                Some(bytes),
            ));
        }
    }
    let versions = |m: &[(String, Version)]| {
        Json::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), version_json(v)))
                .collect(),
        )
    };
    let mut o = serde_json::Map::new();
    o.insert("v".into(), Json::from(cp.v));
    o.insert("ts".into(), Json::from(cp.ts));
    o.insert("id".into(), Json::from(cp.id));
    o.insert("channel_values".into(), Json::Object(inline));
    o.insert("channel_versions".into(), versions(cp.channel_versions));
    o.insert(
        "versions_seen".into(),
        Json::Object(
            cp.versions_seen
                .iter()
                .map(|(n, m)| (n.clone(), versions(m)))
                .collect(),
        ),
    );
    o.insert(
        "updated_channels".into(),
        match cp.updated_channels {
            Some(u) => Json::from(u.to_vec()),
            None => Json::Null,
        },
    );
    Ok((Json::Object(o), blobs))
}

/// PostgresSaver's inline test: `v is None or isinstance(v, (str, int, float, bool))`.
fn is_primitive(v: &Value) -> bool {
    matches!(
        v,
        Value::Nil
            | Value::Boolean(_)
            | Value::Integer(_)
            | Value::F32(_)
            | Value::F64(_)
            | Value::String(_)
    )
}

/// `Jsonb(value)`: psycopg's `json.dumps` of an inline primitive. Non-finite floats are not
/// JSON: PostgresSaver fails on them; so does this.
fn primitive_json(v: &Value) -> Result<Json, String> {
    Ok(match v {
        Value::Nil => Json::Null,
        Value::Boolean(b) => Json::Bool(*b),
        Value::Integer(i) => match (i.as_i64(), i.as_u64()) {
            (Some(i), _) => Json::from(i),
            (None, Some(u)) => Json::from(u),
            _ => return Err("integer out of range".into()),
        },
        Value::F32(f) => float_json(*f as f64)?,
        Value::F64(f) => float_json(*f)?,
        Value::String(s) => Json::String(
            s.as_str()
                .ok_or("a str channel value that is not UTF-8")?
                .to_string(),
        ),
        _ => return Err("not a primitive".into()),
    })
}

fn float_json(f: f64) -> Result<Json, String> {
    serde_json::Number::from_f64(f)
        .map(Json::Number)
        .ok_or_else(|| format!("{f} cannot be stored in JSONB (PostgresSaver fails the same way)"))
}

impl Backend for PostgresStore {
    fn label(&self) -> &str {
        &self.label
    }

    fn kind(&self) -> &'static str {
        if self.shallow {
            "Postgres (ShallowPostgresSaver)"
        } else {
            "Postgres"
        }
    }

    /// JSONB orders keys by length, then bytes.
    fn keeps_channel_order(&self) -> bool {
        false
    }

    fn threads(&self, after: Option<&str>, limit: usize) -> Result<Vec<ThreadSummary>, StoreError> {
        let limit = limit.min(i64::MAX as usize) as i64;
        let rows = self.read(|c| {
            const Q: &str = "SELECT thread_id, count(*) FILTER (WHERE checkpoint_ns = ''),
                       max(checkpoint_id) FILTER (WHERE checkpoint_ns = ''),
                       count(*) FILTER (WHERE checkpoint_ns <> '')
                FROM checkpoints";
            match after {
                Some(a) => c.query(
                    &format!(
                        "{Q} WHERE thread_id > $1 GROUP BY thread_id ORDER BY thread_id LIMIT $2"
                    ),
                    &[&a, &limit],
                ),
                None => c.query(
                    &format!("{Q} GROUP BY thread_id ORDER BY thread_id LIMIT $1"),
                    &[&limit],
                ),
            }
        })?;
        let shallow = self.shallow;
        Ok(rows
            .iter()
            .map(|r| ThreadSummary {
                thread_id: r.get(0),
                checkpoints: r.get(1),
                latest_checkpoint_id: if shallow {
                    String::new()
                } else {
                    r.get::<_, Option<String>>(2).unwrap_or_default()
                },
                subgraph_checkpoints: r.get(3),
            })
            .collect())
    }

    fn thread_exists(&self, thread_id: &str) -> Result<bool, StoreError> {
        self.read(|c| {
            c.query_one(
                "SELECT EXISTS(SELECT 1 FROM checkpoints WHERE thread_id = $1)",
                &[&thread_id],
            )
            .map(|r| r.get(0))
        })
    }

    fn namespaces(&self, thread_id: &str) -> Result<Vec<String>, StoreError> {
        let mut out: Vec<String> = self.read(|c| {
            c.query(
                "SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = $1",
                &[&thread_id],
            )
            .map(|rows| rows.iter().map(|r| r.get(0)).collect())
        })?;
        out.sort();
        Ok(out)
    }

    fn checkpoint(
        &self,
        thread_id: &str,
        ns: &str,
        checkpoint_id: Option<&str>,
    ) -> Result<Option<CheckpointRow>, StoreError> {
        self.read(|c| {
            let row = match checkpoint_id {
                Some(id) => c.query_opt(&self.sql_checkpoint_by_id(), &[&thread_id, &ns, &id])?,
                None => c.query_opt(&self.sql_latest(), &[&thread_id, &ns])?,
            };
            row.map(|r| self.finish_row(c, r)).transpose()
        })
    }

    fn history(
        &self,
        thread_id: &str,
        ns: &str,
        before: Option<&str>,
        limit: usize,
    ) -> Result<Vec<CheckpointRow>, StoreError> {
        if self.shallow {
            // one checkpoint per namespace: the history is that checkpoint
            let row = self.checkpoint(thread_id, ns, None)?;
            return Ok(row
                .filter(|r| before.is_none_or(|b| r.checkpoint_id.as_str() < b) && limit > 0)
                .into_iter()
                .collect());
        }
        let limit = limit.min(i64::MAX as usize) as i64;
        let cols = self.cols();
        self.read(|c| {
            let rows = match before {
                Some(b) => c.query(
                    &format!("SELECT {cols} WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id < $3 ORDER BY c.checkpoint_id DESC LIMIT $4"),
                    &[&thread_id, &ns, &b, &limit],
                )?,
                None => c.query(
                    &format!("SELECT {cols} WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 ORDER BY c.checkpoint_id DESC LIMIT $3"),
                    &[&thread_id, &ns, &limit],
                )?,
            };
            self.rows_to_checkpoints(c, rows)
        })
    }

    fn writes(
        &self,
        thread_id: &str,
        ns: &str,
        checkpoint_id: &str,
    ) -> Result<Vec<WriteRow>, StoreError> {
        let path = if self.has_task_path {
            "task_path"
        } else {
            "''::text"
        };
        let big = self.big;
        let rows = self.read(|c| {
            let rows = c.query(
                &format!(
                    "SELECT task_id, {path}, idx, channel, type,
                        CASE WHEN octet_length(blob) > {big} THEN NULL ELSE blob END, octet_length(blob)::int8
                     FROM checkpoint_writes WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3"
                ),
                &[&thread_id, &ns, &checkpoint_id],
            )?;
            // values too big to load: previewed in this transaction, in bounded chunks
            let mut out = Vec::with_capacity(rows.len());
            for r in rows {
                let len = r.get::<_, i64>(6) as u64;
                let preview = if len > big {
                    let (task_id, idx): (String, i32) = (r.get(0), r.get(2));
                    let type_: Option<String> = r.get(4);
                    Some(Self::preview_value(
                        c,
                        "SELECT substring(blob FROM $6::int8::int FOR $7::int8::int) FROM checkpoint_writes
                         WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3 AND task_id = $4 AND idx = $5",
                        &[&thread_id, &ns, &checkpoint_id, &task_id, &idx],
                        len,
                        type_.as_deref().unwrap_or("null"),
                    ))
                } else {
                    None
                };
                out.push((r, len, preview));
            }
            Ok(out)
        })?;
        let mut out = Vec::with_capacity(rows.len());
        for (r, len, preview) in rows {
            let (task_id, task_path, idx, channel, type_): (
                String,
                String,
                i32,
                String,
                Option<String>,
            ) = (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4));
            let cut = preview.is_some().then_some(len);
            let decoded = match preview {
                Some(p) => p,
                None => {
                    let blob: Vec<u8> = r.get(5);
                    Typed::decode(type_.as_deref().unwrap_or("null"), &blob)
                }
            };
            let value = decoded.map_err(|e| {
                StoreError::Corrupt {
                    path: self.label.clone(),
                    what: "write value",
                    location: format!(
                        "checkpoint_writes(thread_id={thread_id:?}, checkpoint_ns={ns:?}, checkpoint_id={checkpoint_id}, task_id={task_id}, idx={idx})"
                    ),
                    detail: e.to_string(),
                }
            })?;
            out.push(WriteRow {
                task_id,
                task_path,
                idx: idx as i64,
                channel,
                type_,
                value,
                cut,
            });
        }
        // LangGraph sorts in Python (`writes_sort_key`): code point order, whatever the
        // database's collation
        out.sort_by(|a, b| {
            (a.task_path.as_str(), a.task_id.as_str(), a.idx).cmp(&(
                b.task_path.as_str(),
                b.task_id.as_str(),
                b.idx,
            ))
        });
        Ok(out)
    }

    fn decode(&self, row: &CheckpointRow) -> Result<Checkpoint, StoreError> {
        let Some(body) = row.body.downcast_ref::<Body>() else {
            return Err(self.corrupt(
                "checkpoint",
                row,
                "the row was not read from this Postgres store".into(),
            ));
        };
        let mut cp = decode_body(body).map_err(|d| self.corrupt("checkpoint", row, d))?;
        for b in &body.big {
            let sql = if b.version.is_some() {
                "SELECT substring(blob FROM $5::int8::int FOR $6::int8::int) FROM checkpoint_blobs
                 WHERE thread_id = $1 AND checkpoint_ns = $2 AND channel = $3 AND version = $4"
            } else {
                "SELECT substring(blob FROM $4::int8::int FOR $5::int8::int) FROM checkpoint_blobs
                 WHERE thread_id = $1 AND checkpoint_ns = $2 AND channel = $3"
            };
            let value = self.read(|c| {
                let mut key: Vec<&(dyn postgres::types::ToSql + Sync)> =
                    vec![&row.thread_id, &row.checkpoint_ns, &b.channel];
                if let Some(v) = &b.version {
                    key.push(v);
                }
                Ok(Self::preview_value(c, sql, &key, b.len, &b.type_))
            })?;
            let value = value
                .map_err(|e| {
                    self.corrupt(
                        "checkpoint",
                        row,
                        format!("blob of channel {:?}: {e}", b.channel),
                    )
                })?
                .into_value();
            match cp.channel_values.iter_mut().find(|(k, _)| *k == b.channel) {
                Some((_, old)) => *old = value,
                None => cp.channel_values.push((b.channel.clone(), value)),
            }
        }
        Ok(cp)
    }

    /// The server's next transaction id: it moves whenever any transaction writes anything
    /// (the checkpoint tables or not), so it is a cheap and immediate over-approximation of "another
    /// writer committed".
    fn stamp(&self) -> Result<Stamp, StoreError> {
        let xmax: i64 = self.read(|c| {
            c.query_one(
                "SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint",
                &[],
            )
            .map(|r| r.get(0))
        })?;
        Ok(Stamp(vec![xmax as u128]))
    }

    fn encode_checkpoint(
        &self,
        ns: &str,
        parent: Option<&str>,
        cp: &CheckpointRef<'_>,
        metadata: String,
    ) -> EncodedCheckpoint {
        // a value JSON cannot hold fails the write, as psycopg's Jsonb does (the commit
        // reports it, nothing is written)
        let (checkpoint, blobs) = match split_checkpoint(cp) {
            Ok((o, b)) => (o.to_string().into_bytes(), b),
            Err(e) => (format!("\u{0}{e}").into_bytes(), Vec::new()),
        };
        EncodedCheckpoint {
            ns: ns.to_string(),
            id: cp.id.to_string(),
            parent: parent.map(str::to_string),
            checkpoint,
            metadata,
            blobs,
        }
    }

    fn begin_write(&self) -> Result<(), StoreError> {
        let mut c = self.client.borrow_mut();
        if c.is_closed() {
            *c = connect(&self.target, self.tls.as_ref(), self.mode).map_err(|e| self.err(e))?;
        }
        c.batch_execute("BEGIN").map_err(|e| self.err(e))?;
        self.writing.set(true);
        Ok(())
    }

    /// No cheap "nobody else committed" signal: the head is always checked.
    fn write_token(&self) -> Result<Option<i64>, StoreError> {
        Ok(None)
    }

    /// The newest root checkpoint; inside a write transaction the thread is locked first
    /// (`pg_advisory_xact_lock` on the thread id), so two supersteps never check at once.
    fn head(&self, thread_id: &str) -> Result<Option<String>, StoreError> {
        let mut c = self.client.borrow_mut();
        if self.writing.get() {
            c.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended('superstep:' || $1, 0))",
                &[&thread_id],
            )
            .map_err(|e| self.err(e))?;
        }
        let row = c
            .query_opt(
                "SELECT checkpoint_id FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1",
                &[&thread_id],
            )
            .map_err(|e| self.err(e))?;
        Ok(row.map(|r| r.get(0)))
    }

    fn put_checkpoint(&self, thread_id: &str, cp: &EncodedCheckpoint) -> Result<(), StoreError> {
        if cp.checkpoint.first() == Some(&0) {
            return Err(self.server(String::from_utf8_lossy(&cp.checkpoint[1..]).into_owned()));
        }
        let mut c = self.client.borrow_mut();
        for (channel, version, ty, blob) in &cp.blobs {
            c.execute(
                "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
                 VALUES ($1, $2, $3, $4, $5, $6)
                 ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING",
                &[&thread_id, &cp.ns, channel, version, ty, blob],
            )
            .map_err(|e| self.err(e))?;
        }
        let checkpoint = std::str::from_utf8(&cp.checkpoint).unwrap_or("{}");
        c.execute(
            "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
             VALUES ($1, $2, $3, $4, $5::text::jsonb, $6::text::jsonb)
             ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
             DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata",
            &[&thread_id, &cp.ns, &cp.id, &cp.parent, &checkpoint, &cp.metadata],
        )
        .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// `put_writes`: upsert when every write is special, else insert-or-keep.
    fn put_writes(&self, thread_id: &str, w: &EncodedWrites) -> Result<(), StoreError> {
        let conflict = if w.replace {
            "DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob"
        } else {
            "DO NOTHING"
        };
        // before migration 9 there is no task_path column
        let sql = if self.has_task_path {
            format!(
                "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                 ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) {conflict}"
            )
        } else {
            format!(
                "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                 ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) {conflict}"
            )
        };
        let mut c = self.client.borrow_mut();
        let stmt = c.prepare(&sql).map_err(|e| self.err(e))?;
        for (idx, channel, ty, bytes) in &w.rows {
            let idx = *idx as i32;
            let ty: &str = ty;
            let r = if self.has_task_path {
                c.execute(
                    &stmt,
                    &[
                        &thread_id,
                        &w.ns,
                        &w.checkpoint_id,
                        &w.task_id,
                        &w.task_path,
                        &idx,
                        channel,
                        &ty,
                        bytes,
                    ],
                )
            } else {
                c.execute(
                    &stmt,
                    &[
                        &thread_id,
                        &w.ns,
                        &w.checkpoint_id,
                        &w.task_id,
                        &idx,
                        channel,
                        &ty,
                        bytes,
                    ],
                )
            };
            r.map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    fn commit_write(&self) -> Result<(), StoreError> {
        self.writing.set(false);
        self.client
            .borrow_mut()
            .batch_execute("COMMIT")
            .map_err(|e| self.err(e))
    }

    fn rollback_write(&self) {
        self.writing.set(false);
        let _ = self.client.borrow_mut().batch_execute("ROLLBACK");
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

fn version_text(v: &Version) -> String {
    match v {
        Version::Str(s) => s.clone(),
        Version::Int(i) => i.to_string(),
        Version::Float(f) => f.to_string(),
    }
}

fn version_json(v: &Version) -> Json {
    match v {
        Version::Str(s) => Json::from(s.as_str()),
        Version::Int(i) => Json::from(*i),
        Version::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msgpack(v: &Value) -> Vec<u8> {
        Typed::Value(v.clone()).encode().1
    }

    #[test]
    fn a_row_decodes_as_postgres_saver_loads_it() {
        let body = Body {
            checkpoint: r#"{"v": 4, "id": "c1", "ts": "t", "channel_values": {"n": 1, "s": "x", "f": 1.5, "gone": null},
                "channel_versions": {"n": "00000000000000000000000000000002.0.5", "l": "00000000000000000000000000000001.0.1",
                                     "e": "00000000000000000000000000000001.0.2", "z": "00000000000000000000000000000001.0.3"},
                "versions_seen": {"a": {"n": "00000000000000000000000000000001.0.9"}}, "updated_channels": ["n"]}"#
                .into(),
            big: Vec::new(),
            blobs: vec![
                ("l".into(), "msgpack".into(), Some(msgpack(&Value::Array(vec![Value::from(1)])))),
                ("e".into(), "empty".into(), None),
                ("z".into(), "null".into(), Some(Vec::new())),
            ],
            sends: None,
        };
        let cp = decode_body(&body).unwrap();
        assert_eq!((cp.v, cp.id.as_str()), (4, "c1"));
        assert_eq!(cp.value("n"), Some(&Value::from(1)));
        assert_eq!(cp.value("f"), Some(&Value::F64(1.5)));
        assert_eq!(cp.value("gone"), Some(&Value::Nil));
        assert_eq!(cp.value("l"), Some(&Value::Array(vec![Value::from(1)])));
        assert_eq!(cp.value("e"), None, "an `empty` blob is no value");
        assert_eq!(cp.value("z"), Some(&Value::Nil), "a `null` blob is None");
        assert_eq!(cp.version("n").unwrap().number(), 2);
        assert_eq!(cp.seen("a").unwrap().len(), 1);
        assert_eq!(cp.updated_channels, Some(vec!["n".to_string()]));
    }

    #[test]
    fn v3_checkpoints_take_their_parents_sends_at_the_newest_version() {
        let send = Value::from("packet");
        let body = Body {
            checkpoint: r#"{"v": 3, "id": "c", "ts": "t", "channel_values": {},
                "channel_versions": {"a": "00000000000000000000000000000003.0.1", "b": "00000000000000000000000000000007.0.2"},
                "versions_seen": {}}"#
                .into(),
            blobs: vec![],
            big: Vec::new(),
            sends: Some(vec![("msgpack".into(), msgpack(&send))]),
        };
        let cp = decode_body(&body).unwrap();
        assert_eq!(cp.value("__pregel_tasks"), Some(&Value::Array(vec![send])));
        assert_eq!(cp.version("__pregel_tasks").unwrap().number(), 7);
    }

    #[test]
    fn checkpoints_are_encoded_as_postgres_saver_puts_them() {
        let versions = vec![
            (
                "n".to_string(),
                Version::Str("00000000000000000000000000000002.0.5".into()),
            ),
            (
                "l".to_string(),
                Version::Str("00000000000000000000000000000002.0.6".into()),
            ),
            (
                "old".to_string(),
                Version::Str("00000000000000000000000000000001.0.7".into()),
            ),
        ];
        let list = Value::Array(vec![Value::from("a")]);
        let cp = CheckpointRef {
            v: 4,
            ts: "t",
            id: "c2",
            channel_values: vec![
                ("n", std::borrow::Cow::Owned(Value::from(3))),
                ("l", std::borrow::Cow::Borrowed(&list)),
                ("old", std::borrow::Cow::Borrowed(&list)),
            ],
            channel_versions: &versions,
            versions_seen: &[],
            updated_channels: None,
            new_versions: vec![("n", &versions[0].1), ("l", &versions[1].1)],
            size_hint: 0,
        };
        let (inline, blobs) = split_checkpoint(&cp).unwrap();
        assert_eq!(inline["channel_values"], serde_json::json!({"n": 3}));
        assert_eq!(
            inline["channel_versions"]["old"],
            "00000000000000000000000000000001.0.7"
        );
        // only the new version of a non-primitive gets a blob row: `old` is shared
        assert_eq!(blobs.len(), 1);
        assert_eq!(blobs[0].0, "l");
        assert_eq!(blobs[0].1, "00000000000000000000000000000002.0.6");
        assert_eq!(blobs[0].3.as_deref(), Some(&msgpack(&list)[..]));
    }

    #[test]
    fn unparsable_urls_are_shown_without_what_may_be_a_password() {
        assert_eq!(
            redact("postgresql://u:secret@h:99999/x"),
            "postgresql://…@h:99999/x"
        );
        assert!(!redact("postgres://a:b@c/d?sslmode=x").contains(":b"));
    }
}

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

mod backend;
mod blobs;
mod codec;
mod connect;
mod doctor;
pub mod own;
mod target;
mod tls;
use blobs::*;
use codec::*;
use connect::*;

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
        if self.shallow && self.mode == Mode::Maintain {
            return Err(self.server(
                "a ShallowPostgresSaver database keeps only the latest checkpoint of each thread: there is nothing for prune to drop",
            ));
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

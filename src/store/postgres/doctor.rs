//! The doctor's side of the Postgres backend: sizes for `du` from the server's own lengths
//! (`pg_column_size` of the JSONB rows, `octet_length` of blobs and writes), the checkpoint's
//! structure from JSONB operators (nothing is decoded), and the prune's one transaction.
//!
//! The scan is one server-side cursor over the three tables, `UNION ALL`-ed and ordered by
//! `thread_id` (a merge of the three primary-key indexes, no sort), fetched a batch at a time:
//! a thread's rows arrive together, so memory is bounded by the largest thread.

use super::{PostgresStore, Row};
use crate::store::sizes::{
    ChannelAt, CheckpointSize, Deleted, Held, Removal, Space, ThreadSizes, WriteSize,
};
use crate::store::Mode;
use crate::store::{sizes::BlobSize, StoreError};
use postgres::fallible_iterator::FallibleIterator;
use std::collections::HashMap;

/// Rows fetched from the cursor at a time.
const BATCH: i64 = 5000;

/// A checkpoint's inline values (`channel_values`: PostgresSaver's primitives and snapshot
/// markers) come as their JSON text up to this size, measured here; larger ones are measured on
/// the server value by value (a per-row aggregate: several times slower).
const INLINE_TEXT: usize = 64 * 1024;

/// The scan's select list, one shape for the three tables: `kind` 0 a checkpoint, 1 a blob, 2 a
/// write (see [`PostgresStore::take_row`] for the columns of each).
fn scan_sql(shallow: bool) -> String {
    let (id, parent, version) = if shallow {
        ("c.checkpoint ->> 'id'", "NULL::text", "''")
    } else {
        ("c.checkpoint_id", "c.parent_checkpoint_id", "b.version")
    };
    format!(
        "SELECT c.thread_id, 0::int4 AS kind, c.checkpoint_ns, {id}, {parent},
            pg_column_size(c.checkpoint)::int8, pg_column_size(c.metadata)::int8,
            c.metadata ->> 'step', c.metadata ->> 'source', c.metadata -> 'parents' ->> '',
            CASE WHEN jsonb_typeof(c.metadata -> 'counters_since_delta_snapshot') = 'object'
                THEN (c.metadata -> 'counters_since_delta_snapshot')::text END,
            c.checkpoint ->> 'v',
            (c.checkpoint -> 'channel_versions')::text,
            CASE WHEN pg_column_size(c.checkpoint -> 'channel_values') <= {INLINE_TEXT}
                THEN (c.checkpoint -> 'channel_values')::text END,
            CASE WHEN pg_column_size(c.checkpoint -> 'channel_values') > {INLINE_TEXT} THEN
                (SELECT jsonb_object_agg(e.key, jsonb_build_array(octet_length(e.value::text), e.value = 'true'::jsonb))
                    FROM jsonb_each(c.checkpoint -> 'channel_values') e)::text END
        FROM checkpoints c
        UNION ALL
        SELECT b.thread_id, 1, b.checkpoint_ns, b.channel, {version}, octet_length(b.blob)::int8,
            NULL, b.type, NULL, NULL, NULL, NULL, NULL, NULL, NULL
        FROM checkpoint_blobs b
        UNION ALL
        SELECT w.thread_id, 2, w.checkpoint_ns, w.checkpoint_id, w.task_id, octet_length(w.blob)::int8,
            w.idx::int8, w.channel, NULL, NULL, NULL, NULL, NULL, NULL, NULL
        FROM checkpoint_writes w
        ORDER BY 1"
    )
}

/// A thread being collected: its rows, blobs by (namespace, channel, version), and each
/// checkpoint's inline values as `channel -> (json length, is the marker true)`.
#[derive(Default)]
struct Collect {
    sizes: ThreadSizes,
    inline: Vec<HashMap<String, (u64, bool)>>,
}

/// `channel -> (JSON text length, the value is `true`)` of a checkpoint's inline values: from
/// the values' text (each value's own span, as the server wrote it), or from the server's
/// `[length, is true]` per value.
fn inline_values(text: Option<String>, lengths: Option<String>) -> HashMap<String, (u64, bool)> {
    if let Some(t) = text {
        let m: HashMap<String, &serde_json::value::RawValue> =
            serde_json::from_str(&t).unwrap_or_default();
        return m
            .into_iter()
            .map(|(k, v)| (k, (v.get().len() as u64, v.get() == "true")))
            .collect();
    }
    let m: HashMap<String, (u64, bool)> = lengths
        .and_then(|l| serde_json::from_str(&l).ok())
        .unwrap_or_default();
    m
}

impl PostgresStore {
    /// See [`crate::store::Backend::scan_sizes`]. Inside a prune's transaction: a cursor in
    /// it, fetched a batch at a time (the visitor's reads join the transaction between batches).
    /// Otherwise the rows stream on a second, read-only connection while this one stays free
    /// for the visitor's reads: the server produces rows while the last batch is added up.
    pub(super) fn doctor_scan(
        &self,
        want: &dyn Fn(&str) -> bool,
        visit: &mut dyn FnMut(ThreadSizes) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let sql = scan_sql(self.shallow);
        if !self.writing.get() {
            let mut c = super::connect(&self.target, self.tls.as_ref(), Mode::ReadOnly)
                .map_err(|e| self.err(e))?;
            // JIT compiling the per-row expressions costs more than it saves on this scan (1 s
            // of 5 on 2.7 M rows here)
            c.batch_execute("SET jit = off; BEGIN READ ONLY ISOLATION LEVEL REPEATABLE READ")
                .map_err(|e| self.err(e))?;
            let mut rows = c
                .query_raw(sql.as_str(), std::iter::empty::<&str>())
                .map_err(|e| self.err(e))?;
            let mut next = || -> Result<Vec<Row>, StoreError> {
                let mut batch = Vec::with_capacity(BATCH as usize);
                while batch.len() < BATCH as usize {
                    match rows.next().map_err(|e| self.err(e))? {
                        Some(r) => batch.push(r),
                        None => break,
                    }
                }
                Ok(batch)
            };
            return self.scan_rows(&mut next, want, visit);
        }
        self.client
            .borrow_mut()
            .batch_execute(&format!("DECLARE superstep_du NO SCROLL CURSOR FOR {sql}"))
            .map_err(|e| self.err(e))?;
        let mut next = || -> Result<Vec<Row>, StoreError> {
            self.client
                .borrow_mut()
                .query(&format!("FETCH {BATCH} FROM superstep_du"), &[])
                .map_err(|e| self.err(e))
        };
        let r = self.scan_rows(&mut next, want, visit);
        let closed = self
            .client
            .borrow_mut()
            .batch_execute("CLOSE superstep_du")
            .map_err(|e| self.err(e));
        r.and(closed)
    }

    fn scan_rows(
        &self,
        next: &mut dyn FnMut() -> Result<Vec<Row>, StoreError>,
        want: &dyn Fn(&str) -> bool,
        visit: &mut dyn FnMut(ThreadSizes) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let mut current: Option<Collect> = None;
        let mut skipping: Option<String> = None;
        loop {
            let rows = next()?;
            let done = (rows.len() as i64) < BATCH;
            for r in rows {
                let thread: String = r.get(0);
                if skipping.as_deref() == Some(thread.as_str()) {
                    continue;
                }
                if current.as_ref().is_none_or(|c| c.sizes.thread_id != thread) {
                    if let Some(c) = current.take() {
                        visit(self.finish(c))?;
                    }
                    if !want(&thread) {
                        skipping = Some(thread);
                        continue;
                    }
                    skipping = None;
                    current = Some(Collect {
                        sizes: ThreadSizes {
                            thread_id: thread,
                            ..Default::default()
                        },
                        ..Default::default()
                    });
                }
                self.take_row(current.as_mut().expect("a thread"), &r)?;
            }
            if done {
                break;
            }
        }
        if let Some(c) = current.take() {
            visit(self.finish(c))?;
        }
        Ok(())
    }

    fn take_row(&self, c: &mut Collect, r: &Row) -> Result<(), StoreError> {
        let kind: i32 = r.get(1);
        let ns: String = r.get(2);
        let n1: Option<i64> = r.get(5);
        let bytes = n1.unwrap_or(0).max(0) as u64;
        match kind {
            0 => {
                let json = |i: usize| -> Option<serde_json::Value> {
                    r.get::<_, Option<String>>(i)
                        .and_then(|t| serde_json::from_str(&t).ok())
                };
                let versions: Vec<(String, String)> = json(12)
                    .and_then(|v| v.as_object().cloned())
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(k, v)| {
                        let v = match v {
                            serde_json::Value::String(s) => s,
                            other => other.to_string(),
                        };
                        (k, v)
                    })
                    .collect();
                let inline = inline_values(r.get(13), r.get(14));
                let step: Option<String> = r.get(7);
                c.sizes.checkpoints.push(CheckpointSize {
                    ns,
                    id: r.get::<_, Option<String>>(3).unwrap_or_default(),
                    parent: r.get(4),
                    bytes,
                    metadata_bytes: r.get::<_, Option<i64>>(6).unwrap_or(0).max(0) as u64,
                    step: step.and_then(|s| s.parse().ok()),
                    source: r.get(8),
                    anchor: r.get(9),
                    delta_pending: json(10)
                        .and_then(|v| v.as_object().map(|o| o.keys().cloned().collect()))
                        .unwrap_or_default(),
                    format: r.get::<_, Option<String>>(11).and_then(|s| s.parse().ok()),
                    // filled in by `finish`, once the thread's blobs are known
                    channels: versions
                        .into_iter()
                        .map(|(channel, v)| ChannelAt {
                            channel,
                            version: Some(v),
                            bytes: 0,
                            held: Held::Nothing,
                            snapshot: false,
                        })
                        .collect(),
                    opaque: None,
                });
                c.inline.push(inline);
            }
            1 => {
                let type_: String = r.get::<_, Option<String>>(7).unwrap_or_default();
                c.sizes.blobs.push(BlobSize {
                    ns,
                    channel: r.get::<_, Option<String>>(3).unwrap_or_default(),
                    version: r.get::<_, Option<String>>(4).unwrap_or_default(),
                    bytes,
                    empty: type_ == "empty",
                });
            }
            _ => c.sizes.writes.push(WriteSize {
                ns,
                checkpoint_id: r.get::<_, Option<String>>(3).unwrap_or_default(),
                task_id: r.get::<_, Option<String>>(4).unwrap_or_default(),
                idx: r.get::<_, Option<i64>>(6).unwrap_or(0),
                channel: r.get::<_, Option<String>>(7).unwrap_or_default(),
                bytes,
            }),
        }
        Ok(())
    }

    /// Resolve each checkpoint's channels against the thread's blobs (a value is inline, in a
    /// blob, a snapshot — an inline `true` with a blob behind it — or nothing), and order rows
    /// as the SQLite backend does.
    fn finish(&self, c: Collect) -> ThreadSizes {
        let Collect { mut sizes, inline } = c;
        let blobs: HashMap<(&str, &str, &str), u64> = sizes
            .blobs
            .iter()
            .filter(|b| !b.empty)
            .map(|b| {
                (
                    (b.ns.as_str(), b.channel.as_str(), b.version.as_str()),
                    b.bytes,
                )
            })
            .collect();
        let mut resolved = Vec::with_capacity(sizes.checkpoints.len());
        for (cp, inline) in sizes.checkpoints.iter().zip(&inline) {
            let mut chans: Vec<ChannelAt> = Vec::with_capacity(cp.channels.len());
            for ch in &cp.channels {
                let version = if self.shallow {
                    ""
                } else {
                    ch.version.as_deref().unwrap_or("")
                };
                let blob = blobs.get(&(cp.ns.as_str(), ch.channel.as_str(), version));
                let (bytes, held, snapshot) = match (inline.get(&ch.channel), blob) {
                    (Some((_, true)), Some(b)) => (*b, Held::Blob, true),
                    (Some((len, _)), _) => (*len, Held::Inline, false),
                    (None, Some(b)) => (*b, Held::Blob, false),
                    (None, None) => (0, Held::Nothing, false),
                };
                chans.push(ChannelAt {
                    bytes,
                    held,
                    snapshot,
                    ..ch.clone()
                });
            }
            // an inline value without a version (LangGraph writes none; a foreign row may)
            for (k, (len, _)) in inline {
                if !cp.channels.iter().any(|c| &c.channel == k) {
                    chans.push(ChannelAt {
                        channel: k.clone(),
                        version: None,
                        bytes: *len,
                        held: Held::Inline,
                        snapshot: false,
                    });
                }
            }
            resolved.push(chans);
        }
        for (cp, chans) in sizes.checkpoints.iter_mut().zip(resolved) {
            cp.channels = chans;
        }
        sizes
            .checkpoints
            .sort_by(|a, b| (&a.ns, &a.id).cmp(&(&b.ns, &b.id)));
        sizes.writes.sort_by(|a, b| {
            (&a.ns, &a.checkpoint_id, &a.task_id, a.idx).cmp(&(
                &b.ns,
                &b.checkpoint_id,
                &b.task_id,
                b.idx,
            ))
        });
        sizes
            .blobs
            .sort_by(|a, b| (&a.ns, &a.channel, &a.version).cmp(&(&b.ns, &b.channel, &b.version)));
        sizes
    }

    /// See [`crate::store::Backend::space`]: the database, and each table with its indexes and
    /// TOAST (`pg_total_relation_size`).
    pub(super) fn doctor_space(&self) -> Result<Space, StoreError> {
        self.read(|c| {
            let total: i64 = c
                .query_one("SELECT pg_database_size(current_database())", &[])?
                .get(0);
            let rows = c.query(
                "SELECT t, pg_total_relation_size(to_regclass(t))::int8 FROM unnest(ARRAY['checkpoints', 'checkpoint_blobs', 'checkpoint_writes', 'checkpoint_migrations']) t
                 WHERE to_regclass(t) IS NOT NULL ORDER BY 2 DESC",
                &[],
            )?;
            Ok(Space {
                total: Some(total as u64),
                wal: None,
                free: None,
                tables: rows
                    .iter()
                    .map(|r| (r.get::<_, String>(0), r.get::<_, i64>(1) as u64))
                    .collect(),
            })
        })
    }

    /// See [`crate::store::Backend::begin_prune`]: a transaction that locks the three tables
    /// against writers (`SHARE ROW EXCLUSIVE`, readers go on) without waiting: a session in
    /// the middle of a write — a LangGraph run's `put`, superstep's engine — makes it refuse.
    pub(super) fn doctor_begin(&self) -> Result<(), StoreError> {
        let mut c = self.client.borrow_mut();
        if c.is_closed() {
            *c = super::connect(&self.target, self.tls.as_ref(), self.mode)
                .map_err(|e| self.err(e))?;
        }
        c.batch_execute("BEGIN").map_err(|e| self.err(e))?;
        let locked = c.batch_execute(
            "LOCK TABLE checkpoints, checkpoint_blobs, checkpoint_writes IN SHARE ROW EXCLUSIVE MODE NOWAIT",
        );
        match locked {
            Ok(()) => {
                self.writing.set(true);
                Ok(())
            }
            Err(e) if e.code() == Some(&postgres::error::SqlState::LOCK_NOT_AVAILABLE) => {
                let _ = c.batch_execute("ROLLBACK");
                let who: Vec<String> = c
                    .query(
                        "SELECT DISTINCT l.pid, coalesce(a.application_name, '') FROM pg_locks l
                         LEFT JOIN pg_stat_activity a ON a.pid = l.pid
                         WHERE l.granted AND l.pid <> pg_backend_pid() AND l.relation IN
                            (to_regclass('checkpoints'), to_regclass('checkpoint_blobs'), to_regclass('checkpoint_writes'))
                            AND l.mode NOT IN ('AccessShareLock', 'RowShareLock')
                         ORDER BY 1",
                        &[],
                    )
                    .map(|rows| {
                        rows.iter()
                            .map(|r| {
                                let app: String = r.get(1);
                                match app.as_str() {
                                    "" => format!("pid {}", r.get::<_, i32>(0)),
                                    a => format!("pid {} ({})", r.get::<_, i32>(0), crate::text::escape(a)),
                                }
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                Err(StoreError::InUse {
                    path: self.label.clone(),
                    detail: if who.is_empty() {
                        "another session is writing the checkpoint tables".into()
                    } else {
                        format!(
                            "another session is writing the checkpoint tables ({})",
                            who.join(", ")
                        )
                    },
                })
            }
            Err(e) => {
                let _ = c.batch_execute("ROLLBACK");
                Err(self.err(e))
            }
        }
    }

    /// See [`crate::store::Backend::remove`]: by primary key, a namespace (and a blob channel)
    /// at a time with `= ANY`.
    pub(super) fn doctor_remove(&self, r: &Removal) -> Result<Deleted, StoreError> {
        let mut c = self.client.borrow_mut();
        let e = |e| self.err(e);
        let mut out = Deleted::default();
        let t = &r.thread_id;
        if r.whole {
            out.writes = c
                .execute("DELETE FROM checkpoint_writes WHERE thread_id = $1", &[t])
                .map_err(e)?;
            out.blobs = c
                .execute("DELETE FROM checkpoint_blobs WHERE thread_id = $1", &[t])
                .map_err(e)?;
            out.checkpoints = c
                .execute("DELETE FROM checkpoints WHERE thread_id = $1", &[t])
                .map_err(e)?;
            return Ok(out);
        }
        let mut by_ns: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
        for (ns, id) in &r.checkpoints {
            by_ns.entry(ns).or_default().push(id);
        }
        for (ns, ids) in by_ns {
            out.writes += c
                .execute(
                    "DELETE FROM checkpoint_writes WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = ANY($3)",
                    &[t, &ns, &ids],
                )
                .map_err(e)?;
            out.checkpoints += c
                .execute(
                    "DELETE FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = ANY($3)",
                    &[t, &ns, &ids],
                )
                .map_err(e)?;
        }
        let mut by_channel: std::collections::BTreeMap<(&str, &str), Vec<&str>> =
            Default::default();
        for (ns, ch, v) in &r.blobs {
            by_channel.entry((ns, ch)).or_default().push(v);
        }
        for ((ns, ch), versions) in by_channel {
            out.blobs += c
                .execute(
                    "DELETE FROM checkpoint_blobs WHERE thread_id = $1 AND checkpoint_ns = $2 AND channel = $3 AND version = ANY($4)",
                    &[t, &ns, &ch, &versions],
                )
                .map_err(e)?;
        }
        Ok(out)
    }

    /// `VACUUM (ANALYZE)` of the three tables: their space is reusable again (the database's
    /// files shrink only where the free pages are at the end; `VACUUM FULL` is left to the user).
    pub(super) fn doctor_vacuum(&self) -> Result<(), StoreError> {
        self.client
            .borrow_mut()
            .batch_execute("VACUUM (ANALYZE) checkpoints, checkpoint_blobs, checkpoint_writes")
            .map_err(|e| self.err(e))
    }
}

//! The doctor's side of the SQLite backend: sizes for `du` (SQLite's `length()` of each row's
//! columns, and the checkpoint blob's structure read through incremental blob I/O: no value is
//! decoded or loaded whole), and the prune's one transaction.

use super::{key, sql_err, wal_in_use, Alt, SqliteStore};
use crate::store::sizes::{
    metadata_facts, ChannelAt, CheckpointSize, Deleted, Held, Removal, Space, ThreadSizes,
    WriteSize,
};
use crate::store::{parse_metadata, StoreError, META_OVER};
use crate::value::shape::{checkpoint_shape, CheckpointShape};
use rusqlite::params;
use rusqlite::types::Value as SqlValue;

/// Blob reads go through a window this large (a checkpoint's structure is read by skipping).
const WINDOW: usize = 64 * 1024;

impl SqliteStore {
    fn err_at(&self, e: rusqlite::Error) -> StoreError {
        sql_err(&self.label, e)
    }

    /// See [`crate::store::Backend::scan_sizes`].
    pub(super) fn doctor_scan(
        &self,
        want: &dyn Fn(&str) -> bool,
        visit: &mut dyn FnMut(ThreadSizes) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        // the blob itself only when it cannot be streamed by rowid (a foreign WITHOUT ROWID table)
        let inline = if self.rowid == "0" {
            "checkpoint"
        } else {
            "NULL"
        };
        let sql = format!(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
                    length(checkpoint), octet_length(metadata),
                    CASE WHEN octet_length(metadata) > {META_OVER} THEN NULL ELSE metadata END,
                    type, {rowid}, {inline}
             FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id",
            rowid = self.rowid
        );
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.err_at(e))?;
        let mut rows = stmt.query([]).map_err(|e| self.err_at(e))?;
        let mut current: Option<(SqlValue, ThreadSizes)> = None;
        let mut skipping: Option<SqlValue> = None;
        while let Some(r) = rows.next().map_err(|e| self.err_at(e))? {
            let raw: SqlValue = r.get(0).map_err(|e| self.err_at(e))?;
            if skipping.as_ref() == Some(&raw) {
                continue;
            }
            if current.as_ref().is_none_or(|(t, _)| *t != raw) {
                if let Some((t, done)) = current.take() {
                    self.finish_thread(&t, done, visit)?;
                }
                let thread_id = key(r, 0).map_err(|e| self.err_at(e))?;
                if !want(&thread_id) {
                    skipping = Some(raw);
                    continue;
                }
                skipping = None;
                current = Some((
                    raw,
                    ThreadSizes {
                        thread_id,
                        ..Default::default()
                    },
                ));
            }
            let cp = self.checkpoint_size(r)?;
            current.as_mut().expect("a thread").1.checkpoints.push(cp);
        }
        if let Some((t, done)) = current.take() {
            self.finish_thread(&t, done, visit)?;
        }
        Ok(())
    }

    /// One `checkpoints` row of the scan: lengths, metadata facts, the blob's shape.
    fn checkpoint_size(&self, r: &rusqlite::Row) -> Result<CheckpointSize, StoreError> {
        let e = |e| self.err_at(e);
        let ns = key(r, 1).map_err(e)?;
        let id = key(r, 2).map_err(e)?;
        let parent = match r.get_ref(3).map_err(e)? {
            rusqlite::types::ValueRef::Null => None,
            _ => Some(key(r, 3).map_err(e)?),
        };
        let bytes = r.get::<_, Option<i64>>(4).map_err(e)?.unwrap_or(0) as u64;
        let metadata_bytes = r.get::<_, Option<i64>>(5).map_err(e)?.unwrap_or(0) as u64;
        let meta = match r.get_ref(6).map_err(e)? {
            rusqlite::types::ValueRef::Blob(b) | rusqlite::types::ValueRef::Text(b) => {
                parse_metadata(Some(b)).unwrap_or_default()
            }
            _ => Default::default(),
        };
        let (step, source, anchor, delta_pending) = metadata_facts(&meta);
        let type_: Option<String> = r.get(7).ok();
        let rowid: i64 = r.get(8).map_err(e)?;
        let shape = match type_.as_deref().unwrap_or("msgpack") {
            "msgpack" if bytes > 0 => self.shape_of(r, rowid, bytes),
            "msgpack" => Err("an empty checkpoint".into()),
            other => Err(format!("stored as {other:?}, not msgpack: sizes only")),
        };
        let (format, channels, opaque) = match shape {
            Ok(s) => (s.v, channels_of(s), None),
            Err(why) => (None, Vec::new(), Some(why)),
        };
        Ok(CheckpointSize {
            ns,
            id,
            parent,
            bytes,
            metadata_bytes,
            step,
            source,
            anchor,
            delta_pending,
            format,
            channels,
            opaque,
        })
    }

    fn shape_of(&self, r: &rusqlite::Row, rowid: i64, len: u64) -> Result<CheckpointShape, String> {
        if self.rowid == "0" {
            let b: Vec<u8> = r.get(9).map_err(|e| e.to_string())?;
            let mut c = std::io::Cursor::new(b);
            return checkpoint_shape(&mut c, len).map_err(|e| e.to_string());
        }
        let blob = self
            .conn
            .blob_open(rusqlite::MAIN_DB, "checkpoints", "checkpoint", rowid, true)
            .map_err(|e| e.to_string())?;
        let mut w = crate::value::capped::Window::new(blob, WINDOW).map_err(|e| e.to_string())?;
        checkpoint_shape(&mut w, len).map_err(|e| e.to_string())
    }

    /// Add the thread's writes and hand it over.
    fn finish_thread(
        &self,
        raw: &SqlValue,
        mut t: ThreadSizes,
        visit: &mut dyn FnMut(ThreadSizes) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT checkpoint_ns, checkpoint_id, task_id, idx, channel, length(value)
                 FROM writes WHERE thread_id = ?1 ORDER BY checkpoint_ns, checkpoint_id, task_id, idx",
            )
            .map_err(|e| self.err_at(e))?;
        let rows = stmt
            .query_map([raw], |r| {
                Ok(WriteSize {
                    ns: key(r, 0)?,
                    checkpoint_id: key(r, 1)?,
                    task_id: key(r, 2)?,
                    idx: r.get(3)?,
                    channel: super::text(r, 4)?,
                    bytes: r.get::<_, Option<i64>>(5)?.unwrap_or(0) as u64,
                })
            })
            .map_err(|e| self.err_at(e))?;
        for w in rows {
            t.writes.push(w.map_err(|e| self.err_at(e))?);
        }
        visit(t)
    }

    /// See [`crate::store::Backend::space`]: pages in use and free (`PRAGMA page_count`,
    /// `freelist_count`), the `-wal`, and per table when SQLite has `dbstat`.
    pub(super) fn doctor_space(&self, tables: bool) -> Result<Space, StoreError> {
        let pragma = |p: &str| -> Result<u64, StoreError> {
            self.conn
                .query_row(&format!("PRAGMA {p}"), [], |r| r.get::<_, i64>(0))
                .map(|n| n as u64)
                .map_err(|e| self.err_at(e))
        };
        let page = pragma("page_size")?;
        let mut space = Space {
            total: Some(pragma("page_count")? * page),
            free: Some(pragma("freelist_count")? * page),
            wal: std::fs::metadata(super::sidecar(&self.path, "-wal"))
                .ok()
                .map(|m| m.len()),
            tables: Vec::new(),
        };
        if tables {
            // dbstat: every page of every b-tree, named by table or index (absent from builds
            // without SQLITE_ENABLE_DBSTAT_VTAB: then no per-table line)
            let per = self.conn.prepare(
                "SELECT coalesce(m.tbl_name, d.name), SUM(d.pgsize) FROM dbstat d
                 LEFT JOIN sqlite_master m ON m.name = d.name GROUP BY 1 ORDER BY 2 DESC",
            );
            if let Ok(mut s) = per {
                let rows = s
                    .query_map([], |r| {
                        Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
                    })
                    .map_err(|e| self.err_at(e))?;
                for r in rows {
                    space.tables.push(r.map_err(|e| self.err_at(e))?);
                }
            }
        }
        Ok(space)
    }

    /// See [`crate::store::Backend::begin_prune`]: refused while another process has the file
    /// open (a writer is live: it holds the `-shm`'s or the file's SQLite locks — the check
    /// inspection uses to tell a live `-wal` from a leftover one); then `BEGIN IMMEDIATE`,
    /// waiting for nobody.
    pub(super) fn doctor_begin(&self) -> Result<(), StoreError> {
        if let Some(pid) = self.opened_by_other {
            return Err(StoreError::InUse {
                path: self.label.clone(),
                detail: match pid {
                    p if p > 0 => format!("process {p} has it open"),
                    _ => "another process has it open".to_string(),
                },
            });
        }
        let _ = self.conn.busy_timeout(std::time::Duration::ZERO);
        let r = self.conn.execute_batch("BEGIN IMMEDIATE");
        let _ = self.conn.busy_timeout(super::BUSY_TIMEOUT);
        r.map_err(|e| match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
                StoreError::InUse {
                    path: self.label.clone(),
                    detail: "another process is writing it".into(),
                }
            }
            _ => self.err_at(e),
        })
    }

    /// See [`crate::store::Backend::remove`].
    pub(super) fn doctor_remove(&self, r: &Removal) -> Result<Deleted, StoreError> {
        let e = |e| self.err_at(e);
        let alt = Alt::of(&r.thread_id);
        let mut out = Deleted::default();
        if r.whole {
            out.writes = self
                .conn
                .execute(
                    "DELETE FROM writes WHERE thread_id IN (?1, ?2)",
                    params![r.thread_id, alt],
                )
                .map_err(e)? as u64;
            out.checkpoints = self
                .conn
                .execute(
                    "DELETE FROM checkpoints WHERE thread_id IN (?1, ?2)",
                    params![r.thread_id, alt],
                )
                .map_err(e)? as u64;
            return Ok(out);
        }
        let mut cps = self
            .conn
            .prepare_cached(
                "DELETE FROM checkpoints WHERE thread_id IN (?1, ?2) AND checkpoint_ns IN (?3, ?4) AND checkpoint_id IN (?5, ?6)",
            )
            .map_err(e)?;
        let mut ws = self
            .conn
            .prepare_cached(
                "DELETE FROM writes WHERE thread_id IN (?1, ?2) AND checkpoint_ns IN (?3, ?4) AND checkpoint_id IN (?5, ?6)",
            )
            .map_err(e)?;
        for (ns, id) in &r.checkpoints {
            let p = params![r.thread_id, alt, ns, Alt::of(ns), id, Alt::of(id)];
            out.checkpoints += cps.execute(p).map_err(e)? as u64;
            out.writes += ws.execute(p).map_err(e)? as u64;
        }
        Ok(out)
    }

    /// `VACUUM`: the file shrinks to the pages in use (outside any transaction).
    pub(super) fn doctor_vacuum(&self) -> Result<(), StoreError> {
        self.conn
            .execute_batch("VACUUM")
            .map_err(|e| self.err_at(e))
    }

    /// Whether another process had the file open when this handle was opened for a prune
    /// (checked before this process's own connection took its locks).
    pub(super) fn other_process(path: &std::path::Path) -> Option<i32> {
        wal_in_use(path).then(|| super::lock_holder(path).unwrap_or(0))
    }
}

/// A checkpoint's channels: every stored value, then every versioned channel without one.
fn channels_of(s: CheckpointShape) -> Vec<ChannelAt> {
    let version = |k: &str| {
        s.versions
            .iter()
            .find(|(c, _)| c == k)
            .map(|(_, v)| v.clone())
    };
    let mut out: Vec<ChannelAt> = s
        .values
        .iter()
        .map(|v| ChannelAt {
            channel: v.key.clone(),
            version: version(&v.key),
            bytes: v.bytes,
            held: Held::Inline,
            snapshot: v.delta_snapshot,
        })
        .collect();
    for (k, v) in &s.versions {
        if !s.values.iter().any(|x| &x.key == k) {
            out.push(ChannelAt {
                channel: k.clone(),
                version: Some(v.clone()),
                bytes: 0,
                held: Held::Nothing,
                snapshot: false,
            });
        }
    }
    out
}

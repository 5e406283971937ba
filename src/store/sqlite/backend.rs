//! The queries: `Backend` for `SqliteStore` (threads, history, checkpoints, writes, the write path).

use super::*;

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

    fn presence(&self) -> crate::store::Presence {
        match (file_ident(&self.path), self.ident) {
            (Err(e), Some(_)) if e.kind() == std::io::ErrorKind::NotFound => {
                crate::store::Presence::Gone
            }
            (Ok(now), Some(was)) if now != was => crate::store::Presence::Replaced,
            _ => crate::store::Presence::Same,
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
            checkpoint: crate::store::encode_msgpack(cp),
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

    fn scan_sizes(
        &self,
        want: &dyn Fn(&str) -> bool,
        visit: &mut dyn FnMut(crate::store::sizes::ThreadSizes) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        self.doctor_scan(want, visit)
    }

    fn space(&self, tables: bool) -> Result<crate::store::sizes::Space, StoreError> {
        self.doctor_space(tables)
    }

    fn begin_prune(&self) -> Result<(), StoreError> {
        self.doctor_begin()
    }

    fn remove(
        &self,
        r: &crate::store::sizes::Removal,
    ) -> Result<crate::store::sizes::Deleted, StoreError> {
        self.doctor_remove(r)
    }

    fn vacuum(&self) -> Result<(), StoreError> {
        self.doctor_vacuum()
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }

    fn store_namespaces(
        &self,
    ) -> Result<Option<Vec<crate::store::items::NamespaceCount>>, StoreError> {
        use crate::store::items::{sqlite_has_store, sqlite_namespaces};
        let run = || -> rusqlite::Result<_> {
            Ok(match sqlite_has_store(&self.conn)? {
                true => Some(sqlite_namespaces(&self.conn)?),
                false => None,
            })
        };
        run().map_err(|e| self.err(e))
    }

    fn store_items(
        &self,
        q: &crate::store::items::ItemQuery,
    ) -> Result<Option<Vec<crate::store::items::Item>>, StoreError> {
        use crate::store::items::{sqlite_has_store, sqlite_items};
        let run = || -> rusqlite::Result<_> {
            Ok(match sqlite_has_store(&self.conn)? {
                true => Some(sqlite_items(&self.conn, q)?),
                false => None,
            })
        };
        run().map_err(|e| self.err(e))
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
    fn decode(&self, row: &CheckpointRow) -> Result<crate::store::Checkpoint, StoreError> {
        let decoded = match row.body.downcast_ref::<Body>() {
            None => Err("the row was not read from this SQLite store".to_string()),
            Some(body) => {
                let ty = body.type_.as_deref().unwrap_or("msgpack");
                if ty == "pickle" {
                    return Err(StoreError::Pickled {
                        path: self.label.clone(),
                        location: checkpoint_location(
                            &row.thread_id,
                            &row.checkpoint_ns,
                            &row.checkpoint_id,
                        ),
                    });
                }
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
                        .and_then(crate::store::Checkpoint::from_typed),
                    None if body.dense => preview_loaded(&body.blob)
                        .map_err(|e| e.to_string())
                        .and_then(|v| crate::store::Checkpoint::from_typed(Typed::Value(v))),
                    None => crate::store::Checkpoint::decode(ty, &body.blob),
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

//! The queries: `Backend` for `PostgresStore` (threads, history, checkpoints, writes, the write path).

use super::*;

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

    fn scan_sizes(
        &self,
        want: &dyn Fn(&str) -> bool,
        visit: &mut dyn FnMut(crate::store::sizes::ThreadSizes) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        self.doctor_scan(want, visit)
    }

    fn space(&self, _tables: bool) -> Result<crate::store::sizes::Space, StoreError> {
        self.doctor_space()
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
        use crate::store::items::{postgres_has_store, postgres_namespaces};
        self.read(|c| {
            Ok(match postgres_has_store(c)? {
                true => Some(postgres_namespaces(c)?),
                false => None,
            })
        })
    }

    fn store_items(
        &self,
        q: &crate::store::items::ItemQuery,
    ) -> Result<Option<Vec<crate::store::items::Item>>, StoreError> {
        use crate::store::items::{postgres_has_store, postgres_items};
        self.read(|c| {
            Ok(match postgres_has_store(c)? {
                true => Some(postgres_items(c, q)?),
                false => None,
            })
        })
    }
}

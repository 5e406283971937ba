//! SqliteSaver's writes (spec §1.2–§1.4), buffered so that a superstep's writes and its
//! checkpoint land in one transaction — all or nothing.

use super::EngineError;
use crate::value::Typed;
use rmpv::Value;
use rusqlite::{params, Connection};
use serde_json::Value as Json;

/// `WRITES_IDX_MAP`.
pub fn special_idx(channel: &str) -> Option<i64> {
    match channel {
        "__error__" => Some(-1),
        "__scheduled__" => Some(-2),
        "__interrupt__" => Some(-3),
        "__resume__" => Some(-4),
        _ => None,
    }
}

enum Op {
    Checkpoint {
        ns: String,
        id: String,
        parent: Option<String>,
        blob: Vec<u8>,
        metadata: String,
    },
    Writes {
        ns: String,
        checkpoint_id: String,
        task_id: String,
        task_path: String,
        rows: Vec<(i64, String, &'static str, Vec<u8>)>,
        replace: bool,
    },
}

pub struct Saver {
    pub thread_id: String,
    ops: Vec<Op>,
    /// Transactions committed so far.
    pub commits: u64,
    /// The newest root checkpoint of the thread this engine last saw (`Some(None)`: none yet);
    /// a commit finding another one refuses to write (two writers stepping one thread).
    head: Option<Option<String>>,
    /// `PRAGMA data_version` when `head` was last known true: unchanged means no other
    /// connection has committed since, so the head query can be skipped.
    seen: Option<i64>,
}

/// `PRAGMA data_version`: changes when another connection commits.
pub fn data_version(conn: &Connection) -> Result<i64, EngineError> {
    Ok(conn
        .prepare_cached("PRAGMA data_version")?
        .query_row([], |r| r.get(0))?)
}

impl Saver {
    pub fn new(thread_id: &str) -> Saver {
        Saver {
            thread_id: thread_id.to_string(),
            ops: Vec::new(),
            commits: 0,
            head: None,
            seen: None,
        }
    }

    /// What the thread's newest root checkpoint is as this engine reads it; the next commit
    /// checks that it still is.
    /// `seen` is the data version read *before* `head` was read.
    pub fn expect_head(&mut self, head: Option<String>, seen: i64) {
        self.head = Some(head);
        self.seen = Some(seen);
    }

    /// `put_writes`: idx = special slot or position in the batch; REPLACE only when every write
    /// is special, IGNORE otherwise.
    pub fn put_writes(
        &mut self,
        ns: &str,
        checkpoint_id: &str,
        task_id: &str,
        task_path: &str,
        writes: &[(String, Value)],
    ) {
        if writes.is_empty() {
            return;
        }
        let replace = writes.iter().all(|(c, _)| special_idx(c).is_some());
        let rows = writes
            .iter()
            .enumerate()
            .map(|(i, (c, v))| {
                let (ty, bytes) = Typed::Value(v.clone()).encode();
                (special_idx(c).unwrap_or(i as i64), c.clone(), ty, bytes)
            })
            .collect();
        self.ops.push(Op::Writes {
            ns: ns.to_string(),
            checkpoint_id: checkpoint_id.to_string(),
            task_id: task_id.to_string(),
            task_path: task_path.to_string(),
            rows,
            replace,
        });
    }

    /// `put`: INSERT OR REPLACE the checkpoint row.
    pub fn put(
        &mut self,
        ns: &str,
        id: &str,
        parent: Option<&str>,
        blob: Vec<u8>,
        metadata: &serde_json::Map<String, Json>,
    ) {
        self.ops.push(Op::Checkpoint {
            ns: ns.to_string(),
            id: id.to_string(),
            parent: parent.map(str::to_string),
            blob,
            metadata: py_json(&Json::Object(metadata.clone())),
        });
    }

    pub fn has_pending(&self) -> bool {
        !self.ops.is_empty()
    }

    /// Commit everything buffered in one transaction.
    pub fn commit(&mut self, conn: &Connection) -> Result<(), EngineError> {
        if self.ops.is_empty() {
            return Ok(());
        }
        // BEGIN/COMMIT as cached statements: parsing them anew each superstep costs more than
        // the inserts of a small step
        // IMMEDIATE: the write lock is taken before the head is checked, so no other writer can
        // slip in between the check and the writes
        conn.prepare_cached("BEGIN IMMEDIATE")?.execute([])?;
        let r = data_version(conn).and_then(|now| {
            self.check_head(conn, now)?;
            self.write_ops(conn)?;
            // read inside the transaction: nobody else can commit before ours
            self.seen = Some(now);
            Ok(())
        });
        match r {
            Ok(()) => match conn
                .prepare_cached("COMMIT")
                .and_then(|mut c| c.execute([]))
            {
                Ok(_) => {
                    self.commits += 1;
                    Ok(())
                }
                Err(e) => {
                    let _ = conn.execute_batch("ROLLBACK");
                    Err(e.into())
                }
            },
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                self.ops.clear();
                Err(e)
            }
        }
    }

    fn check_head(&self, tx: &Connection, now: i64) -> Result<(), EngineError> {
        let Some(expected) = &self.head else {
            return Ok(());
        };
        if self.seen == Some(now) {
            // no other connection committed since the head was known
            return Ok(());
        }
        let found: Option<String> = tx
            .prepare_cached(
                "SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ''",
            )?
            .query_row([&self.thread_id], |r| r.get(0))?;
        if &found == expected {
            return Ok(());
        }
        let none = || "(none)".to_string();
        Err(EngineError::ThreadMoved {
            thread: self.thread_id.clone(),
            expected: expected.clone().unwrap_or_else(none),
            found: found.unwrap_or_else(none),
        })
    }

    fn write_ops(&mut self, tx: &Connection) -> Result<(), EngineError> {
        for op in self.ops.drain(..) {
            match op {
                Op::Checkpoint {
                    ns,
                    id,
                    parent,
                    blob,
                    metadata,
                } => {
                    if ns.is_empty() {
                        if let Some(head) = &mut self.head {
                            if head.as_deref().is_none_or(|h| h < id.as_str()) {
                                *head = Some(id.clone());
                            }
                        }
                    }
                    tx.prepare_cached(
                        "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
                         VALUES (?1, ?2, ?3, ?4, 'msgpack', ?5, ?6)",
                    )?
                    .execute(params![self.thread_id, ns, id, parent, blob, metadata.into_bytes()])?;
                }
                Op::Writes {
                    ns,
                    checkpoint_id,
                    task_id,
                    task_path,
                    rows,
                    replace,
                } => {
                    let sql = if replace {
                        "INSERT OR REPLACE INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
                    } else {
                        "INSERT OR IGNORE INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
                    };
                    let mut stmt = tx.prepare_cached(sql)?;
                    for (idx, channel, ty, bytes) in rows {
                        stmt.execute(params![
                            self.thread_id,
                            ns,
                            checkpoint_id,
                            task_id,
                            task_path,
                            idx,
                            channel,
                            ty,
                            bytes
                        ])?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Drop buffered writes (a failed operation leaves the DB as it was).
    pub fn discard(&mut self) {
        self.ops.clear();
    }
}

/// `json.dumps(obj, ensure_ascii=False)`: Python's separators and float repr.
pub fn py_json(j: &Json) -> String {
    let mut out = String::new();
    write_py_json(j, &mut out);
    out
}

fn write_py_json(j: &Json, out: &mut String) {
    match j {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Number(n) => {
            if n.is_f64() {
                let f = n.as_f64().unwrap();
                out.push_str(&super::versions::python_float_repr(f));
            } else {
                out.push_str(&n.to_string());
            }
        }
        Json::String(s) => out.push_str(&serde_json::to_string(s).unwrap()),
        Json::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_py_json(x, out);
            }
            out.push(']');
        }
        Json::Object(o) => {
            out.push('{');
            for (i, (k, v)) in o.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&serde_json::to_string(k).unwrap());
                out.push_str(": ");
                write_py_json(v, out);
            }
            out.push('}');
        }
    }
}

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
    /// The multi-row INSERT texts made so far, by (REPLACE?, rows).
    sql: std::collections::HashMap<(bool, usize), String>,
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
            sql: Default::default(),
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
                    // one multi-row INSERT per batch (up to WRITES_PER_STATEMENT rows): rows are
                    // inserted in order with the same conflict rule, so the result is what a
                    // statement per row leaves, at a fraction of the per-statement cost
                    for chunk in rows.chunks(WRITES_PER_STATEMENT) {
                        let sql = self.sql.entry((replace, chunk.len()));
                        let sql = sql.or_insert_with(|| writes_sql(replace, chunk.len()));
                        let mut stmt = tx.prepare_cached(sql)?;
                        stmt.raw_bind_parameter(1, &self.thread_id)?;
                        stmt.raw_bind_parameter(2, &ns)?;
                        stmt.raw_bind_parameter(3, &checkpoint_id)?;
                        stmt.raw_bind_parameter(4, &task_id)?;
                        stmt.raw_bind_parameter(5, &task_path)?;
                        for (i, (idx, channel, ty, bytes)) in chunk.iter().enumerate() {
                            let at = 6 + 4 * i;
                            stmt.raw_bind_parameter(at, idx)?;
                            stmt.raw_bind_parameter(at + 1, channel)?;
                            stmt.raw_bind_parameter(at + 2, ty)?;
                            stmt.raw_bind_parameter(at + 3, bytes)?;
                        }
                        stmt.raw_execute()?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Mode, Store};

    fn rows(conn: &Connection) -> Vec<(i64, String)> {
        let mut st = conn
            .prepare("SELECT idx, channel FROM writes ORDER BY rowid")
            .unwrap();
        let r = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        r.collect::<Result<_, _>>().unwrap()
    }

    #[test]
    fn a_batch_longer_than_one_statement_lands_whole_and_in_order() {
        let store = Store::open(std::path::Path::new(":memory:"), Mode::ReadWrite).unwrap();
        let mut s = Saver::new("t");
        let n = WRITES_PER_STATEMENT * 2 + 3;
        let writes: Vec<(String, Value)> = (0..n)
            .map(|i| (format!("c{i}"), Value::from(i as i64)))
            .collect();
        s.put_writes("", "cp", "task", "~path", &writes);
        s.commit(store.conn()).unwrap();
        let got = rows(store.conn());
        let want: Vec<(i64, String)> = (0..n).map(|i| (i as i64, format!("c{i}"))).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn ignore_keeps_the_first_row_and_replace_the_last() {
        let store = Store::open(std::path::Path::new(":memory:"), Mode::ReadWrite).unwrap();
        let mut s = Saver::new("t");
        let w = |c: &str, v: i64| (c.to_string(), Value::from(v));
        // a regular batch: INSERT OR IGNORE, an existing (task, idx) keeps its row
        s.put_writes("", "cp", "task", "", &[w("a", 1), w("b", 2)]);
        s.put_writes("", "cp", "task", "", &[w("x", 3), w("y", 4), w("z", 5)]);
        // special channels only: INSERT OR REPLACE on their fixed idx
        s.put_writes("", "cp", "task", "", &[w("__interrupt__", 6)]);
        s.put_writes("", "cp", "task", "", &[w("__interrupt__", 7)]);
        s.commit(store.conn()).unwrap();
        let mut st = store
            .conn()
            .prepare("SELECT idx, channel, value FROM writes ORDER BY idx")
            .unwrap();
        let got: Vec<(i64, String, Vec<u8>)> = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let enc = |v: i64| Typed::Value(Value::from(v)).encode().1;
        assert_eq!(
            got,
            vec![
                (-3, "__interrupt__".to_string(), enc(7)),
                (0, "a".to_string(), enc(1)),
                (1, "b".to_string(), enc(2)),
                (2, "z".to_string(), enc(5)),
            ]
        );
    }
}

//! The saver's writes (`put` / `put_writes`, spec §1.2–§1.4), buffered so that a superstep's
//! writes and its checkpoint land in one transaction — all or nothing — through the store's
//! backend (`store::Backend`), with the "another writer moved the thread on" head check.

use super::EngineError;
use crate::store::{EncodedCheckpoint, EncodedWrites, Store};
use crate::value::Typed;
use rmpv::Value;
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
    Checkpoint(EncodedCheckpoint),
    Writes(EncodedWrites),
}

pub struct Saver {
    pub thread_id: String,
    ops: Vec<Op>,
    /// Transactions committed so far.
    pub commits: u64,
    /// The newest root checkpoint of the thread this engine last saw (`Some(None)`: none yet);
    /// a commit finding another one refuses to write (two writers stepping one thread).
    head: Option<Option<String>>,
    /// The store's write token when `head` was last known true: unchanged means no other
    /// connection has committed since, so the head query can be skipped.
    seen: Option<i64>,
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
    /// `seen` is the store's write token read *before* `head` was read.
    pub fn expect_head(&mut self, head: Option<String>, seen: Option<i64>) {
        self.head = Some(head);
        self.seen = seen;
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
        self.ops.push(Op::Writes(EncodedWrites {
            ns: ns.to_string(),
            checkpoint_id: checkpoint_id.to_string(),
            task_id: task_id.to_string(),
            task_path: task_path.to_string(),
            rows,
            replace,
        }));
    }

    /// `put`: the checkpoint row (and whatever side rows the store keeps with it), encoded by
    /// the store (`Backend::encode_checkpoint`).
    pub fn put(&mut self, cp: EncodedCheckpoint) {
        self.ops.push(Op::Checkpoint(cp));
    }

    pub fn has_pending(&self) -> bool {
        !self.ops.is_empty()
    }

    /// Commit everything buffered in one transaction.
    pub fn commit(&mut self, store: &Store) -> Result<(), EngineError> {
        if self.ops.is_empty() {
            return Ok(());
        }
        // the store holds other writers off from here to the commit, so nobody can slip in
        // between the head check and the writes
        store.begin_write()?;
        let r = store
            .write_token()
            .map_err(EngineError::from)
            .and_then(|now| {
                self.check_head(store, now)?;
                self.write_ops(store)?;
                // read inside the transaction: nobody else can commit before ours
                self.seen = now;
                Ok(())
            });
        match r {
            Ok(()) => match store.commit_write() {
                Ok(()) => {
                    self.commits += 1;
                    Ok(())
                }
                Err(e) => {
                    store.rollback_write();
                    Err(e.into())
                }
            },
            Err(e) => {
                store.rollback_write();
                self.ops.clear();
                Err(e)
            }
        }
    }

    fn check_head(&self, store: &Store, now: Option<i64>) -> Result<(), EngineError> {
        let Some(expected) = &self.head else {
            return Ok(());
        };
        if now.is_some() && self.seen == now {
            // no other connection committed since the head was known
            return Ok(());
        }
        let found = store.head(&self.thread_id)?;
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

    fn write_ops(&mut self, store: &Store) -> Result<(), EngineError> {
        for op in self.ops.drain(..) {
            match op {
                Op::Checkpoint(cp) => {
                    if cp.ns.is_empty() {
                        if let Some(head) = &mut self.head {
                            if head.as_deref().is_none_or(|h| h < cp.id.as_str()) {
                                *head = Some(cp.id.clone());
                            }
                        }
                    }
                    store.put_checkpoint(&self.thread_id, &cp)?;
                }
                Op::Writes(w) => store.put_writes(&self.thread_id, &w)?,
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
    use rusqlite::Connection;

    /// A fresh SQLite store, and a connection of the test's own to read what it holds.
    fn fresh() -> (tempfile::TempDir, Store, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.sqlite");
        let store = Store::open(&db, Mode::ReadWrite).unwrap();
        let conn = Connection::open(&db).unwrap();
        (dir, store, conn)
    }

    fn rows(conn: &Connection) -> Vec<(i64, String)> {
        let mut st = conn
            .prepare("SELECT idx, channel FROM writes ORDER BY rowid")
            .unwrap();
        let r = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        r.collect::<Result<_, _>>().unwrap()
    }

    #[test]
    fn a_batch_longer_than_one_statement_lands_whole_and_in_order() {
        let (_dir, store, conn) = fresh();
        let mut s = Saver::new("t");
        // the SQLite backend inserts 64 rows per statement
        let n = 64 * 2 + 3;
        let writes: Vec<(String, Value)> = (0..n)
            .map(|i| (format!("c{i}"), Value::from(i as i64)))
            .collect();
        s.put_writes("", "cp", "task", "~path", &writes);
        s.commit(&store).unwrap();
        let got = rows(&conn);
        let want: Vec<(i64, String)> = (0..n).map(|i| (i as i64, format!("c{i}"))).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn ignore_keeps_the_first_row_and_replace_the_last() {
        let (_dir, store, conn) = fresh();
        let mut s = Saver::new("t");
        let w = |c: &str, v: i64| (c.to_string(), Value::from(v));
        // a regular batch: INSERT OR IGNORE, an existing (task, idx) keeps its row
        s.put_writes("", "cp", "task", "", &[w("a", 1), w("b", 2)]);
        s.put_writes("", "cp", "task", "", &[w("x", 3), w("y", 4), w("z", 5)]);
        // special channels only: INSERT OR REPLACE on their fixed idx
        s.put_writes("", "cp", "task", "", &[w("__interrupt__", 6)]);
        s.put_writes("", "cp", "task", "", &[w("__interrupt__", 7)]);
        s.commit(&store).unwrap();
        let mut st = conn
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

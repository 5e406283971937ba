//! Where recordings live, and reading, exporting and dropping them.
//!
//! Beside LangGraph's rows, never in its tables, so LangGraph reading the store sees nothing new:
//! * a SQLite store `FILE` → the sibling file `FILE.superstep-calls.sqlite` (the checkpoint file
//!   holds LangGraph's rows only; the recordings file is read like the store: WAL without a `-wal`
//!   file opened `immutable`, so inspecting leaves the directory as it was);
//! * a Postgres store → tables `superstep_calls`, `superstep_call_steps`,
//!   `superstep_call_aliases`, `superstep_call_meta` in the same database (PostgresSaver reads
//!   only `checkpoints`, `checkpoint_blobs`, `checkpoint_writes`, `checkpoint_migrations`).
//!
//! The bridge's recorder (`src/bridge/recorder.py`) creates and writes them; this side reads
//! (read-only), exports a thread's calls to a file and drops them.

use super::{Call, CallStatus};
use rusqlite::{params, Connection, OpenFlags};
use std::path::{Path, PathBuf};

/// The suffix of the sibling file of a SQLite store.
pub const SUFFIX: &str = ".superstep-calls.sqlite";

/// Where the recordings of a store live.
#[derive(Debug, Clone, PartialEq)]
pub enum Location {
    Sqlite(PathBuf),
    Postgres(String),
}

impl Location {
    pub fn of(db: &Path) -> Location {
        if crate::store::Store::is_server(db) {
            Location::Postgres(db.display().to_string())
        } else {
            let mut p = db.as_os_str().to_owned();
            p.push(SUFFIX);
            Location::Sqlite(PathBuf::from(p))
        }
    }

    /// For messages: the file, or the tables.
    pub fn label(&self) -> String {
        match self {
            Location::Sqlite(p) => p.display().to_string(),
            Location::Postgres(url) => format!(
                "superstep_calls in {}",
                crate::store::postgres::Target::parse(url, &crate::store::postgres::ProcessEnv)
                    .map(|t| t.label())
                    .unwrap_or_else(|_| "the Postgres store".into())
            ),
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("call recordings {place}: {detail}")]
pub struct RecordingsError {
    pub place: String,
    pub detail: String,
}

const COLUMNS: &str = "id, task_id, task_ns, node, attempt, seq, kind, name, status, \
    request_summary, response_summary, CAST(round(latency_ms * 1000) AS BIGINT), input_tokens, output_tokens, error IS NOT NULL, \
    checkpoint_id, run, root_task_id, step, ref_id";

const TABLES: [&str; 3] = [
    "superstep_calls",
    "superstep_call_steps",
    "superstep_call_aliases",
];

enum Conn {
    Sqlite(Connection),
    Postgres(std::cell::RefCell<postgres::Client>),
}

/// The recordings of one store, opened to read (or, for `drop`, to delete).
pub struct Recordings {
    conn: Conn,
    place: String,
}

/// One value of a row, from either backend.
trait Get {
    fn i64(&self, i: usize) -> Option<i64>;
    fn text(&self, i: usize) -> Option<String>;
    fn flag(&self, i: usize) -> bool;
}

impl Get for rusqlite::Row<'_> {
    fn i64(&self, i: usize) -> Option<i64> {
        self.get(i).ok().flatten()
    }
    fn text(&self, i: usize) -> Option<String> {
        self.get(i).ok().flatten()
    }
    fn flag(&self, i: usize) -> bool {
        self.get(i).unwrap_or(false)
    }
}

impl Get for postgres::Row {
    fn i64(&self, i: usize) -> Option<i64> {
        self.try_get(i).ok().flatten()
    }
    fn text(&self, i: usize) -> Option<String> {
        self.try_get(i).ok().flatten()
    }
    fn flag(&self, i: usize) -> bool {
        self.try_get(i).unwrap_or(false)
    }
}

fn call_of(r: &dyn Get) -> Call {
    let t = |i| r.text(i).unwrap_or_default();
    Call {
        id: r.i64(0),
        task_id: t(1),
        ns: t(2),
        node: t(3),
        attempt: r.i64(4).unwrap_or(1) as u32,
        seq: r.i64(5).unwrap_or(0) as u32,
        kind: t(6),
        name: t(7),
        status: match t(8).as_str() {
            "recorded" => CallStatus::Recorded,
            "diverged" => CallStatus::Diverged,
            _ => CallStatus::Live,
        },
        request: t(9),
        response: t(10),
        latency_us: r.i64(11),
        input_tokens: r.i64(12),
        output_tokens: r.i64(13),
        error: r.flag(14),
        checkpoint: r.text(15),
        run: r.i64(16),
        root_task_id: r.text(17),
        step: r.i64(18),
        ref_id: r.i64(19),
    }
}

/// `?1`, `?2` (SQLite) -> `$1`, `$2` (Postgres).
fn pg(sql: &str) -> String {
    sql.replace('?', "$")
}

impl Recordings {
    /// Open the recordings of store `db` read-only; `None` when nothing was ever recorded
    /// there.
    pub fn open(db: &Path) -> Result<Option<Recordings>, RecordingsError> {
        Self::open_at(&Location::of(db), false)
    }

    /// Open them to delete rows (`superstep calls --drop`).
    pub fn open_for_drop(db: &Path) -> Result<Option<Recordings>, RecordingsError> {
        Self::open_at(&Location::of(db), true)
    }

    fn open_at(loc: &Location, write: bool) -> Result<Option<Recordings>, RecordingsError> {
        let place = loc.label();
        let fail = |detail: String| RecordingsError {
            place: place.clone(),
            detail,
        };
        let conn = match loc {
            Location::Sqlite(path) => {
                if !path.exists() {
                    return Ok(None);
                }
                Conn::Sqlite(if write {
                    Connection::open_with_flags(
                        path,
                        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                    )
                    .map_err(|e| fail(e.to_string()))?
                } else {
                    crate::store::sqlite_own::open_read_only(path)
                        .map_err(|e| fail(e.to_string()))?
                })
            }
            Location::Postgres(url) => {
                let mode = if write {
                    crate::store::Mode::ReadWrite
                } else {
                    crate::store::Mode::ReadOnly
                };
                let mut c = crate::store::postgres::own::client(url, mode)
                    .map_err(|e| fail(e.to_string()))?;
                let has: Option<String> = c
                    .query_one("SELECT to_regclass('superstep_call_meta')::text", &[])
                    .map_err(|e| fail(e.to_string()))?
                    .get(0);
                if has.is_none() {
                    return Ok(None);
                }
                Conn::Postgres(std::cell::RefCell::new(c))
            }
        };
        let r = Recordings { conn, place };
        r.check()?;
        Ok(Some(r))
    }

    fn err(&self, e: impl ToString) -> RecordingsError {
        RecordingsError {
            place: self.place.clone(),
            detail: e.to_string(),
        }
    }

    /// Rows of `sql` (`?1`-style parameters, text or integers) mapped by `f`.
    fn rows<T>(
        &self,
        sql: &str,
        args: &[&str],
        f: impl Fn(&dyn Get) -> T,
    ) -> Result<Vec<T>, RecordingsError> {
        match &self.conn {
            Conn::Sqlite(c) => {
                let mut st = c.prepare(sql).map_err(|e| self.err(e))?;
                let rows = st
                    .query_map(rusqlite::params_from_iter(args.iter()), |r| Ok(f(r)))
                    .map_err(|e| self.err(e))?;
                rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
            }
            Conn::Postgres(c) => {
                let params: Vec<&(dyn postgres::types::ToSql + Sync)> = args
                    .iter()
                    .map(|a| a as &(dyn postgres::types::ToSql + Sync))
                    .collect();
                let rows = c
                    .borrow_mut()
                    .query(&pg(sql), &params)
                    .map_err(|e| self.err(e))?;
                Ok(rows.iter().map(|r| f(r)).collect())
            }
        }
    }

    fn check(&self) -> Result<(), RecordingsError> {
        let schema = self
            .rows(
                "SELECT value FROM superstep_call_meta WHERE key = 'schema'",
                &[],
                |r| r.text(0),
            )
            .map_err(|e| self.err(format!("not a superstep recordings store ({})", e.detail)))?;
        match schema.first().cloned().flatten().as_deref() {
            Some("1") => Ok(()),
            Some(v) => Err(self.err(format!(
                "written by another superstep (schema {v}; this one reads 1)"
            ))),
            None => Err(self.err("not a superstep recordings store (no schema)")),
        }
    }

    /// Every call recorded on `thread`, in the order they were made (run, then row).
    pub fn calls(&self, thread: &str) -> Result<Vec<Call>, RecordingsError> {
        self.rows(
            &format!("SELECT {COLUMNS} FROM superstep_calls WHERE thread_id = ?1 ORDER BY run, id"),
            &[thread],
            call_of,
        )
    }

    /// The calls of one task (its own, and those of subgraph tasks inside it), latest execution
    /// last.
    pub fn task_calls(&self, thread: &str, task_id: &str) -> Result<Vec<Call>, RecordingsError> {
        let like = format!("%:{task_id}%");
        self.rows(
            &format!(
                "SELECT {COLUMNS} FROM superstep_calls WHERE thread_id = ?1 \
                 AND (task_id = ?2 OR root_task_id = ?2 OR task_ns LIKE ?3) ORDER BY run, id"
            ),
            &[thread, task_id, &like],
            call_of,
        )
    }

    /// The full request of a call (JSON as recorded: the messages and llm string LangChain's
    /// cache keys on, or a tool's name, input and call id).
    pub fn request(&self, id: i64) -> Result<Option<serde_json::Value>, RecordingsError> {
        let id = id.to_string();
        let text = self.rows(
            "SELECT request FROM superstep_calls WHERE id = CAST(?1 AS BIGINT)",
            &[&id],
            |r| r.text(0),
        )?;
        text.into_iter()
            .flatten()
            .next()
            .map(|t| serde_json::from_str(&t).map_err(|e| self.err(e)))
            .transpose()
    }

    /// Delete `thread`'s calls, steps and aliases (every thread's when `None`); returns how
    /// many calls went.
    pub fn drop_thread(&self, thread: Option<&str>) -> Result<usize, RecordingsError> {
        let sql = |table: &str| match thread {
            Some(_) => format!("DELETE FROM {table} WHERE thread_id = ?1"),
            None => format!("DELETE FROM {table}"),
        };
        let args: Vec<&str> = thread.into_iter().collect();
        match &self.conn {
            Conn::Sqlite(c) => {
                let tx = c.unchecked_transaction().map_err(|e| self.err(e))?;
                let mut n = 0;
                for table in TABLES {
                    let k = tx
                        .execute(&sql(table), rusqlite::params_from_iter(args.iter()))
                        .map_err(|e| self.err(e))?;
                    if table == TABLES[0] {
                        n = k;
                    }
                }
                tx.commit().map_err(|e| self.err(e))?;
                Ok(n)
            }
            Conn::Postgres(c) => {
                let mut c = c.borrow_mut();
                let mut tx = c.transaction().map_err(|e| self.err(e))?;
                let params: Vec<&(dyn postgres::types::ToSql + Sync)> = args
                    .iter()
                    .map(|a| a as &(dyn postgres::types::ToSql + Sync))
                    .collect();
                let mut n = 0;
                for table in TABLES {
                    let k = tx
                        .execute(&pg(&sql(table)), &params)
                        .map_err(|e| self.err(e))?;
                    if table == TABLES[0] {
                        n = k as usize;
                    }
                }
                tx.commit().map_err(|e| self.err(e))?;
                Ok(n)
            }
        }
    }

    /// Write `thread`'s recordings (every thread's when `None`) to a new file `to`, a
    /// recordings file of its own: beside a copy of the store, named `STORE.superstep-calls.sqlite`,
    /// it replays that thread offline.
    pub fn export(&self, thread: Option<&str>, to: &Path) -> Result<usize, RecordingsError> {
        let Conn::Sqlite(conn) = &self.conn else {
            return Err(self.err(
                "exporting the recordings of a Postgres store to a file is not supported yet (pg_dump -t 'superstep_call*' copies them)",
            ));
        };
        if to.exists() {
            return Err(self.err(format!(
                "{}: the file exists (export writes a new file)",
                to.display()
            )));
        }
        let target = to
            .to_str()
            .ok_or_else(|| self.err("the export path is not UTF-8"))?;
        conn.execute("VACUUM INTO ?1", params![target])
            .map_err(|e| self.err(format!("{}: {e}", to.display())))?;
        let copy = Connection::open(to).map_err(|e| self.err(e))?;
        let mut kept = 0;
        let result = (|| -> rusqlite::Result<()> {
            if let Some(t) = thread {
                for table in TABLES {
                    copy.execute(
                        &format!("DELETE FROM {table} WHERE thread_id <> ?1"),
                        params![t],
                    )?;
                }
                copy.execute_batch("VACUUM")?;
            }
            kept = copy.query_row("SELECT COUNT(*) FROM superstep_calls", [], |r| {
                r.get::<_, i64>(0)
            })? as usize;
            Ok(())
        })();
        if let Err(e) = result {
            drop(copy);
            let _ = std::fs::remove_file(to);
            return Err(self.err(e));
        }
        Ok(kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sqlite_store_records_in_a_sibling_file_a_postgres_one_in_its_database() {
        assert_eq!(
            Location::of(Path::new("/x/app.sqlite")),
            Location::Sqlite(PathBuf::from("/x/app.sqlite.superstep-calls.sqlite"))
        );
        assert!(matches!(
            Location::of(Path::new("postgresql://u@h/db")),
            Location::Postgres(_)
        ));
    }

    #[test]
    fn nothing_recorded_is_no_recordings_and_creates_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("a.sqlite");
        assert!(Recordings::open(&db).unwrap().is_none());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}

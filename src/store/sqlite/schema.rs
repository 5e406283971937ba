//! SqliteSaver's schema and the multi-row INSERT into `writes`.

use super::*;

/// Rows per multi-row INSERT into `writes` (9 columns, 5 shared: 5 + 4 x 64 parameters).
pub(super) const WRITES_PER_STATEMENT: usize = 64;

/// `INSERT OR IGNORE|REPLACE INTO writes ... VALUES (...), (...)` for `rows` rows; the thread,
/// namespace, checkpoint, task id and path are ?1..?5 in every row, each row's idx, channel,
/// type and value the next four parameters.
pub(super) fn writes_sql(replace: bool, rows: usize) -> String {
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

/// A SQLite file with no tables at all (created, then its process was killed before the schema).
pub fn sqlite_has_no_tables(path: &Path) -> bool {
    Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .and_then(|c| {
            c.query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| {
                r.get::<_, i64>(0)
            })
        })
        .map(|n| n == 0)
        .unwrap_or(false)
}

/// `SqliteSaver.setup()` on a connection the caller owns: WAL plus the two tables (spec §1.1).
pub fn create_sqlite_schema(conn: &Connection) -> rusqlite::Result<()> {
    create_schema(conn)
}

/// SqliteSaver.setup(): WAL plus the two tables (spec §1.1).
pub(super) fn create_schema(conn: &Connection) -> rusqlite::Result<()> {
    conn.pragma_update(None, "journal_mode", "WAL")?;
    // both tables in one transaction: a process killed here leaves all or nothing
    conn.execute_batch(
        "BEGIN;
        CREATE TABLE IF NOT EXISTS checkpoints (
            thread_id TEXT NOT NULL,
            checkpoint_ns TEXT NOT NULL DEFAULT '',
            checkpoint_id TEXT NOT NULL,
            parent_checkpoint_id TEXT,
            type TEXT,
            checkpoint BLOB,
            metadata BLOB,
            PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
        );
        CREATE TABLE IF NOT EXISTS writes (
            thread_id TEXT NOT NULL,
            checkpoint_ns TEXT NOT NULL DEFAULT '',
            checkpoint_id TEXT NOT NULL,
            task_id TEXT NOT NULL,
            task_path TEXT NOT NULL DEFAULT '',
            idx INTEGER NOT NULL,
            channel TEXT NOT NULL,
            type TEXT,
            value BLOB,
            PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
        );
        COMMIT;",
    )?;
    match conn.execute(
        "ALTER TABLE writes ADD COLUMN task_path TEXT NOT NULL DEFAULT ''",
        [],
    ) {
        Ok(_) => Ok(()),
        Err(e) if e.to_string().contains("duplicate column") => Ok(()),
        Err(e) => Err(e),
    }
}

//! SQLite errors as `StoreError`s that name the file and what to do.

use super::*;

pub(super) fn sql_err(path: &str, e: rusqlite::Error) -> StoreError {
    if e.sqlite_error_code() == Some(rusqlite::ErrorCode::TooBig) {
        return StoreError::Sqlite {
            path: path.to_string(),
            detail: format!(
                "reading it would make SQLite build a value over {} MiB (a generated column? stored values that large are streamed, not built): not loaded",
                BUILD_LIMIT >> 20
            ),
        };
    }
    // SQLITE_READONLY_ROLLBACK: a hot journal that a read-only connection may not roll back
    if e.sqlite_error().is_some_and(|x| x.extended_code == 776) {
        return StoreError::Sqlite {
            path: path.to_string(),
            detail: format!(
                "a hot rollback journal ({path}-journal) is next to it: a process crashed or was \
                 killed in the middle of writing, and SQLite must roll that write back before the \
                 file can be read, which read-only inspection will not do. Recover with one \
                 write-capable open (e.g. sqlite3 {path} 'PRAGMA quick_check', or the LangGraph \
                 app), keeping the -journal file beside it until then (deleting it corrupts the \
                 file); then inspect again"
            ),
        };
    }
    StoreError::Sqlite {
        path: path.to_string(),
        detail: e.to_string(),
    }
}

pub(super) fn classify(path: &str, e: rusqlite::Error) -> StoreError {
    let detail = e.to_string();
    if detail.contains("file is not a database") || detail.contains("malformed") {
        StoreError::NotSqlite {
            path: path.to_string(),
            detail,
        }
    } else {
        sql_err(path, e)
    }
}

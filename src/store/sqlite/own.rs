//! superstep's own SQLite files beside a store (the recorded calls, `crate::replay`), read the
//! way the store is.

use super::open::{check_header, open_conn};
use super::{Mode, StoreError};
use rusqlite::Connection;
use std::path::Path;

/// A SQLite file of superstep's own beside a store (the recorded calls, `crate::replay`) opened
/// read-only the way the store is: a WAL file nobody has open `immutable`, so reading creates no
/// file next to it.
pub fn open_read_only(path: &Path) -> Result<Connection, StoreError> {
    let wal = check_header(path)?;
    open_conn(path, Mode::ReadOnly, wal).map_err(|e| StoreError::Sqlite {
        path: path.display().to_string(),
        detail: e.to_string(),
    })
}

//! The SqliteSaver database (spec §1): schema checks, paged queries, read-only by default.

mod checkpoint;
mod sqlite;

pub use checkpoint::{Checkpoint, Version};
pub use sqlite::{CheckpointRow, Mode, Stamp, Store, ThreadSummary, WriteRow, PREVIEW_OVER};

/// Errors reading or writing the checkpoint database.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: no such file")]
    Missing { path: String },
    #[error("{path}: not a SQLite database ({detail})")]
    NotSqlite { path: String, detail: String },
    #[error("{path}: SQLite, but not a LangGraph checkpoint database (missing table {table})")]
    NotCheckpointDb { path: String, table: &'static str },
    #[error("{path}: {detail}")]
    Sqlite { path: String, detail: String },
    #[error("{path}: corrupt {what} in {location}: {detail}")]
    Corrupt {
        path: String,
        what: &'static str,
        location: String,
        detail: String,
    },
}

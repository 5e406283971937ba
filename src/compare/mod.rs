//! Compare and explain: stored threads read side by side. Pure reading through
//! `store` / `snapshot` / `inspect`; nothing here writes a row.
//!
//! * [`address`]: `ID`, `THREAD`, `THREAD@STEP`, `THREAD@ID` → one checkpoint row.
//! * [`lineage`]: a checkpoint and its ancestors through `parent_checkpoint_id`, oldest first.
//! * [`jsondiff`]: two JSON views → the paths that differ.
//! * [`messages`]: two message lists → added / removed / edited messages and tool calls.
//! * [`diff`]: two snapshots → a [`diff::CheckpointDiff`] (values, next, tasks, interrupts,
//!   pending writes), serialised as `superstep diff --json` prints it.
//! * [`render`]: a diff as rows the CLI prints unified and the TUI shows side by side.
//! * [`diverge`]: two lineages → the first superstep at which they differ, and the tasks whose
//!   writes made the difference.
//! * [`why`]: a state key (or a path in it) → the writes that produced each contribution.
//! * [`expr`]: watch / break-when expressions (a documented Starlark subset) over a snapshot.
//! * [`breaker`]: a run driven one superstep at a time until an expression holds.

pub mod address;
pub mod breaker;
pub mod diff;
pub mod diverge;
pub mod expr;
pub mod jsondiff;
pub mod lineage;
pub mod messages;
pub mod origin;
pub mod render;
pub mod why;

/// An error of a compare command: one line naming what and where.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error(transparent)]
    Inspect(#[from] crate::inspect::InspectError),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error("{0}")]
    Message(String),
}

impl CompareError {
    pub fn msg(s: impl Into<String>) -> CompareError {
        CompareError::Message(s.into())
    }
}

//! The TUI's side of `crate::compare`: what it holds (a marked checkpoint, watch expressions and
//! their values, a break-when expression and the stepped run it drives, the diff and provenance
//! views), the key actions (`Act`), the jobs for the runtime (`Job`) and what they bring back
//! (`Loaded`). The behaviour is in `update::compare`, the reading in `effects::compare`, the
//! drawing in `ui::diff`, `ui::why` and `ui::watches`.

use crate::compare::diff::CheckpointDiff;
use crate::compare::expr::{Evaluated, Expr};
use crate::compare::render::Row;
use crate::compare::why::Provenance;

/// A checkpoint, wherever it lives.
#[derive(Debug, Clone, PartialEq)]
pub struct CpRef {
    pub thread: String,
    pub ns: String,
    pub id: String,
    pub step: i64,
}

/// One watch expression and its value at the checkpoint shown.
#[derive(Debug, Clone, PartialEq)]
pub struct Watch {
    pub expr: Expr,
    /// `None` until evaluated (no checkpoint shown yet).
    pub value: Option<Result<Evaluated, String>>,
}

/// A `c` under `:break when`: stepped one superstep at a time until the expression holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Until {
    pub thread: String,
    /// Supersteps taken so far.
    pub steps: u32,
    /// The last step's report: how many supersteps it ran and whether it paused by itself.
    pub last_ran: usize,
    pub last_paused: bool,
    /// Evaluations that failed (counted as false): `(step, error)`, the first one kept.
    pub failed: Option<(i64, String)>,
}

/// The diff of the selected checkpoint against the mark.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffView {
    pub a: String,
    pub b: String,
    pub rows: Vec<Row>,
    pub scroll: usize,
}

/// Provenance of a State row's key.
#[derive(Debug, Clone, PartialEq)]
pub struct WhyView {
    pub p: Provenance,
    pub sel: usize,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct CompareState {
    pub mark: Option<CpRef>,
    pub watches: Vec<Watch>,
    pub break_when: Option<Expr>,
    pub until: Option<Until>,
}

/// Keys of the compare features.
#[derive(Debug, Clone, PartialEq)]
pub enum Act {
    /// `m`: mark the checkpoint selected in History (again: unmark).
    Mark,
    /// `d`: diff the selected checkpoint against the mark.
    Diff,
    /// `w`: provenance of the State row's key.
    Why,
    /// Move in the diff / provenance view (rows; `i64::MIN` / `MAX`: first / last).
    Scroll(i64),
    /// Enter in the provenance view: select that contribution's checkpoint in History.
    Go,
}

/// What the runtime reads for them.
#[derive(Debug, Clone, PartialEq)]
pub enum Job {
    Diff { a: CpRef, b: CpRef },
    Why { at: CpRef, key: String },
}

/// What comes back.
#[derive(Debug, Clone)]
pub enum Loaded {
    Diff(Box<CheckpointDiff>),
    Why(Box<Provenance>),
    Failed(String),
}

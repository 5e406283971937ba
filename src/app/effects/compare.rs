//! The compare jobs of the TUI (`crate::app::compare::Job`), read through the inspector: a diff of
//! two checkpoints (any threads, any namespaces), the provenance of a state key.

use super::Runtime;
use crate::app::action::Action;
use crate::app::compare::{CpRef, Job, Loaded};
use crate::compare::{diff, why, CompareError};

impl Runtime<'_> {
    pub(super) fn compare(&self, job: Job) -> Vec<Action> {
        let r = match job {
            Job::Diff { a, b } => self.diff_of(&a, &b).map(|d| Loaded::Diff(Box::new(d))),
            Job::Why { at, key } => self.why_of(&at, &key).map(|p| Loaded::Why(Box::new(p))),
        };
        vec![Action::CompareLoaded(
            r.unwrap_or_else(|e| Loaded::Failed(e.to_string())),
        )]
    }

    fn row(&self, c: &CpRef) -> Result<crate::store::CheckpointRow, CompareError> {
        self.store
            .checkpoint(&c.thread, &c.ns, Some(&c.id))?
            .ok_or_else(|| {
                CompareError::msg(format!(
                    "thread {:?} has no checkpoint {} any more",
                    c.thread, c.id
                ))
            })
    }

    fn diff_of(&self, a: &CpRef, b: &CpRef) -> Result<diff::CheckpointDiff, CompareError> {
        let (ta, tb) = (self.open(&a.thread, &a.ns)?, self.open(&b.thread, &b.ns)?);
        let sa = ta.snapshot_of(&self.row(a)?, false)?;
        let sb = tb.snapshot_of(&self.row(b)?, false)?;
        Ok(diff::diff(&sa, &sb))
    }

    fn why_of(&self, at: &CpRef, text: &str) -> Result<why::Provenance, CompareError> {
        let th = self.open(&at.thread, &at.ns)?;
        let row = self.row(at)?;
        let snap = th.snapshot_of(&row, false)?;
        let keys: Vec<String> = snap.values.iter().map(|(k, _)| k.clone()).collect();
        let (key, path) = why::parse_path(text, &keys).map_err(CompareError::Message)?;
        why::why(&self.store, &th, &row, &key, &path, &text[key.len()..])
    }
}

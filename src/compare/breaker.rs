//! Conditional breakpoints: a run driven through the graph-source seam one superstep at a time
//! (`steps: 1`, then `Start::Continue` — the run in progress goes on, as the TUI's `n` does), the
//! state after each superstep read back from the store and an [`Expr`] evaluated on it. The
//! source writes exactly the rows of a straight run; stopping between two supersteps is only
//! not asking for the next one. Spec graphs and Python graphs alike: nothing here knows which
//! source it drives.

use super::expr::{Evaluated, Expr, Scope};
use crate::inspect::Thread;
use crate::snapshot::topology::Topology;
use crate::source::{GraphSource, RunOutcome, RunRequest, Start};
use crate::store::{Mode, Store};
use std::path::Path;

/// Where a break-when expression held.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub expr: String,
    pub step: i64,
    pub checkpoint: String,
    pub value: Evaluated,
}

/// What [`run_until`] did.
#[derive(Debug, Default)]
pub struct Broken {
    pub outcome: RunOutcome,
    pub hit: Option<Hit>,
    /// Evaluations that failed, by step (the expression counted as false there).
    pub errors: Vec<(i64, String)>,
}

/// The state of root checkpoint `id` of `thread` in the store at `db` (opened read-only for
/// the read: it sees what the source just committed).
pub fn read_scope(
    db: &Path,
    topology: Option<Topology>,
    thread: &str,
    id: &str,
) -> Result<Scope, String> {
    let store = Store::open(db, Mode::ReadOnly).map_err(|e| e.to_string())?;
    let th = Thread::open(&store, thread, "", topology).map_err(|e| e.to_string())?;
    let snap = th.show(Some(id)).map_err(|e| e.to_string())?;
    Ok(Scope::of(&snap))
}

/// Whether `cond` holds on the checkpoint a superstep wrote: `Ok(Some(hit))` when it does.
pub fn check(
    cond: &Expr,
    step: i64,
    checkpoint: &str,
    scope: Result<Scope, String>,
) -> Result<Option<Hit>, String> {
    let v = cond.eval(&scope?)?;
    Ok(v.truthy.then(|| Hit {
        expr: cond.text.clone(),
        step,
        checkpoint: checkpoint.to_string(),
        value: v,
    }))
}

/// Run `req` (started in namespace `ns`, as [`GraphSource::run_in`]) until `cond` holds after a
/// superstep, the run pauses by itself, `req.steps` supersteps ran, or an error. `scope_at`
/// reads the state of a checkpoint the run wrote (by id).
pub fn run_until(
    src: &mut dyn GraphSource,
    req: RunRequest,
    ns: &str,
    cond: &Expr,
    mut scope_at: impl FnMut(&str) -> Result<Scope, String>,
) -> Broken {
    let limit = req.steps.unwrap_or(usize::MAX);
    let next = RunRequest {
        thread: req.thread.clone(),
        start: Start::Continue,
        steps: Some(1),
        before: req.before.clone(),
        after: req.after.clone(),
    };
    let mut first = Some(RunRequest {
        steps: Some(1.min(limit)),
        ..req
    });
    let mut out = Broken::default();
    loop {
        let r = match first.take() {
            Some(r) => src.run_in(r, ns),
            None => src.run(next.clone()),
        };
        let took = r.reports.len();
        out.outcome.reports.extend(r.reports);
        out.outcome.output.extend(r.output);
        if r.checkpoint.is_some() {
            out.outcome.checkpoint = r.checkpoint;
        }
        if r.error.is_some() {
            out.outcome.error = r.error;
            break;
        }
        let Some(last) = out.outcome.reports.last().filter(|_| took > 0) else {
            break;
        };
        if let Some(cp) = &last.checkpoint {
            match check(cond, last.step, cp, scope_at(cp)) {
                Ok(Some(h)) => {
                    out.hit = Some(h);
                    break;
                }
                Ok(None) => {}
                Err(e) => out.errors.push((last.step, e)),
            }
        }
        if last.pause.is_some() || out.outcome.reports.len() >= limit {
            break;
        }
    }
    out
}

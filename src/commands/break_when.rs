//! `--break-when EXPR` on run / resume / continue / replay: the expression checked before
//! anything runs, then the run driven by `compare::breaker` through the graph-source seam.

use super::CliError;
use crate::cli::EngineSel;
use crate::compare::breaker::{self, Hit};
use crate::compare::expr::Expr;
use crate::source::{GraphSource, RunOutcome, RunRequest, Shape};
use crate::text::escape;
use serde_json::{json, Value as Json};
use std::path::Path;

/// The checked `--break-when`, if given: a bad one is an error naming the column.
pub fn compile(sel: &EngineSel, shape: &Shape) -> Result<Option<Expr>, CliError> {
    let Some(text) = &sel.break_when else {
        return Ok(None);
    };
    Expr::compile(text, &shape.state_keys)
        .map(Some)
        .map_err(|e| CliError(format!("--break-when {text:?}: {e}")))
}

/// Run `req` until the expression holds (or the run pauses by itself); evaluation errors are
/// notes on stderr (the expression counts as false there).
pub fn run(
    src: &mut dyn GraphSource,
    req: RunRequest,
    ns: &str,
    text: &str,
    db: &Path,
) -> Result<(RunOutcome, Option<Hit>), CliError> {
    let expr = Expr::compile(text, &src.shape().state_keys)
        .map_err(|e| CliError(format!("--break-when {text:?}: {e}")))?;
    let topo = src.topology("");
    let thread = req.thread.clone();
    let b = breaker::run_until(src, req, ns, &expr, |id| {
        breaker::read_scope(db, topo.clone(), &thread, id)
    });
    for (first, last, e) in runs(&b.errors) {
        let at = if first == last {
            format!("the state after step {first}")
        } else {
            format!("the states after steps {first}–{last}")
        };
        eprintln!(
            "superstep: note: --break-when failed on {at} (counted as false): {}",
            escape(e)
        );
    }
    Ok((b.outcome, b.hit))
}

/// Consecutive steps that failed with the same message, as `(first, last, message)`.
fn runs(errors: &[(i64, String)]) -> Vec<(i64, i64, &str)> {
    let mut out: Vec<(i64, i64, &str)> = Vec::new();
    for (step, e) in errors {
        match out.last_mut() {
            Some((_, last, m)) if *m == e.as_str() && *last + 1 == *step => *last = *step,
            _ => out.push((*step, *step, e)),
        }
    }
    out
}

pub fn pause_line(h: &Hit) -> String {
    escape(&format!(
        "paused: break when {} (after step {}: {})",
        h.expr, h.step, h.value.repr
    ))
    .into_owned()
}

pub fn pause_json(h: &Hit) -> Json {
    json!({"kind": "break_when", "expr": h.expr, "step": h.step, "checkpoint": h.checkpoint, "value": h.value.repr})
}

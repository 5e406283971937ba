//! `superstep prune`: the plan as a table (a dry run unless `--yes`), or `--json`.

use super::du::bytes;
use super::CliError;
use crate::cli::PruneArgs;
use crate::doctor::plan::{Kept, Policy};
use crate::doctor::prune::{run, Report};
use crate::doctor::when;
use crate::text::{escape, fit, pad};
use std::io::Write;
use std::path::Path;

/// The policy the flags ask for; at least one of --keep, --older-than, --delete-thread.
pub fn policy(a: &PruneArgs) -> Result<Policy, CliError> {
    if a.keep.is_none() && a.older_than.is_none() && a.delete_thread.is_empty() {
        return Err(CliError(
            "prune: say what to drop: --keep N (the newest N of each thread stay), --older-than WHEN, or --delete-thread PATTERN"
                .into(),
        ));
    }
    if a.keep == Some(0) {
        return Err(CliError(
            "prune: --keep 0 would drop the checkpoint a thread is at; --keep is at least 1 (--delete-thread PATTERN deletes whole threads)".into(),
        ));
    }
    let older_than = a
        .older_than
        .as_deref()
        .map(|s| when::parse_cutoff(s, when::now_ns()))
        .transpose()
        .map_err(CliError)?;
    Ok(Policy {
        keep: a.keep,
        keep_fork_tips: a.keep_fork_tips,
        older_than,
        only: a.thread.clone(),
        delete: a.delete_thread.clone(),
    })
}

pub fn prune(db: &Path, a: &PruneArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let policy = policy(a)?;
    let report = run(db, &policy, a.yes, a.vacuum)?;
    if a.out.json {
        serde_json::to_writer_pretty(&mut *out, &report)?;
        writeln!(out)?;
        return Ok(());
    }
    write_human(&report, out)
}

/// Why checkpoints beyond the policy stayed, in words.
fn kept_words(k: &Kept) -> String {
    let mut w = Vec::new();
    for (n, what) in [
        (k.paused, "paused fork tip"),
        (k.fork_tips, "fork tip"),
        (k.delta_chain, "DeltaChannel chain"),
        (k.sends_parent, "parent of a v<4 checkpoint"),
        (k.subgraph_calls, "subgraph call"),
        (k.not_older, "not older"),
    ] {
        if n > 0 {
            w.push(format!("{n} {what}"));
        }
    }
    w.join(", ")
}

pub fn write_human(r: &Report, out: &mut dyn Write) -> Result<(), CliError> {
    let t = &r.totals;
    let what = if r.dry_run {
        "dry run: nothing is written (--yes deletes)"
    } else {
        "deleted in one transaction"
    };
    writeln!(
        out,
        "{} ({}): {} — {what}",
        escape(&r.store),
        r.kind,
        r.policy
    )?;
    let rows: Vec<_> = r.threads.iter().filter(|p| p.refused.is_none()).collect();
    if !rows.is_empty() {
        writeln!(
            out,
            "{}  {:>11}  {:>8}  {:>7}  {:>6}  {:>10}  KEPT BEYOND THE NEWEST",
            pad("THREAD", 24),
            "CHECKPOINTS",
            "DROPPED",
            "WRITES",
            "BLOBS",
            "BYTES"
        )?;
    }
    for p in rows {
        let dropped = if p.action == "delete" {
            "all".to_string()
        } else {
            p.dropped.to_string()
        };
        writeln!(
            out,
            "{}  {:>11}  {:>8}  {:>7}  {:>6}  {:>10}  {}",
            fit(&escape(&p.thread_id), 24),
            p.checkpoints,
            dropped,
            p.dropped_writes,
            p.dropped_blobs,
            bytes(p.bytes),
            kept_words(&p.kept)
        )?;
    }
    for p in r.threads.iter().filter(|p| p.refused.is_some()) {
        writeln!(
            out,
            "kept {}: {}",
            escape(&p.thread_id),
            p.refused.as_deref().unwrap_or_default()
        )?;
    }
    writeln!(
        out,
        "{} {} of {} checkpoints in {} threads ({} pruned, {} deleted), {} writes, {} blobs: {}",
        if r.dry_run { "would drop" } else { "dropped" },
        t.checkpoints_dropped,
        t.checkpoints,
        t.threads,
        t.threads_pruned,
        t.threads_deleted,
        t.writes_dropped,
        t.blobs_dropped,
        bytes(t.bytes)
    )?;
    if let (Some(before), Some(after)) = (r.space_before.total, r.space_after.as_ref()) {
        let after_total = after.total.unwrap_or(before);
        let line = match (r.vacuumed, r.kind.as_str(), after.free) {
            (true, "SQLite", _) => format!(
                "database: {} before, {} after VACUUM",
                bytes(before),
                bytes(after_total)
            ),
            (false, "SQLite", Some(free)) => format!(
                "database: {}, {} of it free now (--vacuum gives the free pages back to the file system)",
                bytes(after_total),
                bytes(free)
            ),
            (true, _, _) => format!(
                "database: {} before, {} after VACUUM (Postgres reuses the space; its files shrink with VACUUM FULL)",
                bytes(before),
                bytes(after_total)
            ),
            _ => format!(
                "database: {} (--vacuum makes the space reusable)",
                bytes(after_total)
            ),
        };
        writeln!(out, "{line}")?;
    }
    Ok(())
}

//! `superstep check --graph NEWREF`: the store's threads against new graph code, as a table or
//! `--json`; exit 1 when a parked thread would break.

use super::engine::GraphOpts;
use super::{CliError, FINDINGS};
use crate::bridge::GraphRef;
use crate::cli::CheckArgs;
use crate::doctor::check::{check, Report};
use crate::store::{Mode, Store};
use crate::text::{escape, fit, pad};
use std::io::Write;
use std::path::Path;

pub fn run(
    db: &Path,
    graph: Option<&str>,
    a: &CheckArgs,
    opts: &GraphOpts,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let Some(graph) = graph else {
        return Err(CliError(
            "check: --graph NEWREF names the new graph code (app.py:graph, package.module:graph, langgraph.json:ID or a spec .json)"
                .into(),
        ));
    };
    let store = Store::open(db, Mode::ReadOnly)?;
    let mut spec = None;
    let mut src = crate::open::open_source(
        GraphRef::parse_flag(graph).map_err(CliError)?,
        &opts.open(None),
        None,
        &mut spec,
    )
    .map_err(|e| CliError(e.to_string()))?;
    let report = check(&store, &mut *src, graph, a.thread.as_deref(), a.parked)
        .map_err(|e| CliError(e.to_string()))?;
    if a.out.json {
        serde_json::to_writer_pretty(&mut *out, &report)?;
        writeln!(out)?;
    } else {
        write_human(&report, out)?;
    }
    if report.parked_broken > 0 {
        out.flush()?;
        return Err(CliError(FINDINGS.into()));
    }
    Ok(())
}

pub fn write_human(r: &Report, out: &mut dyn Write) -> Result<(), CliError> {
    writeln!(
        out,
        "{} against {}: {} threads checked, {} parked; {} would break ({} of them parked)",
        escape(&r.store),
        escape(&r.graph),
        r.checked,
        r.parked,
        r.broken,
        r.parked_broken
    )?;
    if r.threads.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "{}  {:<7}  {:<6}  WHY",
        pad("THREAD", 24),
        "PARKED",
        "BREAKS"
    )?;
    for t in &r.threads {
        for (i, f) in t.findings.iter().enumerate() {
            let (id, parked, breaks) = if i == 0 {
                (
                    fit(&escape(&t.thread_id), 24),
                    if t.parked { "yes" } else { "no" },
                    if t.broken { "yes" } else { "no" },
                )
            } else {
                (pad("", 24), "", "")
            };
            let ns = if f.ns.is_empty() {
                String::new()
            } else {
                format!("in {}: ", escape(&f.ns))
            };
            let mark = if f.breaks { "" } else { "(note) " };
            writeln!(
                out,
                "{id}  {parked:<7}  {breaks:<6}  {mark}{ns}{}",
                escape(&f.reason)
            )?;
        }
    }
    Ok(())
}

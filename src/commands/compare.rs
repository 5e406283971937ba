//! `diff`, `diverge`, `why`: stored checkpoints compared and explained (`crate::compare`),
//! read-only.

use super::engine::{graph_topology, GraphOpts};
use super::{human, CliError};
use crate::cli::{DiffArgs, DivergeArgs, PairSel, WhyArgs};
use crate::compare::address::{self, Resolved};
use crate::compare::diff as cdiff;
use crate::compare::diverge::{self, Divergence};
use crate::compare::render::{self, side_line};
use crate::compare::why::{self, Provenance};
use crate::inspect::Thread;
use crate::present::{line, written_value};
use crate::store::{Mode, Store};
use crate::text::{escape, short_id};
use std::io::Write;
use std::path::Path;

fn open(db: &Path) -> Result<Store, CliError> {
    Ok(Store::open(db, Mode::ReadOnly)?)
}

/// `--json`: the value, pretty, one trailing newline.
fn json<T: serde::Serialize>(v: &T, out: &mut dyn Write) -> Result<(), CliError> {
    serde_json::to_writer_pretty(&mut *out, v)?;
    writeln!(out)?;
    Ok(())
}

fn width(color: bool) -> usize {
    human::Layout::for_stdout(color).width
}

/// A resolved address with its thread opened for snapshots.
type Opened<'s> = (Resolved, Thread<'s>);

/// Both sides resolved, each with its thread opened for snapshots.
fn pair<'s>(
    store: &'s Store,
    a: &str,
    b: Option<&str>,
    sel: &PairSel,
    graph: Option<&str>,
    opts: &GraphOpts,
) -> Result<(Opened<'s>, Option<Opened<'s>>), CliError> {
    let ns_b = sel.ns_b.as_deref().unwrap_or(&sel.ns);
    let side = |text: &str, ns: &str| -> Result<Opened<'s>, CliError> {
        let r = address::resolve(store, text, ns)?;
        let topo = graph_topology(graph, ns, opts)?;
        let th = Thread::open(store, &r.row.thread_id, ns, topo)?;
        Ok((r, th))
    };
    let first = side(a, &sel.ns)?;
    let second = b.map(|b| side(b, ns_b)).transpose()?;
    Ok((first, second))
}

pub fn diff(
    db: &Path,
    a: &DiffArgs,
    graph: Option<&str>,
    opts: &GraphOpts,
    color: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let store = open(db)?;
    let ((ra, ta), second) = pair(&store, &a.a, Some(&a.b), &a.sel, graph, opts)?;
    let (rb, tb) = second.expect("B is given");
    let sa = ta.snapshot_of(&ra.row, false)?;
    let sb = tb.snapshot_of(&rb.row, false)?;
    let d = cdiff::diff(&sa, &sb);
    if a.sel.out.json {
        return json(&d, out);
    }
    writeln!(
        out,
        "{}",
        human::bold(&format!("A  {}", side_line(&d.a)), color)
    )?;
    writeln!(
        out,
        "{}",
        human::bold(&format!("B  {}", side_line(&d.b)), color)
    )?;
    for l in render::unified(&render::rows(&d, width(color).saturating_sub(40).max(30))) {
        writeln!(out, "{l}")?;
    }
    Ok(())
}

pub fn diverge(
    db: &Path,
    a: &DivergeArgs,
    graph: Option<&str>,
    opts: &GraphOpts,
    color: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let store = open(db)?;
    let ((ra, ta), second) = pair(&store, &a.a, a.b.as_deref(), &a.sel, graph, opts)?;
    let (rb, tb) = match second {
        Some(s) => s,
        None => {
            let other = diverge::other_branch(&store, &ra.row)?.ok_or_else(|| {
                CliError(format!(
                    "{}: thread {:?} has one branch only: name the second run (superstep diverge A B)",
                    store.label(),
                    ra.row.thread_id
                ))
            })?;
            let topo = graph_topology(graph, &a.sel.ns, opts)?;
            let th = Thread::open(&store, &other.thread_id, &a.sel.ns, topo)?;
            let written = format!("{}@{}", other.thread_id, other.checkpoint_id);
            (
                Resolved {
                    row: other,
                    written,
                },
                th,
            )
        }
    };
    let d = diverge::diverge(&store, &ta, &ra.row, &tb, &rb.row)?;
    if a.sel.out.json {
        return json(&d, out);
    }
    divergence_human(&d, width(color), color, out)
}

fn divergence_human(
    d: &Divergence,
    width: usize,
    color: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    writeln!(
        out,
        "{}",
        human::bold(&format!("A  {}", side_line(&d.a)), color)
    )?;
    writeln!(
        out,
        "{}",
        human::bold(&format!("B  {}", side_line(&d.b)), color)
    )?;
    match &d.common {
        Some(c) => writeln!(out, "common ancestor: {}", side_line(c))?,
        None => writeln!(out, "common ancestor: none (the runs share no checkpoint)")?,
    }
    if !d.diverged {
        writeln!(
            out,
            "{}",
            human::bold("no divergence: every checkpoint of the two lineages has the same values and next nodes", color)
        )?;
        return Ok(());
    }
    let at = |s: &Option<crate::compare::diff::Side>| match s {
        Some(s) => side_line(s),
        None => "(the run ended before)".into(),
    };
    writeln!(
        out,
        "{}",
        human::bold(
            &format!(
                "diverged at checkpoint #{} of each lineage ({}):",
                d.index.unwrap_or(0),
                d.differs.join(", ")
            ),
            color
        )
    )?;
    writeln!(out, "  A  {}", at(&d.at_a))?;
    writeln!(out, "  B  {}", at(&d.at_b))?;
    let pseudo = cdiff::CheckpointDiff {
        a: d.a.clone(),
        b: d.b.clone(),
        same: false,
        values: d.values.clone(),
        next: d.next.clone(),
        tasks: cdiff::set_change(Vec::new(), Vec::new()),
        interrupts: cdiff::set_change(Vec::new(), Vec::new()),
        pending_writes: cdiff::set_change(Vec::new(), Vec::new()),
    };
    let max = width.saturating_sub(40).max(30);
    if !d.values.is_empty() || d.next.is_some() {
        for l in render::unified(&render::rows(&pseudo, max)) {
            writeln!(out, "{l}")?;
        }
    }
    if let (Some(ba), Some(bb)) = (&d.before_a, &d.before_b) {
        if d.tasks.is_empty() {
            writeln!(
                out,
                "no task wrote differently on the checkpoints before (A {}, B {}): the difference came with the checkpoints themselves ({} / {})",
                ba.step.map(|s| format!("step {s}")).unwrap_or_default(),
                bb.step.map(|s| format!("step {s}")).unwrap_or_default(),
                escape(d.at_a.as_ref().and_then(|s| s.source.as_deref()).unwrap_or("?")),
                escape(d.at_b.as_ref().and_then(|s| s.source.as_deref()).unwrap_or("?")),
            )?;
        } else {
            writeln!(
                out,
                "{}",
                human::bold("caused by the writes of the tasks before:", color)
            )?;
            for t in &d.tasks {
                writeln!(out, "  {}  ({})", escape(&t.who), escape(&t.task_path))?;
                for (side, ws) in [("A", &t.a), ("B", &t.b)] {
                    let text: Vec<String> = ws
                        .iter()
                        .map(|w| {
                            format!(
                                "{} {}",
                                escape(w["channel"].as_str().unwrap_or("?")),
                                written_value(&w["value"], max)
                            )
                        })
                        .collect();
                    writeln!(
                        out,
                        "     {side}: {}",
                        if text.is_empty() {
                            "(no writes)".to_string()
                        } else {
                            text.join("; ")
                        }
                    )?;
                }
            }
        }
    }
    Ok(())
}

pub fn why(
    db: &Path,
    a: &WhyArgs,
    graph: Option<&str>,
    opts: &GraphOpts,
    color: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let store = open(db)?;
    let topo = graph_topology(graph, &a.ns, opts)?;
    let thread = Thread::open(&store, &a.thread, &a.ns, topo)?;
    let head = thread.show(a.checkpoint.as_deref())?;
    let row = store
        .checkpoint(&a.thread, &a.ns, Some(&head.checkpoint_id))?
        .ok_or_else(|| CliError(format!("checkpoint {} vanished", head.checkpoint_id)))?;
    let keys: Vec<String> = head.values.iter().map(|(k, _)| k.clone()).collect();
    let (key, path) = why::parse_path(&a.key, &keys).map_err(CliError)?;
    let path_text = a.key[key.len()..].to_string();
    let p = why::why(&store, &thread, &row, &key, &path, &path_text)?;
    if a.out.json {
        return json(&p, out);
    }
    provenance_human(&p, width(color), color, out)
}

/// The human form of a provenance (the TUI's is `ui::why`; both take their cells from
/// `compare::render::contribution_cells`).
fn provenance_human(
    p: &Provenance,
    width: usize,
    color: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let head = format!(
        "why {}{} — thread {} · {}{}",
        p.key,
        p.path,
        p.thread_id,
        short_id(&p.checkpoint_id),
        p.reducer
            .as_deref()
            .map(|r| format!(" · reducer: {r}"))
            .unwrap_or_default()
    );
    writeln!(out, "{}", human::bold(&escape(&head), color))?;
    let max = width.saturating_sub(50).max(30);
    writeln!(
        out,
        "value: {}",
        line(&p.value, width.saturating_sub(8).max(30))
    )?;
    if let Some(id) = &p.message_id {
        writeln!(out, "message id: {}", escape(id))?;
    }
    for c in &p.contributions {
        let step = c.step.map(|s| s.to_string()).unwrap_or_else(|| "?".into());
        let source = escape(c.source.as_deref().unwrap_or("?"));
        let (who, task, what, ix) = render::contribution_cells(c, max);
        writeln!(
            out,
            "  step {step:>3}  {source:<7} {who:<18} {task:<24}  {what}{ix}"
        )?;
    }
    if p.contributions.is_empty() {
        writeln!(out, "  (no checkpoint of the lineage holds it)")?;
    }
    Ok(())
}

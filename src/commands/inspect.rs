//! `threads`, `history`, `show`, and the overview printed without a subcommand.

use super::{human, CliError};
use crate::cli::{HistoryArgs, ShowArgs, ThreadSel};
use crate::inspect::Thread;
use crate::snapshot::topology::Topology;
use crate::store::{Mode, Store};
use crate::value::ViewOptions;
use std::io::Write;
use std::path::Path;

const PAGE: usize = 200;

fn open(db: &Path) -> Result<Store, CliError> {
    Ok(Store::open(db, Mode::ReadOnly)?)
}

/// The store as the human output names it: a file by its path, a server store by its kind and
/// URL (no password).
fn store_line(store: &Store) -> String {
    if store.kind() == "SQLite" {
        store.label().to_string()
    } else {
        format!("{} {}", store.kind(), store.label())
    }
}

fn topology(sel: &ThreadSel) -> Result<Option<Topology>, CliError> {
    let Some(path) = &sel.topology else {
        return Ok(None);
    };
    let text =
        std::fs::read_to_string(path).map_err(|e| CliError(format!("{}: {e}", path.display())))?;
    let j: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| CliError(format!("{}: invalid JSON: {e}", path.display())))?;
    // Accept a bare topology, an oracle thread dump holding one, or a whole oracle fixture file
    // (the topology of the selected thread is used).
    let t = if let Some(threads) = j.get("threads").and_then(|t| t.as_array()) {
        let found = threads
            .iter()
            .find(|t| {
                t["thread_id"] == sel.thread.as_str()
                    && t["checkpoint_ns"].as_str().unwrap_or("") == sel.ns
            })
            .ok_or_else(|| {
                CliError(format!(
                    "{}: no topology for thread {:?}",
                    path.display(),
                    sel.thread
                ))
            })?;
        &found["topology"]
    } else if j.get("topology").is_some() {
        &j["topology"]
    } else {
        &j
    };
    Topology::from_oracle_json(t)
        .map(Some)
        .map_err(|e| CliError(format!("{}: not a topology: {e}", path.display())))
}

pub fn threads(db: &Path, json: bool, color: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let store = open(db)?;
    let mut after: Option<String> = None;
    let mut count = 0usize;
    let (mut width, mut cut) = (0, 0);
    if json {
        write!(out, "[")?;
    }
    loop {
        let page = store.threads(after.as_deref(), PAGE)?;
        if !json && count == 0 {
            width = human::thread_column(&page);
            human::threads_header(width, color, out)?;
        }
        for t in &page {
            if json {
                write!(out, "{}\n  ", if count == 0 { "" } else { "," })?;
                serde_json::to_writer(&mut *out, t)?;
            } else if human::thread_line(t, width, color, out)? {
                cut += 1;
            }
            count += 1;
        }
        if page.len() < PAGE {
            break;
        }
        after = page.last().map(|t| t.thread_id.clone());
    }
    if json {
        writeln!(out, "{}]", if count == 0 { "" } else { "\n" })?;
    } else if count == 0 {
        writeln!(out, "(no threads)")?;
    } else {
        human::cut_ids_note(cut, color, out)?;
    }
    Ok(())
}

pub fn history(
    db: &Path,
    a: &HistoryArgs,
    graph: Option<Topology>,
    exact: &super::exact::Exact,
    color: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let store = open(db)?;
    let topo = match graph {
        Some(t) => Some(t),
        None => topology(&a.sel)?,
    };
    let thread = Thread::open(&store, &a.sel.thread, &a.sel.ns, topo)?;
    let opts = ViewOptions::default();
    if a.out.json {
        // the DB-wide limitation, once per call: stdout stays get_state_history's list
        for l in thread.limitations() {
            eprintln!("superstep: note: {}: {}", l.field, l.message);
        }
        write!(out, "[")?;
        let mut first = true;
        thread.for_each_history(a.limit, PAGE, |mut s| -> Result<(), CliError> {
            exact.apply(&mut s);
            writeln!(out, "{}", if first { "" } else { "," })?;
            first = false;
            serde_json::to_writer_pretty(&mut *out, &s.json_out(opts, Vec::new()))?;
            Ok(())
        })?;
        writeln!(out, "{}]", if first { "" } else { "\n" })?;
    } else {
        human::history_header(&thread, color, out)?;
        thread.for_each_history(a.limit, PAGE, |mut s| -> Result<(), CliError> {
            exact.apply(&mut s);
            human::history_line(&s, color, out)?;
            Ok(())
        })?;
    }
    Ok(())
}

pub fn show(
    db: &Path,
    a: &ShowArgs,
    graph: Option<Topology>,
    exact: &super::exact::Exact,
    color: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let store = open(db)?;
    let topo = match graph {
        Some(t) => Some(t),
        None => topology(&a.sel)?,
    };
    let thread = Thread::open(&store, &a.sel.thread, &a.sel.ns, topo)?;
    let mut snap = thread.show(a.checkpoint.as_deref())?;
    exact.apply(&mut snap);
    if a.out.json {
        // written as it is made: a page of pending writes may hold a million
        let limitations = serde_json::to_value(&snap.limitations)?;
        let j = snap.json_out(ViewOptions::default(), vec![("limitations", limitations)]);
        serde_json::to_writer_pretty(&mut *out, &j)?;
        writeln!(out)?;
    } else {
        let o = human::Layout {
            color,
            messages: a.messages,
            ..human::Layout::for_stdout(color)
        };
        human::snapshot_with(&snap, &o, out)?;
    }
    Ok(())
}

/// No subcommand: the threads of the DB and the live state of the most recent one. `given`: the
/// `--db` the user named (the hint repeats it; without it the commands read the same demo DB).
pub fn overview(
    db: &Path,
    given: Option<&Path>,
    color: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let store = open(db)?;
    writeln!(
        out,
        "{}",
        human::bold(
            &crate::text::escape(&format!("superstep — {}", store_line(&store))),
            color
        )
    )?;
    let threads = store.threads(None, PAGE)?;
    let width = human::thread_column(&threads);
    human::threads_header(width, color, out)?;
    let mut cut = 0;
    for t in &threads {
        if human::thread_line(t, width, color, out)? {
            cut += 1;
        }
    }
    human::cut_ids_note(cut, color, out)?;
    let latest = threads
        .iter()
        .filter(|t| !t.latest_checkpoint_id.is_empty())
        .max_by(|a, b| a.latest_checkpoint_id.cmp(&b.latest_checkpoint_id));
    if let Some(t) = latest {
        writeln!(out)?;
        let thread = Thread::open(&store, &t.thread_id, "", None)?;
        human::snapshot(&thread.show(None)?, color, out)?;
    }
    // the store's label: a Postgres URL without its password
    let db_flag = given
        .map(|_| format!(" --db {}", shell_word(store.label())))
        .unwrap_or_default();
    writeln!(
        out,
        "\n{}",
        human::dim(
            &crate::text::escape(&format!(
                "try: superstep history --thread T{db_flag}   superstep show --thread T --checkpoint ID --json{db_flag}"
            )),
            color
        )
    )?;
    Ok(())
}

/// `s` as one shell word: as is when it is plain, else in single quotes.
fn shell_word(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./:@%+=,".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

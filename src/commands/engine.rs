//! `run`, `resume`, `continue`, `replay`, `update`, `graph`: the engine from the command line.
//! Everything that can be checked is checked before the DB is opened for writing, so a rejected
//! command leaves the file byte-identical.

use super::{human, CliError};
use crate::cli::{ContinueArgs, EngineSel, GraphArgs, ReplayArgs, ResumeArgs, RunArgs, UpdateArgs};
use crate::engine::interrupts::pending_interrupts;
use crate::engine::pregel::{Engine, Input, Pause, Resume, StepReport, TaskOutcome};
use crate::engine::update_state::AsNode;
use crate::inspect::Thread;
use crate::spec::model::Breakpoints;
use crate::spec::{load, LoadedGraph};
use crate::store::{Mode, Store};
use crate::value::{from_view, to_view, ViewOptions};
use rmpv::Value;
use serde_json::{json, Value as Json};
use std::io::Write;
use std::path::Path;

fn load_graph(p: &Path) -> Result<LoadedGraph, CliError> {
    load(p).map_err(|e| CliError(e.to_string()))
}

/// One `--id ID=JSON` answer.
pub fn parse_id_answer(item: &str) -> Result<(String, Value), CliError> {
    let (id, v) = item
        .split_once('=')
        .ok_or_else(|| CliError(format!("--id {item:?}: expected ID=JSON")))?;
    Ok((id.to_string(), parse_json(&format!("--id {id}"), v)?))
}

pub fn parse_json(flag: &str, text: &str) -> Result<Value, CliError> {
    let j: Json = serde_json::from_str(text).map_err(|e| {
        CliError(format!(
            "{flag}: invalid JSON at line {} column {}: {e}",
            e.line(),
            e.column()
        ))
    })?;
    from_view(&j).map_err(|e| CliError(format!("{flag}: {e}")))
}

fn breakpoints(
    list: &[String],
    lg: &LoadedGraph,
    flag: &str,
) -> Result<Option<Breakpoints>, CliError> {
    if list.is_empty() {
        return Ok(None);
    }
    if list.len() == 1 && list[0] == "*" {
        return Ok(Some(Breakpoints::All));
    }
    for n in list {
        if lg.graph.node(n).is_none() || n == "__start__" {
            return Err(CliError(format!(
                "{flag}: unknown node {n:?} (nodes: {})",
                lg.spec.node_names()
            )));
        }
    }
    Ok(Some(Breakpoints::Nodes(list.to_vec())))
}

/// State read before writing: the thread's latest checkpoint and its pending interrupts.
struct Preflight {
    pending: Vec<String>,
}

fn preflight(
    db: &Path,
    thread: &str,
    must_exist: bool,
    checkpoint: Option<&str>,
) -> Result<Preflight, CliError> {
    // a 0-byte file is an empty SQLite database (e.g. left by a process killed right after
    // creating it): like a missing one, it holds no thread yet
    let empty = std::fs::metadata(db).map(|m| m.len() == 0).unwrap_or(false);
    if !db.exists() || empty {
        if must_exist {
            return Err(CliError(format!("{}: no such file", db.display())));
        }
        return Ok(Preflight {
            pending: Vec::new(),
        });
    }
    let store = match Store::open(db, Mode::ReadOnly) {
        Ok(s) => s,
        // a SQLite file with no tables at all (created, then the process was killed before the
        // schema): nothing to lose, the engine creates the schema
        Err(crate::store::StoreError::NotCheckpointDb { .. }) if !must_exist && no_tables(db) => {
            return Ok(Preflight {
                pending: Vec::new(),
            })
        }
        Err(e) => return Err(e.into()),
    };
    let row = store.checkpoint(thread, "", checkpoint)?;
    if let Some(id) = checkpoint {
        if row.is_none() {
            return Err(CliError(format!(
                "{}: thread {thread:?} has no checkpoint {id}",
                db.display()
            )));
        }
    }
    let Some(row) = row else {
        if must_exist {
            return Err(CliError(format!(
                "{}: no thread {thread:?} (superstep threads --db {} lists them)",
                db.display(),
                db.display()
            )));
        }
        return Ok(Preflight {
            pending: Vec::new(),
        });
    };
    let writes: Vec<(String, String, Value)> = store
        .writes(thread, "", &row.checkpoint_id)?
        .into_iter()
        .map(|w| (w.task_id, w.channel, w.value.into_value()))
        .collect();
    Ok(Preflight {
        pending: pending_interrupts(&writes),
    })
}

fn no_tables(db: &Path) -> bool {
    rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .and_then(|c| {
            c.query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| {
                r.get::<_, i64>(0)
            })
        })
        .map(|n| n == 0)
        .unwrap_or(false)
}

fn engine<'g>(lg: &'g LoadedGraph, db: &Path, sel: &EngineSel) -> Result<Engine<'g>, CliError> {
    let before = breakpoints(&sel.break_before, lg, "--break-before")?;
    let after = breakpoints(&sel.break_after, lg, "--break-after")?;
    let store = Store::open(db, Mode::ReadWrite)?;
    let mut e = Engine::for_graph(lg, store, &sel.thread);
    e.seed = sel.seed;
    e.recursion_limit = sel.recursion_limit;
    if let Some(b) = before {
        e.interrupt_before = b;
    }
    if let Some(a) = after {
        e.interrupt_after = a;
    }
    Ok(e)
}

fn drive(
    e: &mut Engine,
    steps: Option<usize>,
) -> Result<(Vec<StepReport>, Option<Pause>), CliError> {
    let mut reports = Vec::new();
    loop {
        if steps.is_some_and(|n| reports.len() >= n) {
            return Ok((reports, None));
        }
        let r = e.step().map_err(|x| CliError(x.to_string()))?;
        let pause = r.pause.clone();
        reports.push(r);
        if pause.is_some() {
            return Ok((reports, pause));
        }
    }
}

fn pause_json(p: &Option<Pause>, steps: Option<usize>) -> Json {
    let o = ViewOptions::default();
    match p {
        None => json!({"kind": "steps", "steps": steps}),
        Some(Pause::Done) => json!({"kind": "done"}),
        Some(Pause::Before(n)) => json!({"kind": "before", "nodes": n}),
        Some(Pause::After(n)) => json!({"kind": "after", "nodes": n}),
        Some(Pause::Interrupt(list)) => {
            json!({"kind": "interrupt", "interrupts": list.iter().map(|(node, i)| json!({"node": node, "id": i.id, "value": to_view(&i.value, o)})).collect::<Vec<_>>()})
        }
        Some(Pause::Error(node, repr)) => json!({"kind": "error", "node": node, "error": repr}),
        Some(Pause::RecursionLimit(n)) => {
            json!({"kind": "recursion_limit", "limit": n, "error": format!("GraphRecursionError: Recursion limit of {n} reached without hitting a stop condition. You can increase the limit by setting the `recursion_limit` config key.")})
        }
    }
}

pub fn pause_line(p: &Option<Pause>) -> String {
    match p {
        None => "paused: step limit reached (--steps)".into(),
        Some(Pause::Done) => "done: no task is triggered".into(),
        Some(Pause::Before(n)) => format!("paused: before {}", n.join(", ")),
        Some(Pause::After(n)) => format!("paused: after {}", n.join(", ")),
        Some(Pause::Interrupt(list)) => format!(
            "paused: interrupt in {}",
            list.iter()
                .map(|(node, i)| format!(
                    "{node} (id {}): {}",
                    i.id,
                    to_view(&i.value, ViewOptions::default())
                ))
                .collect::<Vec<_>>()
                .join("; ")
        ),
        Some(Pause::Error(node, repr)) => format!("paused: error in {node}: {repr}"),
        Some(Pause::RecursionLimit(n)) => {
            format!("stopped: GraphRecursionError: Recursion limit of {n} reached")
        }
    }
}

fn step_json(r: &StepReport) -> Json {
    let o = ViewOptions::default();
    json!({
        "step": r.step,
        "checkpoint": r.checkpoint,
        "tasks": r.tasks.iter().map(|t| json!({
            "id": t.id, "name": t.name, "path": t.path,
            "outcome": match &t.outcome { TaskOutcome::Done => json!("done"), TaskOutcome::Reused => json!("reused"), TaskOutcome::Interrupted(i) => json!({"interrupt": i.id}), TaskOutcome::Error(e) => json!({"error": e}) },
            "attempts": t.attempts,
            "effects": t.effects.iter().map(|e| json!({"name": e.name, "data": to_view(&e.data, o), "attempt": e.attempt})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

fn finish(
    lg: &LoadedGraph,
    db: &Path,
    sel: &EngineSel,
    reports: Vec<StepReport>,
    pause: Option<Pause>,
    color: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let store = Store::open(db, Mode::ReadOnly)?;
    let th = Thread::open(&store, &sel.thread, "", Some(lg.graph.topology()))?;
    let snap = th.show(None)?;
    if sel.out.json {
        let mut j = snap.to_json(ViewOptions::default());
        j["pause"] = pause_json(&pause, sel.steps);
        j["steps"] = Json::Array(reports.iter().map(step_json).collect());
        serde_json::to_writer_pretty(&mut *out, &j)?;
        writeln!(out)?;
    } else {
        for r in &reports {
            for t in &r.tasks {
                let effects = if t.effects.is_empty() {
                    String::new()
                } else {
                    format!(
                        "  effects: {}",
                        t.effects
                            .iter()
                            .map(|e| e.name.clone())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                let outcome = match &t.outcome {
                    TaskOutcome::Done => "done".to_string(),
                    TaskOutcome::Reused => "reused stored writes".to_string(),
                    TaskOutcome::Interrupted(i) => format!("interrupted ({})", i.id),
                    TaskOutcome::Error(e) => format!("error {e}"),
                };
                writeln!(out, "step {:>3}  {}  {outcome}{effects}", r.step, t.name)?;
            }
        }
        human::snapshot(&snap, color, out)?;
        writeln!(out, "{}", human::bold(&pause_line(&pause), color))?;
    }
    Ok(())
}

pub fn run(db: &Path, a: &RunArgs, color: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let lg = load_graph(&a.sel.graph)?;
    let input = match &a.input {
        Some(t) => parse_json("--input", t)?,
        None => lg.graph.input.clone().ok_or_else(|| {
            CliError(format!(
                "{}: no input: pass --input JSON or set \"input\" in the spec",
                lg.path.display()
            ))
        })?,
    };
    preflight(db, &a.sel.thread, false, None)?;
    let mut e = engine(&lg, db, &a.sel)?;
    e.start(Input::Value(input), None)
        .map_err(|x| CliError(x.to_string()))?;
    let (reports, pause) = drive(&mut e, a.sel.steps)?;
    drop(e);
    finish(&lg, db, &a.sel, reports, pause, color, out)
}

pub fn resume(db: &Path, a: &ResumeArgs, color: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let lg = load_graph(&a.sel.graph)?;
    // LangGraph accepts a Command on a thread with no checkpoint (it becomes the input), so the
    // thread need not exist; an addressed checkpoint must.
    let pre = preflight(
        db,
        &a.sel.thread,
        a.checkpoint.is_some(),
        a.checkpoint.as_deref(),
    )?;
    let resume = if let Some(v) = &a.value {
        let v = parse_json("--value", v)?;
        if pre.pending.len() > 1 {
            return Err(CliError(format!(
                "RuntimeError: When there are multiple pending interrupts, you must specify the interrupt id when resuming (pending: {}); use --id ID=JSON",
                pre.pending.join(", ")
            )));
        }
        Some(Resume::Plain(v))
    } else if !a.id.is_empty() {
        let mut map = Vec::new();
        for item in &a.id {
            let (id, v) = parse_id_answer(item)?;
            if !pre.pending.contains(&id) {
                return Err(CliError(format!(
                    "--id: unknown interrupt id {id} (pending: {})",
                    if pre.pending.is_empty() {
                        "none".to_string()
                    } else {
                        pre.pending.join(", ")
                    }
                )));
            }
            map.push((id, v));
        }
        Some(Resume::Map(map))
    } else {
        None
    };
    let update = a
        .update
        .as_deref()
        .map(|u| parse_json("--update", u))
        .transpose()?;
    for g in &a.goto {
        if lg.graph.node(g).is_none() {
            return Err(CliError(format!(
                "--goto: unknown node {g:?} (nodes: {})",
                lg.spec.node_names()
            )));
        }
    }
    if resume.is_none() && update.is_none() && a.goto.is_empty() {
        return Err(CliError(
            "resume: give --value JSON, --id ID=JSON, --update JSON or --goto NODE".into(),
        ));
    }
    let goto = a.goto.iter().map(|g| Value::from(g.as_str())).collect();
    let mut e = engine(&lg, db, &a.sel)?;
    e.start(
        Input::Command {
            update,
            goto,
            resume,
        },
        a.checkpoint.as_deref(),
    )
    .map_err(|x| CliError(x.to_string()))?;
    let (reports, pause) = drive(&mut e, a.sel.steps)?;
    drop(e);
    finish(&lg, db, &a.sel, reports, pause, color, out)
}

pub fn continue_(
    db: &Path,
    a: &ContinueArgs,
    color: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let lg = load_graph(&a.sel.graph)?;
    preflight(db, &a.sel.thread, true, None)?;
    let mut e = engine(&lg, db, &a.sel)?;
    e.start(Input::Continue, None)
        .map_err(|x| CliError(x.to_string()))?;
    let (reports, pause) = drive(&mut e, a.sel.steps)?;
    drop(e);
    finish(&lg, db, &a.sel, reports, pause, color, out)
}

pub fn replay(db: &Path, a: &ReplayArgs, color: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let lg = load_graph(&a.sel.graph)?;
    preflight(db, &a.sel.thread, true, Some(&a.checkpoint))?;
    let mut e = engine(&lg, db, &a.sel)?;
    e.start(Input::Continue, Some(&a.checkpoint))
        .map_err(|x| CliError(x.to_string()))?;
    let (reports, pause) = drive(&mut e, a.sel.steps)?;
    drop(e);
    finish(&lg, db, &a.sel, reports, pause, color, out)
}

pub fn update(db: &Path, a: &UpdateArgs, color: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let lg = load_graph(&a.sel.graph)?;
    let values = parse_json("--values", &a.values)?;
    let as_node = AsNode::parse(a.as_node.as_deref());
    if let AsNode::Node(n) = &as_node {
        if lg.graph.node(n).is_none() {
            return Err(CliError(format!(
                "--as-node: InvalidUpdateError: Node {n} does not exist (nodes: __start__, {})",
                lg.spec.node_names()
            )));
        }
    }
    preflight(db, &a.sel.thread, false, a.checkpoint.as_deref())?;
    let values = if values.is_nil() { None } else { Some(values) };
    let mut e = engine(&lg, db, &a.sel)?;
    let id = e
        .update_state(a.checkpoint.as_deref(), values, as_node)
        .map_err(|x| CliError(x.to_string()))?;
    drop(e);
    let store = Store::open(db, Mode::ReadOnly)?;
    let th = Thread::open(&store, &a.sel.thread, "", Some(lg.graph.topology()))?;
    let snap = th.show(None)?;
    if a.sel.out.json {
        let mut j = snap.to_json(ViewOptions::default());
        j["update"] = json!({"checkpoint": id});
        serde_json::to_writer_pretty(&mut *out, &j)?;
        writeln!(out)?;
    } else {
        human::snapshot(&snap, color, out)?;
        writeln!(
            out,
            "{}",
            human::bold(&format!("updated: new checkpoint {id}"), color)
        )?;
    }
    Ok(())
}

pub fn graph(a: &GraphArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let lg = load_graph(&a.graph)?;
    write_graph(&lg, a.mermaid, out)
}

/// `superstep graph` as text: Mermaid, or the plain listing.
pub fn graph_text(lg: &LoadedGraph, mermaid: bool) -> String {
    let mut out = Vec::new();
    let _ = write_graph(lg, mermaid, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn write_graph(lg: &LoadedGraph, mermaid: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let s = &lg.spec;
    if mermaid {
        writeln!(
            out,
            "---\nconfig:\n  flowchart:\n    curve: linear\n---\ngraph TD;"
        )?;
        writeln!(out, "\t__start__([<p>__start__</p>]):::first")?;
        for n in &s.nodes {
            let mut label = n.name.clone();
            if s.interrupt_before.matches(&n.name) {
                label.push_str("<hr/><small><em>__interrupt = before</em></small>");
            }
            if s.interrupt_after.matches(&n.name) {
                label.push_str("<hr/><small><em>__interrupt = after</em></small>");
            }
            writeln!(out, "\t{}({})", n.name, label)?;
        }
        writeln!(out, "\t__end__([<p>__end__</p>]):::last")?;
        for e in &s.edges {
            for src in &e.sources {
                writeln!(out, "\t{src} --> {};", e.target)?;
            }
        }
        for b in &s.branches {
            match &b.path_map {
                Some(m) => {
                    for (k, d) in m {
                        writeln!(
                            out,
                            "\t{} -. &nbsp;{}&nbsp; .-> {d};",
                            b.source,
                            k.as_str().unwrap_or("?")
                        )?;
                    }
                }
                None => writeln!(out, "\t{} -.-> {}_path[[{}]];", b.source, b.source, b.path)?,
            }
        }
        writeln!(out, "\tclassDef default fill:#f2f0ff,line-height:1.2\n\tclassDef first fill-opacity:0\n\tclassDef last fill:#bfb6fc")?;
        return Ok(());
    }
    writeln!(out, "graph {}  ({})", s.name, lg.path.display())?;
    if !s.description.is_empty() {
        writeln!(out, "  {}", s.description)?;
    }
    writeln!(out, "state:")?;
    for k in &s.state {
        let r = match &k.reducer {
            crate::spec::model::ReducerSpec::LastValue => "last value".to_string(),
            crate::spec::model::ReducerSpec::Add => "add".to_string(),
            crate::spec::model::ReducerSpec::Code(f) => format!("reducer {f}()"),
        };
        writeln!(out, "  {:<16} {r}", k.name)?;
    }
    writeln!(out, "nodes:")?;
    for n in &lg.graph.nodes {
        let mut marks = Vec::new();
        if s.interrupt_before.matches(&n.name) {
            marks.push("break-before");
        }
        if s.interrupt_after.matches(&n.name) {
            marks.push("break-after");
        }
        let mut edges: Vec<String> = Vec::new();
        for w in &n.writers {
            match w {
                crate::engine::graph::Writer::Edge(c) => {
                    edges.push(c.trim_start_matches("branch:to:").to_string())
                }
                crate::engine::graph::Writer::Join(c) => {
                    edges.push(format!("(waits) {}", c.rsplit(':').next().unwrap_or(c)))
                }
                crate::engine::graph::Writer::Branch { path, path_map } => {
                    edges.push(match path_map {
                        Some(m) => format!(
                            "{path}() ? {}",
                            m.iter()
                                .map(|(k, d)| format!("{}->{d}", k.as_str().unwrap_or("?")))
                                .collect::<Vec<_>>()
                                .join(" | ")
                        ),
                        None => format!("{path}() ? any"),
                    })
                }
            }
        }
        let ends_here = s
            .edges
            .iter()
            .any(|e| e.target == "__end__" && e.sources.iter().any(|x| x == &n.name));
        if ends_here {
            edges.push("__end__".into());
        }
        writeln!(
            out,
            "  {:<16} -> {}{}",
            n.name,
            if edges.is_empty() {
                "(end)".to_string()
            } else {
                edges.join(", ")
            },
            if marks.is_empty() {
                String::new()
            } else {
                format!("   [{}]", marks.join(", "))
            }
        )?;
    }
    Ok(())
}

pub fn lint(a: &crate::cli::LintArgs, color: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let lg = load_graph(&a.graph)?;
    // the graph's own node code, then its subgraphs' (a subgraph's pitfalls are the graph's too)
    fn collect(lg: &LoadedGraph, out: &mut Vec<crate::lint::Finding>) -> Result<(), CliError> {
        let nodes: Vec<(String, String)> = lg
            .spec
            .nodes
            .iter()
            .filter(|n| n.subgraph.is_none())
            .map(|n| (n.name.clone(), n.func.clone()))
            .collect();
        out.extend(
            crate::lint::lint_source(&lg.code_file, &lg.code_source, &nodes).map_err(CliError)?,
        );
        let mut names: Vec<&String> = lg.children.keys().collect();
        names.sort();
        for n in names {
            collect(&lg.children[n], out)?;
        }
        Ok(())
    }
    let mut findings = Vec::new();
    collect(&lg, &mut findings)?;
    if a.out.json {
        serde_json::to_writer_pretty(&mut *out, &findings)?;
        writeln!(out)?;
    } else {
        for f in &findings {
            writeln!(
                out,
                "{}",
                human::bold(
                    &format!("{}:{}:{}: {} [{}]", f.file, f.line, f.col, f.rule, f.node),
                    color
                )
            )?;
            writeln!(out, "    {}\n    fix: {}", f.message, f.fix)?;
        }
        if findings.is_empty() {
            writeln!(out, "{}: no findings", lg.path.display())?;
        } else {
            writeln!(out, "{} finding(s)", findings.len())?;
        }
    }
    if findings.is_empty() {
        Ok(())
    } else {
        out.flush()?;
        Err(CliError(super::FINDINGS.into()))
    }
}

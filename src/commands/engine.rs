//! `run`, `resume`, `continue`, `replay`, `update`, `graph`: a graph driven from the command
//! line through the graph-source seam (`source::GraphSource`). Everything that can be checked is
//! checked before the DB is opened for writing, so a rejected command leaves the file
//! byte-identical.

use super::live::{self, Driven};
use super::{human, CliError};
use crate::bridge::{GraphRef, PythonRef, PythonSource};
use crate::cli::{ContinueArgs, EngineSel, GraphArgs, ReplayArgs, ResumeArgs, RunArgs, UpdateArgs};
use crate::engine::interrupts::pending_interrupts;
use crate::engine::loaded::{load, LoadedGraph};
use crate::engine::source::SpecSource;
use crate::inspect::Thread;
use crate::open::open_source;
use crate::source::{AsNode, Breakpoints, GraphSource, Input, Resume, RunRequest, Shape, Start};
use crate::store::{Mode, Store};
use crate::text::escape;
use crate::value::{from_view, ViewOptions};
use rmpv::Value;
use serde_json::{json, Value as Json};
use std::io::Write;
use std::path::Path;

fn load_graph(p: &Path) -> Result<LoadedGraph, CliError> {
    load(p).map_err(|e| CliError(e.to_string()))
}

/// How the graph on the command line is found and run.
#[derive(Debug, Clone, Default)]
pub struct GraphOpts {
    /// `--python PATH`.
    pub python: Option<std::path::PathBuf>,
}

impl GraphOpts {
    pub(super) fn open(&self, sel: Option<&EngineSel>) -> crate::open::OpenOptions {
        crate::open::OpenOptions {
            python: self.python.clone(),
            ticker: false,
            seed: sel.map_or(0, |s| s.seed),
        }
    }
}

/// Open the graph named on the command line (a spec, or a Python graph through the bridge) as a
/// graph source on `db` and hand it to `f`. `db: None`: nothing will be run (`superstep graph`).
fn with_source<T>(
    graph: &Path,
    graph_id: Option<&str>,
    opts: &GraphOpts,
    db: Option<&Path>,
    sel: Option<&EngineSel>,
    f: impl FnOnce(&mut dyn GraphSource) -> Result<T, CliError>,
) -> Result<T, CliError> {
    let arg = graph.to_string_lossy();
    let r = GraphRef::parse(&arg, graph_id).map_err(CliError)?;
    let python = matches!(r, GraphRef::Python(_));
    let mut spec = None;
    let mut src = open_source(r, &opts.open(sel), db, &mut spec).map_err(CliError)?;
    configure(&mut *src, sel)?;
    if let (Some(sel), true) = (sel, python) {
        src.set_replay(sel.replay, !sel.no_record);
    }
    f(&mut *src)
}

/// `--config` / `--context` / `--recursion-limit`: checked (the context against the graph's
/// context_schema) before anything runs; what the user should know goes to stderr.
fn configure(src: &mut dyn GraphSource, sel: Option<&EngineSel>) -> Result<(), CliError> {
    let Some(sel) = sel else {
        return Ok(());
    };
    let settings = sel.run.settings().map_err(CliError)?;
    for note in src
        .configure(&settings)
        .map_err(|e| CliError(e.to_string()))?
    {
        eprintln!("superstep: {}", escape(&note));
    }
    Ok(())
}

/// `--graph REF` on an inspection command: the topology of the graph whose checkpoints live in
/// `ns`, from a spec or the live Python graph (nothing is run, no file is opened).
pub fn graph_topology(
    r: Option<&str>,
    ns: &str,
    opts: &GraphOpts,
) -> Result<Option<crate::snapshot::topology::Topology>, CliError> {
    let Some(r) = r else {
        return Ok(None);
    };
    let mut spec = None;
    let t = open_source(
        GraphRef::parse_flag(r).map_err(CliError)?,
        &opts.open(None),
        None,
        &mut spec,
    )
    .map_err(CliError)?
    .topology(ns);
    match t {
        Some(t) => Ok(Some(t)),
        None => Err(CliError(format!(
            "--graph {r}: the graph has no subgraph for namespace {ns:?}"
        ))),
    }
}

/// Start the bridge on a Python graph (`crate::open`), for the commands that need the bridge
/// itself.
pub fn open_python(
    r: PythonRef,
    opts: &GraphOpts,
    db: Option<&Path>,
) -> Result<PythonSource, CliError> {
    crate::open::open_python(r, &opts.open(None), db).map_err(CliError)
}

/// One `--id ID=JSON` answer.
pub fn parse_id_answer(item: &str) -> Result<(String, Json), CliError> {
    let (id, v) = item
        .split_once('=')
        .ok_or_else(|| CliError(format!("--id {item:?}: expected ID=JSON")))?;
    Ok((id.to_string(), parse_json(&format!("--id {id}"), v)?))
}

/// A JSON flag's value, as the user gave it (the graph source takes the JSON), checked here
/// that it can be stored (so a bad one is refused naming its flag).
pub fn parse_json(flag: &str, text: &str) -> Result<Json, CliError> {
    let j: Json = serde_json::from_str(text).map_err(|e| {
        CliError(format!(
            "{flag}: invalid JSON at line {} column {}: {e}",
            e.line(),
            e.column()
        ))
    })?;
    from_view(&j).map_err(|e| CliError(format!("{flag}: {e}")))?;
    Ok(j)
}

fn breakpoints(
    list: &[String],
    shape: &Shape,
    flag: &str,
) -> Result<Option<Breakpoints>, CliError> {
    if list.is_empty() {
        return Ok(None);
    }
    if list.len() == 1 && list[0] == "*" {
        return Ok(Some(Breakpoints::All));
    }
    for n in list {
        // `inner|ask` / `inner|*`: inside a subgraph (a Python graph's; set on the subgraph object)
        if !shape.has_node(n) && !shape.has_inner_node(n) {
            let inner: Vec<&str> = shape.inner_nodes.iter().map(|n| n.name.as_str()).collect();
            return Err(CliError(format!(
                "{flag}: unknown node {n:?} (nodes: {}{})",
                shape.node_names(),
                if inner.is_empty() {
                    String::new()
                } else {
                    format!("; inside subgraphs: {}", inner.join(", "))
                }
            )));
        }
    }
    Ok(Some(Breakpoints::Nodes(list.to_vec())))
}

/// A node `Command(goto=)` / `update_state(as_node=)` may name (`__start__` included).
fn is_node(shape: &Shape, n: &str) -> bool {
    n == "__start__" || shape.has_node(n)
}

/// State read before writing: the thread's latest checkpoint and its pending interrupts.
struct Preflight {
    pending: Vec<String>,
}

fn preflight(
    src: &dyn GraphSource,
    db: &Path,
    thread: &str,
    ns: &str,
    must_exist: bool,
    checkpoint: Option<&str>,
) -> Result<Preflight, CliError> {
    // a subgraph's namespace is addressed within a thread that has it
    let must_exist = must_exist || !ns.is_empty();
    // a 0-byte file is an empty SQLite database (e.g. left by a process killed right after
    // creating it): like a missing one, it holds no thread yet
    let empty = std::fs::metadata(db).map(|m| m.len() == 0).unwrap_or(false);
    if !Store::is_server(db) && (!db.exists() || empty) {
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
        Err(crate::store::StoreError::NotCheckpointDb { .. })
            if !must_exist && crate::store::sqlite_has_no_tables(db) =>
        {
            return Ok(Preflight {
                pending: Vec::new(),
            })
        }
        // a server database without the tables: the engine creates them, as setup() does
        Err(crate::store::StoreError::NoTables { .. }) if !must_exist => {
            return Ok(Preflight {
                pending: Vec::new(),
            })
        }
        Err(e) => return Err(e.into()),
    };
    if !ns.is_empty() && store.thread_exists(thread)? {
        let known = store.namespaces(thread)?;
        if !known.iter().any(|n| n == ns) {
            let listed: Vec<String> = known
                .iter()
                .filter(|n| !n.is_empty())
                .map(|n| format!("{:?}", n))
                .collect();
            return Err(CliError(format!(
                "{}: thread {thread:?} has no namespace {ns:?} (its subgraph namespaces: {})",
                store.label(),
                if listed.is_empty() {
                    "none".to_string()
                } else {
                    listed.join(", ")
                }
            )));
        }
    }
    let row = store.checkpoint(thread, ns, checkpoint)?;
    if let Some(id) = checkpoint {
        if row.is_none() {
            return Err(CliError(format!(
                "{}: thread {thread:?} has no checkpoint {id}{}",
                store.label(),
                if ns.is_empty() {
                    String::new()
                } else {
                    format!(" in namespace {ns:?}")
                }
            )));
        }
    }
    let Some(row) = row else {
        if must_exist {
            return Err(CliError(format!(
                "{}: no thread {thread:?} (superstep threads --db {} lists them)",
                store.label(),
                store.label()
            )));
        }
        return Ok(Preflight {
            pending: Vec::new(),
        });
    };
    // a thread LangGraph 0.2 wrote: the engine writes 1.2's format and would mix the two (LangGraph
    // itself, running a Python graph, migrates the checkpoint as it reads it and goes on)
    let cp = match store.decode(&row) {
        // pickled: LangGraph reads it when it runs (and checks the interrupts itself)
        Err(crate::store::StoreError::Pickled { .. }) if src.reads_pickled_checkpoints() => {
            return Ok(Preflight {
                pending: Vec::new(),
            })
        }
        r => r?,
    };
    if crate::snapshot::legacy::is_legacy(&cp) && !src.continues_older_formats() {
        return Err(CliError(format!(
            "{}: thread {thread:?} was written in the {}: the engine writes LangGraph 1.2's format and would mix the two on one thread (inspect it with show/history, or run a new thread)",
            store.label(),
            crate::snapshot::legacy::format_name(&cp)
        )));
    }
    let writes: Vec<(String, String, Value)> = store
        .writes(thread, ns, &row.checkpoint_id)?
        .into_iter()
        .map(|w| (w.task_id, w.channel, w.value.into_value()))
        .collect();
    Ok(Preflight {
        pending: pending_interrupts(&writes),
    })
}

/// Run `start` on the thread and take up to `--steps` supersteps (all of them until a pause
/// without it), printing each superstep as it commits (human output).
fn drive(
    src: &mut dyn GraphSource,
    sel: &EngineSel,
    input: Input,
    checkpoint: Option<&str>,
    ns: &str,
    db: &Path,
    out: (&mut dyn Write, bool),
) -> Result<Driven, CliError> {
    let shape = src.shape();
    let before = breakpoints(&sel.break_before, shape, "--break-before")?
        .unwrap_or_else(|| shape.interrupt_before.clone());
    let after = breakpoints(&sel.break_after, shape, "--break-after")?
        .unwrap_or_else(|| shape.interrupt_after.clone());
    let req = RunRequest {
        thread: sel.thread.clone(),
        start: Start::Fresh {
            input,
            checkpoint: checkpoint.map(str::to_string),
        },
        steps: sel.steps,
        before,
        after,
    };
    let human = (!sel.out.json).then_some(out);
    match &sel.break_when {
        // stepped one superstep at a time by the breaker, printed when it stops
        Some(text) => {
            let (outcome, hit) = super::break_when::run(src, req, ns, text, db)?;
            live::settled(outcome, hit, None, human, live::Printed::default())
        }
        None => live::drive(src, req, ns, human),
    }
}

pub fn run(
    db: &Path,
    a: &RunArgs,
    opts: &GraphOpts,
    color: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    with_source(
        &a.sel.graph,
        a.sel.graph_id.as_deref(),
        opts,
        Some(db),
        Some(&a.sel),
        |src| {
            let shape = src.shape();
            let message = a
                .message
                .as_deref()
                .map(|m| crate::source::input_form::human_turn(m).to_string());
            let input = match a.input.as_deref().or(message.as_deref()) {
                Some(t) => parse_json("--input", t)?,
                None => match &shape.input {
                    Some(j) => {
                        from_view(j).map_err(|e| CliError(format!("input: {e}")))?;
                        j.clone()
                    }
                    None => {
                        return Err(CliError(format!(
                            "{}: no input: pass --input JSON or set \"input\" in the spec",
                            shape.label
                        )))
                    }
                },
            };
            preflight(src, db, &a.sel.thread, "", false, None)?;
            let run = drive(
                src,
                &a.sel,
                Input::Value(input),
                None,
                "",
                db,
                (&mut *out, color),
            )?;
            live::finish(src, db, &a.sel, run, color, out)
        },
    )
}

pub fn resume(
    db: &Path,
    a: &ResumeArgs,
    opts: &GraphOpts,
    color: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    with_source(
        &a.sel.graph,
        a.sel.graph_id.as_deref(),
        opts,
        Some(db),
        Some(&a.sel),
        |src| {
            // LangGraph accepts a Command on a thread with no checkpoint (it becomes the input), so
            // the thread need not exist; an addressed checkpoint must.
            let pre = preflight(
                src,
                db,
                &a.sel.thread,
                &a.ns,
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
                if !is_node(src.shape(), g) {
                    return Err(CliError(format!(
                        "--goto: unknown node {g:?} (nodes: {})",
                        src.shape().node_names()
                    )));
                }
            }
            if resume.is_none() && update.is_none() && a.goto.is_empty() {
                return Err(CliError(
                    "resume: give --value JSON, --id ID=JSON, --update JSON or --goto NODE".into(),
                ));
            }
            let goto = a.goto.clone();
            let input = Input::Command {
                update,
                goto,
                resume,
            };
            let run = drive(
                src,
                &a.sel,
                input,
                a.checkpoint.as_deref(),
                &a.ns,
                db,
                (&mut *out, color),
            )?;
            live::finish(src, db, &a.sel, run, color, out)
        },
    )
}

pub fn continue_(
    db: &Path,
    a: &ContinueArgs,
    opts: &GraphOpts,
    color: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    with_source(
        &a.sel.graph,
        a.sel.graph_id.as_deref(),
        opts,
        Some(db),
        Some(&a.sel),
        |src| {
            preflight(src, db, &a.sel.thread, "", true, None)?;
            let run = drive(
                src,
                &a.sel,
                Input::Continue,
                None,
                "",
                db,
                (&mut *out, color),
            )?;
            live::finish(src, db, &a.sel, run, color, out)
        },
    )
}

pub fn replay(
    db: &Path,
    a: &ReplayArgs,
    opts: &GraphOpts,
    color: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    with_source(
        &a.sel.graph,
        a.sel.graph_id.as_deref(),
        opts,
        Some(db),
        Some(&a.sel),
        |src| {
            preflight(src, db, &a.sel.thread, &a.ns, true, Some(&a.checkpoint))?;
            let run = drive(
                src,
                &a.sel,
                Input::Continue,
                Some(&a.checkpoint),
                &a.ns,
                db,
                (&mut *out, color),
            )?;
            live::finish(src, db, &a.sel, run, color, out)
        },
    )
}

pub fn update(
    db: &Path,
    a: &UpdateArgs,
    opts: &GraphOpts,
    color: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    with_source(
        &a.sel.graph,
        a.sel.graph_id.as_deref(),
        opts,
        Some(db),
        Some(&a.sel),
        |src| {
            let values = parse_json("--values", &a.values)?;
            let as_node = AsNode::parse(a.as_node.as_deref());
            // (a subgraph's nodes are checked by its own update_state)
            if let (AsNode::Node(n), true) = (&as_node, a.ns.is_empty()) {
                if !is_node(src.shape(), n) {
                    return Err(CliError(format!(
                    "--as-node: InvalidUpdateError: Node {n} does not exist (nodes: __start__, {})",
                    src.shape().node_names()
                )));
                }
            }
            preflight(
                src,
                db,
                &a.sel.thread,
                &a.ns,
                false,
                a.checkpoint.as_deref(),
            )?;
            let values = (!values.is_null()).then_some(values);
            // breakpoints are run configuration: checked like the run commands', unused here
            super::break_when::compile(&a.sel, src.shape())?;
            breakpoints(&a.sel.break_before, src.shape(), "--break-before")?;
            breakpoints(&a.sel.break_after, src.shape(), "--break-after")?;
            let id = src
                .update_state_in(
                    &a.sel.thread,
                    &a.ns,
                    a.checkpoint.as_deref(),
                    values,
                    as_node,
                )
                .map_err(|x| CliError(x.to_string()))?;
            let store = Store::open(db, Mode::ReadOnly)?;
            // the state that was updated: the subgraph's, in its namespace
            let th = Thread::open(&store, &a.sel.thread, &a.ns, src.topology(&a.ns))?;
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
                    human::bold(&escape(&format!("updated: new checkpoint {id}")), color)
                )?;
            }
            Ok(())
        },
    )
}

pub fn graph(a: &GraphArgs, opts: &GraphOpts, out: &mut dyn Write) -> Result<(), CliError> {
    // nothing is run or written: no file is opened
    with_source(&a.graph, a.graph_id.as_deref(), opts, None, None, |src| {
        out.write_all(src.graph_text(a.mermaid).as_bytes())?;
        Ok(())
    })
}

/// `superstep graph` as text: Mermaid, or the plain listing.
pub fn graph_text(lg: &LoadedGraph, mermaid: bool) -> String {
    SpecSource::new(lg, Path::new("")).graph_text(mermaid)
}

pub fn lint(a: &crate::cli::LintArgs, color: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let arg = a.graph.to_string_lossy();
    if let Ok(GraphRef::Python(r)) = GraphRef::parse(&arg, None) {
        return Err(CliError(format!(
            "{}: superstep lint checks a spec's Starlark node code; Python graphs are not linted",
            r.label
        )));
    }
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
                    &escape(&format!(
                        "{}:{}:{}: {} [{}]",
                        f.file, f.line, f.col, f.rule, f.node
                    )),
                    color
                )
            )?;
            writeln!(
                out,
                "    {}\n    fix: {}",
                escape(&f.message),
                escape(&f.fix)
            )?;
        }
        if findings.is_empty() {
            writeln!(
                out,
                "{}: no findings",
                escape(&lg.path.display().to_string())
            )?;
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

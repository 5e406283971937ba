//! Command implementations. Every user error ends as one line on stderr and exit code 2.

mod break_when;
mod calls;
mod check;
mod compare;
mod du;
mod engine;
mod exact;
pub use engine::graph_text;
mod generate;
mod human;
mod inspect;
mod live;
mod prune;
mod store;

use crate::cli::{Cli, Command};
use std::io::Write;
use std::path::PathBuf;

/// A user-facing error: one line, exit code 2.
#[derive(Debug)]
pub struct CliError(pub String);

/// Lint found problems: exit code 1, output already printed.
pub const FINDINGS: &str = "\u{0}findings";

impl<E: std::fmt::Display> From<E> for CliError {
    fn from(e: E) -> Self {
        CliError(e.to_string())
    }
}

/// Run the CLI; returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    let stdout = std::io::stdout();
    // terminal-safe whatever a command writes (JSON strings keep DEL, C1 and bidi raw)
    let mut out = crate::text::SafeWriter::new(
        std::io::BufWriter::new(stdout.lock()),
        human::color_enabled(),
    );
    let result = dispatch(cli, &mut out).and_then(|()| out.flush().map_err(CliError::from));
    match result {
        Ok(()) => 0,
        Err(CliError(msg)) if msg.contains("Broken pipe") => 0,
        Err(CliError(msg)) if msg == FINDINGS => 1,
        Err(CliError(msg)) if live::exit_code(&msg).is_some() => live::exit_code(&msg).unwrap_or(2),
        Err(CliError(msg)) => {
            drop(out);
            // one line, whatever a DB row or a file name put in the message
            eprintln!("superstep: {}", crate::text::escape(&msg));
            2
        }
    }
}

fn dispatch(cli: Cli, out: &mut dyn Write) -> Result<(), CliError> {
    let color = human::color_enabled();
    let opts = engine::GraphOpts {
        python: cli.python.clone(),
    };
    if cli.command.is_some() && cli.run != crate::cli::RunConfigArgs::default() {
        return Err(CliError(
            "--config / --context / --recursion-limit go after the subcommand (superstep run GRAPH --config JSON)".into(),
        ));
    }
    match cli.command {
        Some(Command::Threads(a)) => inspect::threads(&db_path(cli.db)?, a.out.json, color, out),
        Some(Command::History(a)) => {
            let db = db_path(cli.db)?;
            let (g, exact) = exact::graph_view(
                cli.graph_ref.as_deref(),
                &db,
                &a.sel.thread,
                &a.sel.ns,
                a.limit,
                &opts,
            )?;
            inspect::history(&db, &a, g, &exact, color, out)
        }
        Some(Command::Show(a)) => {
            let db = db_path(cli.db)?;
            // the live view is the newest checkpoint; an older one needs the history down to it
            let limit = a.checkpoint.is_none().then_some(1);
            let (g, exact) = exact::graph_view(
                cli.graph_ref.as_deref(),
                &db,
                &a.sel.thread,
                &a.sel.ns,
                limit,
                &opts,
            )?;
            inspect::show(&db, &a, g, &exact, color, out)
        }
        Some(Command::Run(a)) => engine::run(&need_db(cli.db)?, &a, &opts, color, out),
        Some(Command::Resume(a)) => engine::resume(&need_db(cli.db)?, &a, &opts, color, out),
        Some(Command::Continue(a)) => engine::continue_(&need_db(cli.db)?, &a, &opts, color, out),
        Some(Command::Replay(a)) => engine::replay(&need_db(cli.db)?, &a, &opts, color, out),
        Some(Command::Update(a)) => engine::update(&need_db(cli.db)?, &a, &opts, color, out),
        Some(Command::Diff(a)) => compare::diff(
            &db_path(cli.db)?,
            &a,
            cli.graph_ref.as_deref(),
            &opts,
            color,
            out,
        ),
        Some(Command::Diverge(a)) => compare::diverge(
            &db_path(cli.db)?,
            &a,
            cli.graph_ref.as_deref(),
            &opts,
            color,
            out,
        ),
        Some(Command::Why(a)) => compare::why(
            &db_path(cli.db)?,
            &a,
            cli.graph_ref.as_deref(),
            &opts,
            color,
            out,
        ),
        Some(Command::Graph(a)) => engine::graph(&a, &opts, out),
        Some(Command::Store(a)) => store::run(&db_path(cli.db)?, &a, color, out),
        Some(Command::Calls(a)) => calls::calls(&need_db(cli.db)?, &a, color, out),
        Some(Command::Lint(a)) => engine::lint(&a, color, out),
        Some(Command::Du(a)) => du::du(&db_path(cli.db)?, &a, out),
        Some(Command::Prune(a)) => prune::prune(&need_db(cli.db)?, &a, out),
        Some(Command::Check(a)) => {
            check::run(&db_path(cli.db)?, cli.graph_ref.as_deref(), &a, &opts, out)
        }
        Some(Command::Completions(a)) => generate::completions(a.shell, out),
        Some(Command::Man(a)) => generate::man(&a, out),
        None => main_command(cli, color, out),
    }
}

/// `superstep [GRAPH] [--db F]`: the TUI on a terminal (or `--print`), else the overview.
fn main_command(mut cli: Cli, color: bool, out: &mut dyn Write) -> Result<(), CliError> {
    use std::io::IsTerminal;
    // `superstep FILE.sqlite`: a positional non-spec file is the DB to inspect
    if let Some(g) = &cli.graph {
        if !crate::tui::is_spec(g) && g.is_file() && cli.db.is_none() {
            cli.db = cli.graph.take();
        }
    }
    let tty = std::io::stdout().is_terminal() && std::io::stdin().is_terminal();
    let wants_tui = cli.graph.is_some() || cli.keys.is_some() || cli.print;
    if !wants_tui && !tty {
        let given = cli.db.clone();
        return inspect::overview(&db_path(cli.db)?, given.as_deref(), color, out);
    }
    if let Some(g) = &cli.graph {
        let arg = g.to_string_lossy();
        if let Err(e) = crate::bridge::GraphRef::parse(&arg, cli.graph_id.as_deref()) {
            // a name that is no reference at all: say every kind of thing that is accepted
            if !arg.contains(':') && !crate::tui::is_spec(g) {
                return Err(CliError(format!(
                    "{}: expected a graph spec (.json), a checkpoint DB file or a subcommand (superstep --help), or a Python graph (app.py:graph, package.module:graph, langgraph.json [GRAPH_ID])",
                    g.display()
                )));
            }
            return Err(CliError(e));
        }
    }
    if !cli.print && !tty {
        return Err(CliError(
            "the terminal UI needs a terminal (stdin and stdout); use --print [--keys KEYS] to render one frame as text"
                .into(),
        ));
    }
    let keys = match &cli.keys {
        Some(k) => crate::app::keys::parse_keys(k).map_err(|e| CliError(e.0))?,
        None => Vec::new(),
    };
    let size = crate::tui::parse_size(&cli.size).map_err(CliError)?;
    let opts = crate::tui::Options {
        graph: cli.graph,
        graph_id: cli.graph_id,
        graph_ref: cli.graph_ref,
        python: cli.python,
        db: cli.db,
        thread: cli.thread,
        keys,
        print: cli.print,
        watch: cli.watch,
        size,
        clock: cli.clock,
        seed: cli.seed,
        run: cli.run.settings().map_err(CliError)?,
    };
    crate::tui::run(opts, || demo_db_path().map_err(|e| e.0), out).map_err(CliError)
}

/// The demo database shipped inside the binary (generated by real LangGraph, see graphs/README).
pub const DEMO_DB: &[u8] = include_bytes!("../../graphs/demo.sqlite");

fn need_db(db: Option<PathBuf>) -> Result<PathBuf, CliError> {
    db.ok_or_else(|| CliError("--db FILE is required (the SQLite checkpoint file to write)".into()))
}

fn db_path(db: Option<PathBuf>) -> Result<PathBuf, CliError> {
    match db {
        Some(p) => Ok(p),
        None => demo_db_path(),
    }
}

/// Materialise the embedded demo DB in the temp dir (content-addressed, written once).
pub fn demo_db_path() -> Result<PathBuf, CliError> {
    let hash = xxhash_rust::xxh3::xxh3_64(DEMO_DB);
    let path = std::env::temp_dir().join(format!("superstep-demo-{hash:016x}.sqlite"));
    let ok = std::fs::read(&path).map(|b| b == DEMO_DB).unwrap_or(false);
    if !ok {
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, DEMO_DB).map_err(|e| CliError(format!("{}: {e}", tmp.display())))?;
        std::fs::rename(&tmp, &path).map_err(|e| CliError(format!("{}: {e}", path.display())))?;
    }
    Ok(path)
}

/// A JSON argument (`--input`, `--value`, ...) as a stored value; the error names the flag.
pub fn parse_json_arg(flag: &str, text: &str) -> Result<rmpv::Value, String> {
    let j = engine::parse_json(flag, text).map_err(|e| e.0)?;
    crate::value::from_view(&j).map_err(|e| format!("{flag}: {e}"))
}

/// One `--id ID=JSON` resume answer.
pub fn parse_id_answer(item: &str) -> Result<(String, serde_json::Value), String> {
    engine::parse_id_answer(item).map_err(|e| e.0)
}

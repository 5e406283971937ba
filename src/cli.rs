//! Command line (clap derive), self-contained.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "superstep",
    version,
    long_version = crate::versions::long_version(),
    about = "A terminal debugger for LangGraph graphs and their SqliteSaver checkpoint files",
    long_about = "superstep opens LangGraph SqliteSaver checkpoint databases (read-only) and shows what \
LangGraph's get_state / get_state_history would show: values, next tasks, interrupts, pending writes.\n\n\
Without a subcommand it opens the terminal UI: `superstep GRAPH.json` debugs a graph spec \
(step, breakpoints, resume, time travel); `superstep --db FILE` inspects any checkpoint DB \
read-only. When stdout is not a terminal, `superstep [--db FILE]` prints an overview instead \
(the embedded demo database without --db)."
)]
pub struct Cli {
    /// Checkpoint database. Inspection opens it read-only; a graph spec (and the run/resume/...
    /// subcommands) write to it. Default: the embedded demo database; for a graph spec, a
    /// per-spec file in the temp dir.
    #[arg(long, global = true, value_name = "FILE")]
    pub db: Option<PathBuf>,
    /// Graph to debug in the terminal UI: a spec (.json), a Python graph (app.py:graph,
    /// package.module:graph) or a langgraph.json (then GRAPH_ID picks one of its graphs).
    #[arg(value_name = "GRAPH")]
    pub graph: Option<PathBuf>,
    /// The graph id in a langgraph.json (needed when it names several graphs).
    #[arg(value_name = "GRAPH_ID")]
    pub graph_id: Option<String>,
    /// Inspect --db read-only with this graph's real topology (app.py:graph, langgraph.json
    /// [GRAPH_ID] as "langgraph.json:ID" or a spec): next tasks, task ids and reducer values are
    /// then derived exactly.
    #[arg(long = "graph", global = true, value_name = "REF")]
    pub graph_ref: Option<String>,
    /// The Python interpreter for Python graphs (default: $VIRTUAL_ENV, ./.venv, superstep's own
    /// virtualenv, python3).
    #[arg(long, global = true, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// Thread to show (default: the most recent; in debug mode created with the spec's input
    /// when missing).
    #[arg(long, short = 't', value_name = "THREAD")]
    pub thread: Option<String>,
    /// Keys to replay at start-up, e.g. "n n r true<Enter>" (<Enter> <Esc> <Tab> <Up> <C-c> ...;
    /// 3n = 3 then n).
    #[arg(long, value_name = "KEYS")]
    pub keys: Option<String>,
    /// Render one frame to stdout as plain text (after --keys) and exit.
    #[arg(long)]
    pub print: bool,
    /// Frame size for --print.
    #[arg(long, value_name = "WxH", default_value = "120x40")]
    pub size: String,
    /// Seed for random(), uuid4(), now() and llm() in node code.
    #[arg(long, default_value_t = 0, value_name = "S")]
    pub seed: u64,
    /// Fixed clock (nanoseconds since the epoch) for reproducible checkpoint ids (tests).
    #[arg(long, value_name = "NS", hide = true)]
    pub clock: Option<u64>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// List the threads of a checkpoint DB.
    Threads(ThreadsArgs),
    /// A thread's checkpoints, newest first (like get_state_history).
    History(HistoryArgs),
    /// One checkpoint as a StateSnapshot (like get_state; live view without --checkpoint).
    Show(ShowArgs),
    /// Run a graph spec on a thread with new input, until it pauses.
    Run(RunArgs),
    /// Answer pending interrupts: Command(resume=...) plain or by interrupt id.
    Resume(ResumeArgs),
    /// Continue a paused thread without input (invoke(None)): past a breakpoint or an error.
    Continue(ContinueArgs),
    /// Time travel: re-run from an old checkpoint (invoke(None, checkpoint)), forking the thread.
    Replay(ReplayArgs),
    /// update_state: write values as if a node had returned them.
    Update(UpdateArgs),
    /// Show a graph spec's nodes and edges.
    Graph(GraphArgs),
    /// Check a spec's node code for the interrupt pitfalls (exit 1 with findings, 0 clean).
    Lint(LintArgs),
    /// Print the shell completion script for bash, zsh or fish.
    #[command(
        long_about = "Print the shell completion script for bash, zsh or fish, generated from \
superstep's own argument definitions (so it always matches this binary).\n\n\
Install it where your shell looks:\n  \
bash: superstep completions bash > ~/.local/share/bash-completion/completions/superstep\n  \
zsh:  superstep completions zsh > ~/.zfunc/_superstep   (with fpath+=(~/.zfunc) before compinit)\n  \
fish: superstep completions fish > ~/.config/fish/completions/superstep.fish"
    )]
    Completions(CompletionsArgs),
    /// Print the manual page (roff), or write one per command with --dir.
    #[command(
        long_about = "Print superstep's manual page (roff), generated from its own argument \
definitions: `superstep man | man -l -` reads it. `superstep man COMMAND` prints the page of one \
subcommand (superstep-COMMAND(1)); `--dir DIR` writes superstep.1 and a page per subcommand \
into DIR (e.g. ~/.local/share/man/man1)."
    )]
    Man(ManArgs),
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: CompletionShell,
}

/// The shells `superstep completions` writes scripts for (each checked by that shell in .ci/run).
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Print this subcommand's page (superstep-COMMAND(1)) instead of superstep(1).
    #[arg(value_name = "COMMAND", conflicts_with = "dir")]
    pub command: Option<String>,
    /// Write superstep.1 and superstep-COMMAND.1 for every subcommand into DIR (created if missing).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct LintArgs {
    #[arg(value_name = "GRAPH")]
    pub graph: PathBuf,
    #[command(flatten)]
    pub out: Output,
}

#[derive(Args, Debug, Clone)]
pub struct EngineSel {
    /// Graph spec (JSON in graphs/, code in Starlark), Python graph (app.py:graph,
    /// package.module:graph) or langgraph.json.
    #[arg(value_name = "GRAPH")]
    pub graph: PathBuf,
    /// The graph id in a langgraph.json (needed when it names several graphs).
    #[arg(value_name = "GRAPH_ID")]
    pub graph_id: Option<String>,
    /// Thread id.
    #[arg(long, short = 't', value_name = "THREAD")]
    pub thread: String,
    /// Stop after N supersteps even if the graph would go on.
    #[arg(long, value_name = "N")]
    pub steps: Option<usize>,
    /// Seed for random(), uuid4(), now() and llm() in node code.
    #[arg(long, default_value_t = 0, value_name = "S")]
    pub seed: u64,
    /// Pause before these nodes (comma-separated, or "*"); overrides the spec's interrupt_before.
    #[arg(long, value_name = "NODES", value_delimiter = ',')]
    pub break_before: Vec<String>,
    /// Pause after these nodes (comma-separated, or "*"); overrides the spec's interrupt_after.
    #[arg(long, value_name = "NODES", value_delimiter = ',')]
    pub break_after: Vec<String>,
    /// LangGraph's recursion_limit.
    #[arg(long, default_value_t = 25, value_name = "N")]
    pub recursion_limit: i64,
    #[command(flatten)]
    pub out: Output,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub sel: EngineSel,
    /// Input JSON (default: the spec's "input").
    #[arg(long, value_name = "JSON", allow_hyphen_values = true)]
    pub input: Option<String>,
}

#[derive(Args, Debug)]
pub struct ResumeArgs {
    #[command(flatten)]
    pub sel: EngineSel,
    /// Command(resume=VALUE): answers the one pending interrupt.
    #[arg(
        long,
        value_name = "JSON",
        conflicts_with = "id",
        allow_hyphen_values = true
    )]
    pub value: Option<String>,
    /// Command(resume={ID: VALUE, ...}): answer interrupts by id (repeatable; partial allowed).
    #[arg(long, value_name = "ID=JSON", allow_hyphen_values = true)]
    pub id: Vec<String>,
    /// Also apply Command(update=JSON).
    #[arg(long, value_name = "JSON", allow_hyphen_values = true)]
    pub update: Option<String>,
    /// Also Command(goto=NODE) (repeatable).
    #[arg(long, value_name = "NODE")]
    pub goto: Vec<String>,
    /// Resume at this (older) checkpoint instead of the latest: LangGraph then re-runs the
    /// step and reuses the answers already stored there.
    #[arg(long, value_name = "ID")]
    pub checkpoint: Option<String>,
    /// The namespace --checkpoint lives in (a subgraph's: "node:task_id", nested with "|"):
    /// the run starts from that subgraph checkpoint's config, as LangGraph's invoke does.
    #[arg(long, value_name = "NS", requires = "checkpoint", default_value = "")]
    pub ns: String,
}

#[derive(Args, Debug)]
pub struct ContinueArgs {
    #[command(flatten)]
    pub sel: EngineSel,
}

#[derive(Args, Debug)]
pub struct ReplayArgs {
    #[command(flatten)]
    pub sel: EngineSel,
    /// The checkpoint to travel back to.
    #[arg(long, value_name = "ID")]
    pub checkpoint: String,
    /// The namespace --checkpoint lives in (a subgraph's: "node:task_id", nested with "|"):
    /// time travel through a subgraph, as LangGraph's invoke(None, that checkpoint's config).
    #[arg(long, value_name = "NS", default_value = "")]
    pub ns: String,
}

#[derive(Args, Debug)]
pub struct UpdateArgs {
    #[command(flatten)]
    pub sel: EngineSel,
    /// Base checkpoint (default: the latest).
    #[arg(long, value_name = "ID")]
    pub checkpoint: Option<String>,
    /// Update a subgraph's state: its namespace ("node:task_id", nested with "|"); the
    /// subgraph writes its next checkpoint there, as LangGraph's update_state on its config.
    #[arg(long, value_name = "NS", default_value = "")]
    pub ns: String,
    /// Values as the node would return them (JSON object), or null with --as-node __end__.
    #[arg(long, value_name = "JSON", allow_hyphen_values = true)]
    pub values: String,
    /// The node the update comes from (default: inferred like LangGraph); also __input__, __copy__, __end__.
    #[arg(long, value_name = "NODE")]
    pub as_node: Option<String>,
}

#[derive(Args, Debug)]
pub struct GraphArgs {
    /// Graph spec, Python graph (app.py:graph, package.module:graph) or langgraph.json.
    #[arg(value_name = "GRAPH")]
    pub graph: PathBuf,
    /// The graph id in a langgraph.json.
    #[arg(value_name = "GRAPH_ID")]
    pub graph_id: Option<String>,
    /// Mermaid flowchart (like LangGraph's draw_mermaid).
    #[arg(long, conflicts_with = "ascii")]
    pub mermaid: bool,
    /// Plain text listing (default).
    #[arg(long)]
    pub ascii: bool,
}

#[derive(Args, Debug, Clone)]
pub struct Output {
    /// Print JSON (LangGraph StateSnapshot shape) instead of the human view.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct ThreadSel {
    /// Thread id.
    #[arg(long, short = 't', value_name = "THREAD")]
    pub thread: String,
    /// Checkpoint namespace (subgraphs: "node:task_id", nested with "|").
    #[arg(long, default_value = "", value_name = "NS")]
    pub ns: String,
    /// Graph topology JSON (as dumped by tests/oracle) to derive next/tasks/values exactly
    /// instead of inferring them from the DB.
    #[arg(long, value_name = "FILE")]
    pub topology: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ThreadsArgs {
    #[command(flatten)]
    pub out: Output,
}

#[derive(Args, Debug)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub sel: ThreadSel,
    /// At most N checkpoints (newest first).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    #[command(flatten)]
    pub out: Output,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    #[command(flatten)]
    pub sel: ThreadSel,
    /// Checkpoint id (history view); default: the latest checkpoint, live view.
    #[arg(long, value_name = "ID")]
    pub checkpoint: Option<String>,
    /// Messages of each conversation to print, newest last ("all" for every one; human output).
    #[arg(long, value_name = "N|all", default_value = "6", value_parser = parse_messages)]
    pub messages: usize,
    #[command(flatten)]
    pub out: Output,
}

/// `--messages`: a count, or `all`.
fn parse_messages(s: &str) -> Result<usize, String> {
    if s == "all" {
        return Ok(usize::MAX);
    }
    s.parse::<usize>()
        .map_err(|_| format!("{s:?}: expected a number of messages or \"all\""))
}

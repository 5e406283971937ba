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
    /// Reload a Python graph's code whenever one of its files changes (the TUI; R reloads by
    /// hand): the app's own modules the load imported are watched, the thread is kept.
    #[arg(long)]
    pub watch: bool,
    /// Frame size for --print.
    #[arg(long, value_name = "WxH", default_value = "120x40")]
    pub size: String,
    /// Seed for random(), uuid4(), now() and llm() in node code.
    #[arg(long, default_value_t = 0, value_name = "S")]
    pub seed: u64,
    /// Fixed clock (nanoseconds since the epoch) for reproducible checkpoint ids (tests).
    #[arg(long, value_name = "NS", hide = true)]
    pub clock: Option<u64>,
    #[command(flatten)]
    pub run: RunConfigArgs,
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
    /// Run a graph (spec or Python) with new input until it pauses: a new thread, or a new turn
    /// on an existing one (invoke(input, config)).
    Run(RunArgs),
    /// Answer pending interrupts: Command(resume=...) plain or by interrupt id.
    Resume(ResumeArgs),
    /// Continue a paused thread without input (invoke(None)): past a breakpoint or an error.
    Continue(ContinueArgs),
    /// Time travel: re-run from an old checkpoint (invoke(None, checkpoint)), forking the thread.
    Replay(ReplayArgs),
    /// update_state: write values as if a node had returned them.
    Update(UpdateArgs),
    /// Diff two checkpoints: values (message lists message by message), next, tasks,
    /// interrupts, pending writes.
    #[command(
        long_about = "Diff two checkpoints as LangGraph's get_state shows each: values (message lists \
message by message: added, removed, edited, tool calls; anything else path by path), next nodes, \
tasks, interrupts and pending writes. The checkpoints may be in one thread, on two branches of it \
or in two threads.\n\nA checkpoint is addressed as THREAD (its newest), THREAD@STEP (that step on \
the thread's current branch), THREAD@ID, or a bare checkpoint ID."
    )]
    Diff(DiffArgs),
    /// Where two runs diverged: the first superstep at which they differ, and the tasks whose
    /// writes made the difference.
    #[command(
        long_about = "Where two runs diverged: the lineages of A and B (each checkpoint and its ancestors) \
are set side by side from the root; the first pair whose values or next nodes differ is the \
divergence, and the tasks of the checkpoints just before whose pending writes differ are its \
cause.\n\nWith B omitted, A's thread is compared with the branch A forked from (the newest \
checkpoint of the thread outside A's lineage): a fork and its original."
    )]
    Diverge(DivergeArgs),
    /// Which writes produced a state key's value, or one path of it (one message of a list).
    Why(WhyArgs),
    /// Show a graph's nodes and edges (spec or Python; --mermaid: LangGraph's drawing).
    Graph(GraphArgs),
    /// LangGraph's key-value store kept in the DB (the memory an app keeps with store.put /
    /// store.search: SqliteStore's / PostgresStore's items): namespaces, keys, values. Read-only.
    Store(StoreArgs),
    /// List the model and tool calls recorded for a thread (Python graphs), or export / drop them.
    Calls(CallsArgs),
    /// Check a spec's node code for the interrupt pitfalls (exit 1 with findings, 0 clean).
    Lint(LintArgs),
    /// Where a checkpoint store's bytes go: by thread, namespace and channel, growth per step,
    /// the biggest values, what a DeltaChannel or a prune would save (read-only).
    Du(DuArgs),
    /// Drop checkpoints nothing needs: a dry run (what goes, bytes freed) unless --yes.
    #[command(
        long_about = "Drop checkpoints nothing needs. A dry run unless --yes: it says what goes and the \
bytes freed. Whatever the policy, a thread keeps its newest checkpoint (where it is parked), every \
paused fork tip, and everything a kept checkpoint needs to be read and resumed by LangGraph: its \
writes and blobs, the DeltaChannel chain back to the snapshot its values are rebuilt from, the \
parent of an old-format checkpoint, the subgraph calls it started. With --yes the rows go in one \
transaction, refused while another process is writing the store; --vacuum then gives the space back."
    )]
    Prune(PruneArgs),
    /// Will new graph code still read and resume the store's threads? Checked without running
    /// it (exit 1: a parked thread would break).
    Check(CheckArgs),
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
pub struct StoreArgs {
    #[command(subcommand)]
    pub command: StoreCommand,
}

#[derive(Subcommand, Debug)]
pub enum StoreCommand {
    /// The namespaces and how many items each holds; with NAMESPACE, the items in it and under
    /// it (key, last update, value preview).
    Ls {
        /// A namespace as LangGraph stores it, labels joined with "." (memories.user-1), or a
        /// JSON list (["memories", "user-1"]).
        #[arg(value_name = "NAMESPACE")]
        namespace: Option<String>,
        /// At most N items.
        #[arg(long, value_name = "N", default_value_t = 1000)]
        limit: usize,
        #[command(flatten)]
        out: Output,
    },
    /// One item: its value, when it was created and last updated.
    Get {
        #[arg(value_name = "NAMESPACE")]
        namespace: String,
        #[arg(value_name = "KEY")]
        key: String,
        #[command(flatten)]
        out: Output,
    },
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
    /// Pause after the first superstep whose state makes this expression true, e.g.
    /// "len(messages) > 4" (Starlark; names: the state keys, state, step, next, interrupts,
    /// source; see docs/compare.md). Stepped one superstep at a time: the rows are a straight
    /// run's.
    #[arg(long, value_name = "EXPR", allow_hyphen_values = true)]
    pub break_when: Option<String>,
    #[command(flatten)]
    pub run: RunConfigArgs,
    /// Python graphs: model and tool calls a recording holds for this branch are answered from it
    /// until the first request that differs, then live (diverge); failing there, naming the
    /// call (strict); or not at all (off).
    #[arg(long, value_enum, default_value_t = crate::replay::ReplayMode::Diverge, value_name = "MODE")]
    pub replay: crate::replay::ReplayMode,
    /// Python graphs: neither record nor replay model and tool calls in this run (every call is made).
    #[arg(long)]
    pub no_record: bool,
    #[command(flatten)]
    pub out: Output,
}

/// What a run is given besides its input (sent with every run, resume, replay and update).
#[derive(Args, Debug, Clone, Default, PartialEq)]
pub struct RunConfigArgs {
    /// LangGraph's recursion_limit (the same as --config '{"recursion_limit": N}'; default:
    /// LangGraph's own, 10007 in 1.2.24; a graph spec: 25).
    #[arg(long, value_name = "N")]
    pub recursion_limit: Option<i64>,
    /// RunnableConfig fields, as JSON: configurable (e.g. a user id), tags, metadata,
    /// recursion_limit, max_concurrency, run_name. Only what is given is sent.
    #[arg(long, value_name = "JSON", allow_hyphen_values = true)]
    pub config: Option<String>,
    /// The runtime context (a Python graph's context_schema), as a JSON object; default: the
    /// schema built from its defaults, as langgraph dev does.
    #[arg(
        long,
        value_name = "JSON",
        allow_hyphen_values = true,
        conflicts_with = "context_file"
    )]
    pub context: Option<String>,
    /// The runtime context from a JSON file.
    #[arg(long, value_name = "PATH")]
    pub context_file: Option<PathBuf>,
}

impl RunConfigArgs {
    pub fn settings(&self) -> Result<crate::source::RunSettings, String> {
        crate::source::RunSettings::from_args(
            self.config.as_deref(),
            self.recursion_limit,
            self.context.as_deref(),
            self.context_file.as_deref(),
        )
    }
}

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub sel: EngineSel,
    /// Input JSON (default: the spec's "input"). On an existing thread: its next turn.
    #[arg(long, value_name = "JSON", allow_hyphen_values = true)]
    pub input: Option<String>,
    /// The next turn's text, as a human message: the same as
    /// --input '{"messages": [{"role": "user", "content": TEXT}]}'.
    #[arg(
        long,
        value_name = "TEXT",
        conflicts_with = "input",
        allow_hyphen_values = true
    )]
    pub message: Option<String>,
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

/// Two checkpoint addresses in a namespace.
#[derive(Args, Debug)]
pub struct PairSel {
    /// Checkpoint namespace of both sides (subgraphs: "node:task_id", nested with "|").
    #[arg(long, default_value = "", value_name = "NS")]
    pub ns: String,
    /// B's namespace when it differs from A's (a subgraph's task id differs between threads).
    #[arg(long, value_name = "NS")]
    pub ns_b: Option<String>,
    #[command(flatten)]
    pub out: Output,
}

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The first checkpoint: THREAD, THREAD@STEP, THREAD@ID or ID.
    #[arg(value_name = "A")]
    pub a: String,
    /// The second checkpoint (same forms).
    #[arg(value_name = "B")]
    pub b: String,
    #[command(flatten)]
    pub sel: PairSel,
}

#[derive(Args, Debug)]
pub struct DivergeArgs {
    /// The head of the first run: THREAD, THREAD@STEP, THREAD@ID or ID.
    #[arg(value_name = "A")]
    pub a: String,
    /// The head of the second run (default: the branch A's thread forked from).
    #[arg(value_name = "B")]
    pub b: Option<String>,
    #[command(flatten)]
    pub sel: PairSel,
}

#[derive(Args, Debug)]
pub struct WhyArgs {
    /// Thread id.
    #[arg(long, short = 't', value_name = "THREAD")]
    pub thread: String,
    /// State key, with a path into its value: messages, messages.-1, messages[2].content,
    /// plan.steps[0].
    #[arg(value_name = "KEY[.PATH]")]
    pub key: String,
    /// The checkpoint whose value is explained (default: the thread's newest).
    #[arg(long, value_name = "ID")]
    pub checkpoint: Option<String>,
    /// Checkpoint namespace (subgraphs: "node:task_id", nested with "|").
    #[arg(long, default_value = "", value_name = "NS")]
    pub ns: String,
    #[command(flatten)]
    pub out: Output,
}

#[derive(Args, Debug)]
pub struct CallsArgs {
    /// Thread id (required with --drop unless --all).
    #[arg(
        long,
        short = 't',
        value_name = "THREAD",
        required_unless_present = "all"
    )]
    pub thread: Option<String>,
    /// Only the calls of this task (its id; a subgraph task's calls count as its parent's too).
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
    /// Every thread (with --drop / --export).
    #[arg(long, conflicts_with = "thread")]
    pub all: bool,
    /// Write the thread's recordings to a new file FILE (put it beside a copy of the checkpoint
    /// file as FILE.superstep-calls.sqlite to replay the thread there).
    #[arg(long, value_name = "FILE", conflicts_with = "drop")]
    pub export: Option<PathBuf>,
    /// Delete the thread's recordings (later runs call the model and tools again).
    #[arg(long)]
    pub drop: bool,
    #[command(flatten)]
    pub out: Output,
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

#[derive(Args, Debug)]
pub struct DuArgs {
    /// Only threads whose id matches this pattern (* and ?).
    #[arg(long, short = 't', value_name = "PATTERN")]
    pub thread: Option<String>,
    /// Threads and channels listed (largest first).
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub top: usize,
    /// Also each table's size with its indexes (SQLite's dbstat: reads every page).
    #[arg(long)]
    pub tables: bool,
    /// The DeltaChannel cadence the savings estimate assumes.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub snapshot_frequency: u64,
    #[command(flatten)]
    pub out: Output,
}

#[derive(Args, Debug)]
pub struct PruneArgs {
    /// Keep the newest N checkpoints of each thread (and namespace); at least 1.
    #[arg(long, value_name = "N")]
    pub keep: Option<usize>,
    /// Keep every fork tip (the last checkpoint of each branch time travel left).
    #[arg(long)]
    pub keep_fork_tips: bool,
    /// Drop only checkpoints older than this: a date (2025-01-31), a UTC time
    /// (2025-01-31T12:00:00Z) or an age (90m, 12h, 30d, 2w).
    #[arg(long, value_name = "WHEN")]
    pub older_than: Option<String>,
    /// Only threads whose id matches (* and ?; repeatable).
    #[arg(long, short = 't', value_name = "PATTERN")]
    pub thread: Vec<String>,
    /// Delete these threads whole (* and ?; repeatable); a parked thread is kept.
    #[arg(long, value_name = "PATTERN")]
    pub delete_thread: Vec<String>,
    /// Delete for real (one transaction); without it nothing is written.
    #[arg(long)]
    pub yes: bool,
    /// After deleting, VACUUM (SQLite: the file shrinks; Postgres: the space is reusable).
    #[arg(long, requires = "yes")]
    pub vacuum: bool,
    #[command(flatten)]
    pub out: Output,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Only threads whose id matches this pattern (* and ?).
    #[arg(long, short = 't', value_name = "PATTERN")]
    pub thread: Option<String>,
    /// Only threads parked on an interrupt or a breakpoint.
    #[arg(long)]
    pub parked: bool,
    #[command(flatten)]
    pub out: Output,
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

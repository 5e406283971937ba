//! Command line (clap derive), self-contained.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "superstep",
    version,
    about = "A terminal debugger for LangGraph graphs and their SqliteSaver checkpoint files",
    long_about = "superstep opens LangGraph SqliteSaver checkpoint databases (read-only) and shows what \
LangGraph's get_state / get_state_history would show: values, next tasks, interrupts, pending writes.\n\n\
Without a subcommand it inspects --db (or the embedded demo database)."
)]
pub struct Cli {
    /// Checkpoint database to open (read-only). Default: the embedded demo database.
    #[arg(long, global = true, value_name = "FILE")]
    pub db: Option<PathBuf>,
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
    #[command(flatten)]
    pub out: Output,
}

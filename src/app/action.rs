//! What can happen to the TUI (`Action`) and what the TUI asks the outside world to do (`Effect`).
//!
//! Keys resolve to Actions through the keymap; Effects are run by `effects::Runtime`, which turns
//! their results back into Actions. `update` is the only place either is interpreted.

use super::state::{Pane, ThreadRow};
use crate::snapshot::Snapshot;
use crate::source::Breakpoints;
use crate::source::StepReport;
use rmpv::Value;
use serde_json::Value as Json;

/// A key edit inside a text field.
#[derive(Debug, Clone, PartialEq)]
pub enum InputKey {
    Char(char),
    Backspace,
    Delete,
    Left,
    Right,
    Home,
    End,
    /// Ctrl-U: clear the field.
    Clear,
}

#[derive(Debug, Clone)]
pub enum Action {
    // ---- from keys --------------------------------------------------------------------------
    Quit,
    /// LangGraph's store items (`None`: the DB has no store), for the Store view.
    StoreLoaded {
        prefix: Option<Vec<String>>,
        items: Option<Vec<crate::store::items::Item>>,
    },
    /// The context later runs get, as the graph's `context_schema` made it.
    ContextSet(crate::source::ContextInUse),
    /// Another process wrote to the DB (live refresh, checked between key presses).
    ExternalChange,
    /// `?`: the help overlay generated from the keymap.
    Help,
    /// Esc: close a modal, else clear the count prefix, search highlights and message.
    Cancel,
    /// A digit of a count prefix (`3n`).
    Digit(u8),
    FocusNext,
    FocusPrev,
    Focus(Pane),
    Up,
    Down,
    Top,
    Bottom,
    PageUp,
    PageDown,
    /// Enter in a pane: the full value / details of the selected row.
    Open,
    Step,
    /// `S`: one superstep, pausing inside any subgraph it runs (after that subgraph's first
    /// superstep).
    StepInto,
    Continue,
    ToggleBreakBefore,
    ToggleBreakAfter,
    OpenResume,
    OpenTimeTravel,
    OpenUpdate,
    OpenNewThread,
    /// `M`: a follow-up turn on the current thread (the text of a human message, or the input).
    OpenTurn,
    /// `R`: import the graph's code again after an edit, keeping the thread.
    Reload,
    /// The code was reloaded: the graph as it is now.
    Reloaded {
        graph: Box<super::state::GraphInfo>,
        text: String,
    },
    OpenThreadPicker,
    OpenSearch,
    OpenCommand,
    /// `s`: show the subgraph namespace of the selected (or only) subgraph task.
    EnterSubgraph,
    /// Backspace: back to the parent namespace.
    LeaveSubgraph,
    /// Next / previous match of the thread-wide search.
    SearchNext,
    SearchPrev,
    /// Enter in a modal.
    Submit,
    /// `y` in a confirm modal.
    Confirm,
    /// Tab / Shift-Tab inside a modal (next / previous field or interrupt).
    NextField,
    PrevField,
    Input(InputKey),
    /// A `:` command line, already typed (also used by `:` itself on Enter).
    Command(String),
    /// A `/` search query.
    Search(String),
    /// `o`: what the nodes printed or logged (Python graphs), by step, task and attempt.
    OpenOutput,
    /// `R`: the next replay mode (Python graphs: how calls are answered from the recording).
    CycleReplay,
    /// Terminal resized: redraw (the viewer lays its lines out again).
    Resize(u16, u16),
    /// Value viewer: fold / unfold the node under the cursor (on a message: its raw fields).
    ViewerToggle,
    /// Value viewer: fold every top-level node (`true`) or unfold everything.
    ViewerFoldAll(bool),
    /// Value viewer: raw JSON tree <-> readable (conversations, typed leaves).
    ViewerRaw,
    /// Value viewer: message ids, token usage, model metadata.
    ViewerDetails,
    /// Value viewer: `/` type a search.
    ViewerFind,
    /// Value viewer: next (`true`) / previous match.
    ViewerFindStep(bool),
    /// Value viewer: copy the node under the cursor as JSON (or its path) via OSC 52.
    Copy {
        path: bool,
    },
    /// Mark, diff against the mark, provenance, and moving in their views.
    Compare(super::compare::Act),

    // ---- from effects -----------------------------------------------------------------------
    /// The first page of threads (by id), and whether more follow.
    ThreadsLoaded(Vec<ThreadRow>, bool),
    /// Threads after the loaded ones, whether still more follow, and the picker row to land on.
    ThreadsAppended {
        rows: Vec<ThreadRow>,
        more: bool,
        select: Option<usize>,
    },
    ThreadLoaded(Box<ThreadData>),
    CheckpointLoaded(Box<CheckpointData>),
    /// Older checkpoints of the shown history (appended; then History selects row `select`,
    /// `usize::MAX`: the oldest).
    HistoryPage {
        thread: String,
        ns: String,
        entries: Vec<HistoryEntry>,
        more: bool,
        select: Option<usize>,
    },
    /// Matches of a thread-wide search, newest checkpoint first.
    SearchResults {
        query: String,
        hits: Vec<ThreadHit>,
        searched: usize,
    },
    /// A run was begun and is still going (a Python graph's step): show a spinner, keep
    /// answering keys, Esc cancels.
    RunStarted(String),
    /// Time goes by while a run is in progress (milliseconds since it started).
    RunTick {
        ms: u64,
        /// The nodes of the superstep running now (empty: not known).
        nodes: Vec<String>,
    },
    /// What was printed outside a run's supersteps (a new thread's start: the module's import).
    NodeOutput(Vec<crate::source::TaskOutput>),
    /// The engine ran: what it did, step by step.
    Ran(Box<RunResult>),
    /// update_state wrote `checkpoint` (as `as_node`).
    StateUpdated {
        checkpoint: String,
        as_node: String,
    },
    /// An engine or store error, with an explanation of what it means for the user.
    Failed {
        error: String,
        hint: String,
    },
    /// A plain informational message from an effect.
    Info(String),
    /// A diff or a provenance read (or why it could not be).
    CompareLoaded(super::compare::Loaded),
    /// `:du`: where the store's bytes go (the store doctor's report).
    StoreMeasured(Box<crate::doctor::sizes::Du>),
}

/// One checkpoint of a thread's history, as the history pane needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryEntry {
    pub id: String,
    pub parent: Option<String>,
    pub step: i64,
    pub source: String,
    pub next: Vec<String>,
    /// Names of tasks with a pending interrupt.
    pub interrupted: Vec<String>,
    /// `(id, node, value)` of interrupts still waiting for an answer.
    pub pending: Vec<(String, String, Json)>,
    /// `(node, error)` of tasks that failed.
    pub errored: Vec<(String, String)>,
    pub created_at: String,
}

/// One match of a thread-wide search: a value or a pending write of a checkpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadHit {
    pub checkpoint: String,
    pub step: i64,
    pub pane: Pane,
    /// The value's key, or the write's `node channel idx`.
    pub label: String,
}

/// A thread's history (newest first) and the checkpoint to select in it.
#[derive(Debug, Clone)]
pub struct ThreadData {
    pub thread: String,
    /// Checkpoint namespace (`""`: the root graph; `node:task_id` a subgraph's).
    pub ns: String,
    /// The newest page of the history.
    pub history: Vec<HistoryEntry>,
    /// Older checkpoints exist beyond the loaded ones (loaded page by page as you scroll).
    pub more: bool,
    pub selected: CheckpointData,
}

/// One checkpoint as a StateSnapshot plus its parent's values (for the diff).
#[derive(Debug, Clone)]
pub struct CheckpointData {
    pub snapshot: Snapshot,
    pub parent_values: Option<Vec<(String, Value)>>,
    /// The recorded model and tool calls of its tasks (Python graphs).
    pub calls: Vec<crate::replay::CallRow>,
}

/// Why an engine run was started (shown in the re-execution view).
#[derive(Debug, Clone, PartialEq)]
pub enum RunKind {
    Step(u32),
    Continue,
    Resume,
    TimeTravel,
}

#[derive(Debug, Clone)]
pub struct RunResult {
    pub kind: RunKind,
    pub thread: String,
    pub reports: Vec<StepReport>,
    /// The checkpoint a time travel landed on (the fork).
    pub landed: Option<String>,
    /// What the nodes printed or logged (Python graphs).
    pub output: Vec<crate::source::TaskOutput>,
    /// The model and tool calls the nodes made (Python graphs).
    pub calls: Vec<crate::replay::Call>,
}

/// The answer(s) of a resume.
#[derive(Debug, Clone, PartialEq)]
pub enum ResumeArg {
    /// `Command(resume=v)`: the one pending interrupt.
    Plain(Json),
    /// `Command(resume={id: v, ...})`: by interrupt id; partial answers allowed.
    ById(Vec<(String, Json)>),
}

/// Work for the runtime: read the store, or drive the engine.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// `:du`: add the store's sizes up (`superstep du`).
    MeasureStore,
    /// Pick the thread to show at start-up (and, in debug mode with `create`, start one with
    /// the spec's input when none can move).
    Startup {
        thread: Option<String>,
        create: bool,
    },
    LoadThreads,
    /// Threads after `after` (the last loaded): one more page, or all of them; then the
    /// picker lands on `select`.
    LoadMoreThreads {
        after: String,
        all: bool,
        select: Option<usize>,
    },
    /// Load a thread's history and select `select` (default: the newest checkpoint).
    OpenThread {
        thread: String,
        ns: String,
        select: Option<String>,
    },
    LoadCheckpoint {
        thread: String,
        ns: String,
        id: String,
        latest: bool,
    },
    /// Older history strictly before `before`: at least `rows` (at least a page; `None`:
    /// everything), then select History row `select`.
    LoadHistory {
        thread: String,
        ns: String,
        before: String,
        rows: Option<usize>,
        select: Option<usize>,
    },
    /// Search the values and pending writes of these checkpoints for `query`.
    SearchThread {
        thread: String,
        ns: String,
        query: String,
        checkpoints: Vec<String>,
    },
    /// Step `n` supersteps (stopping at a pause).
    Step {
        thread: String,
        n: u32,
        breaks: Breaks,
    },
    /// Run to the next pause.
    Continue {
        thread: String,
        breaks: Breaks,
    },
    /// Answer interrupts and run the re-executed step.
    Resume {
        thread: String,
        answer: ResumeArg,
        breaks: Breaks,
    },
    /// Replay from an older checkpoint: LangGraph writes a fork and runs from it.
    TimeTravel {
        thread: String,
        /// The namespace `checkpoint` lives in (`""`: the root; a subgraph's: LangGraph's run
        /// from that subgraph checkpoint's config).
        ns: String,
        checkpoint: String,
        breaks: Breaks,
    },
    UpdateState {
        thread: String,
        /// `""`: the root graph; a subgraph's namespace: its own update_state.
        ns: String,
        checkpoint: Option<String>,
        values: Json,
        as_node: Option<String>,
    },
    NewThread {
        thread: String,
        input: Json,
    },
    /// Read a diff or a provenance.
    Compare(super::compare::Job),
    /// Import the graph's code again; then show `thread` (if any) with the new topology.
    Reload {
        thread: Option<String>,
    },
    /// Stop the run in progress (Esc / Ctrl-C while a node runs).
    CancelRun,
    /// `:store [NAMESPACE]`: LangGraph's store items in the DB (in and under the namespace).
    LoadStore {
        prefix: Option<Vec<String>>,
    },
    /// `:context JSON`: the runtime context for every later run (checked first).
    SetContext {
        text: String,
    },
    /// How later runs answer model and tool calls from the recording.
    SetReplay(crate::replay::ReplayMode),
}

/// Breakpoints to run with (they are run configuration, not stored in the DB).
#[derive(Debug, Clone, PartialEq)]
pub struct Breaks {
    pub before: Breakpoints,
    pub after: Breakpoints,
}

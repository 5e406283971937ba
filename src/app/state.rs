//! The TUI model. Everything the screen shows is here, already derived (rows, previews, diffs),
//! so rendering is a pure function of this struct.

use super::action::HistoryEntry;
use crate::snapshot::{Snapshot, WriteKind};
use crate::source::Breakpoints;
use serde_json::Value as Json;
use std::collections::{BTreeMap, BTreeSet};

/// Inspect: any SqliteSaver file, read-only. Debug: a graph spec stepped by the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Inspect,
    Debug,
}

/// The panes, in Tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pane {
    Graph,
    History,
    State,
    Tasks,
    Writes,
    Interrupts,
}

impl Pane {
    pub const ALL: [Pane; 6] = [
        Pane::Graph,
        Pane::History,
        Pane::State,
        Pane::Tasks,
        Pane::Writes,
        Pane::Interrupts,
    ];
    pub fn index(self) -> usize {
        Pane::ALL.iter().position(|p| *p == self).unwrap_or(0)
    }
    pub fn title(self) -> &'static str {
        match self {
            Pane::Graph => "Graph",
            Pane::History => "History",
            Pane::State => "State",
            Pane::Tasks => "Tasks",
            Pane::Writes => "Pending writes",
            Pane::Interrupts => "Interrupts",
        }
    }
    pub fn next(self) -> Pane {
        Pane::ALL[(self.index() + 1) % Pane::ALL.len()]
    }
    pub fn prev(self) -> Pane {
        Pane::ALL[(self.index() + Pane::ALL.len() - 1) % Pane::ALL.len()]
    }
}

/// A node of the graph pane.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeInfo {
    pub name: String,
    /// Where its edges lead (`?` for a conditional edge without a path map).
    pub successors: Vec<String>,
}

/// Nodes named `inner|ask` are inside subgraphs (a Python graph's: breakpoints on them are set
/// on the subgraph objects); `inner|*` stands for every node of subgraph `inner`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GraphInfo {
    pub name: String,
    pub nodes: Vec<NodeInfo>,
    pub state_keys: Vec<String>,
    /// The spec's `input` (for new threads).
    pub input: Option<Json>,
    /// Without one: an input built from the graph's input schema (`N` proposes it).
    pub input_form: Option<Json>,
    /// Breakpoints compiled into a Python graph: always on, shown fixed.
    pub fixed_before: BreakSet,
    pub fixed_after: BreakSet,
    /// `R` re-imports the graph's code (a Python graph).
    pub reloadable: bool,
    /// State keys whose writes go through a reducer (not plain last values).
    pub reducer_keys: Vec<String>,
}

/// A run in progress (a Python graph's step runs in the bridge while the TUI answers keys).
#[derive(Debug, Clone, PartialEq)]
pub struct Running {
    /// `step`, `continue`, `resume`, `time travel`.
    pub what: String,
    /// Milliseconds since it started (updated between key presses).
    pub elapsed_ms: u64,
    /// Esc / Ctrl-C asked it to stop.
    pub cancelling: bool,
    /// `q` asked it to stop: the TUI quits as soon as it has.
    pub quit_after: bool,
    /// The nodes of the superstep running now (the spinner names them).
    pub nodes: Vec<String>,
}

/// One chunk of what a node printed or logged (Python graphs), with the step it ran in (`-1`:
/// outside any task, e.g. the module's import).
#[derive(Debug, Clone, PartialEq)]
pub struct OutputLine {
    pub step: i64,
    /// Which execution of its task in this session it came from (the Tasks pane's `re-run #N`;
    /// `0`: outside any task). LangGraph's `attempt` counts retries within one execution.
    pub execution: u32,
    pub out: crate::source::TaskOutput,
}

/// Break-before or break-after: every node (`*`) or a set of nodes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BreakSet {
    pub all: bool,
    pub nodes: BTreeSet<String>,
}

impl GraphInfo {
    /// The root graph's node names (subgraph nodes, `inner|ask`, left out).
    pub fn root_nodes(&self) -> Vec<String> {
        self.nodes
            .iter()
            .filter(|n| !n.name.contains('|'))
            .map(|n| n.name.clone())
            .collect()
    }

    /// The subgraph paths (`inner`, `inner|child`) with nodes in the pane.
    pub fn subgraph_paths(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for n in &self.nodes {
            if let Some((p, _)) = n.name.rsplit_once('|') {
                if !out.iter().any(|x| x == p) {
                    out.push(p.to_string());
                }
            }
        }
        out
    }
}

impl BreakSet {
    pub fn from_spec(b: &Breakpoints) -> BreakSet {
        match b {
            Breakpoints::None => BreakSet::default(),
            Breakpoints::All => BreakSet {
                all: true,
                nodes: BTreeSet::new(),
            },
            Breakpoints::Nodes(n) => BreakSet {
                all: false,
                nodes: n.iter().cloned().collect(),
            },
        }
    }
    /// `*` covers the root graph's nodes; a node inside a subgraph (`inner|ask`) only by its
    /// own entry or its subgraph's `inner|*` (LangGraph's runtime `*` does not reach subgraphs).
    pub fn matches(&self, node: &str) -> bool {
        match node.rsplit_once('|') {
            None => self.all || self.nodes.contains(node),
            Some((path, _)) => {
                self.nodes.contains(node) || self.nodes.contains(&format!("{path}|*"))
            }
        }
    }
    pub fn to_engine(&self) -> Breakpoints {
        if self.all {
            Breakpoints::All
        } else if self.nodes.is_empty() {
            Breakpoints::None
        } else {
            Breakpoints::Nodes(self.nodes.iter().cloned().collect())
        }
    }
    pub fn is_empty(&self) -> bool {
        !self.all && self.nodes.is_empty()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ThreadRow {
    pub id: String,
    pub checkpoints: i64,
    pub latest: String,
}

/// How a value differs from the parent checkpoint's.
#[derive(Debug, Clone, PartialEq)]
pub enum Diff {
    Same,
    Added,
    Changed {
        was: String,
        /// How a conversation changed (`+2 messages (AI tool_call search, Tool result)`), said
        /// instead of the old value.
        delta: Option<String>,
    },
    Removed,
    /// No parent checkpoint to compare with.
    NoParent,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ValueRow {
    pub key: String,
    pub view: Json,
    pub preview: String,
    pub diff: Diff,
    /// The parent's value (for the viewer).
    pub was: Option<Json>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskStatus {
    Pending,
    Interrupted,
    Error,
    Done,
}

impl TaskStatus {
    pub fn label(self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::Interrupted => "interrupted",
            TaskStatus::Error => "error",
            TaskStatus::Done => "done",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct TaskRow {
    pub id: String,
    pub name: String,
    pub status: TaskStatus,
    /// Result or error preview.
    pub detail: String,
    pub view: Json,
    /// The checkpoint namespace of a subgraph task (its own checkpoints live there).
    pub ns: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WriteView {
    pub task_id: String,
    pub node: String,
    pub idx: i64,
    pub channel: String,
    pub kind: WriteKind,
    pub preview: String,
    pub view: Json,
}

#[derive(Debug, Clone, PartialEq)]
pub struct InterruptRow {
    pub id: String,
    pub node: String,
    pub task_id: String,
    pub value: Json,
    pub preview: String,
    pub pending: bool,
    /// The stored answer (the task's RESUME write), when answered.
    pub answer: Option<Json>,
}

/// The selected checkpoint, derived for display.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointView {
    pub snapshot: Snapshot,
    /// It is the thread's newest checkpoint (shown as `get_state` shows it).
    pub latest: bool,
    pub values: Vec<ValueRow>,
    pub tasks: Vec<TaskRow>,
    pub writes: Vec<WriteView>,
    pub interrupts: Vec<InterruptRow>,
    /// The recorded model and tool calls of its tasks (Python graphs; the task view lists them).
    pub calls: Vec<crate::replay::CallRow>,
}

/// Why the thread is paused, as the status line says it.
#[derive(Debug, Clone, PartialEq)]
pub enum PauseView {
    Before(Vec<String>),
    After(Vec<String>),
    Interrupt(Vec<String>),
    Error(String, String),
    Done,
    RecursionLimit(i64),
    /// Not paused by anything: these nodes run next.
    Ready(Vec<String>),
    /// No thread / no checkpoint.
    Empty,
}

impl PauseView {
    pub fn describe(&self) -> String {
        match self {
            PauseView::Before(n) => format!("paused before {}", n.join(", ")),
            PauseView::After(n) => format!("paused after {}", n.join(", ")),
            PauseView::Interrupt(n) => format!("interrupt in {}", n.join(", ")),
            PauseView::Error(n, e) => format!("error in {n}: {e}"),
            PauseView::Done => "done".into(),
            PauseView::RecursionLimit(n) => format!("recursion limit {n} reached"),
            PauseView::Ready(n) => format!("ready: next {}", n.join(", ")),
            PauseView::Empty => "no checkpoint".into(),
        }
    }
}

/// What one `interrupt()` call did during the last run.
#[derive(Debug, Clone, PartialEq)]
pub enum CallView {
    /// Returned an answer the task already held.
    Replayed { index: usize, answer: String },
    /// Consumed the plain `Command(resume=...)` value.
    Resumed { index: usize, answer: String },
    /// Raised: the node paused here.
    Raised {
        index: usize,
        id: String,
        payload: String,
    },
}

/// The payload a human answered differs from the payload the node produced on re-execution.
#[derive(Debug, Clone, PartialEq)]
pub struct Drift {
    pub node: String,
    pub interrupt_id: String,
    pub index: usize,
    pub answered: Json,
    pub now: Json,
    pub answer: Json,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TaskRunView {
    pub id: String,
    pub name: String,
    pub outcome: String,
    pub attempts: u32,
    /// Which execution of this task this was in the session (1 = first run).
    pub execution: u32,
    pub calls: Vec<CallView>,
    /// `(effect, count in this execution, count over the session for this task)`.
    pub effects: Vec<(String, u32, u32)>,
    pub drift: Vec<Drift>,
    /// What the node printed or logged in this execution: `(attempt, stream, text)`.
    pub output: Vec<(u32, String, String)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StepView {
    pub step: i64,
    pub checkpoint: Option<String>,
    /// Why the run stopped at this step, if it did.
    pub pause: Option<PauseView>,
    pub tasks: Vec<TaskRunView>,
}

/// The last engine run: the re-execution view.
#[derive(Debug, Clone, PartialEq)]
pub struct RunView {
    pub what: String,
    pub steps: Vec<StepView>,
    pub pause: Option<PauseView>,
}

impl RunView {
    pub fn drifts(&self) -> impl Iterator<Item = &Drift> {
        self.steps
            .iter()
            .flat_map(|s| s.tasks.iter().flat_map(|t| t.drift.iter()))
    }
}

/// A one-line text field with a cursor (in chars).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TextInput {
    pub text: String,
    pub cursor: usize,
    /// The text is a proposal (the New-thread dialog's `t1` and `{}`), shown selected: the first
    /// character typed replaces it, Backspace / Delete clear it, a cursor key keeps it to edit.
    pub proposed: bool,
}

impl TextInput {
    pub fn new(s: &str) -> TextInput {
        TextInput {
            text: s.to_string(),
            cursor: s.chars().count(),
            proposed: false,
        }
    }

    /// A proposed text: typing replaces it (see [`TextInput::proposed`]).
    pub fn proposal(s: &str) -> TextInput {
        TextInput {
            proposed: !s.is_empty(),
            ..TextInput::new(s)
        }
    }
    fn byte(&self, c: usize) -> usize {
        self.text
            .char_indices()
            .nth(c)
            .map(|(i, _)| i)
            .unwrap_or(self.text.len())
    }
    pub fn edit(&mut self, k: &super::action::InputKey) {
        use super::action::InputKey::*;
        if std::mem::take(&mut self.proposed) && matches!(k, Char(_) | Backspace | Delete) {
            self.text.clear();
            self.cursor = 0;
            if !matches!(k, Char(_)) {
                return;
            }
        }
        let n = self.text.chars().count();
        match k {
            Char(c) => {
                let b = self.byte(self.cursor);
                self.text.insert(b, *c);
                self.cursor += 1;
            }
            Backspace if self.cursor > 0 => {
                let b = self.byte(self.cursor - 1);
                self.text.remove(b);
                self.cursor -= 1;
            }
            Delete if self.cursor < n => {
                let b = self.byte(self.cursor);
                self.text.remove(b);
            }
            Left => self.cursor = self.cursor.saturating_sub(1),
            Right => self.cursor = (self.cursor + 1).min(n),
            Home => self.cursor = 0,
            End => self.cursor = n,
            Clear => {
                self.text.clear();
                self.cursor = 0;
            }
            _ => {}
        }
    }
}

/// Live JSON validation of an editor: `Ok(None)` when empty.
pub fn check_json(text: &str) -> Result<Option<Json>, String> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    serde_json::from_str::<Json>(text)
        .map(Some)
        .map_err(|e| format!("invalid JSON: {e}"))
}

/// Whether a typed text is meant as JSON (starts like an object, array, string, number or
/// literal, or is a literal being typed: `tru`); a bare word is not.
pub fn looks_like_json(t: &str) -> bool {
    let t = t.trim();
    let c = t.chars().next().unwrap_or(' ');
    matches!(c, '{' | '[' | '"' | '-' | '0'..='9')
        || (!t.is_empty() && ["null", "true", "false"].iter().any(|l| l.starts_with(t)))
}

/// A resume answer as typed: JSON, or — for a bare word or phrase that is not JSON (`yes`,
/// `ship it`) — that text as a JSON string, which is what the user meant (the editor says so
/// before it is sent). `Ok(None)` when empty; the bool says the text was taken as a string.
pub fn resume_answer(text: &str) -> Result<Option<(Json, bool)>, String> {
    match check_json(text) {
        Ok(v) => Ok(v.map(|v| (v, false))),
        Err(_) if !looks_like_json(text) => Ok(Some((Json::String(text.trim().to_string()), true))),
        Err(e) => Err(e),
    }
}

/// One pending interrupt in the resume editor, with its own answer field.
#[derive(Debug, Clone, PartialEq)]
pub struct ResumeItem {
    pub id: String,
    pub node: String,
    pub preview: String,
    pub input: TextInput,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Modal {
    Help {
        scroll: usize,
        /// `:help`: the `:` commands only (`?` shows every key, then the commands).
        commands: bool,
    },
    /// A full value or a detail page: the value viewer (`app::viewer`).
    Viewer(Box<super::viewer::Viewer>),
    /// Time travel: what replaying from `checkpoint` will do; `y` runs it.
    ConfirmTravel {
        checkpoint: String,
        lines: Vec<String>,
    },
    Resume {
        items: Vec<ResumeItem>,
        sel: usize,
        error: Option<String>,
    },
    /// update_state: values (JSON) as if `as_nodes[as_sel]` had returned them.
    Update {
        checkpoint: Option<String>,
        label: String,
        as_nodes: Vec<String>,
        as_sel: usize,
        input: TextInput,
        /// What the proposed values are (`u` starts from the selected key's current value).
        note: String,
        error: Option<String>,
    },
    NewThread {
        name: TextInput,
        input: TextInput,
        /// 0: name, 1: input.
        field: usize,
        error: Option<String>,
    },
    ThreadPicker {
        sel: usize,
    },
    /// `M` on a `messages` graph: the text of the next human message.
    Turn {
        input: TextInput,
        error: Option<String>,
    },
    /// `:` command line.
    Command {
        input: TextInput,
    },
    /// `/` search.
    Search {
        input: TextInput,
    },
    /// `d`: the selected checkpoint against the mark.
    Diff(Box<super::compare::DiffView>),
    /// `w`: the writes that produced a key.
    Why(Box<super::compare::WhyView>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warn,
    Error,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub level: Level,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SearchState {
    pub query: String,
    /// `(pane, row)` of every hit in the selected checkpoint, values first.
    pub hits: Vec<(Pane, usize)>,
    pub pos: usize,
    /// Every match in the loaded checkpoints of the thread, newest first (`None`: not searched yet).
    pub thread_hits: Option<Vec<super::action::ThreadHit>>,
    /// The thread-wide match shown (`]` / `[` move it).
    pub tpos: usize,
    /// How many checkpoints were searched.
    pub searched: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AppState {
    pub mode: Mode,
    /// File name of the DB (the full path is in the help overlay).
    pub db_label: String,
    pub db_path: String,
    /// The spec file, in debug mode.
    pub graph_label: Option<String>,
    pub graph: GraphInfo,
    pub breaks_before: BreakSet,
    pub breaks_after: BreakSet,
    pub threads: Vec<ThreadRow>,
    /// More threads than [`crate::app::effects::THREAD_LIMIT`] exist after `threads` (paged in
    /// as the picker's cursor gets there).
    pub threads_more: bool,
    pub thread: Option<String>,
    /// `-t NAME` when it names no thread yet: `N` proposes it.
    pub wanted_thread: Option<String>,
    /// The checkpoint namespace shown (`""`: the root graph).
    pub ns: String,
    /// Parent namespaces entered from, with the checkpoint selected there (Backspace returns).
    pub ns_stack: Vec<(String, String)>,
    /// Newest first.
    pub history: Vec<HistoryEntry>,
    /// Tree glyphs of each history row (forks in their own lane).
    pub history_graph: Vec<String>,
    /// Older checkpoints exist than the loaded ones (loaded page by page on scrolling).
    pub history_more: bool,
    pub current: Option<CheckpointView>,
    pub focus: Pane,
    /// Selected row per pane (indexed by `Pane::index`).
    pub sel: [usize; 6],
    pub modal: Option<Modal>,
    pub message: Option<Message>,
    pub count: Option<u32>,
    pub search: Option<SearchState>,
    pub run: Option<RunView>,
    /// The model and tool calls of the last run (Python graphs): the status line counts them.
    pub last_calls: crate::replay::Counts,
    /// How the next runs answer calls from the recording (`R` cycles it).
    pub replay: crate::replay::ReplayMode,
    /// Why the last run stopped (cleared when the thread changes other ways).
    pub run_pause: Option<PauseView>,
    /// Said after the next run (e.g. why a breakpoint did not fire).
    pub run_note: Option<String>,
    /// Every interrupt payload shown so far, by interrupt id (for approval-drift checks).
    pub seen_interrupts: BTreeMap<String, Json>,
    /// Executions per task id in this session.
    pub executions: BTreeMap<String, u32>,
    /// Effects per (task id, effect name) in this session.
    pub effect_totals: BTreeMap<(String, String), u32>,
    /// Live refreshes so far (another process wrote to the DB).
    pub refreshes: u64,
    /// Terminal size (columns, rows): the viewer lays its lines out for it.
    pub size: (u16, u16),
    /// Text to put on the system clipboard (OSC 52); the terminal loop sends and clears it.
    pub clipboard: Option<String>,
    pub quit: bool,
    /// A run in progress (`None`: idle).
    pub running: Option<Running>,
    /// Every node output captured this session (Python graphs), oldest first; `o` shows it.
    pub output: Vec<OutputLine>,
    /// Mark, watches, break-when (`app::compare`).
    pub compare: super::compare::CompareState,
    /// The runtime context runs get (a Python graph with a `context_schema`, or one given);
    /// `Err`: why runs wait for `:context`.
    pub context: Option<Result<crate::source::ContextInUse, String>>,
}

impl AppState {
    pub fn new(mode: Mode, db_path: &str, graph_label: Option<String>, graph: GraphInfo) -> Self {
        let db_label = std::path::Path::new(db_path)
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| db_path.to_string());
        AppState {
            mode,
            db_label,
            db_path: db_path.to_string(),
            graph_label,
            graph,
            breaks_before: BreakSet::default(),
            breaks_after: BreakSet::default(),
            threads: Vec::new(),
            thread: None,
            wanted_thread: None,
            ns: String::new(),
            ns_stack: Vec::new(),
            history: Vec::new(),
            history_graph: Vec::new(),
            history_more: false,
            current: None,
            focus: Pane::History,
            sel: [0; 6],
            modal: None,
            message: None,
            count: None,
            search: None,
            run: None,
            last_calls: Default::default(),
            replay: Default::default(),
            run_pause: None,
            run_note: None,
            seen_interrupts: BTreeMap::new(),
            executions: BTreeMap::new(),
            effect_totals: BTreeMap::new(),
            threads_more: false,
            refreshes: 0,
            size: (120, 40),
            clipboard: None,
            quit: false,
            running: None,
            output: Vec::new(),
            compare: Default::default(),
            context: None,
        }
    }

    /// Columns and rows inside the viewer's frame at the current terminal size.
    pub fn viewer_area(&self) -> (usize, usize) {
        (
            (self.size.0 as usize).saturating_sub(10),
            (self.size.1 as usize).saturating_sub(6),
        )
    }

    pub fn selected(&self, p: Pane) -> usize {
        self.sel[p.index()]
    }

    /// Rows of the graph pane: in debug mode a `*` row (every node) comes first.
    pub fn graph_rows(&self) -> usize {
        self.graph.nodes.len() + usize::from(self.mode == Mode::Debug)
    }

    /// The graph pane's selection: `None` for the `*` row.
    pub fn selected_node(&self) -> Option<&NodeInfo> {
        let i = self.selected(Pane::Graph);
        match self.mode {
            Mode::Debug if i == 0 => None,
            Mode::Debug => self.graph.nodes.get(i - 1),
            Mode::Inspect => self.graph.nodes.get(i),
        }
    }

    pub fn pane_len(&self, p: Pane) -> usize {
        let cur = self.current.as_ref();
        match p {
            Pane::Graph => self.graph_rows(),
            Pane::History => self.history.len(),
            Pane::State => cur.map_or(0, |c| c.values.len()),
            Pane::Tasks => cur.map_or(0, |c| c.tasks.len()),
            Pane::Writes => cur.map_or(0, |c| c.writes.len()),
            Pane::Interrupts => cur.map_or(0, |c| c.interrupts.len()),
        }
    }

    pub fn selected_history(&self) -> Option<&HistoryEntry> {
        self.history.get(self.selected(Pane::History))
    }

    /// Pending interrupts at the newest checkpoint (what a resume answers).
    pub fn pending_interrupts(&self) -> Vec<&InterruptRow> {
        match &self.current {
            Some(c) if c.latest => c.interrupts.iter().filter(|i| i.pending).collect(),
            _ => Vec::new(),
        }
    }

    /// Why the thread is paused: the last run's pause, else what the newest checkpoint shows.
    pub fn pause(&self) -> PauseView {
        if let Some(p) = &self.run_pause {
            return p.clone();
        }
        let Some(h) = self.history.first() else {
            return PauseView::Empty;
        };
        // a task that failed after its interrupt was answered shows the error first
        if let Some((n, e)) = h.errored.first() {
            return PauseView::Error(n.clone(), e.clone());
        }
        if !h.interrupted.is_empty() {
            return PauseView::Interrupt(h.interrupted.clone());
        }
        if h.next.is_empty() {
            return PauseView::Done;
        }
        let before: Vec<String> = h
            .next
            .iter()
            .filter(|n| self.breaks_before.matches(n))
            .cloned()
            .collect();
        if !before.is_empty() && h.source != "input" {
            return PauseView::Before(before);
        }
        PauseView::Ready(h.next.clone())
    }

    /// Whether row `row` of `pane` matches the active search (History: the checkpoint has a match).
    pub fn is_hit(&self, pane: Pane, row: usize) -> bool {
        let Some(st) = &self.search else { return false };
        if pane == Pane::History {
            let Some(h) = self.history.get(row) else {
                return false;
            };
            return st
                .thread_hits
                .as_ref()
                .is_some_and(|t| t.iter().any(|x| x.checkpoint == h.id));
        }
        st.hits.contains(&(pane, row))
    }

    /// The subgraph task whose namespace `s` opens: the selected task if it is one, else the
    /// only/first subgraph task of the checkpoint.
    pub fn subgraph_task(&self) -> Option<&TaskRow> {
        let c = self.current.as_ref()?;
        c.tasks
            .get(self.selected(Pane::Tasks))
            .filter(|t| t.ns.is_some())
            .or_else(|| c.tasks.iter().find(|t| t.ns.is_some()))
    }
}

//! The one key table: (keys, context, action, description). Key resolution, the footer and the
//! `?` help overlay are all generated from it, so help cannot drift from behaviour.

use super::action::{Action, InputKey};
use super::keys::{label, parse_keys, same_key};
use super::state::{AppState, Modal, Mode};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::sync::OnceLock;

/// Where a binding applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ctx {
    /// No modal open.
    Normal,
    Help,
    Viewer,
    /// `/` typed inside the value viewer.
    ViewerFind,
    Confirm,
    Resume,
    Update,
    NewThread,
    /// `M`'s message editor.
    Turn,
    Threads,
    /// `:` and `/` prompts.
    Prompt,
    /// The diff against the mark (`d`).
    Diff,
    /// The provenance of a key (`w`).
    Why,
    /// Text editing keys of every editor (resume, update, new thread, prompts).
    Editing,
}

impl Ctx {
    pub fn title(self) -> &'static str {
        match self {
            Ctx::Normal => "Panes",
            Ctx::Help => "Help",
            Ctx::Viewer => "Value viewer (Enter on a row)",
            Ctx::ViewerFind => "Value viewer search (/)",
            Ctx::Confirm => "Time-travel confirmation",
            Ctx::Resume => "Resume editor (r)",
            Ctx::Update => "Edit state (u)",
            Ctx::NewThread => "New thread (N), or a turn with an input (M)",
            Ctx::Turn => "Follow-up message (M)",
            Ctx::Threads => "Thread picker (T)",
            Ctx::Prompt => "Command line (:) and search (/)",
            Ctx::Diff => "Diff against the mark (m, then d)",
            Ctx::Why => "Provenance of a key (w on a State row)",
            Ctx::Editing => "Text fields",
        }
    }
    fn is_text(self) -> bool {
        matches!(
            self,
            Ctx::Resume | Ctx::Update | Ctx::NewThread | Ctx::Turn | Ctx::Prompt | Ctx::ViewerFind
        )
    }
}

pub struct Binding {
    pub keys: Vec<KeyEvent>,
    pub ctx: Ctx,
    pub action: Action,
    pub desc: &'static str,
    /// Short label for the footer (`None`: help only).
    pub footer: Option<&'static str>,
    /// Only meaningful with a graph spec (debug mode).
    pub debug_only: bool,
}

impl Binding {
    /// `j/↓`, or `0-9` for the count prefix.
    pub fn keys_label(&self) -> String {
        if matches!(self.action, Action::Digit(_)) {
            return "0-9".into();
        }
        self.keys.iter().map(label).collect::<Vec<_>>().join("/")
    }
}

type Row = (
    &'static str,
    Ctx,
    Action,
    &'static str,
    Option<&'static str>,
    bool,
);

#[rustfmt::skip]
fn table() -> Vec<Row> {
    use Action as A;
    use Ctx::*;
    use crate::app::compare::Act;
    vec![
        // ---- panes -------------------------------------------------------------------------
        ("?", Normal, A::Help, "this help", Some("help"), false),
        ("q <C-c>", Normal, A::Quit, "quit", Some("quit"), false),
        ("n", Normal, A::Step, "step one superstep (with a count: 3n steps three)", Some("step"), true),
        ("S", Normal, A::StepInto, "step into: one superstep that pauses inside a subgraph it runs, after the subgraph's own first superstep (Python graphs: a break-after on inner|* set on the subgraph objects)", None, true),
        ("c", Normal, A::Continue, "continue to the next pause (breakpoint, interrupt, error, end)", Some("continue"), true),
        ("r", Normal, A::OpenResume, "resume: answer the pending interrupts (one by one by id when several), then run to the next pause like invoke(Command(resume=...))", Some("resume"), true),
        ("t", Normal, A::OpenTimeTravel, "time travel: replay from the checkpoint selected in History (forks)", Some("travel"), true),
        ("b", Normal, A::ToggleBreakBefore, "toggle break-before on the node selected in Graph (* row: every node)", Some("break"), true),
        ("B", Normal, A::ToggleBreakAfter, "toggle break-after on the node selected in Graph (* row: every node)", None, true),
        ("u", Normal, A::OpenUpdate, "edit state: update_state on the selected checkpoint, with an as_node picker", Some("edit"), true),
        ("N", Normal, A::OpenNewThread, "new thread with an input (an existing thread's name: a new turn on it)", Some("new"), true),
        ("M", Normal, A::OpenTurn, "follow-up turn on this thread: just the text of a human message when the graph's input has messages, else the input form (then n steps it, c runs it)", None, true),
        ("R", Normal, A::Reload, "reload the graph's code after an edit, keeping the thread: the next step runs it (--watch: on every save)", None, true),
        ("T", Normal, A::OpenThreadPicker, "switch thread", Some("threads"), false),
        ("/", Normal, A::OpenSearch, "search values and pending writes of every loaded checkpoint (/ Enter again: next match)", Some("search"), false),
        ("]", Normal, A::SearchNext, "next search match (the checkpoint it is in gets selected)", None, false),
        ("[", Normal, A::SearchPrev, "previous search match", None, false),
        ("m", Normal, A::Compare(Act::Mark), "mark the checkpoint selected in History (again: unmark); d diffs against it", None, false),
        ("d", Normal, A::Compare(Act::Diff), "diff the selected checkpoint against the mark (any thread; side by side when wide)", None, false),
        ("w", Normal, A::Compare(Act::Why), "why: which writes produced the selected State row's key (step, task, node, reducer)", None, false),
        ("P", Normal, A::CycleReplay, "replay mode (Python graphs): diverge → strict → off — model/tool calls from the recording", None, true),
        ("o", Normal, A::OpenOutput, "output: what the nodes printed or logged (Python graphs), by step, task and attempt", None, true),
        ("s", Normal, A::EnterSubgraph, "subgraph: show the namespace of the selected subgraph task (its own checkpoints)", None, false),
        ("<BS>", Normal, A::LeaveSubgraph, "back to the parent namespace", None, false),
        (":", Normal, A::OpenCommand, "command line (:help lists the commands)", Some("cmd"), false),
        ("<Tab> l <Right>", Normal, A::FocusNext, "next pane", None, false),
        ("<S-Tab> h <Left>", Normal, A::FocusPrev, "previous pane", None, false),
        ("j <Down>", Normal, A::Down, "down (with a count: 5j)", None, false),
        ("k <Up>", Normal, A::Up, "up", None, false),
        ("g <Home>", Normal, A::Top, "first row", None, false),
        ("G <End>", Normal, A::Bottom, "last row", None, false),
        ("<PageDown> <C-d>", Normal, A::PageDown, "page down", None, false),
        ("<PageUp> <C-u>", Normal, A::PageUp, "page up", None, false),
        ("<Enter>", Normal, A::Open, "open the selected row: full value, task details, checkpoint", Some("open"), false),
        ("1 2 3 4 5 6 7 8 9 0", Normal, A::Digit(0), "count prefix for n and movement", None, false),
        ("<Esc>", Normal, A::Cancel, "clear count, search and message", None, false),
        // ---- modals ------------------------------------------------------------------------
        ("<Esc> q ?", Help, A::Cancel, "close help", Some("close"), false),
        ("j <Down>", Help, A::Down, "scroll down", None, false),
        ("k <Up>", Help, A::Up, "scroll up", None, false),
        ("<Esc> q", Viewer, A::Cancel, "close", Some("close"), false),
        ("j <Down>", Viewer, A::Down, "down", Some("move"), false),
        ("k <Up>", Viewer, A::Up, "up", None, false),
        ("<PageDown> <C-d>", Viewer, A::PageDown, "page down", None, false),
        ("<PageUp> <C-u>", Viewer, A::PageUp, "page up", None, false),
        ("g <Home>", Viewer, A::Top, "first line", None, false),
        ("G <End>", Viewer, A::Bottom, "last line (a conversation opens there: its newest message)", None, false),
        ("<Enter> z", Viewer, A::ViewerToggle, "fold / unfold the object or array under the cursor; on a message: show its raw fields", Some("fold"), false),
        ("-", Viewer, A::ViewerFoldAll(true), "fold every top-level node", None, false),
        ("+ =", Viewer, A::ViewerFoldAll(false), "unfold everything", None, false),
        ("/", Viewer, A::ViewerFind, "search the value (then n / N)", Some("find"), false),
        ("n", Viewer, A::ViewerFindStep(true), "next match", None, false),
        ("N", Viewer, A::ViewerFindStep(false), "previous match", None, false),
        ("y", Viewer, A::Copy { path: false }, "copy the value under the cursor as JSON (OSC 52: the terminal must allow clipboard writes)", Some("copy"), false),
        ("Y", Viewer, A::Copy { path: true }, "copy the path under the cursor (messages[41].tool_calls[0].args)", None, false),
        ("v", Viewer, A::ViewerRaw, "raw JSON tree / readable (conversations, typed values)", Some("raw"), false),
        ("i", Viewer, A::ViewerDetails, "message ids, tool call ids, token usage, model", Some("ids"), false),
        ("<Enter>", ViewerFind, A::Submit, "search", Some("search"), false),
        ("<Esc>", ViewerFind, A::Cancel, "cancel", Some("cancel"), false),
        ("y <Enter>", Confirm, A::Confirm, "replay from this checkpoint", Some("replay"), false),
        ("n <Esc>", Confirm, A::Cancel, "cancel", Some("cancel"), false),
        ("<Enter>", Resume, A::Submit, "send the filled answers (empty fields stay pending) and run to the next pause", Some("send, run to the next pause"), false),
        ("<Tab> <Down>", Resume, A::NextField, "next interrupt", Some("next interrupt"), false),
        ("<S-Tab> <Up>", Resume, A::PrevField, "previous interrupt", None, false),
        ("<Esc>", Resume, A::Cancel, "cancel", Some("cancel"), false),
        ("<Enter>", Update, A::Submit, "apply update_state", Some("apply"), false),
        ("<Down> <Tab>", Update, A::NextField, "next as_node", Some("as_node"), false),
        ("<Up> <S-Tab>", Update, A::PrevField, "previous as_node", None, false),
        ("<Esc>", Update, A::Cancel, "cancel", Some("cancel"), false),
        ("<Enter>", NewThread, A::Submit, "create the thread (writes its input checkpoint)", Some("create"), false),
        ("<Tab> <S-Tab> <Up> <Down>", NewThread, A::NextField, "switch field (name / input)", Some("field"), false),
        ("<Esc>", NewThread, A::Cancel, "cancel", Some("cancel"), false),
        ("<Enter>", Turn, A::Submit, "send it: the turn's input checkpoint is written (n steps it, c runs it)", Some("send"), false),
        ("<Esc>", Turn, A::Cancel, "cancel", Some("cancel"), false),
        ("<Enter>", Threads, A::Submit, "open the thread", Some("open"), false),
        ("j <Down>", Threads, A::Down, "down", None, false),
        ("k <Up>", Threads, A::Up, "up", None, false),
        ("g <Home>", Threads, A::Top, "first thread", None, false),
        ("G <End>", Threads, A::Bottom, "last thread (loads every page of a long list)", None, false),
        ("<Esc> q", Threads, A::Cancel, "cancel", Some("cancel"), false),
        ("<Esc> q", Diff, A::Cancel, "close", Some("close"), false),
        ("j <Down>", Diff, A::Compare(Act::Scroll(1)), "scroll down", Some("scroll"), false),
        ("k <Up>", Diff, A::Compare(Act::Scroll(-1)), "scroll up", None, false),
        ("<PageDown> <C-d>", Diff, A::Compare(Act::Scroll(10)), "page down", None, false),
        ("<PageUp> <C-u>", Diff, A::Compare(Act::Scroll(-10)), "page up", None, false),
        ("g <Home>", Diff, A::Compare(Act::Scroll(i64::MIN)), "first row", None, false),
        ("G <End>", Diff, A::Compare(Act::Scroll(i64::MAX)), "last row", None, false),
        ("<Esc> q", Why, A::Cancel, "close", Some("close"), false),
        ("j <Down>", Why, A::Compare(Act::Scroll(1)), "next contribution", Some("move"), false),
        ("k <Up>", Why, A::Compare(Act::Scroll(-1)), "previous contribution", None, false),
        ("g <Home>", Why, A::Compare(Act::Scroll(i64::MIN)), "first (oldest) contribution", None, false),
        ("G <End>", Why, A::Compare(Act::Scroll(i64::MAX)), "last contribution (the one that made the value)", None, false),
        ("<Enter>", Why, A::Compare(Act::Go), "select that checkpoint in History", Some("go to checkpoint"), false),
        ("<Enter>", Prompt, A::Submit, "run", Some("run"), false),
        ("<Esc>", Prompt, A::Cancel, "cancel", Some("cancel"), false),
        // ---- text fields -------------------------------------------------------------------
        ("<Left>", Editing, A::Input(InputKey::Left), "cursor left", None, false),
        ("<Right>", Editing, A::Input(InputKey::Right), "cursor right", None, false),
        ("<Home> <C-a>", Editing, A::Input(InputKey::Home), "start of field", None, false),
        ("<End> <C-e>", Editing, A::Input(InputKey::End), "end of field", None, false),
        ("<BS>", Editing, A::Input(InputKey::Backspace), "delete before the cursor", None, false),
        ("<Del>", Editing, A::Input(InputKey::Delete), "delete at the cursor", None, false),
        ("<C-u>", Editing, A::Input(InputKey::Clear), "clear the field", None, false),
    ]
}

/// The bindings, parsed once.
pub fn bindings() -> &'static [Binding] {
    static B: OnceLock<Vec<Binding>> = OnceLock::new();
    B.get_or_init(|| {
        table()
            .into_iter()
            .map(|(keys, ctx, action, desc, footer, debug_only)| Binding {
                keys: parse_keys(keys).expect("keymap notation"),
                ctx,
                action,
                desc,
                footer,
                debug_only,
            })
            .collect()
    })
}

/// The context keys are resolved in.
pub fn context(state: &AppState) -> Ctx {
    match &state.modal {
        None => Ctx::Normal,
        Some(Modal::Help { .. }) => Ctx::Help,
        Some(Modal::Viewer(v)) if v.find.is_some() => Ctx::ViewerFind,
        Some(Modal::Viewer(_)) => Ctx::Viewer,
        Some(Modal::ConfirmTravel { .. }) => Ctx::Confirm,
        Some(Modal::Resume { .. }) => Ctx::Resume,
        Some(Modal::Update { .. }) => Ctx::Update,
        Some(Modal::NewThread { .. }) => Ctx::NewThread,
        Some(Modal::Turn { .. }) => Ctx::Turn,
        Some(Modal::ThreadPicker { .. }) => Ctx::Threads,
        Some(Modal::Command { .. }) | Some(Modal::Search { .. }) => Ctx::Prompt,
        Some(Modal::Diff(_)) => Ctx::Diff,
        Some(Modal::Why(_)) => Ctx::Why,
    }
}

/// Resolve a key to an action in the current context.
pub fn resolve(state: &AppState, key: &KeyEvent) -> Option<Action> {
    let ctx = context(state);
    let find = |c: Ctx| {
        bindings()
            .iter()
            .find(|b| b.ctx == c && b.keys.iter().any(|k| same_key(k, key)))
    };
    if let Some(b) = find(ctx) {
        if let (Action::Digit(_), KeyCode::Char(c)) = (&b.action, key.code) {
            let d = c.to_digit(10)? as u8;
            if d == 0 && state.count.is_none() {
                return None;
            }
            return Some(Action::Digit(d));
        }
        return Some(b.action.clone());
    }
    // Ctrl-C quits from anywhere (its Normal binding is the one listed in help)
    if key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL) {
        return Some(Action::Quit);
    }
    if ctx.is_text() {
        if let Some(b) = find(Ctx::Editing) {
            return Some(b.action.clone());
        }
        if let KeyCode::Char(c) = key.code {
            if !key.modifiers.contains(KeyModifiers::CONTROL) {
                return Some(Action::Input(InputKey::Char(c)));
            }
        }
    }
    None
}

/// `key label` pairs for the footer of the current context.
pub fn footer(state: &AppState) -> Vec<(String, &'static str)> {
    let ctx = context(state);
    let mut out = Vec::new();
    for b in bindings().iter().filter(|b| b.ctx == ctx) {
        let Some(f) = b.footer else { continue };
        if b.debug_only && state.mode == Mode::Inspect {
            continue;
        }
        let keys = match b.action {
            Action::ToggleBreakBefore => "b/B".to_string(),
            _ => b.keys.first().map(label).unwrap_or_default(),
        };
        out.push((keys, f));
    }
    out
}

/// The help overlay: one section per context, every binding with its description.
pub fn help_lines(mode: Mode) -> Vec<(String, String)> {
    let order = [
        Ctx::Normal,
        Ctx::Resume,
        Ctx::Update,
        Ctx::NewThread,
        Ctx::Turn,
        Ctx::Confirm,
        Ctx::Threads,
        Ctx::Prompt,
        Ctx::Diff,
        Ctx::Why,
        Ctx::Editing,
        Ctx::Viewer,
        Ctx::ViewerFind,
        Ctx::Help,
    ];
    let mut out = Vec::new();
    for ctx in order {
        out.push((String::new(), ctx.title().to_string()));
        for b in bindings().iter().filter(|b| b.ctx == ctx) {
            let mut d = b.desc.to_string();
            if b.debug_only && mode == Mode::Inspect {
                d.push_str("  [needs a graph spec]");
            }
            out.push((b.keys_label(), d));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::state::GraphInfo;

    fn key(s: &str) -> KeyEvent {
        parse_keys(s).unwrap()[0]
    }

    #[test]
    fn the_table_parses_and_has_no_duplicate_key_in_a_context() {
        let b = bindings();
        for (i, x) in b.iter().enumerate() {
            for y in &b[i + 1..] {
                if x.ctx != y.ctx {
                    continue;
                }
                for k in &x.keys {
                    assert!(
                        !y.keys.iter().any(|k2| same_key(k, k2)),
                        "{:?} bound twice in {:?}",
                        label(k),
                        x.ctx
                    );
                }
            }
        }
    }

    #[test]
    fn keys_resolve_by_context() {
        let mut s = AppState::new(Mode::Debug, "/tmp/x.sqlite", None, GraphInfo::default());
        assert!(matches!(resolve(&s, &key("n")), Some(Action::Step)));
        assert!(matches!(resolve(&s, &key("3")), Some(Action::Digit(3))));
        assert!(resolve(&s, &key("0")).is_none());
        s.modal = Some(Modal::Command {
            input: Default::default(),
        });
        assert!(matches!(
            resolve(&s, &key("n")),
            Some(Action::Input(InputKey::Char('n')))
        ));
        assert!(matches!(resolve(&s, &key("<Enter>")), Some(Action::Submit)));
        assert!(matches!(
            resolve(&s, &key("<BS>")),
            Some(Action::Input(InputKey::Backspace))
        ));
    }
}

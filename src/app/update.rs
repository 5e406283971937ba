//! `update(&mut AppState, Action) -> Vec<Effect>`: the whole behaviour of the TUI, without IO.

use super::action::{
    Action, Breaks, CheckpointData, Effect, HistoryEntry, ResumeArg, RunKind, RunResult, ThreadData,
};
use super::keymap::help_lines;
use super::state::*;
use crate::engine::interrupts::InterruptCall;
use crate::engine::{Pause, TaskOutcome};
use crate::ids::{interrupt_id, task_ns, NULL_TASK_ID};
use crate::snapshot::{Snapshot, TaskResult, WriteKind};
use crate::value::{to_view, Interrupt, ViewOptions};
use serde_json::Value as Json;

/// The `:` commands (shown by `:help` and the help overlay).
pub const COMMANDS: &[(&str, &str)] = &[
    (":step [N]", "step N supersteps (default 1); also :n"),
    (":continue", "continue to the next pause; also :c"),
    (
        ":resume JSON",
        "Command(resume=JSON) for the one pending interrupt",
    ),
    (
        ":resume ID=JSON ...",
        "answer by interrupt id (or id prefix, or node name); partial allowed",
    ),
    (":resume", "open the resume editor"),
    (
        ":travel [ID]",
        "time travel to checkpoint ID (prefix) or the selected one",
    ),
    (
        ":checkpoint ID",
        "select a checkpoint in History (id prefix or suffix)",
    ),
    (
        ":update [NODE] JSON",
        "update_state with as_node NODE (default: inferred)",
    ),
    (
        ":thread NAME",
        "switch to thread NAME; :threads opens the picker",
    ),
    (
        ":new NAME [JSON]",
        "new thread with input JSON (default: the spec's input)",
    ),
    (
        ":break NODE|*",
        "toggle break-before; :breakafter NODE|* for break-after; :clear",
    ),
    (":search TEXT", "search values and pending writes"),
    (":help", "help"),
    (":quit", "quit; also :q"),
];

const READ_ONLY: &str = "read-only inspect mode: stepping runs the graph's code, which the DB \
does not hold — open the spec with `superstep GRAPH.json --db FILE`";

const PREVIEW: usize = 200;

fn opts() -> ViewOptions {
    ViewOptions::default()
}

/// One-line JSON, cut at `max` characters.
pub fn preview(j: &Json, max: usize) -> String {
    let s = match j {
        Json::String(s) => serde_json::to_string(s).unwrap_or_default(),
        other => serde_json::to_string(other).unwrap_or_default(),
    };
    cut(&s, max)
}

pub fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// Pretty JSON split into lines (for the viewer).
pub fn pretty(j: &Json) -> Vec<String> {
    serde_json::to_string_pretty(j)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// `1f1ee4ae…ea1fd43f2aa2`: uuid6 ids share their time prefix, the node part tells them apart.
pub fn short_id(id: &str) -> String {
    if id.len() == 36 {
        format!("{}…{}", &id[..8], &id[24..])
    } else {
        id.to_string()
    }
}

fn say(s: &mut AppState, level: Level, text: impl Into<String>) {
    s.message = Some(Message {
        level,
        text: text.into(),
    });
}

fn breaks(s: &AppState) -> Breaks {
    Breaks {
        before: s.breaks_before.to_engine(),
        after: s.breaks_after.to_engine(),
    }
}

/// The thread to act on in debug mode, or why there is none.
fn debug_thread(s: &mut AppState) -> Option<String> {
    if s.mode == Mode::Inspect {
        say(s, Level::Warn, READ_ONLY);
        return None;
    }
    if !s.ns.is_empty() {
        let text = format!(
            "viewing subgraph namespace {} (read-only): Backspace returns to the root graph to run it",
            s.ns
        );
        say(s, Level::Warn, text);
        return None;
    }
    match &s.thread {
        Some(t) => Some(t.clone()),
        None => {
            say(
                s,
                Level::Warn,
                "no thread yet: press N to start one with an input",
            );
            None
        }
    }
}

/// Stepping needs the newest checkpoint to have work that is not waiting for a human.
fn can_run(s: &mut AppState) -> bool {
    let Some(h) = s.history.first() else {
        say(
            s,
            Level::Warn,
            "no checkpoint on this thread: press N to start a thread",
        );
        return false;
    };
    if !h.pending.is_empty() {
        let nodes: Vec<&str> = h.pending.iter().map(|(_, n, _)| n.as_str()).collect();
        let text = format!(
            "waiting for a human: interrupt in {} — press r to answer (stepping would only ask again)",
            nodes.join(", ")
        );
        say(s, Level::Warn, text);
        return false;
    }
    if h.next.is_empty() {
        say(
            s,
            Level::Info,
            "done: no task is triggered at the newest checkpoint (t: travel back and fork · N: new thread)",
        );
        return false;
    }
    true
}

/// LangGraph resumes a paused run by marking every channel as seen by `__interrupt__`, so a
/// break-before on the very next nodes does not fire right after a break-after pause.
fn skipped_break_note(s: &AppState) -> Option<String> {
    let Some(PauseView::After(_)) = &s.run_pause else {
        return None;
    };
    let next = &s.history.first()?.next;
    let hit: Vec<&str> = next
        .iter()
        .filter(|n| s.breaks_before.matches(n))
        .map(String::as_str)
        .collect();
    (!hit.is_empty()).then(|| {
        format!(
            "note: break-before {} did not fire — resuming after a pause marks every channel as seen (LangGraph's should_interrupt)",
            hit.join(", ")
        )
    })
}

fn take_count(s: &mut AppState) -> u32 {
    s.count.take().unwrap_or(1).max(1)
}

/// History rows left before the end of what is loaded that fetch the next page.
const HISTORY_PREFETCH: usize = 50;

pub fn update(s: &mut AppState, a: Action) -> Vec<Effect> {
    match a {
        Action::Quit => {
            s.quit = true;
            vec![]
        }
        Action::Help => {
            s.modal = Some(Modal::Help { scroll: 0 });
            vec![]
        }
        Action::Cancel => {
            if s.modal.is_some() {
                s.modal = None;
            } else {
                s.count = None;
                s.search = None;
                s.message = None;
            }
            vec![]
        }
        Action::Digit(d) => {
            let c = s
                .count
                .unwrap_or(0)
                .saturating_mul(10)
                .saturating_add(d as u32);
            s.count = Some(c.min(9999));
            vec![]
        }
        Action::FocusNext => {
            s.count = None;
            s.focus = s.focus.next();
            vec![]
        }
        Action::FocusPrev => {
            s.count = None;
            s.focus = s.focus.prev();
            vec![]
        }
        Action::Focus(p) => {
            s.focus = p;
            vec![]
        }
        Action::Up => move_by(s, -1),
        Action::Down => move_by(s, 1),
        Action::PageUp => move_by(s, -10),
        Action::PageDown => move_by(s, 10),
        Action::Top => move_to(s, 0),
        Action::Bottom => move_to(s, usize::MAX),
        Action::Open => {
            open_selected(s);
            vec![]
        }
        Action::Step => {
            let n = take_count(s);
            let Some(thread) = debug_thread(s) else {
                return vec![];
            };
            if !can_run(s) {
                return vec![];
            }
            s.run_note = skipped_break_note(s);
            vec![Effect::Step {
                thread,
                n,
                breaks: breaks(s),
            }]
        }
        Action::Continue => {
            s.count = None;
            let Some(thread) = debug_thread(s) else {
                return vec![];
            };
            if !can_run(s) {
                return vec![];
            }
            s.run_note = skipped_break_note(s);
            vec![Effect::Continue {
                thread,
                breaks: breaks(s),
            }]
        }
        Action::ToggleBreakBefore | Action::ToggleBreakAfter => {
            let before = matches!(a, Action::ToggleBreakBefore);
            toggle_break(s, before);
            vec![]
        }
        Action::OpenResume => {
            if debug_thread(s).is_none() {
                return vec![];
            }
            let pending = s
                .history
                .first()
                .map(|h| h.pending.clone())
                .unwrap_or_default();
            if pending.is_empty() {
                let why = s.pause().describe();
                say(
                    s,
                    Level::Warn,
                    format!(
                        "nothing to resume: no interrupt is pending at the newest checkpoint ({why}); n/c run past breakpoints and errors"
                    ),
                );
                return vec![];
            }
            s.modal = Some(Modal::Resume {
                items: pending
                    .iter()
                    .map(|(id, node, v)| ResumeItem {
                        id: id.clone(),
                        node: node.clone(),
                        preview: preview(v, PREVIEW),
                        input: TextInput::default(),
                    })
                    .collect(),
                sel: 0,
                error: None,
            });
            vec![]
        }
        Action::OpenTimeTravel => {
            if debug_thread(s).is_none() {
                return vec![];
            }
            if s.focus != Pane::History {
                s.focus = Pane::History;
                say(
                    s,
                    Level::Info,
                    "time travel: pick the checkpoint to replay from with j/k, then press t",
                );
                return vec![];
            }
            let Some(h) = s.selected_history().cloned() else {
                say(s, Level::Warn, "no checkpoint to travel to");
                return vec![];
            };
            let lines = travel_lines(s, &h);
            s.modal = Some(Modal::ConfirmTravel {
                checkpoint: h.id,
                lines,
            });
            vec![]
        }
        Action::OpenUpdate => {
            if debug_thread(s).is_none() {
                return vec![];
            }
            let Some(h) = s.selected_history().cloned() else {
                say(s, Level::Warn, "no checkpoint to update");
                return vec![];
            };
            let latest = s.selected(Pane::History) == 0;
            let mut as_nodes = vec!["(inferred)".to_string()];
            as_nodes.extend(s.graph.nodes.iter().map(|n| n.name.clone()));
            as_nodes.extend(["__input__", "__copy__", "__end__"].map(String::from));
            s.modal = Some(Modal::Update {
                checkpoint: (!latest).then(|| h.id.clone()),
                label: format!(
                    "update_state on step {} ({}) {}{}",
                    h.step,
                    h.source,
                    short_id(&h.id),
                    if latest {
                        " — the newest checkpoint"
                    } else {
                        " — an older checkpoint: forks"
                    }
                ),
                as_nodes,
                as_sel: 0,
                input: TextInput::default(),
                error: None,
            });
            vec![]
        }
        Action::OpenNewThread => {
            if s.mode == Mode::Inspect {
                say(s, Level::Warn, READ_ONLY);
                return vec![];
            }
            let name = (1..)
                .map(|i| format!("t{i}"))
                .find(|n| !s.threads.iter().any(|t| &t.id == n))
                .unwrap_or_default();
            let input = s
                .graph
                .input
                .as_ref()
                .map(|j| serde_json::to_string(j).unwrap_or_default())
                .unwrap_or_else(|| "{}".into());
            s.modal = Some(Modal::NewThread {
                name: TextInput::new(&name),
                input: TextInput::new(&input),
                field: 1,
                error: None,
            });
            vec![]
        }
        Action::OpenThreadPicker => {
            let sel = s
                .thread
                .as_ref()
                .and_then(|t| s.threads.iter().position(|r| &r.id == t))
                .unwrap_or(0);
            s.modal = Some(Modal::ThreadPicker { sel });
            vec![Effect::LoadThreads]
        }
        Action::OpenSearch => {
            s.modal = Some(Modal::Search {
                input: TextInput::default(),
            });
            vec![]
        }
        Action::OpenCommand => {
            s.modal = Some(Modal::Command {
                input: TextInput::default(),
            });
            vec![]
        }
        Action::Input(k) => {
            match &mut s.modal {
                Some(Modal::Resume { items, sel, error }) => {
                    if let Some(it) = items.get_mut(*sel) {
                        it.input.edit(&k);
                    }
                    *error = None;
                }
                Some(Modal::Update { input, error, .. }) => {
                    input.edit(&k);
                    *error = None;
                }
                Some(Modal::NewThread {
                    name,
                    input,
                    field,
                    error,
                }) => {
                    if *field == 0 {
                        name.edit(&k)
                    } else {
                        input.edit(&k)
                    }
                    *error = None;
                }
                Some(Modal::Command { input }) | Some(Modal::Search { input }) => input.edit(&k),
                _ => {}
            }
            vec![]
        }
        Action::NextField | Action::PrevField => {
            let fwd = matches!(a, Action::NextField);
            match &mut s.modal {
                Some(Modal::Resume { items, sel, .. }) if !items.is_empty() => {
                    let n = items.len();
                    *sel = if fwd {
                        (*sel + 1) % n
                    } else {
                        (*sel + n - 1) % n
                    };
                }
                Some(Modal::Update {
                    as_nodes, as_sel, ..
                }) => {
                    let n = as_nodes.len();
                    *as_sel = if fwd {
                        (*as_sel + 1) % n
                    } else {
                        (*as_sel + n - 1) % n
                    };
                }
                Some(Modal::NewThread { field, .. }) => *field = 1 - *field,
                _ => {}
            }
            vec![]
        }
        Action::Submit => submit(s),
        Action::Confirm => {
            if let Some(Modal::ConfirmTravel { checkpoint, .. }) = s.modal.take() {
                let Some(thread) = debug_thread(s) else {
                    return vec![];
                };
                return vec![Effect::TimeTravel {
                    thread,
                    checkpoint,
                    breaks: breaks(s),
                }];
            }
            vec![]
        }
        Action::Command(text) => command(s, &text),
        Action::Search(q) => search(s, &q),
        Action::SearchNext => search_step(s, 1),
        Action::SearchPrev => search_step(s, -1),
        Action::EnterSubgraph => enter_subgraph(s),
        Action::LeaveSubgraph => leave_subgraph(s),
        Action::HistoryPage {
            thread,
            ns,
            entries,
            more,
            select,
        } => {
            if s.thread.as_deref() != Some(thread.as_str()) || s.ns != ns {
                return vec![];
            }
            s.history.extend(entries);
            s.history_more = more;
            s.history_graph = history_lanes(&s.history);
            if let Some(row) = select {
                let keep = s.focus;
                s.focus = Pane::History;
                let row = row.min(s.history.len().saturating_sub(1));
                let out = move_to(s, row);
                s.focus = keep;
                return out;
            }
            vec![]
        }
        Action::SearchResults {
            query,
            hits,
            searched,
        } => {
            if s.search.as_ref().is_none_or(|st| st.query != query) {
                return vec![];
            }
            // start at the selected checkpoint (or the first match older than it)
            let row = s.selected(Pane::History);
            let pos_of = |id: &str| s.history.iter().position(|h| h.id == id);
            let start = hits
                .iter()
                .position(|h| pos_of(&h.checkpoint).is_some_and(|r| r >= row))
                .unwrap_or(0);
            let Some(st) = &mut s.search else {
                return vec![];
            };
            st.thread_hits = Some(hits);
            st.searched = searched;
            st.tpos = start;
            goto_thread_hit(s)
        }
        Action::Resize(..) => vec![],
        Action::ExternalChange => external_change(s),
        Action::ThreadsLoaded(rows) => {
            s.threads = rows;
            if let Some(Modal::ThreadPicker { sel }) = &mut s.modal {
                *sel = (*sel).min(s.threads.len().saturating_sub(1));
            }
            vec![]
        }
        Action::ThreadLoaded(d) => {
            thread_loaded(s, *d);
            vec![]
        }
        Action::CheckpointLoaded(d) => {
            let latest =
                s.history.first().map(|h| h.id.as_str()) == Some(&d.snapshot.checkpoint_id);
            set_current(s, *d, latest);
            vec![]
        }
        Action::Ran(r) => {
            ran(s, *r);
            vec![]
        }
        Action::Failed { error, hint } => {
            let text = if hint.is_empty() {
                error
            } else {
                format!("{error} — {hint}")
            };
            say(s, Level::Error, text);
            vec![]
        }
        Action::StateUpdated {
            checkpoint,
            as_node,
        } => {
            s.run_pause = None;
            say(
                s,
                Level::Info,
                format!(
                    "update_state as {as_node}: new checkpoint {} — n/c run from it",
                    short_id(&checkpoint)
                ),
            );
            vec![]
        }
        Action::Info(t) => {
            say(s, Level::Info, t);
            vec![]
        }
    }
}

// ---- movement -------------------------------------------------------------------------------

fn move_by(s: &mut AppState, delta: i64) -> Vec<Effect> {
    let n = s.count.take().unwrap_or(1).max(1) as i64;
    match &mut s.modal {
        Some(Modal::Help { scroll }) | Some(Modal::Viewer { scroll, .. }) => {
            *scroll = (*scroll as i64 + delta * n).max(0) as usize;
            return vec![];
        }
        Some(Modal::ThreadPicker { sel }) => {
            let len = s.threads.len();
            *sel = ((*sel as i64 + delta * n).max(0) as usize).min(len.saturating_sub(1));
            return vec![];
        }
        Some(_) => return vec![],
        None => {}
    }
    let cur = s.selected(s.focus) as i64;
    move_to(s, (cur + delta * n).max(0) as usize)
}

fn move_to(s: &mut AppState, row: usize) -> Vec<Effect> {
    s.count = None;
    if let Some(Modal::Help { scroll }) | Some(Modal::Viewer { scroll, .. }) = &mut s.modal {
        *scroll = if row == 0 { 0 } else { usize::MAX / 2 };
        return vec![];
    }
    let p = s.focus;
    let len = s.pane_len(p);
    let more = p == Pane::History && s.history_more;
    // past the loaded rows (G, 5000j): load what is needed, then land there
    if more && row >= len {
        if let (Some(t), Some(h)) = (s.thread.clone(), s.history.last()) {
            return vec![Effect::LoadHistory {
                thread: t,
                ns: s.ns.clone(),
                before: h.id.clone(),
                rows: (row != usize::MAX).then(|| row + 1 - len),
                select: Some(row),
            }];
        }
    }
    let row = row.min(len.saturating_sub(1));
    let old = s.sel[p.index()];
    s.sel[p.index()] = row;
    let mut out = Vec::new();
    if p == Pane::History && row != old {
        if let (Some(t), Some(h)) = (s.thread.clone(), s.history.get(row)) {
            out.push(Effect::LoadCheckpoint {
                thread: t,
                ns: s.ns.clone(),
                id: h.id.clone(),
                latest: row == 0,
            });
        }
    }
    // near the end of what is loaded: fetch the next page of older checkpoints
    if more && row + HISTORY_PREFETCH >= len {
        if let (Some(t), Some(h)) = (s.thread.clone(), s.history.last()) {
            out.push(Effect::LoadHistory {
                thread: t,
                ns: s.ns.clone(),
                before: h.id.clone(),
                rows: Some(0),
                select: None,
            });
        }
    }
    out
}

fn clamp_all(s: &mut AppState) {
    for p in Pane::ALL {
        let len = s.pane_len(p);
        let i = p.index();
        s.sel[i] = s.sel[i].min(len.saturating_sub(1));
    }
}

// ---- breakpoints ----------------------------------------------------------------------------

fn toggle_break(s: &mut AppState, before: bool) {
    if s.mode == Mode::Inspect {
        say(
            s,
            Level::Warn,
            "breakpoints are run configuration: they need a graph spec to step (superstep GRAPH.json)",
        );
        return;
    }
    let node = s.selected_node().map(|n| n.name.clone());
    let all: Vec<String> = s.graph.nodes.iter().map(|n| n.name.clone()).collect();
    let set = if before {
        &mut s.breaks_before
    } else {
        &mut s.breaks_after
    };
    let kind = if before {
        "break-before"
    } else {
        "break-after"
    };
    let text = match node {
        None => {
            set.all = !set.all;
            set.nodes.clear();
            format!(
                "{kind} on every node (*): {}",
                if set.all { "on" } else { "off" }
            )
        }
        Some(n) => {
            if set.all {
                set.all = false;
                set.nodes = all.into_iter().filter(|x| *x != n).collect();
            } else if !set.nodes.remove(&n) {
                set.nodes.insert(n.clone());
            }
            format!("{kind} {n}: {}", if set.matches(&n) { "on" } else { "off" })
        }
    };
    say(s, Level::Info, text);
}

// ---- loading --------------------------------------------------------------------------------

/// Git-style lanes for a newest-first history: each checkpoint sits in the lane of its newest
/// child; a fork opens a new lane that joins back (`╯`) where it branched.
pub fn history_lanes(entries: &[HistoryEntry]) -> Vec<String> {
    let mut lanes: Vec<Option<String>> = Vec::new();
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        let mine: Vec<usize> = lanes
            .iter()
            .enumerate()
            .filter(|(_, l)| l.as_deref() == Some(e.id.as_str()))
            .map(|(i, _)| i)
            .collect();
        let col = match mine.first() {
            Some(c) => *c,
            None => match lanes.iter().position(Option::is_none) {
                Some(free) => free,
                None => {
                    lanes.push(None);
                    lanes.len() - 1
                }
            },
        };
        let last_merge = mine.iter().copied().max().unwrap_or(col);
        let mut g = String::new();
        for (i, lane) in lanes.iter().enumerate() {
            let ch = if i == col {
                '●'
            } else if mine.contains(&i) {
                '╯'
            } else if i > col && i < last_merge {
                '─'
            } else if lane.is_some() {
                '│'
            } else {
                ' '
            };
            g.push(ch);
            if i + 1 < lanes.len() {
                g.push(if i >= col && i < last_merge {
                    '─'
                } else {
                    ' '
                });
            }
        }
        for m in &mine {
            lanes[*m] = None;
        }
        lanes[col] = e.parent.clone();
        while lanes.last().is_some_and(Option::is_none) {
            lanes.pop();
        }
        out.push(g.trim_end().to_string());
    }
    out
}

fn thread_loaded(s: &mut AppState, d: ThreadData) {
    if s.thread.as_deref() != Some(d.thread.as_str()) {
        s.run = None;
        s.run_pause = None;
        s.search = None;
        s.ns_stack.clear();
    }
    if s.ns != d.ns {
        // entering a child namespace remembers where we were; going back pops to it
        if d.ns.is_empty() {
            s.ns_stack.clear();
        } else if let Some(i) = s.ns_stack.iter().position(|(n, _)| *n == d.ns) {
            s.ns_stack.truncate(i);
        } else if s.thread.as_deref() == Some(d.thread.as_str()) {
            let here = s
                .selected_history()
                .map(|h| h.id.clone())
                .unwrap_or_default();
            s.ns_stack.push((s.ns.clone(), here));
        }
        s.ns = d.ns.clone();
        s.search = None;
    }
    s.thread = Some(d.thread);
    s.history_graph = history_lanes(&d.history);
    s.history = d.history;
    s.history_more = d.more;
    for h in &s.history {
        for (id, _, v) in &h.pending {
            s.seen_interrupts
                .entry(id.clone())
                .or_insert_with(|| v.clone());
        }
    }
    if s.mode == Mode::Inspect {
        // without a spec, the nodes are the ones the history mentions (oldest first)
        let mut names: Vec<String> = Vec::new();
        for h in s.history.iter().rev() {
            for n in h
                .next
                .iter()
                .chain(h.interrupted.iter())
                .chain(h.errored.iter().map(|(n, _)| n))
            {
                if n != "__start__" && !names.contains(n) {
                    names.push(n.clone());
                }
            }
        }
        s.graph.nodes = names
            .into_iter()
            .map(|name| NodeInfo {
                name,
                successors: Vec::new(),
            })
            .collect();
    }
    let id = d.selected.snapshot.checkpoint_id.clone();
    let row = s.history.iter().position(|h| h.id == id).unwrap_or(0);
    s.sel[Pane::History.index()] = row;
    set_current(s, d.selected, row == 0);
}

fn set_current(s: &mut AppState, d: CheckpointData, latest: bool) {
    let view = checkpoint_view(d, latest);
    for i in &view.interrupts {
        s.seen_interrupts
            .entry(i.id.clone())
            .or_insert_with(|| i.value.clone());
    }
    s.current = Some(view);
    clamp_all(s);
    if let Some(q) = s.search.as_ref().map(|x| x.query.clone()) {
        let pos = s.search.as_ref().map_or(0, |x| x.pos);
        find_hits(s, &q);
        if let Some(x) = &mut s.search {
            x.pos = pos.min(x.hits.len().saturating_sub(1));
        }
        select_local_hit(s);
    }
}

fn node_of(snap: &Snapshot, task_id: &str, task_path: &str) -> String {
    snap.tasks
        .iter()
        .find(|t| t.id == task_id)
        .map(|t| t.name.clone())
        .unwrap_or_else(|| {
            if task_id == NULL_TASK_ID {
                "(input)".into()
            } else if task_path.is_empty() {
                "?".into()
            } else {
                task_path.to_string()
            }
        })
}

/// Derive every row the panes show from a snapshot (and its parent's values for the diff).
pub fn checkpoint_view(d: CheckpointData, latest: bool) -> CheckpointView {
    let snap = d.snapshot;
    let o = opts();
    let mut values: Vec<ValueRow> = Vec::new();
    let parent: Vec<(String, Json)> = d
        .parent_values
        .as_ref()
        .map(|p| p.iter().map(|(k, v)| (k.clone(), to_view(v, o))).collect())
        .unwrap_or_default();
    let by_key: std::collections::HashMap<&str, &Json> =
        parent.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let keys: std::collections::HashSet<&str> =
        snap.values.iter().map(|(k, _)| k.as_str()).collect();
    for (k, v) in &snap.values {
        let view = to_view(v, o);
        let was = by_key.get(k.as_str()).map(|v| (*v).clone());
        let diff = match (&d.parent_values, &was) {
            (None, _) => Diff::NoParent,
            (Some(_), None) => Diff::Added,
            (Some(_), Some(w)) if *w == view => Diff::Same,
            (Some(_), Some(w)) => Diff::Changed {
                was: preview(w, PREVIEW),
            },
        };
        values.push(ValueRow {
            key: k.clone(),
            preview: preview(&view, PREVIEW),
            view,
            diff,
            was,
        });
    }
    for (k, w) in &parent {
        if !keys.contains(k.as_str()) {
            values.push(ValueRow {
                key: k.clone(),
                view: Json::Null,
                preview: String::new(),
                diff: Diff::Removed,
                was: Some(w.clone()),
            });
        }
    }
    let tasks = snap
        .tasks
        .iter()
        .map(|t| {
            let status = if t.error.is_some() && !t.finished {
                TaskStatus::Error
            } else if !t.interrupts.is_empty() && !t.finished {
                TaskStatus::Interrupted
            } else if t.finished {
                TaskStatus::Done
            } else {
                TaskStatus::Pending
            };
            let view = if let Some(e) = &t.error {
                e.view(o)
            } else if let Some(r) = &t.result {
                match r {
                    TaskResult::Return(v) => to_view(v, o),
                    TaskResult::Writes(w) => {
                        Json::Object(w.iter().map(|(k, v)| (k.clone(), to_view(v, o))).collect())
                    }
                }
            } else if !t.interrupts.is_empty() {
                Json::Array(t.interrupts.iter().map(|i| to_view(&i.value, o)).collect())
            } else {
                Json::Null
            };
            let detail = if view.is_null() {
                String::new()
            } else {
                preview(&view, PREVIEW)
            };
            TaskRow {
                id: t.id.clone(),
                name: t.name.clone(),
                status,
                detail,
                view,
                ns: t.state_ns.clone(),
            }
        })
        .collect();
    let pending_ids: Vec<&str> = snap
        .tasks
        .iter()
        .filter(|t| !t.finished)
        .flat_map(|t| t.interrupts.iter().map(|i| i.id.as_str()))
        .collect();
    let mut writes = Vec::new();
    let mut interrupts = Vec::new();
    for p in &snap.pending_writes {
        let node = node_of(&snap, &p.task_id, &p.task_path);
        let view = p.value.view(o);
        let mut pv = preview(&view, PREVIEW);
        if p.kind == WriteKind::Interrupt {
            if let Some(rmpv::Value::Array(items)) = p.value.as_value() {
                let parsed: Vec<Interrupt> =
                    items.iter().filter_map(Interrupt::from_value).collect();
                if !parsed.is_empty() {
                    pv = parsed
                        .iter()
                        .map(|i| {
                            format!(
                                "{} (id {})",
                                preview(&to_view(&i.value, o), 80),
                                &i.id[..i.id.len().min(8)]
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("; ");
                }
                for i in parsed {
                    let answers = snap
                        .pending_writes
                        .iter()
                        .find(|w| w.task_id == p.task_id && w.kind == WriteKind::Resume)
                        .and_then(|w| match w.value.as_value() {
                            Some(rmpv::Value::Array(a)) => Some(a.clone()),
                            Some(v) => Some(vec![v.clone()]),
                            None => None,
                        })
                        .unwrap_or_default();
                    let tns = task_ns(&snap.checkpoint_ns, &node, &p.task_id);
                    let answer = (0..answers.len())
                        .find(|k| interrupt_id(&tns, *k) == i.id)
                        .map(|k| to_view(&answers[k], o));
                    let value = to_view(&i.value, o);
                    interrupts.push(InterruptRow {
                        id: i.id.clone(),
                        node: node.clone(),
                        task_id: p.task_id.clone(),
                        preview: preview(&value, PREVIEW),
                        value,
                        pending: pending_ids.contains(&i.id.as_str()),
                        answer,
                    });
                }
            }
        }
        writes.push(WriteView {
            task_id: p.task_id.clone(),
            node,
            idx: p.idx,
            channel: p.channel.clone(),
            kind: p.kind,
            preview: pv,
            view,
        });
    }
    // pending interrupts without a stored write (e.g. derived) still show
    for t in &snap.tasks {
        for i in &t.interrupts {
            if !interrupts.iter().any(|r| r.id == i.id) {
                let value = to_view(&i.value, o);
                interrupts.push(InterruptRow {
                    id: i.id.clone(),
                    node: t.name.clone(),
                    task_id: t.id.clone(),
                    preview: preview(&value, PREVIEW),
                    value,
                    pending: !t.finished,
                    answer: None,
                });
            }
        }
    }
    CheckpointView {
        snapshot: snap,
        latest,
        values,
        tasks,
        writes,
        interrupts,
    }
}

/// What the history pane needs from a snapshot.
pub fn history_entry(snap: &Snapshot) -> HistoryEntry {
    let o = opts();
    let mut pending = Vec::new();
    let mut interrupted = Vec::new();
    let mut errored = Vec::new();
    for t in &snap.tasks {
        if t.finished {
            continue;
        }
        for i in &t.interrupts {
            pending.push((i.id.clone(), t.name.clone(), to_view(&i.value, o)));
        }
        if !t.interrupts.is_empty() && !interrupted.contains(&t.name) {
            interrupted.push(t.name.clone());
        }
        if let Some(e) = &t.error {
            let msg = match e.view(o) {
                Json::String(s) => s,
                other => preview(&other, 120),
            };
            errored.push((t.name.clone(), msg));
        }
    }
    HistoryEntry {
        id: snap.checkpoint_id.clone(),
        parent: snap.parent_checkpoint_id.clone(),
        step: snap.step,
        source: snap
            .metadata
            .get("source")
            .and_then(|v| v.as_str())
            .unwrap_or("?")
            .to_string(),
        next: snap.next.clone(),
        pending,
        interrupted,
        errored,
        created_at: snap.created_at.clone(),
    }
}

// ---- the engine's reports -------------------------------------------------------------------

pub fn pause_view(p: &Pause) -> PauseView {
    match p {
        Pause::Done => PauseView::Done,
        Pause::Before(n) => PauseView::Before(n.clone()),
        Pause::After(n) => PauseView::After(n.clone()),
        Pause::Interrupt(list) => {
            let mut nodes: Vec<String> = Vec::new();
            for (n, _) in list {
                if !nodes.contains(n) {
                    nodes.push(n.clone());
                }
            }
            PauseView::Interrupt(nodes)
        }
        Pause::Error(n, e) => PauseView::Error(n.clone(), e.clone()),
        Pause::RecursionLimit(n) => PauseView::RecursionLimit(*n),
    }
}

fn ran(s: &mut AppState, r: RunResult) {
    let o = opts();
    let what = match r.kind {
        RunKind::Step(1) => "step".to_string(),
        RunKind::Step(n) => format!("{n} steps"),
        RunKind::Continue => "continue".into(),
        RunKind::Resume => "resume".into(),
        RunKind::TimeTravel => "time travel".into(),
    };
    let mut steps = Vec::new();
    for rep in &r.reports {
        let mut tasks = Vec::new();
        for t in &rep.tasks {
            let reused = t.outcome == TaskOutcome::Reused;
            let execution = if reused {
                s.executions.get(&t.id).copied().unwrap_or(0)
            } else {
                let e = s.executions.entry(t.id.clone()).or_insert(0);
                *e += 1;
                *e
            };
            let tns = task_ns("", &t.name, &t.id);
            let mut calls = Vec::new();
            let mut drift = Vec::new();
            for c in &t.calls {
                match c {
                    InterruptCall::Replayed {
                        index,
                        payload,
                        answer,
                    }
                    | InterruptCall::Resumed {
                        index,
                        payload,
                        answer,
                    } => {
                        let now = to_view(payload, o);
                        let answer = to_view(answer, o);
                        let id = interrupt_id(&tns, *index);
                        if let Some(shown) = s.seen_interrupts.get(&id) {
                            if *shown != now {
                                drift.push(Drift {
                                    node: t.name.clone(),
                                    interrupt_id: id.clone(),
                                    index: *index,
                                    answered: shown.clone(),
                                    now: now.clone(),
                                    answer: answer.clone(),
                                });
                            }
                        }
                        let a = preview(&answer, 80);
                        calls.push(if matches!(c, InterruptCall::Replayed { .. }) {
                            CallView::Replayed {
                                index: *index,
                                answer: a,
                            }
                        } else {
                            CallView::Resumed {
                                index: *index,
                                answer: a,
                            }
                        });
                    }
                    InterruptCall::Raised { index, interrupt } => {
                        let v = to_view(&interrupt.value, o);
                        s.seen_interrupts
                            .entry(interrupt.id.clone())
                            .or_insert_with(|| v.clone());
                        calls.push(CallView::Raised {
                            index: *index,
                            id: interrupt.id.clone(),
                            payload: preview(&v, 80),
                        });
                    }
                }
            }
            let mut effects: Vec<(String, u32, u32)> = Vec::new();
            for e in &t.effects {
                match effects.iter_mut().find(|(n, _, _)| *n == e.name) {
                    Some(x) => x.1 += 1,
                    None => effects.push((e.name.clone(), 1, 0)),
                }
            }
            for (name, n, total) in &mut effects {
                let tot = s
                    .effect_totals
                    .entry((t.id.clone(), name.clone()))
                    .or_insert(0);
                *tot += *n;
                *total = *tot;
            }
            let outcome = match &t.outcome {
                TaskOutcome::Done => "done".to_string(),
                TaskOutcome::Reused => "reused its stored writes (did not run)".to_string(),
                TaskOutcome::Interrupted(i) => {
                    format!("interrupted (id {})", &i.id[..i.id.len().min(8)])
                }
                TaskOutcome::Error(e) => format!("error {e}"),
            };
            tasks.push(TaskRunView {
                id: t.id.clone(),
                name: t.name.clone(),
                outcome,
                attempts: t.attempts,
                execution,
                calls,
                effects,
                drift,
            });
        }
        steps.push(StepView {
            step: rep.step,
            checkpoint: rep.checkpoint.clone(),
            pause: rep.pause.as_ref().map(pause_view),
            tasks,
        });
    }
    let pause = r
        .reports
        .last()
        .and_then(|x| x.pause.as_ref())
        .map(pause_view);
    let view = RunView {
        what: what.clone(),
        steps,
        pause: pause.clone(),
    };
    // the message: what happened, then what to do next
    let word = |o: &str| -> String { o.split_whitespace().next().unwrap_or("").to_string() };
    let head = if r.kind == RunKind::TimeTravel {
        format!(
            "time travel: landed on {} — n steps from here, c continues",
            r.landed
                .as_deref()
                .map(short_id)
                .unwrap_or_else(|| "?".into())
        )
    } else if view.steps.len() > 2 {
        format!(
            "{what}: ran {} supersteps (steps {}–{})",
            view.steps.len(),
            view.steps[0].step,
            view.steps[view.steps.len() - 1].step
        )
    } else {
        let parts: Vec<String> = view
            .steps
            .iter()
            .filter(|st| !st.tasks.is_empty())
            .map(|st| {
                format!(
                    "step {} {}",
                    st.step,
                    st.tasks
                        .iter()
                        .map(|t| format!("{} {}", t.name, word(&t.outcome)))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
            .collect();
        if parts.is_empty() {
            what.clone()
        } else {
            format!("{what}: {}", parts.join(" · "))
        }
    };
    let (level, tail) = match &pause {
        None if r.kind == RunKind::TimeTravel => (Level::Info, String::new()),
        None => (Level::Info, String::new()),
        Some(PauseView::Interrupt(n)) => (
            Level::Info,
            format!(" · paused: interrupt in {} — r to answer", n.join(", ")),
        ),
        Some(PauseView::Before(n)) => (
            Level::Info,
            format!(
                " · paused before {} (break-before) — n/c run it",
                n.join(", ")
            ),
        ),
        Some(PauseView::After(n)) => (
            Level::Info,
            format!(" · paused after {} (break-after)", n.join(", ")),
        ),
        Some(PauseView::Error(n, e)) => (
            Level::Error,
            format!(" · error in {n}: {e} — fix the state with u, then c retries"),
        ),
        Some(PauseView::Done) => (Level::Info, " · done: no task is triggered".to_string()),
        Some(PauseView::RecursionLimit(n)) => (
            Level::Error,
            format!(" · GraphRecursionError: recursion limit {n} reached"),
        ),
        Some(other) => (Level::Info, format!(" · {}", other.describe())),
    };
    let drift_text = view.drifts().next().map(|d| {
        format!(
            "APPROVAL DRIFT in {}: the answer {} was given to {} but the node re-ran with {} (Tasks pane: Enter for details)",
            d.node,
            preview(&d.answer, 40),
            preview(&d.answered, 60),
            preview(&d.now, 60)
        )
    });
    let note = s.run_note.take();
    let skipped = note.is_some() && !matches!(pause, Some(PauseView::Before(_)));
    match drift_text {
        Some(t) => say(s, Level::Warn, t),
        None if skipped => say(
            s,
            Level::Warn,
            format!("{head}{tail} · {}", note.unwrap_or_default()),
        ),
        None => say(s, level, format!("{head}{tail}")),
    }
    s.run_pause = pause;
    s.run = Some(view);
}

// ---- modals ---------------------------------------------------------------------------------

fn travel_lines(s: &AppState, h: &HistoryEntry) -> Vec<String> {
    let newer = s.selected(Pane::History);
    let mut l = vec![
        format!("Replay from checkpoint {}", h.id),
        format!("  step {} ({}), created {}", h.step, h.source, h.created_at),
        format!(
            "  next: {}",
            if h.next.is_empty() {
                "(nothing: the run had ended here)".to_string()
            } else {
                h.next.join(", ")
            }
        ),
        String::new(),
        "LangGraph: graph.invoke(None, {\"configurable\": {\"checkpoint_id\": …}})".to_string(),
    ];
    if h.source == "update" || h.source == "fork" {
        l.push(format!(
            "  • this checkpoint is already a{} — it is replayed as is{}",
            if h.source == "update" {
                "n update"
            } else {
                " fork"
            },
            if newer > 0 {
                ", but newer ones exist, so a fork is written"
            } else {
                ""
            }
        ));
    } else {
        l.push("  • writes a new checkpoint (source \"fork\") whose parent is this one".into());
    }
    if newer > 0 {
        l.push(format!(
            "  • the {newer} newer checkpoint{} in History on {} own branch",
            if newer == 1 { " stays" } else { "s stay" },
            if newer == 1 { "its" } else { "their" }
        ));
    }
    if !h.next.is_empty() {
        l.push(format!(
            "  • {} will run again: {} effects repeat, {} interrupts ask again",
            h.next.join(", "),
            if h.next.len() == 1 { "its" } else { "their" },
            if h.next.len() == 1 { "its" } else { "their" }
        ));
    }
    if !h.pending.is_empty() || !h.interrupted.is_empty() {
        l.push(
            "  • answers stored at this checkpoint are not reused: time travel drops RESUME writes"
                .into(),
        );
    }
    l.push("  • then it stops on the fork: n steps, c continues".into());
    l
}

fn submit(s: &mut AppState) -> Vec<Effect> {
    let Some(modal) = s.modal.clone() else {
        return vec![];
    };
    match modal {
        Modal::Help { .. } | Modal::Viewer { .. } => {
            s.modal = None;
            vec![]
        }
        Modal::ConfirmTravel { .. } => update(s, Action::Confirm),
        Modal::Resume { items, .. } => {
            let mut answers = Vec::new();
            for (i, it) in items.iter().enumerate() {
                match check_json(&it.input.text) {
                    Ok(None) => {}
                    Ok(Some(v)) => answers.push((it.id.clone(), v)),
                    Err(e) => {
                        if let Some(Modal::Resume { sel, error, .. }) = &mut s.modal {
                            *sel = i;
                            *error = Some(format!(
                                "{} ({}): {e}",
                                &it.id[..it.id.len().min(8)],
                                it.node
                            ));
                        }
                        return vec![];
                    }
                }
            }
            if answers.is_empty() {
                if let Some(Modal::Resume { error, .. }) = &mut s.modal {
                    *error = Some(
                        "type an answer (JSON, e.g. true or \"yes\") for at least one interrupt"
                            .into(),
                    );
                }
                return vec![];
            }
            let Some(thread) = debug_thread(s) else {
                return vec![];
            };
            s.modal = None;
            let answer = if items.len() == 1 {
                ResumeArg::Plain(answers.remove(0).1)
            } else {
                ResumeArg::ById(answers)
            };
            vec![Effect::Resume {
                thread,
                answer,
                breaks: breaks(s),
            }]
        }
        Modal::Update {
            checkpoint,
            as_nodes,
            as_sel,
            input,
            ..
        } => {
            let as_node = (as_sel > 0).then(|| as_nodes[as_sel].clone());
            let values = match check_json(&input.text) {
                Ok(Some(v)) => v,
                Ok(None) => {
                    if let Some(Modal::Update { error, .. }) = &mut s.modal {
                        *error = Some("type the values as a JSON object, e.g. {\"decision\": \"approved\"} (null with __end__)".into());
                    }
                    return vec![];
                }
                Err(e) => {
                    if let Some(Modal::Update { error, .. }) = &mut s.modal {
                        *error = Some(e);
                    }
                    return vec![];
                }
            };
            let Some(thread) = debug_thread(s) else {
                return vec![];
            };
            s.modal = None;
            vec![Effect::UpdateState {
                thread,
                checkpoint,
                values,
                as_node,
            }]
        }
        Modal::NewThread { name, input, .. } => {
            let n = name.text.trim().to_string();
            let err = if n.is_empty() {
                Some("the thread needs a name".to_string())
            } else if s.threads.iter().any(|t| t.id == n) {
                Some(format!("thread {n} exists: T switches to it"))
            } else {
                None
            };
            let value = match check_json(&input.text) {
                Ok(Some(v)) => Some(v),
                Ok(None) => None,
                Err(e) => {
                    if let Some(Modal::NewThread { error, field, .. }) = &mut s.modal {
                        *error = Some(e);
                        *field = 1;
                    }
                    return vec![];
                }
            };
            let err = err.or_else(|| {
                value
                    .is_none()
                    .then(|| "the input is empty: type a JSON object".to_string())
            });
            if let Some(e) = err {
                if let Some(Modal::NewThread { error, .. }) = &mut s.modal {
                    *error = Some(e);
                }
                return vec![];
            }
            s.modal = None;
            vec![Effect::NewThread {
                thread: n,
                input: value.unwrap_or(Json::Null),
            }]
        }
        Modal::ThreadPicker { sel } => {
            s.modal = None;
            match s.threads.get(sel) {
                Some(t) => vec![Effect::OpenThread {
                    thread: t.id.clone(),
                    ns: String::new(),
                    select: None,
                }],
                None => vec![],
            }
        }
        Modal::Command { input } => {
            s.modal = None;
            command(s, &input.text)
        }
        Modal::Search { input } => {
            s.modal = None;
            search(s, &input.text)
        }
    }
}

fn open_selected(s: &mut AppState) {
    let p = s.focus;
    let i = s.selected(p);
    let (title, lines) = match p {
        Pane::Graph => {
            let Some(n) = s.selected_node().cloned() else {
                if s.mode == Mode::Debug {
                    let text = format!(
                        "* row: b/B toggle break-before/after on every node (now: before {}, after {})",
                        if s.breaks_before.all { "on" } else { "off" },
                        if s.breaks_after.all { "on" } else { "off" }
                    );
                    say(s, Level::Info, text);
                }
                return;
            };
            let mut l = vec![
                format!("node {}", n.name),
                format!(
                    "  edges to: {}",
                    if n.successors.is_empty() {
                        "-".into()
                    } else {
                        n.successors.join(", ")
                    }
                ),
                format!(
                    "  break-before: {}   break-after: {}",
                    if s.breaks_before.matches(&n.name) {
                        "on"
                    } else {
                        "off"
                    },
                    if s.breaks_after.matches(&n.name) {
                        "on"
                    } else {
                        "off"
                    }
                ),
            ];
            if let Some(c) = &s.current {
                for t in c.tasks.iter().filter(|t| t.name == n.name) {
                    l.push(format!("  task {} {}", t.id, t.status.label()));
                }
            }
            (format!("Node {}", n.name), l)
        }
        Pane::History => {
            let Some(h) = s.history.get(i) else { return };
            let mut l = vec![
                format!("checkpoint {}", h.id),
                format!("parent     {}", h.parent.as_deref().unwrap_or("-")),
                format!("step       {}", h.step),
                format!("source     {}", h.source),
                format!("created    {}", h.created_at),
                format!(
                    "next       {}",
                    if h.next.is_empty() {
                        "-".to_string()
                    } else {
                        h.next.join(", ")
                    }
                ),
            ];
            for (id, n, v) in &h.pending {
                l.push(format!("interrupt  {id} in {n}: {}", preview(v, 200)));
            }
            for (n, e) in &h.errored {
                l.push(format!("error      in {n}: {e}"));
            }
            (format!("Checkpoint step {}", h.step), l)
        }
        Pane::State => {
            let Some(v) = s.current.as_ref().and_then(|c| c.values.get(i)) else {
                return;
            };
            let mut l = vec![format!(
                "{}",
                match &v.diff {
                    Diff::Same => "unchanged since the parent checkpoint",
                    Diff::Added => "added at this checkpoint",
                    Diff::Changed { .. } => "changed at this checkpoint",
                    Diff::Removed => "removed at this checkpoint",
                    Diff::NoParent => "first checkpoint (no parent)",
                }
            )];
            if v.diff != Diff::Removed {
                l.extend(pretty(&v.view));
            }
            if let (Some(w), Diff::Changed { .. } | Diff::Removed) = (&v.was, &v.diff) {
                l.push(String::new());
                l.push("was:".into());
                l.extend(pretty(w));
            }
            (format!("Value {}", v.key), l)
        }
        Pane::Tasks => {
            let Some(t) = s.current.as_ref().and_then(|c| c.tasks.get(i)).cloned() else {
                return;
            };
            let mut l = vec![
                format!("task   {}", t.id),
                format!("node   {}", t.name),
                format!("status {}", t.status.label()),
            ];
            if let Some(ns) = &t.ns {
                l.push(format!("subgraph namespace {ns} (s shows its checkpoints)"));
            }
            if !t.view.is_null() {
                l.push(String::new());
                l.extend(pretty(&t.view));
            }
            if let Some(run) = &s.run {
                for st in &run.steps {
                    for tr in st.tasks.iter().filter(|x| x.id == t.id) {
                        l.push(String::new());
                        l.push(format!(
                            "last {} · step {}: {}",
                            run.what, st.step, tr.outcome
                        ));
                        l.extend(run_task_lines(tr));
                        for d in &tr.drift {
                            l.push(format!(
                                "APPROVAL DRIFT at interrupt #{} ({})",
                                d.index, d.interrupt_id
                            ));
                            l.push("  the human answered this payload:".into());
                            l.extend(pretty(&d.answered).into_iter().map(|x| format!("    {x}")));
                            l.push("  the re-executed node produced:".into());
                            l.extend(pretty(&d.now).into_iter().map(|x| format!("    {x}")));
                            l.push(format!(
                                "  and received the answer {}",
                                preview(&d.answer, 200)
                            ));
                        }
                    }
                }
            }
            (format!("Task {}", t.name), l)
        }
        Pane::Writes => {
            let Some(w) = s.current.as_ref().and_then(|c| c.writes.get(i)) else {
                return;
            };
            let mut l = vec![
                format!("task    {}", w.task_id),
                format!("node    {}", w.node),
                format!("idx     {}", w.idx),
                format!("channel {}", w.channel),
                format!("type    {}", w.kind.label()),
                String::new(),
            ];
            l.extend(pretty(&w.view));
            (format!("Write {} {}", w.kind.label(), w.channel), l)
        }
        Pane::Interrupts => {
            let Some(r) = s.current.as_ref().and_then(|c| c.interrupts.get(i)) else {
                return;
            };
            let mut l = vec![
                format!("interrupt {}", r.id),
                format!("node      {}", r.node),
                format!("task      {}", r.task_id),
                format!(
                    "status    {}",
                    if r.pending {
                        "pending (r answers it)"
                    } else {
                        "answered"
                    }
                ),
                String::new(),
            ];
            l.extend(pretty(&r.value));
            if let Some(a) = &r.answer {
                l.push(String::new());
                l.push("answer:".into());
                l.extend(pretty(a));
            }
            (format!("Interrupt in {}", r.node), l)
        }
    };
    s.modal = Some(Modal::Viewer {
        title,
        lines,
        scroll: 0,
    });
}

/// The re-execution lines of one task of the last run.
pub fn run_task_lines(t: &TaskRunView) -> Vec<String> {
    let mut l = Vec::new();
    for c in &t.calls {
        l.push(match c {
            CallView::Replayed { index, answer } => {
                format!("  interrupt #{index} returned the stored answer {answer}")
            }
            CallView::Resumed { index, answer } => {
                format!("  interrupt #{index} returned the resume value {answer}")
            }
            CallView::Raised { index, id, payload } => {
                format!(
                    "  interrupt #{index} raised {payload} (id {})",
                    &id[..id.len().min(8)]
                )
            }
        });
    }
    for (name, n, total) in &t.effects {
        l.push(format!(
            "  effect {name} ×{n}{}",
            if *total > *n {
                format!(" (×{total} over {} executions of this task)", t.execution)
            } else {
                String::new()
            }
        ));
    }
    l
}

// ---- search ---------------------------------------------------------------------------------

/// What a search matches in a value row (its key and JSON).
pub fn value_text(v: &ValueRow) -> String {
    format!(
        "{} {}",
        v.key,
        serde_json::to_string(&v.view).unwrap_or_default()
    )
}

/// What a search matches in a pending write.
pub fn write_text(w: &WriteView) -> String {
    format!(
        "{} {} {} {}",
        w.node,
        w.channel,
        w.kind.label(),
        serde_json::to_string(&w.view).unwrap_or_default()
    )
}

/// How a thread-wide hit names its row (stable across the checkpoint's views).
pub fn hit_label(c: &CheckpointView, pane: Pane, row: usize) -> String {
    match pane {
        Pane::State => c.values.get(row).map(|v| v.key.clone()),
        Pane::Writes => c
            .writes
            .get(row)
            .map(|w| format!("{} {} {}", w.node, w.channel, w.idx)),
        _ => None,
    }
    .unwrap_or_default()
}

/// `(pane, row)` of every match of `q` (lower-cased) in a checkpoint, values first.
pub fn hits_in(c: &CheckpointView, ql: &str) -> Vec<(Pane, usize)> {
    let mut hits = Vec::new();
    for (i, v) in c.values.iter().enumerate() {
        if value_text(v).to_lowercase().contains(ql) {
            hits.push((Pane::State, i));
        }
    }
    for (i, w) in c.writes.iter().enumerate() {
        if write_text(w).to_lowercase().contains(ql) {
            hits.push((Pane::Writes, i));
        }
    }
    hits
}

fn find_hits(s: &mut AppState, q: &str) {
    let ql = q.to_lowercase();
    let hits = s
        .current
        .as_ref()
        .map(|c| hits_in(c, &ql))
        .unwrap_or_default();
    match &mut s.search {
        Some(st) if st.query == q => {
            st.hits = hits;
            st.pos = 0;
        }
        _ => {
            s.search = Some(SearchState {
                query: q.to_string(),
                hits,
                pos: 0,
                thread_hits: None,
                tpos: 0,
                searched: 0,
            })
        }
    }
}

/// `/query`: match the selected checkpoint at once, then every loaded checkpoint of the thread
/// (the runtime reads them); `/` Enter with no text: next match.
fn search(s: &mut AppState, q: &str) -> Vec<Effect> {
    let q = q.trim();
    if q.is_empty() {
        if s.search.is_none() {
            say(s, Level::Info, "search: type some text");
            return vec![];
        }
        return search_step(s, 1);
    }
    s.search = None;
    find_hits(s, q);
    let Some(thread) = s.thread.clone() else {
        say(s, Level::Warn, format!("/{q}: no thread to search"));
        return vec![];
    };
    vec![Effect::SearchThread {
        thread,
        ns: s.ns.clone(),
        query: q.to_string(),
        checkpoints: s.history.iter().map(|h| h.id.clone()).collect(),
    }]
}

/// `]` / `[`: the next / previous thread-wide match.
fn search_step(s: &mut AppState, delta: i64) -> Vec<Effect> {
    let Some(st) = &mut s.search else {
        say(s, Level::Info, "no search yet: / searches the thread");
        return vec![];
    };
    let n = st.thread_hits.as_ref().map_or(0, Vec::len) as i64;
    if n == 0 {
        return goto_thread_hit(s);
    }
    st.tpos = ((st.tpos as i64 + delta).rem_euclid(n)) as usize;
    goto_thread_hit(s)
}

/// Show the current thread-wide match: select its checkpoint in History (loading it when it is
/// not the one shown) and its row in State / Pending writes.
fn goto_thread_hit(s: &mut AppState) -> Vec<Effect> {
    let Some(st) = s.search.clone() else {
        return vec![];
    };
    let hits = st.thread_hits.clone().unwrap_or_default();
    let Some(hit) = hits.get(st.tpos).cloned() else {
        say(
            s,
            Level::Warn,
            format!(
                "/{}: no match in the values or pending writes of the {} loaded checkpoint{}{}",
                st.query,
                st.searched,
                if st.searched == 1 { "" } else { "s" },
                if s.history_more {
                    " (older ones: G loads them all)"
                } else {
                    ""
                }
            ),
        );
        return vec![];
    };
    let Some(row) = s.history.iter().position(|h| h.id == hit.checkpoint) else {
        return vec![];
    };
    let checkpoints = {
        let mut c: Vec<&str> = hits.iter().map(|h| h.checkpoint.as_str()).collect();
        c.dedup();
        c.len()
    };
    say(
        s,
        Level::Info,
        format!(
            "/{}: match {} of {} ({} of {} checkpoints) · step {} {} · {} {} · ] next [ previous",
            st.query,
            st.tpos + 1,
            hits.len(),
            checkpoints,
            st.searched,
            hit.step,
            short_id(&hit.checkpoint),
            hit.pane.title(),
            hit.label
        ),
    );
    let old = s.selected(Pane::History);
    s.sel[Pane::History.index()] = row;
    let shown = s
        .current
        .as_ref()
        .is_some_and(|c| c.snapshot.checkpoint_id == hit.checkpoint);
    if shown && row == old {
        select_local_hit(s);
        return vec![];
    }
    let Some(thread) = s.thread.clone() else {
        return vec![];
    };
    vec![Effect::LoadCheckpoint {
        thread,
        ns: s.ns.clone(),
        id: hit.checkpoint,
        latest: row == 0,
    }]
}

/// When the shown checkpoint holds the current thread-wide match, focus and select its row.
fn select_local_hit(s: &mut AppState) {
    let Some(st) = &s.search else { return };
    let Some(hit) = st.thread_hits.as_ref().and_then(|h| h.get(st.tpos)) else {
        return;
    };
    let Some(c) = &s.current else { return };
    if c.snapshot.checkpoint_id != hit.checkpoint {
        return;
    }
    let Some(j) = st
        .hits
        .iter()
        .position(|(p, r)| *p == hit.pane && hit_label(c, *p, *r) == hit.label)
    else {
        return;
    };
    let (pane, row) = st.hits[j];
    if let Some(st) = &mut s.search {
        st.pos = j;
    }
    s.focus = pane;
    s.sel[pane.index()] = row;
}

// ---- subgraph namespaces --------------------------------------------------------------------

/// `s`: show the checkpoints of a subgraph task's namespace.
fn enter_subgraph(s: &mut AppState) -> Vec<Effect> {
    let Some(thread) = s.thread.clone() else {
        return vec![];
    };
    let Some(t) = s.subgraph_task().cloned() else {
        say(
            s,
            Level::Info,
            "no subgraph task at this checkpoint (a task whose node is a subgraph has its own namespace)",
        );
        return vec![];
    };
    let ns = t.ns.unwrap_or_default();
    say(
        s,
        Level::Info,
        format!(
            "subgraph {} · namespace {ns} — Backspace: back to the parent",
            t.name
        ),
    );
    vec![Effect::OpenThread {
        thread,
        ns,
        select: None,
    }]
}

/// Backspace: back to the parent namespace, at the checkpoint selected there.
fn leave_subgraph(s: &mut AppState) -> Vec<Effect> {
    let Some(thread) = s.thread.clone() else {
        return vec![];
    };
    let Some((ns, sel)) = s.ns_stack.last().cloned() else {
        if !s.ns.is_empty() {
            // opened directly in a namespace: its parent is the namespace minus the last level
            let parent = s.ns.rsplit_once('|').map_or("", |(p, _)| p).to_string();
            return vec![Effect::OpenThread {
                thread,
                ns: parent,
                select: None,
            }];
        }
        say(s, Level::Info, "already at the root graph");
        return vec![];
    };
    say(
        s,
        Level::Info,
        if ns.is_empty() {
            "back at the root graph".to_string()
        } else {
            format!("back at namespace {ns}")
        },
    );
    vec![Effect::OpenThread {
        thread,
        ns,
        select: (!sel.is_empty()).then_some(sel),
    }]
}

// ---- the command line -----------------------------------------------------------------------

fn looks_like_json(t: &str) -> bool {
    let c = t.chars().next().unwrap_or(' ');
    matches!(c, '{' | '[' | '"' | '-' | '0'..='9') || ["null", "true", "false"].contains(&t)
}

fn command(s: &mut AppState, text: &str) -> Vec<Effect> {
    let text = text.trim().trim_start_matches(':').trim();
    let (cmd, arg) = match text.split_once(char::is_whitespace) {
        Some((c, a)) => (c, a.trim()),
        None => (text, ""),
    };
    match cmd {
        "" => vec![],
        "q" | "quit" | "qa" => update(s, Action::Quit),
        "h" | "help" => update(s, Action::Help),
        "n" | "s" | "step" | "next" => {
            if !arg.is_empty() {
                match arg.parse::<u32>() {
                    Ok(n) if n > 0 => s.count = Some(n.min(9999)),
                    _ => {
                        say(
                            s,
                            Level::Error,
                            format!(":step {arg}: expected a positive number"),
                        );
                        return vec![];
                    }
                }
            }
            update(s, Action::Step)
        }
        "c" | "continue" | "cont" => update(s, Action::Continue),
        "resume" | "r" => {
            if arg.is_empty() {
                return update(s, Action::OpenResume);
            }
            let Some(thread) = debug_thread(s) else {
                return vec![];
            };
            if s.history.first().is_none_or(|h| h.pending.is_empty()) {
                let why = s.pause().describe();
                say(
                    s,
                    Level::Warn,
                    format!(":resume: no interrupt is pending at the newest checkpoint ({why})"),
                );
                return vec![];
            }
            if looks_like_json(arg) {
                return match check_json(arg) {
                    Ok(Some(v)) => vec![Effect::Resume {
                        thread,
                        answer: ResumeArg::Plain(v),
                        breaks: breaks(s),
                    }],
                    Ok(None) => vec![],
                    Err(e) => {
                        say(s, Level::Error, format!(":resume: {e}"));
                        vec![]
                    }
                };
            }
            let pending = s
                .history
                .first()
                .map(|h| h.pending.clone())
                .unwrap_or_default();
            let mut map = Vec::new();
            for tok in arg.split_whitespace() {
                let Some((k, v)) = tok.split_once('=') else {
                    say(
                        s,
                        Level::Error,
                        format!(":resume: expected ID=JSON, got {tok:?}"),
                    );
                    return vec![];
                };
                let matches: Vec<&(String, String, Json)> = pending
                    .iter()
                    .filter(|(id, node, _)| id.starts_with(k) || node == k)
                    .collect();
                let id = match matches.as_slice() {
                    [one] => one.0.clone(),
                    [] => {
                        let list: Vec<String> = pending
                            .iter()
                            .map(|(id, n, _)| format!("{} ({n})", &id[..id.len().min(8)]))
                            .collect();
                        say(
                            s,
                            Level::Error,
                            format!(
                                ":resume: no pending interrupt {k:?} (pending: {})",
                                if list.is_empty() {
                                    "none".to_string()
                                } else {
                                    list.join(", ")
                                }
                            ),
                        );
                        return vec![];
                    }
                    _ => {
                        say(
                            s,
                            Level::Error,
                            format!(
                                ":resume: {k:?} matches several interrupts: use more of the id"
                            ),
                        );
                        return vec![];
                    }
                };
                match check_json(v) {
                    Ok(Some(j)) => map.push((id, j)),
                    Ok(None) => {
                        say(s, Level::Error, format!(":resume: {k}= needs a JSON value"));
                        return vec![];
                    }
                    Err(e) => {
                        say(s, Level::Error, format!(":resume {k}: {e}"));
                        return vec![];
                    }
                }
            }
            vec![Effect::Resume {
                thread,
                answer: ResumeArg::ById(map),
                breaks: breaks(s),
            }]
        }
        "travel" | "tt" | "replay" => {
            if !arg.is_empty() && !select_checkpoint(s, arg) {
                return vec![];
            }
            s.focus = Pane::History;
            let mut eff = if arg.is_empty() {
                vec![]
            } else {
                reload_selected(s)
            };
            eff.extend(update(s, Action::OpenTimeTravel));
            eff
        }
        "checkpoint" | "cp" | "goto" => {
            if arg.is_empty() {
                say(
                    s,
                    Level::Error,
                    ":checkpoint needs an id (prefix or suffix)",
                );
                return vec![];
            }
            if !select_checkpoint(s, arg) {
                return vec![];
            }
            s.focus = Pane::History;
            reload_selected(s)
        }
        "update" | "u" => {
            let Some(thread) = debug_thread(s) else {
                return vec![];
            };
            let (node, json) = match arg.split_once(char::is_whitespace) {
                Some((n, rest)) if !looks_like_json(n) => (Some(n.to_string()), rest.trim()),
                _ => (None, arg),
            };
            if json.is_empty() {
                return update(s, Action::OpenUpdate);
            }
            if let Some(n) = &node {
                let known = s.graph.nodes.iter().any(|x| &x.name == n)
                    || ["__input__", "__copy__", "__end__", "__start__"].contains(&n.as_str());
                if !known {
                    say(s, Level::Error, format!(":update: unknown node {n:?}"));
                    return vec![];
                }
            }
            match check_json(json) {
                Ok(Some(values)) => {
                    let row = s.selected(Pane::History);
                    let checkpoint = (row > 0).then(|| s.history[row].id.clone());
                    vec![Effect::UpdateState {
                        thread,
                        checkpoint,
                        values,
                        as_node: node,
                    }]
                }
                Ok(None) => vec![],
                Err(e) => {
                    say(s, Level::Error, format!(":update: {e}"));
                    vec![]
                }
            }
        }
        "thread" | "th" => {
            if arg.is_empty() {
                return update(s, Action::OpenThreadPicker);
            }
            if !s.threads.iter().any(|t| t.id == arg) {
                say(
                    s,
                    Level::Error,
                    format!(":thread: no thread {arg:?} (T lists them; :new {arg} creates it)"),
                );
                return vec![];
            }
            vec![Effect::OpenThread {
                thread: arg.to_string(),
                ns: String::new(),
                select: None,
            }]
        }
        "threads" => update(s, Action::OpenThreadPicker),
        "new" => {
            if s.mode == Mode::Inspect {
                say(s, Level::Warn, READ_ONLY);
                return vec![];
            }
            let (name, json) = match arg.split_once(char::is_whitespace) {
                Some((n, rest)) => (n, rest.trim()),
                None => (arg, ""),
            };
            if name.is_empty() {
                return update(s, Action::OpenNewThread);
            }
            if s.threads.iter().any(|t| t.id == name) {
                say(s, Level::Error, format!(":new: thread {name} exists"));
                return vec![];
            }
            let input = if json.is_empty() {
                match &s.graph.input {
                    Some(i) => i.clone(),
                    None => {
                        say(
                            s,
                            Level::Error,
                            ":new: the spec has no input: give one (:new NAME JSON)",
                        );
                        return vec![];
                    }
                }
            } else {
                match check_json(json) {
                    Ok(Some(v)) => v,
                    Ok(None) => Json::Null,
                    Err(e) => {
                        say(s, Level::Error, format!(":new: {e}"));
                        return vec![];
                    }
                }
            };
            vec![Effect::NewThread {
                thread: name.to_string(),
                input,
            }]
        }
        "break" | "b" | "breakbefore" | "breakafter" | "ba" => {
            let before = !matches!(cmd, "breakafter" | "ba");
            if s.mode == Mode::Debug && !arg.is_empty() {
                if arg == "*" {
                    s.sel[Pane::Graph.index()] = 0;
                } else {
                    match s.graph.nodes.iter().position(|n| n.name == arg) {
                        Some(i) => s.sel[Pane::Graph.index()] = i + 1,
                        None => {
                            say(s, Level::Error, format!(":{cmd}: unknown node {arg:?}"));
                            return vec![];
                        }
                    }
                }
            }
            toggle_break(s, before);
            vec![]
        }
        "clear" => {
            s.breaks_before = BreakSet::default();
            s.breaks_after = BreakSet::default();
            say(s, Level::Info, "breakpoints cleared");
            vec![]
        }
        "search" | "find" => {
            search(s, arg);
            vec![]
        }
        other => {
            say(
                s,
                Level::Error,
                format!(
                    "unknown command :{other} (commands: {})",
                    "step continue resume travel checkpoint update thread threads new break breakafter clear search help quit"
                ),
            );
            vec![]
        }
    }
}

/// Select a history row by id prefix or suffix.
fn select_checkpoint(s: &mut AppState, id: &str) -> bool {
    let found: Vec<usize> = s
        .history
        .iter()
        .enumerate()
        .filter(|(_, h)| h.id.starts_with(id) || h.id.ends_with(id))
        .map(|(i, _)| i)
        .collect();
    match found.as_slice() {
        [i] => {
            s.sel[Pane::History.index()] = *i;
            true
        }
        [] => {
            say(
                s,
                Level::Error,
                format!("no checkpoint {id:?} on this thread"),
            );
            false
        }
        _ => {
            say(
                s,
                Level::Error,
                format!(
                    "{id:?} matches {} checkpoints: use more of the id",
                    found.len()
                ),
            );
            false
        }
    }
}

/// Live refresh: the thread list, and the open thread with the same checkpoint selected — or,
/// when the newest one was selected, the new newest (following a running app).
fn external_change(s: &mut AppState) -> Vec<Effect> {
    s.refreshes += 1;
    let Some(t) = s.thread.clone() else {
        return vec![Effect::LoadThreads, Effect::Startup { thread: None }];
    };
    let row = s.selected(Pane::History);
    let select = if row == 0 {
        None
    } else {
        s.history.get(row).map(|h| h.id.clone())
    };
    vec![
        Effect::LoadThreads,
        Effect::OpenThread {
            thread: t,
            ns: s.ns.clone(),
            select,
        },
    ]
}

fn reload_selected(s: &AppState) -> Vec<Effect> {
    let row = s.selected(Pane::History);
    match (&s.thread, s.history.get(row)) {
        (Some(t), Some(h)) => vec![Effect::LoadCheckpoint {
            thread: t.clone(),
            ns: s.ns.clone(),
            id: h.id.clone(),
            latest: row == 0,
        }],
        _ => vec![],
    }
}

/// The help overlay's lines: the keymap, then the `:` commands.
pub fn help_text(mode: Mode) -> Vec<(String, String)> {
    let mut l = help_lines(mode);
    l.push((String::new(), "Commands (:)".into()));
    for (c, d) in COMMANDS {
        l.push((c.to_string(), d.to_string()));
    }
    l
}

#[cfg(test)]
mod tests;

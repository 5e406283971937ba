//! Loading what the runtime read into the state: a thread (its history and the selected
//! checkpoint), another checkpoint, pages of older history, and live refresh.

use super::movement::{clamp_all, move_to};
use super::search::{find_hits, select_local_hit};
use crate::app::action::{CheckpointData, Effect, HistoryEntry, ThreadData};
use crate::app::state::*;
use crate::app::views::{checkpoint_view, history_lanes};

pub(super) fn thread_loaded(s: &mut AppState, d: ThreadData) {
    if s.thread.as_deref() != Some(d.thread.as_str()) {
        s.run = None;
        s.run_pause = None;
        s.search = None;
        s.ns_stack.clear();
        // what was said about the previous thread is not about this one
        if s.thread.is_some() {
            s.message = Some(Message {
                level: Level::Info,
                text: format!("thread {}", d.thread),
            });
        }
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

pub(super) fn set_current(s: &mut AppState, d: CheckpointData, latest: bool) {
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

/// when the newest one was selected, the new newest (following a running app).
pub(super) fn external_change(s: &mut AppState) -> Vec<Effect> {
    s.refreshes += 1;
    let Some(t) = s.thread.clone() else {
        return vec![
            Effect::LoadThreads,
            Effect::Startup {
                thread: None,
                create: false,
            },
        ];
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

/// A page of older history rows; `select` lands the cursor on a row of it (G, 5000j).
pub(super) fn history_page(
    s: &mut AppState,
    thread: String,
    ns: String,
    entries: Vec<HistoryEntry>,
    more: bool,
    select: Option<usize>,
) -> Vec<Effect> {
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

/// The thread list (the picker's cursor stays in range).
pub(super) fn threads_loaded(s: &mut AppState, rows: Vec<ThreadRow>, more: bool) {
    s.threads = rows;
    s.threads_more = more;
    if let Some(Modal::ThreadPicker { sel }) = &mut s.modal {
        *sel = (*sel).min(s.threads.len().saturating_sub(1));
    }
}

/// More of the thread list, paged in as the picker's cursor went past the loaded rows.
pub(super) fn threads_appended(
    s: &mut AppState,
    rows: Vec<ThreadRow>,
    more: bool,
    select: Option<usize>,
) {
    s.threads.extend(rows);
    s.threads_more = more;
    if let (Some(Modal::ThreadPicker { sel }), Some(row)) = (&mut s.modal, select) {
        *sel = row.min(s.threads.len().saturating_sub(1));
    }
}

/// Another checkpoint of the shown thread.
pub(super) fn checkpoint_loaded(s: &mut AppState, d: CheckpointData) {
    let latest = s.history.first().map(|h| h.id.as_str()) == Some(&d.snapshot.checkpoint_id);
    set_current(s, d, latest);
}

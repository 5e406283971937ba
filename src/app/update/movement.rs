//! Cursor movement in the focused pane (or the open viewer / picker), with count prefixes, and
//! paging the history in as the cursor nears the end of what is loaded.

use crate::app::action::Effect;
use crate::app::state::*;

/// History rows left before the end of what is loaded that fetch the next page.
const HISTORY_PREFETCH: usize = 50;

/// `delta` rows (`page`: pages of the viewer, else pages of 10 rows).
pub(super) fn move_by(s: &mut AppState, delta: i64, page: bool) -> Vec<Effect> {
    let n = s.count.take().unwrap_or(1).max(1) as i64;
    let delta = if page { delta * 10 } else { delta };
    match &mut s.modal {
        Some(Modal::Viewer(v)) => {
            let step = if page {
                delta.signum() * v.height.saturating_sub(1).max(1) as i64
            } else {
                delta
            };
            v.move_by(step * n);
            return vec![];
        }
        Some(Modal::Help { scroll, .. }) => {
            *scroll = (*scroll as i64 + delta * n).max(0) as usize;
            return vec![];
        }
        Some(Modal::ThreadPicker { sel }) => {
            let row = (*sel as i64 + delta * n).max(0) as usize;
            return picker_to(s, row);
        }
        Some(_) => return vec![],
        None => {}
    }
    let cur = s.selected(s.focus) as i64;
    move_to(s, (cur + delta * n).max(0) as usize)
}

/// The thread picker's cursor to `row`; past the loaded threads (j at the end, G, 50000j) the
/// next page — or, for G, all the rest — is loaded first, then the cursor lands there.
fn picker_to(s: &mut AppState, row: usize) -> Vec<Effect> {
    let len = s.threads.len();
    if let Some(Modal::ThreadPicker { sel }) = &mut s.modal {
        *sel = row.min(len.saturating_sub(1));
    }
    if row >= len && s.threads_more {
        if let Some(last) = s.threads.last() {
            return vec![Effect::LoadMoreThreads {
                after: last.id.clone(),
                all: row == usize::MAX,
                select: Some(row),
            }];
        }
    }
    vec![]
}

pub(super) fn move_to(s: &mut AppState, row: usize) -> Vec<Effect> {
    s.count = None;
    match &mut s.modal {
        Some(Modal::Help { scroll, .. }) => {
            *scroll = if row == 0 { 0 } else { usize::MAX / 2 };
            return vec![];
        }
        Some(Modal::Viewer(v)) => {
            v.move_to(row);
            return vec![];
        }
        Some(Modal::ThreadPicker { .. }) => return picker_to(s, row),
        Some(_) => return vec![],
        None => {}
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

pub(super) fn clamp_all(s: &mut AppState) {
    for p in Pane::ALL {
        let len = s.pane_len(p);
        let i = p.index();
        s.sel[i] = s.sel[i].min(len.saturating_sub(1));
    }
}

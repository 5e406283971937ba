//! Search: `/` matches the shown checkpoint at once and every loaded checkpoint of the thread
//! through the runtime; `]` / `[` walk the thread-wide matches.

use super::say;
use crate::app::action::{Effect, ThreadHit};
use crate::app::format::short_id;
use crate::app::state::*;

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

pub(super) fn find_hits(s: &mut AppState, q: &str) {
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
pub(super) fn search(s: &mut AppState, q: &str) -> Vec<Effect> {
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
pub(super) fn search_step(s: &mut AppState, delta: i64) -> Vec<Effect> {
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
pub(super) fn goto_thread_hit(s: &mut AppState) -> Vec<Effect> {
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
pub(super) fn select_local_hit(s: &mut AppState) {
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

/// The runtime's thread-wide matches for `query`: start at the selected checkpoint (or the first
/// match older than it) and show that match.
pub(super) fn search_results(
    s: &mut AppState,
    query: String,
    hits: Vec<ThreadHit>,
    searched: usize,
) -> Vec<Effect> {
    if s.search.as_ref().is_none_or(|st| st.query != query) {
        return vec![];
    }
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

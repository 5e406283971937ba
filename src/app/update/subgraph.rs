//! Subgraph namespaces: `s` opens a subgraph task's checkpoints, Backspace goes back.

use super::say;
use crate::app::action::Effect;
use crate::app::state::*;

/// `s`: show the checkpoints of a subgraph task's namespace.
pub(super) fn enter_subgraph(s: &mut AppState) -> Vec<Effect> {
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
pub(super) fn leave_subgraph(s: &mut AppState) -> Vec<Effect> {
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

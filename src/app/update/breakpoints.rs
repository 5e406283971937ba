//! Break-before / break-after on the selected node (or `*`, every node).

use super::say;
use crate::app::state::*;

pub(super) fn toggle_break(s: &mut AppState, before: bool) {
    if s.mode == Mode::Inspect {
        say(
            s,
            Level::Warn,
            "breakpoints are run configuration: they need a graph spec to step (superstep GRAPH.json)",
        );
        return;
    }
    let node = s.selected_node().map(|n| n.name.clone());
    let fixed = if before {
        &s.graph.fixed_before
    } else {
        &s.graph.fixed_after
    };
    if node.as_ref().map_or(fixed.all, |n| fixed.matches(n)) {
        let text = format!(
            "{} is compiled into the graph (compile(interrupt_{}=...)): LangGraph keeps it on whatever runtime breakpoints are passed",
            node.as_deref().unwrap_or("*"),
            if before { "before" } else { "after" }
        );
        say(s, Level::Warn, text);
        return;
    }
    // `*` is the root graph's; subgraph nodes (`inner|ask`) are toggled one by one
    let all = s.graph.root_nodes();
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
        Some(n) if n.contains('|') => {
            if !set.nodes.remove(&n) {
                set.nodes.insert(n.clone());
            }
            let how = if n.ends_with("|*") {
                " (every node of that subgraph"
            } else {
                " (inside the subgraph"
            };
            format!(
                "{kind} {n}: {}{how}: set on the subgraph object — LangGraph treats it as compiled in and writes that pause's checkpoint)",
                if set.matches(&n) { "on" } else { "off" }
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

//! The daily loop's keys: `M`, a follow-up turn on the current thread, and `R`, reloading the
//! graph's code after an edit.
//!
//! A turn is LangGraph's `invoke(input, config)` on a thread that has run before: for a graph
//! whose input has `messages`, `M` takes just the text and sends it as a human message
//! (`{"messages": [{"role": "user", "content": TEXT}]}`, as LangGraph's docs do; `add_messages`
//! gives it an id); any other graph gets the input form (`N`'s, on this thread). Either way the
//! turn's input checkpoint is written and `n` / `c` step it, as after `N`.

use super::{say, READ_ONLY};
use crate::app::action::Effect;
use crate::app::state::*;
use crate::source::input_form::{human_turn, takes_messages};

/// Whether the graph takes a follow-up turn as a human message's text.
fn messages_graph(s: &AppState) -> bool {
    let input = s.graph.input.as_ref().or(s.graph.input_form.as_ref());
    match input {
        Some(_) => takes_messages(input),
        // no schema read: the state's keys say it
        None => s.graph.state_keys.iter().any(|k| k == "messages"),
    }
}

/// `M`.
pub(super) fn open_turn(s: &mut AppState) -> Vec<Effect> {
    if s.mode == Mode::Inspect {
        say(s, Level::Warn, READ_ONLY);
        return vec![];
    }
    let Some(thread) = s.thread.clone() else {
        say(s, Level::Warn, "no thread yet: N starts one");
        return vec![];
    };
    if messages_graph(s) {
        s.modal = Some(Modal::Turn {
            input: TextInput::default(),
            error: None,
        });
        return vec![];
    }
    let input = s
        .graph
        .input
        .as_ref()
        .or(s.graph.input_form.as_ref())
        .map(|j| serde_json::to_string(j).unwrap_or_default())
        .unwrap_or_else(|| "{}".into());
    s.modal = Some(Modal::NewThread {
        name: TextInput::new(&thread),
        input: TextInput::proposal(&input),
        field: 1,
        error: None,
    });
    vec![]
}

/// Enter in the message editor.
pub(super) fn submit_turn(s: &mut AppState, text: &str) -> Vec<Effect> {
    let Some(thread) = s.thread.clone() else {
        s.modal = None;
        return vec![];
    };
    if text.trim().is_empty() {
        if let Some(Modal::Turn { error, .. }) = &mut s.modal {
            *error = Some("type the message (Esc cancels)".into());
        }
        return vec![];
    }
    s.modal = None;
    vec![Effect::NewThread {
        thread,
        input: human_turn(text),
    }]
}

/// `R` (and `--watch` on a change).
pub(super) fn reload(s: &mut AppState) -> Vec<Effect> {
    if s.mode == Mode::Inspect {
        say(s, Level::Warn, READ_ONLY);
        return vec![];
    }
    say(s, Level::Info, "reloading the graph's code …");
    vec![Effect::Reload {
        thread: s.thread.clone(),
    }]
}

/// The code is loaded again: the graph pane shows it as it is now.
pub(super) fn reloaded(s: &mut AppState, graph: GraphInfo, text: String) {
    s.graph = graph;
    let rows = s.graph_rows();
    let g = Pane::Graph.index();
    s.sel[g] = s.sel[g].min(rows.saturating_sub(1));
    say(s, Level::Info, text);
}

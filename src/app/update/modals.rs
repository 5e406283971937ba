//! The modal dialogs: opening them (resume, time travel, update_state, new thread, thread
//! picker, search, command), editing their fields, and what Enter / y does in each.

use super::command::command;
use super::run::{breaks, debug_target, debug_thread};
use super::search::search;
use super::{say, update, READ_ONLY};
use crate::app::action::{Action, Effect, HistoryEntry, InputKey, ResumeArg};
use crate::app::format::{preview, short_id, PREVIEW};
use crate::app::state::*;
use serde_json::Value as Json;

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
        if let Some(c) = s
            .current
            .as_ref()
            .filter(|c| c.snapshot.checkpoint_id == h.id)
        {
            l.extend(crate::app::calls::travel_line(&c.calls, s.replay));
        }
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

pub(super) fn submit(s: &mut AppState) -> Vec<Effect> {
    let Some(modal) = s.modal.clone() else {
        return vec![];
    };
    match modal {
        Modal::Viewer(_) => {
            super::viewer::submit_find(s);
            vec![]
        }
        Modal::Help { .. } => {
            s.modal = None;
            vec![]
        }
        Modal::Turn { input, .. } => super::turn::submit_turn(s, &input.text),
        Modal::ConfirmTravel { .. } => update(s, Action::Confirm),
        // their Enter is bound in the keymap (`Why`: go to the checkpoint)
        Modal::Diff(_) | Modal::Why(_) => vec![],
        Modal::Resume { items, .. } => {
            let mut answers = Vec::new();
            for (i, it) in items.iter().enumerate() {
                match resume_answer(&it.input.text) {
                    Ok(None) => {}
                    Ok(Some((v, _))) => answers.push((it.id.clone(), v)),
                    Err(e) => {
                        if let Some(Modal::Resume { sel, error, .. }) = &mut s.modal {
                            *sel = i;
                            *error = Some(format!(
                                "{} ({}): {e}",
                                crate::text::head(&it.id, 8),
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
            let Some(thread) = debug_target(s) else {
                return vec![];
            };
            s.modal = None;
            vec![Effect::UpdateState {
                thread,
                ns: s.ns.clone(),
                checkpoint,
                values,
                as_node,
            }]
        }
        Modal::NewThread { name, input, .. } => {
            let n = name.text.trim().to_string();
            // an existing thread's name: a new turn on it (invoke(input, config))
            let err = n.is_empty().then(|| "the thread needs a name".to_string());
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

/// `r`: the resume editor, one field per interrupt pending at the newest checkpoint.
pub(super) fn open_resume(s: &mut AppState) {
    if debug_thread(s).is_none() {
        return;
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
        return;
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
}

/// `t`: first focus History to pick the checkpoint, then confirm what replaying will do.
pub(super) fn open_time_travel(s: &mut AppState) {
    if debug_target(s).is_none() {
        return;
    }
    if s.focus != Pane::History {
        s.focus = Pane::History;
        say(
            s,
            Level::Info,
            "time travel: pick the checkpoint to replay from with j/k, then press t",
        );
        return;
    }
    let Some(h) = s.selected_history().cloned() else {
        say(s, Level::Warn, "no checkpoint to travel to");
        return;
    };
    let lines = travel_lines(s, &h);
    s.modal = Some(Modal::ConfirmTravel {
        checkpoint: h.id,
        lines,
    });
}

/// `u`: update_state on the selected checkpoint, as a node picked with Tab.
pub(super) fn open_update(s: &mut AppState) {
    if debug_target(s).is_none() {
        return;
    }
    let Some(h) = s.selected_history().cloned() else {
        say(s, Level::Warn, "no checkpoint to update");
        return;
    };
    let latest = s.selected(Pane::History) == 0;
    let mut as_nodes = vec!["(inferred)".to_string()];
    // in a subgraph namespace the subgraph's own update_state checks the node
    if s.ns.is_empty() {
        as_nodes.extend(s.graph.root_nodes());
    }
    as_nodes.extend(["__input__", "__copy__", "__end__"].map(String::from));
    let (input, note) = match super::edit_value::proposal(s) {
        Some((text, note)) => (TextInput::proposal(&text), note),
        None => (TextInput::default(), String::new()),
    };
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
        input,
        note,
        error: None,
    });
}

/// `N`: a new thread, named as `-t NAME` asked (when it does not exist yet) or `t1`, `t2`, …, and
/// started with the spec's input.
pub(super) fn open_new_thread(s: &mut AppState) {
    if s.mode == Mode::Inspect {
        say(s, Level::Warn, READ_ONLY);
        return;
    }
    let free = |n: &str| !s.threads.iter().any(|t| t.id == n);
    let name = match &s.wanted_thread {
        Some(w) if free(w) => w.clone(),
        _ => (1..)
            .map(|i| format!("t{i}"))
            .find(|n| free(n))
            .unwrap_or_default(),
    };
    let input = s
        .graph
        .input
        .as_ref()
        .or(s.graph.input_form.as_ref())
        .map(|j| serde_json::to_string(j).unwrap_or_default())
        .unwrap_or_else(|| "{}".into());
    s.modal = Some(Modal::NewThread {
        name: TextInput::proposal(&name),
        input: TextInput::proposal(&input),
        field: 1,
        error: None,
    });
}

/// `T`: the thread picker on the shown thread (the runtime reloads the list).
pub(super) fn open_thread_picker(s: &mut AppState) -> Vec<Effect> {
    let sel = s
        .thread
        .as_ref()
        .and_then(|t| s.threads.iter().position(|r| &r.id == t))
        .unwrap_or(0);
    s.modal = Some(Modal::ThreadPicker { sel });
    vec![Effect::LoadThreads]
}

/// A key typed into the open dialog's text field.
pub(super) fn input(s: &mut AppState, k: InputKey) {
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
        Some(Modal::Turn { input, error }) => {
            input.edit(&k);
            *error = None;
        }
        Some(Modal::Viewer(v)) => {
            if let Some(f) = &mut v.find {
                f.edit(&k);
            }
        }
        _ => {}
    }
}

/// Tab / Shift-Tab: the next / previous field (interrupt, as-node, name/input).
pub(super) fn next_field(s: &mut AppState, fwd: bool) {
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
}

/// `y` on the time-travel confirmation: replay from the checkpoint.
pub(super) fn confirm(s: &mut AppState) -> Vec<Effect> {
    if let Some(Modal::ConfirmTravel { checkpoint, .. }) = s.modal.take() {
        let Some(thread) = debug_target(s) else {
            return vec![];
        };
        return vec![Effect::TimeTravel {
            thread,
            ns: s.ns.clone(),
            checkpoint,
            breaks: breaks(s),
        }];
    }
    vec![]
}

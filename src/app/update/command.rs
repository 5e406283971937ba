//! The `:` command line: every command parses its argument and becomes the same Actions and
//! Effects the keys produce.

use super::breakpoints::toggle_break;
use super::run::{breaks, debug_target, debug_thread};
use super::search::search;
use super::{say, update, READ_ONLY};
use crate::app::action::{Action, Effect, ResumeArg};
use crate::app::keymap::help_lines;
use crate::app::state::*;
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
        "new thread with input JSON (default: the graph's input)",
    ),
    (
        ":break NODE|*",
        "toggle break-before; :breakafter NODE|* for break-after; :clear",
    ),
    (":search TEXT", "search values and pending writes"),
    (
        ":du",
        "where the store's bytes go: threads, channels, growth, savings (superstep du)",
    ),
    (
        ":store [NAMESPACE]",
        "LangGraph's store in the DB: namespaces, keys, values",
    ),
    (
        ":context [JSON]",
        "show the runtime context, or set it for every later run",
    ),
    (":help", "help"),
    (":quit", "quit; also :q"),
];

pub(super) fn command(s: &mut AppState, text: &str) -> Vec<Effect> {
    let text = text.trim().trim_start_matches(':').trim();
    let (cmd, arg) = match text.split_once(char::is_whitespace) {
        Some((c, a)) => (c, a.trim()),
        None => (text, ""),
    };
    if let Some(effects) = super::compare::command(s, cmd, arg) {
        return effects;
    }
    match cmd {
        "" => vec![],
        "q" | "quit" | "qa" => update(s, Action::Quit),
        "h" | "help" => help(s),
        "n" | "s" | "step" | "next" => step(s, arg),
        "c" | "continue" | "cont" => update(s, Action::Continue),
        "resume" | "r" => resume(s, arg),
        "travel" | "tt" | "replay" => travel(s, arg),
        "checkpoint" | "cp" | "goto" => checkpoint(s, arg),
        "update" | "u" => update_state(s, arg),
        "thread" | "th" => thread(s, arg),
        "threads" => update(s, Action::OpenThreadPicker),
        "du" => super::du::measure(s),
        "new" => new_thread(s, arg),
        "break" | "b" | "breakbefore" | "breakafter" | "ba" => toggle(s, cmd, arg),
        "clear" => clear(s),
        "search" | "find" => {
            search(s, arg);
            vec![]
        }
        "store" => super::apps::store_command(s, arg),
        "context" | "ctx" => super::apps::context_command(s, arg),
        other => unknown(s, other),
    }
}

/// `:help`: the `:` commands.
fn help(s: &mut AppState) -> Vec<Effect> {
    s.modal = Some(Modal::Help {
        scroll: 0,
        commands: true,
    });
    vec![]
}

/// `:step [N]`: one superstep, or N.
fn step(s: &mut AppState, arg: &str) -> Vec<Effect> {
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

/// `:resume [JSON | ID=JSON ...]`: answer the pending interrupts (no argument: the editor).
fn resume(s: &mut AppState, arg: &str) -> Vec<Effect> {
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
    // one bare word and one pending interrupt: the word as a string (`:resume yes`)
    let one = s.history.first().is_some_and(|h| h.pending.len() == 1);
    if looks_like_json(arg) || (one && !arg.contains('=')) {
        return resume_plain(s, thread, arg);
    }
    resume_by_id(s, thread, arg)
}

/// `:resume JSON` (or one bare word for the one pending interrupt): Command(resume=JSON).
fn resume_plain(s: &mut AppState, thread: String, arg: &str) -> Vec<Effect> {
    let arg = match resume_answer(arg) {
        Ok(Some((v, _))) => serde_json::to_string(&v).unwrap_or_default(),
        _ => arg.to_string(),
    };
    let arg = arg.as_str();
    match check_json(arg) {
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
    }
}

/// `:resume ID=JSON ...`: answers by interrupt id, id prefix or node name.
fn resume_by_id(s: &mut AppState, thread: String, arg: &str) -> Vec<Effect> {
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
                    .map(|(id, n, _)| format!("{} ({n})", crate::text::head(id, 8)))
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
                    format!(":resume: {k:?} matches several interrupts: use more of the id"),
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

/// `:travel [ID]`: time travel from ID or the selected checkpoint.
fn travel(s: &mut AppState, arg: &str) -> Vec<Effect> {
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

/// `:checkpoint ID`: select a checkpoint in History.
fn checkpoint(s: &mut AppState, arg: &str) -> Vec<Effect> {
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

/// `:update [NODE] JSON`: update_state (no JSON: the editor).
fn update_state(s: &mut AppState, arg: &str) -> Vec<Effect> {
    let Some(thread) = debug_target(s) else {
        return vec![];
    };
    let (node, json) = match arg.split_once(char::is_whitespace) {
        Some((n, rest)) if !looks_like_json(n) => (Some(n.to_string()), rest.trim()),
        _ => (None, arg),
    };
    if json.is_empty() {
        return update(s, Action::OpenUpdate);
    }
    if let (Some(n), true) = (&node, s.ns.is_empty()) {
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
                ns: s.ns.clone(),
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

/// `:thread NAME`: switch thread (no name: the picker).
fn thread(s: &mut AppState, arg: &str) -> Vec<Effect> {
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

/// `:new NAME [JSON]`: a new thread (no name: the dialog).
fn new_thread(s: &mut AppState, arg: &str) -> Vec<Effect> {
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

/// `:break` / `:breakafter NODE|*`: toggle a breakpoint.
fn toggle(s: &mut AppState, cmd: &str, arg: &str) -> Vec<Effect> {
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

/// `:clear`: every breakpoint off.
fn clear(s: &mut AppState) -> Vec<Effect> {
    s.breaks_before = BreakSet::default();
    s.breaks_after = BreakSet::default();
    say(s, Level::Info, "breakpoints cleared");
    vec![]
}

/// Anything else: say which commands exist.
fn unknown(s: &mut AppState, other: &str) -> Vec<Effect> {
    say(
        s,
        Level::Error,
        format!(
            "unknown command :{other} (commands: {})",
            "step continue resume travel checkpoint update thread threads new break breakafter clear search store context help quit"
        ),
    );
    vec![]
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
    for (c, d) in COMMANDS.iter().chain(super::compare::COMMANDS) {
        l.push((c.to_string(), d.to_string()));
    }
    l
}

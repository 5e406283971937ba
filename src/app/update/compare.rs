//! Compare and explain in the TUI: `m` marks a checkpoint and `d` diffs the selection against it
//! (`crate::compare::diff`); `w` on a State row shows which writes produced the key
//! (`crate::compare::why`); `:watch EXPR` keeps expressions evaluated on every checkpoint shown,
//! history included; `:break when EXPR` makes `c` step one superstep at a time until the
//! expression holds (the same run goes on: the rows are a straight run's).

use super::run::{breaks, continue_run};
use super::say;
use crate::app::action::{Effect, RunResult};
use crate::app::compare::{Act, CpRef, DiffView, Job, Loaded, Until, Watch, WhyView};
use crate::app::state::*;
use crate::compare::expr::{Expr, Scope};
use crate::compare::render;
use crate::text::short_id;

/// `:watch` / `:break when` commands (and the help lines for them).
pub const COMMANDS: &[(&str, &str)] = &[
    (
        ":watch EXPR",
        "watch a Starlark expression over the state (len(messages), messages[-1].type, …): evaluated at every checkpoint shown",
    ),
    (":unwatch [N]", "remove watch N (default: all)"),
    (
        ":break when EXPR",
        "c steps one superstep at a time until EXPR holds (:break when alone: off)",
    ),
    (":mark", "mark the selected checkpoint (m); :diff diffs against it (d)"),
    (":why KEY[.path]", "which writes produced a state key (w on a State row)"),
];

/// Supersteps a `c` under `:break when` takes at most (a graph that loops for ever).
const MAX_UNTIL: u32 = 10_000;

fn selected_cp(s: &AppState) -> Option<CpRef> {
    let h = s.selected_history()?;
    Some(CpRef {
        thread: s.thread.clone()?,
        ns: s.ns.clone(),
        id: h.id.clone(),
        step: h.step,
    })
}

fn cp_label(c: &CpRef) -> String {
    let ns = if c.ns.is_empty() {
        String::new()
    } else {
        format!(" [{}]", c.ns)
    };
    format!("{}{ns} · step {} · {}", c.thread, c.step, short_id(&c.id))
}

/// The names an expression may use: the graph's state keys and the shown checkpoint's.
fn known_keys(s: &AppState) -> Vec<String> {
    let mut keys = s.graph.state_keys.clone();
    if let Some(c) = &s.current {
        for (k, _) in &c.snapshot.values {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    keys
}

pub(super) fn act(s: &mut AppState, a: Act) -> Vec<Effect> {
    match a {
        Act::Mark => {
            let Some(cp) = selected_cp(s) else {
                say(s, Level::Warn, "no checkpoint to mark");
                return vec![];
            };
            if s.compare.mark.as_ref() == Some(&cp) {
                s.compare.mark = None;
                say(s, Level::Info, "mark cleared");
            } else {
                let text = format!(
                    "marked {} — select another checkpoint (any thread) and press d to diff",
                    cp_label(&cp)
                );
                s.compare.mark = Some(cp);
                say(s, Level::Info, text);
            }
            vec![]
        }
        Act::Diff => {
            let Some(a) = s.compare.mark.clone() else {
                say(
                    s,
                    Level::Warn,
                    "no mark: press m on a checkpoint in History first",
                );
                return vec![];
            };
            let Some(b) = selected_cp(s) else {
                say(s, Level::Warn, "no checkpoint selected");
                return vec![];
            };
            vec![Effect::Compare(Job::Diff { a, b })]
        }
        Act::Why => {
            let row = s.selected(Pane::State);
            let key = s
                .current
                .as_ref()
                .and_then(|c| c.values.get(row))
                .map(|v| v.key.clone());
            let (Some(key), Some(at)) = (key, current_cp(s)) else {
                say(s, Level::Warn, "w: select a State row (the key to explain)");
                return vec![];
            };
            vec![Effect::Compare(Job::Why { at, key })]
        }
        Act::Scroll(n) => {
            match &mut s.modal {
                Some(Modal::Diff(d)) => d.scroll = moved(d.scroll, n, d.rows.len()),
                Some(Modal::Why(w)) => w.sel = moved(w.sel, n, w.p.contributions.len()),
                _ => {}
            }
            vec![]
        }
        Act::Go => go(s),
    }
}

fn moved(at: usize, n: i64, len: usize) -> usize {
    let last = len.saturating_sub(1);
    match n {
        i64::MIN => 0,
        i64::MAX => last,
        n => (at as i64 + n).clamp(0, last as i64) as usize,
    }
}

/// The checkpoint the State pane shows.
fn current_cp(s: &AppState) -> Option<CpRef> {
    let c = s.current.as_ref()?;
    Some(CpRef {
        thread: c.snapshot.thread_id.clone(),
        ns: c.snapshot.checkpoint_ns.clone(),
        id: c.snapshot.checkpoint_id.clone(),
        step: c.snapshot.step,
    })
}

/// Enter in the provenance view: the contribution's checkpoint selected in History.
fn go(s: &mut AppState) -> Vec<Effect> {
    let Some(Modal::Why(w)) = &s.modal else {
        return vec![];
    };
    let Some(c) = w.p.contributions.get(w.sel) else {
        return vec![];
    };
    let id = c.checkpoint_id.clone();
    let Some(row) = s.history.iter().position(|h| h.id == id) else {
        let text = format!(
            "checkpoint {} is not in the loaded history (G loads all of it)",
            short_id(&id)
        );
        say(s, Level::Warn, text);
        return vec![];
    };
    s.modal = None;
    s.focus = Pane::History;
    s.sel[Pane::History.index()] = row;
    match &s.thread {
        Some(t) => vec![Effect::LoadCheckpoint {
            thread: t.clone(),
            ns: s.ns.clone(),
            id,
            latest: row == 0,
        }],
        None => vec![],
    }
}

pub(super) fn loaded(s: &mut AppState, l: Loaded) -> Vec<Effect> {
    match l {
        Loaded::Diff(d) => {
            // values are cut when drawn; this is only the longest a column can be
            let rows = render::rows(&d, 400);
            s.modal = Some(Modal::Diff(Box::new(DiffView {
                a: render::side_line(&d.a),
                b: render::side_line(&d.b),
                rows,
                scroll: 0,
            })));
        }
        Loaded::Why(p) => {
            let sel = p.contributions.len().saturating_sub(1);
            s.modal = Some(Modal::Why(Box::new(WhyView { p: *p, sel })));
        }
        Loaded::Failed(e) => say(s, Level::Error, e),
    }
    vec![]
}

/// A checkpoint is shown (selected, reloaded after a run): the watches are evaluated on it; a
/// `c` under `:break when` decides whether to take the next superstep.
pub(super) fn shown(s: &mut AppState) -> Vec<Effect> {
    let scope = s.current.as_ref().map(|c| Scope::of(&c.snapshot));
    if let Some(scope) = &scope {
        for w in &mut s.compare.watches {
            w.value = Some(w.expr.eval(scope));
        }
    }
    let (Some(mut u), Some(expr)) = (s.compare.until.take(), s.compare.break_when.clone()) else {
        return vec![];
    };
    let latest = s.current.as_ref().is_some_and(|c| c.latest);
    if u.last_ran == 0 || !latest || s.thread.as_deref() != Some(u.thread.as_str()) {
        return vec![];
    }
    let step = s.current.as_ref().map_or(0, |c| c.snapshot.step);
    let held = match scope.as_ref().map(|sc| expr.eval(sc)) {
        Some(Ok(v)) => v.truthy.then_some(v.repr),
        Some(Err(e)) => {
            u.failed.get_or_insert((step, e));
            None
        }
        None => None,
    };
    let failed = u
        .failed
        .as_ref()
        .map(|(st, e)| format!(" (it failed from step {st} on, counted as false: {e})"))
        .unwrap_or_default();
    if let Some(v) = held {
        let text = format!(
            "break when {}: held after step {step} ({v}), {} superstep{} — c goes on",
            expr.text,
            u.steps,
            if u.steps == 1 { "" } else { "s" }
        );
        say(s, Level::Info, text);
        return vec![];
    }
    if u.last_paused || u.steps >= MAX_UNTIL {
        let why = s.pause().describe();
        let text = format!(
            "{why} — break when {} did not hold in {} supersteps{failed}",
            expr.text, u.steps
        );
        say(s, Level::Info, text);
        return vec![];
    }
    let thread = u.thread.clone();
    s.compare.until = Some(u);
    vec![Effect::Step {
        thread,
        n: 1,
        breaks: breaks(s),
    }]
}

/// A run reported: what the stepped `c` needs to know.
pub(super) fn ran(s: &mut AppState, r: &RunResult) {
    if let Some(u) = &mut s.compare.until {
        // the supersteps that ran tasks (the last report may be the pause itself)
        u.steps += r.reports.iter().filter(|x| !x.tasks.is_empty()).count() as u32;
        u.last_ran = r.reports.len();
        u.last_paused = r.reports.last().is_some_and(|x| x.pause.is_some());
    }
}

/// An error or Esc ends a stepped `c`.
pub(super) fn stop(s: &mut AppState) {
    s.compare.until = None;
}

/// `c` (and `:continue`) under `:break when`: one superstep, then [`shown`] decides.
pub(super) fn continue_until(s: &mut AppState) -> Option<Vec<Effect>> {
    s.compare.break_when.as_ref()?;
    let effects = continue_run(s);
    Some(
        effects
            .into_iter()
            .map(|e| match e {
                Effect::Continue { thread, breaks } => {
                    s.compare.until = Some(Until {
                        thread: thread.clone(),
                        steps: 0,
                        last_ran: 0,
                        last_paused: false,
                        failed: None,
                    });
                    Effect::Step {
                        thread,
                        n: 1,
                        breaks,
                    }
                }
                other => other,
            })
            .collect(),
    )
}

/// The compare commands; `None`: not one of them.
pub(super) fn command(s: &mut AppState, cmd: &str, arg: &str) -> Option<Vec<Effect>> {
    match cmd {
        "watch" | "w" => {
            if arg.is_empty() {
                say(
                    s,
                    Level::Error,
                    ":watch needs an expression, e.g. :watch len(messages)",
                );
                return Some(vec![]);
            }
            match Expr::compile(arg, &known_keys(s)) {
                Ok(expr) => {
                    let value = s
                        .current
                        .as_ref()
                        .map(|c| expr.eval(&Scope::of(&c.snapshot)));
                    s.compare.watches.push(Watch { expr, value });
                    let n = s.compare.watches.len();
                    say(s, Level::Info, format!("watch {n} added: {arg}"));
                }
                Err(e) => say(s, Level::Error, format!(":watch {arg}: {e}")),
            }
            Some(vec![])
        }
        "unwatch" => {
            if arg.is_empty() {
                s.compare.watches.clear();
                say(s, Level::Info, "watches removed");
                return Some(vec![]);
            }
            match arg.parse::<usize>() {
                Ok(n) if (1..=s.compare.watches.len()).contains(&n) => {
                    s.compare.watches.remove(n - 1);
                    say(s, Level::Info, format!("watch {n} removed"));
                }
                _ => say(
                    s,
                    Level::Error,
                    format!(
                        ":unwatch {arg}: expected a watch number (1–{})",
                        s.compare.watches.len()
                    ),
                ),
            }
            Some(vec![])
        }
        "break" | "b" if arg == "when" || arg.starts_with("when ") => {
            let text = arg["when".len()..].trim();
            if text.is_empty() {
                s.compare.break_when = None;
                say(s, Level::Info, "break when: off");
                return Some(vec![]);
            }
            match Expr::compile(text, &known_keys(s)) {
                Ok(expr) => {
                    s.compare.break_when = Some(expr);
                    say(
                        s,
                        Level::Info,
                        format!(
                            "break when {text}: c steps one superstep at a time until it holds"
                        ),
                    );
                }
                Err(e) => say(s, Level::Error, format!(":break when {text}: {e}")),
            }
            Some(vec![])
        }
        "mark" => Some(act(s, Act::Mark)),
        "diff" => Some(act(s, Act::Diff)),
        "why" => {
            let Some(at) = current_cp(s) else {
                say(s, Level::Warn, ":why: no checkpoint shown");
                return Some(vec![]);
            };
            if arg.is_empty() {
                return Some(act(s, Act::Why));
            }
            Some(vec![Effect::Compare(Job::Why {
                at,
                key: arg.to_string(),
            })])
        }
        _ => None,
    }
}

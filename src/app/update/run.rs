//! Running the graph: whether a step / continue may start (and why not), and turning the
//! engine's reports into the run view and the status line.

use super::{say, READ_ONLY};
use crate::app::action::{Breaks, Effect, RunKind, RunResult};
use crate::app::format::{opts, preview, short_id};
use crate::app::state::*;
use crate::app::views::pause_view;
use crate::ids::{interrupt_id, task_ns};
use crate::source::inner_name;
use crate::source::types::InterruptCall;
use crate::source::Breakpoints;
use crate::source::TaskOutcome;
use crate::value::to_view;

pub(super) fn breaks(s: &AppState) -> Breaks {
    Breaks {
        before: s.breaks_before.to_engine(),
        after: s.breaks_after.to_engine(),
    }
}

/// The thread for time travel and update_state, which LangGraph also takes on a subgraph's
/// config: like [`debug_thread`], but an opened subgraph namespace is allowed.
pub(super) fn debug_target(s: &mut AppState) -> Option<String> {
    if s.ns.is_empty() {
        return debug_thread(s);
    }
    if s.mode == Mode::Inspect {
        say(s, Level::Warn, READ_ONLY);
        return None;
    }
    s.thread.clone()
}

/// The thread to act on in debug mode, or why there is none.
pub(super) fn debug_thread(s: &mut AppState) -> Option<String> {
    if s.mode == Mode::Inspect {
        say(s, Level::Warn, READ_ONLY);
        return None;
    }
    if !s.ns.is_empty() {
        let text = format!(
            "viewing subgraph namespace {}: t (time travel) and u (update) work here; Backspace returns to the root graph to step it",
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
pub(super) fn can_run(s: &mut AppState) -> bool {
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
pub(super) fn skipped_break_note(s: &AppState) -> Option<String> {
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

pub(super) fn take_count(s: &mut AppState) -> u32 {
    s.count.take().unwrap_or(1).max(1)
}

/// Keep what the nodes printed, by step (outside any task — the module's import — is step -1).
pub(super) fn keep_output(
    s: &mut AppState,
    reports: &[crate::source::StepReport],
    output: &[crate::source::TaskOutput],
) {
    for out in output {
        let step = reports
            .iter()
            .find(|rep| rep.tasks.iter().any(|t| t.id == out.task_id))
            .map_or(-1, |rep| rep.step);
        // `ran` counts the executions first, so this is the one the Tasks pane shows
        let execution = s.executions.get(&out.task_id).copied().unwrap_or(0);
        s.output.push(OutputLine {
            step,
            execution,
            out: out.clone(),
        });
    }
}

pub(super) fn ran(s: &mut AppState, r: RunResult) {
    super::running::over(s);
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
                    format!("interrupted (id {})", crate::text::head(&i.id, 8))
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
                output: r
                    .output
                    .iter()
                    .filter(|o| o.task_id == t.id)
                    .map(|o| (o.attempt, o.stream.clone(), o.text.clone()))
                    .collect(),
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
    let ran_steps: Vec<i64> = view
        .steps
        .iter()
        .filter(|st| !st.tasks.is_empty())
        .map(|st| st.step)
        .collect();
    let head = if r.kind == RunKind::TimeTravel {
        format!(
            "time travel: landed on {} — n steps from here, c continues",
            r.landed
                .as_deref()
                .map(short_id)
                .unwrap_or_else(|| "?".into())
        )
    } else if ran_steps.len() > 2 {
        // only the supersteps that ran tasks count (the last report may be the pause itself)
        format!(
            "{what}: ran {} supersteps (steps {}–{})",
            ran_steps.len(),
            ran_steps[0],
            ran_steps[ran_steps.len() - 1]
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
            super::traceback::error_tail(s, n, e, &r.reports),
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
    s.last_calls = crate::replay::Counts::of(&r.calls);
    keep_output(s, &r.reports, &r.output);
    super::traceback::keep(s, &r.reports);
}

/// `n` (with a count prefix): step that many supersteps.
pub(super) fn step(s: &mut AppState) -> Vec<Effect> {
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

/// `S`: step into subgraphs — one superstep with a break-after on every node of every subgraph
/// (`inner|*`), so a subgraph that runs in it pauses after its own first superstep. For a Python
/// graph the bridge sets that on the subgraph objects (runtime breakpoints do not reach them),
/// which LangGraph treats as a breakpoint compiled into the subgraph.
pub(super) fn step_into(s: &mut AppState) -> Vec<Effect> {
    let subs = s.graph.subgraph_paths();
    if subs.is_empty() {
        say(
            s,
            Level::Warn,
            "no subgraph to step into (S breaks inside the subgraphs of a Python graph): n steps one superstep",
        );
        s.count = None;
        return vec![];
    }
    let root = s.graph.root_nodes();
    let mut effects = step(s);
    for e in &mut effects {
        if let Effect::Step { breaks, .. } = e {
            let mut after = match &breaks.after {
                Breakpoints::Nodes(v) => v.clone(),
                Breakpoints::None => Vec::new(),
                // `*` is the root's alone: spelled out, with the subgraphs' names next to it
                Breakpoints::All => root.clone(),
            };
            after.extend(subs.iter().map(|p| inner_name(p, "*")));
            breaks.after = Breakpoints::Nodes(after);
        }
    }
    effects
}

/// `c`: continue to the next pause.
pub(super) fn continue_run(s: &mut AppState) -> Vec<Effect> {
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

/// The engine (or the store) refused: the error, then what to do about it.
pub(super) fn failed(s: &mut AppState, error: String, hint: String) {
    super::running::over(s);
    let text = if hint.is_empty() {
        error
    } else {
        format!("{error} — {hint}")
    };
    say(s, Level::Error, text);
}

/// update_state wrote a checkpoint.
pub(super) fn state_updated(s: &mut AppState, checkpoint: String, as_node: String) {
    s.run_pause = None;
    let next = if s.ns.is_empty() {
        "n/c run from it"
    } else {
        "the subgraph resumes from it: Backspace, then n/c/r run the root"
    };
    say(
        s,
        Level::Info,
        format!(
            "update_state as {as_node}: new checkpoint {} — {next}",
            short_id(&checkpoint)
        ),
    );
}

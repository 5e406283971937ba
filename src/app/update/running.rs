//! A run in progress: a Python graph's superstep runs in the bridge while the TUI keeps answering
//! keys. Moving around and opening values work; anything that would start another run waits;
//! Esc (or Ctrl-C) asks the run to stop, a second Ctrl-C quits.

use super::say;
use crate::app::action::{Action, Effect};
use crate::app::state::*;
use crate::app::viewer::{Section, Viewer};

/// Actions that start or change a run, refused while one is in progress.
fn starts_a_run(a: &Action) -> bool {
    matches!(
        a,
        Action::Step
            | Action::StepInto
            | Action::Continue
            | Action::OpenResume
            | Action::OpenTimeTravel
            | Action::OpenUpdate
            | Action::OpenNewThread
            | Action::OpenTurn
            | Action::Reload
            | Action::OpenThreadPicker
            | Action::EnterSubgraph
            | Action::LeaveSubgraph
            | Action::Submit
            | Action::Confirm
            | Action::Command(_)
            | Action::ExternalChange
    )
}

/// `Some(effects)` when the action is handled here because a run is in progress.
pub(super) fn while_running(s: &mut AppState, a: &Action) -> Option<Vec<Effect>> {
    let running = s.running.as_mut()?;
    match a {
        Action::Quit if running.cancelling => None,
        Action::Quit => {
            // q means quit: stop the run first (the file keeps its last committed checkpoint),
            // then go; a second q quits at once
            running.quit_after = true;
            let effects = cancel(s);
            say(
                s,
                Level::Warn,
                "quitting: the bridge interrupts the node first (killed if it does not stop) — q again quits at once",
            );
            Some(effects)
        }
        Action::Cancel if s.modal.is_none() => Some(cancel(s)),
        a if starts_a_run(a)
            && !matches!(s.modal, Some(Modal::Viewer(_)) | Some(Modal::Help { .. })) =>
        {
            let what = running.what.clone();
            say(
                s,
                Level::Warn,
                format!("the {what} is still running — wait for it, or Esc to cancel it"),
            );
            Some(vec![])
        }
        _ => None,
    }
}

/// The run is over (done, failed or cancelled): quit when `q` asked for it meanwhile.
pub(super) fn over(s: &mut AppState) {
    if s.running.take().is_some_and(|r| r.quit_after) {
        s.quit = true;
    }
}

fn cancel(s: &mut AppState) -> Vec<Effect> {
    if let Some(r) = s.running.as_mut() {
        r.cancelling = true;
    }
    say(
        s,
        Level::Warn,
        "cancelling: the bridge interrupts the node (killed if it does not stop) — Ctrl-C again quits",
    );
    vec![Effect::CancelRun]
}

pub(super) fn started(s: &mut AppState, what: String) -> Vec<Effect> {
    s.running = Some(Running {
        what,
        elapsed_ms: 0,
        cancelling: false,
        quit_after: false,
        nodes: Vec::new(),
    });
    vec![]
}

pub(super) fn tick(s: &mut AppState, ms: u64, nodes: Vec<String>) -> Vec<Effect> {
    if let Some(r) = s.running.as_mut() {
        r.elapsed_ms = ms;
        r.nodes = nodes;
    }
    vec![]
}

/// The spinner line: `⠹ step: agent, tools running 3.2 s · Esc cancels`.
pub fn running_line(r: &Running) -> String {
    const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
    let frame = FRAMES[(r.elapsed_ms / 100) as usize % FRAMES.len()];
    let secs = r.elapsed_ms as f64 / 1000.0;
    let nodes = if r.nodes.is_empty() {
        String::new()
    } else {
        format!(": {}", r.nodes.join(", "))
    };
    if r.cancelling {
        format!("{frame} cancelling the {}{nodes} … {secs:.1} s", r.what)
    } else {
        format!(
            "{frame} {}{nodes} running {secs:.1} s · Esc cancels",
            r.what
        )
    }
}

/// `o`: every captured output of the session, by step, task and attempt.
pub(super) fn open_output(s: &mut AppState) -> Vec<Effect> {
    if s.output.is_empty() {
        say(
            s,
            Level::Info,
            "no node output captured yet (Python graphs: what nodes print or log shows here)",
        );
        return vec![];
    }
    let mut lines = Vec::new();
    let mut last: Option<(i64, &str, u32, u32)> = None;
    // executions whose node was retried: their lines say which attempt (LangGraph's count,
    // from 1 in each execution), as the Tasks pane tags them
    let retried: std::collections::BTreeSet<(&str, u32)> = s
        .output
        .iter()
        .filter(|l| l.out.attempt > 1)
        .map(|l| (l.out.task_id.as_str(), l.execution))
        .collect();
    for line in &s.output {
        let o = &line.out;
        let key = (line.step, o.task_id.as_str(), line.execution, o.attempt);
        if last != Some(key) {
            lines.push(if o.task_id.is_empty() && o.stream == super::TRACEBACK {
                "the run ended on an error".to_string()
            } else if o.task_id.is_empty() {
                "outside any node (the module's import, the bridge)".to_string()
            } else {
                format!(
                    "step {} · {}{} · task {}{}{}",
                    line.step,
                    o.node,
                    if o.ns.is_empty() {
                        String::new()
                    } else {
                        format!(" (in {})", o.ns)
                    },
                    crate::text::head(&o.task_id, 8),
                    // the Tasks pane's wording for the same execution
                    if line.execution > 1 {
                        format!(" · re-run #{}", line.execution)
                    } else {
                        String::new()
                    },
                    if retried.contains(&(o.task_id.as_str(), line.execution)) {
                        format!(" · attempt {}", o.attempt)
                    } else {
                        String::new()
                    }
                )
            });
            last = Some(key);
        }
        for l in o.text.lines() {
            lines.push(format!(
                "  {}{l}",
                match o.stream.as_str() {
                    "stderr" => "! ",
                    super::TRACEBACK => "✗ ",
                    _ => "| ",
                }
            ));
        }
    }
    let (w, h) = s.viewer_area();
    let v = Viewer::new("Node output".to_string(), vec![Section::Text(lines)], w, h);
    s.modal = Some(Modal::Viewer(Box::new(v)));
    vec![]
}

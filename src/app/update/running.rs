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
        Action::Quit => Some(cancel(s)),
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
    });
    vec![]
}

pub(super) fn tick(s: &mut AppState, ms: u64) -> Vec<Effect> {
    if let Some(r) = s.running.as_mut() {
        r.elapsed_ms = ms;
    }
    vec![]
}

/// The spinner line: `⠹ step running 3.2 s · Esc cancels`.
pub fn running_line(r: &Running) -> String {
    const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
    let frame = FRAMES[(r.elapsed_ms / 100) as usize % FRAMES.len()];
    let secs = r.elapsed_ms as f64 / 1000.0;
    if r.cancelling {
        format!("{frame} cancelling the {} … {secs:.1} s", r.what)
    } else {
        format!("{frame} {} running {secs:.1} s · Esc cancels", r.what)
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
            lines.push(if o.task_id.is_empty() {
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
                if o.stream == "stderr" { "! " } else { "| " }
            ));
        }
    }
    let (w, h) = s.viewer_area();
    let v = Viewer::new("Node output".to_string(), vec![Section::Text(lines)], w, h);
    s.modal = Some(Modal::Viewer(Box::new(v)));
    vec![]
}

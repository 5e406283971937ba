//! Tracebacks (Python graphs): a task that raised, or a run that ended on an error, leaves its
//! traceback — the app's own frame first (`at FILE:LINE in FUNC`) — in the session's output log,
//! where the `o` pane and the task view (Enter in Tasks) show it, and the status line says where.

use crate::app::state::*;
use crate::source::StepReport;
use crate::source::TaskOutput;

/// The stream name tracebacks are kept under in [`AppState::output`].
pub const TRACEBACK: &str = "traceback";

/// Keep the tracebacks of the tasks that raised in `reports` (after their output, so `o` shows
/// them under the same execution).
pub(super) fn keep(s: &mut AppState, reports: &[StepReport]) {
    for rep in reports {
        for t in &rep.tasks {
            let Some(tb) = &t.traceback else { continue };
            let execution = s.executions.get(&t.id).copied().unwrap_or(0);
            s.output.push(OutputLine {
                step: rep.step,
                execution,
                out: TaskOutput {
                    task_id: t.id.clone(),
                    node: t.name.clone(),
                    ns: String::new(),
                    attempt: t.attempts.max(1),
                    stream: TRACEBACK.into(),
                    text: tb.clone(),
                },
            });
        }
    }
}

/// `retry.py:27` from a traceback's first line (`at /path/retry.py:27 in strict`).
pub fn short_at(tb: &str) -> Option<String> {
    let at = tb.lines().next()?.strip_prefix("at ")?;
    let (place, _) = at.rsplit_once(" in ").unwrap_or((at, ""));
    let name = place.rsplit('/').next().unwrap_or(place);
    Some(name.to_string())
}

/// The newest traceback of task `task_id` this session.
pub fn of_task<'a>(s: &'a AppState, task_id: &str) -> Option<&'a str> {
    s.output
        .iter()
        .rev()
        .find(|l| l.out.task_id == task_id && l.out.stream == TRACEBACK)
        .map(|l| l.out.text.as_str())
}

/// The status line's tail after a node error: where it was raised and what fixes it — the code
/// (`R` reloads it) when the graph can be reloaded, else the state (`u`).
pub(super) fn error_tail(s: &AppState, node: &str, error: &str, reports: &[StepReport]) -> String {
    let at = reports
        .iter()
        .flat_map(|r| &r.tasks)
        .filter(|t| t.name == node)
        .filter_map(|t| t.traceback.as_deref())
        .next_back()
        .and_then(short_at)
        .map(|a| format!(" at {a}"))
        .unwrap_or_default();
    if s.graph.reloadable {
        format!(
            " · error in {node}: {error}{at} — fix the code, R reloads it, c retries (o: traceback)"
        )
    } else {
        format!(" · error in {node}: {error}{at} — fix the state with u, then c retries")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frame_is_named_short() {
        let tb = "at /home/me/app/nodes.py:27 in strict\nTraceback (most recent call last):\n...";
        assert_eq!(short_at(tb).as_deref(), Some("nodes.py:27"));
        assert_eq!(short_at("Traceback ..."), None);
    }
}

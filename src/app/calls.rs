//! The recorded model and tool calls in the TUI (Python graphs, issue 23): the task view's list
//! of a task's calls and the status line's count of the last run's. Pure view builders.

use crate::replay::{diff, CallRow, CallStatus, Counts, ReplayMode};

/// The task view's lines for the calls of task `task_id` (its own and those of subgraph tasks
/// inside it), oldest run first: kind, name, recorded / live / diverged, latency, tokens, one
/// line each of request and answer; a divergence is marked, with where the request differs.
pub fn task_lines(rows: &[CallRow], task_id: &str) -> Vec<String> {
    let mine: Vec<&CallRow> = rows.iter().filter(|r| belongs(r, task_id)).collect();
    if mine.is_empty() {
        return Vec::new();
    }
    let counts = Counts::of(mine.iter().map(|r| &r.call));
    let mut out = vec![
        String::new(),
        format!("model and tool calls ({})", counts.words(" · ")),
    ];
    let mut run = None;
    for r in mine {
        let c = &r.call;
        if c.run != run && c.run.is_some() {
            run = c.run;
            out.push(format!("  run {}", c.run.unwrap_or_default()));
        }
        let mark = match c.status {
            CallStatus::Diverged => "◆",
            CallStatus::Recorded => "↺",
            CallStatus::Live => "●",
        };
        let attempt = if c.attempt > 1 {
            format!(" attempt {}", c.attempt)
        } else {
            String::new()
        };
        let inner = if c.task_id != task_id && !c.node.is_empty() {
            format!(" in {}", c.node)
        } else {
            String::new()
        };
        out.push(format!(
            "  {mark} #{}{attempt}{inner}  {}",
            c.seq + 1,
            c.line()
        ));
        if c.status == CallStatus::Diverged {
            out.push("      first divergence: the request differs from the recording".into());
            for d in &r.diff {
                out.push(format!("        {}", diff::line(d)));
            }
        }
    }
    out
}

fn belongs(r: &CallRow, task_id: &str) -> bool {
    let c = &r.call;
    c.task_id == task_id
        || c.root_task_id.as_deref() == Some(task_id)
        || c.ns
            .split('|')
            .any(|seg| seg.rsplit(':').next() == Some(task_id))
}

/// The status line's part: the last run's calls, and the replay mode when it is not the default.
pub fn status_part(last: Counts, mode: ReplayMode) -> Option<String> {
    let mode = (mode != ReplayMode::Diverge).then(|| format!("replay {}", mode.name()));
    let calls = (last.total() > 0).then(|| format!("calls {}", last.words(" · ")));
    match (calls, mode) {
        (None, None) => None,
        (Some(c), None) => Some(c),
        (None, Some(m)) => Some(m),
        (Some(c), Some(m)) => Some(format!("{c} ({m})")),
    }
}

/// The time-travel dialog's word on the recorded calls of the tasks about to run again.
pub fn travel_line(rows: &[CallRow], mode: ReplayMode) -> Option<String> {
    if rows.is_empty() {
        return None;
    }
    Some(match mode {
        ReplayMode::Diverge => "  • but their recorded model and tool calls are answered from the recording until a request differs (P: replay mode)",
        ReplayMode::Strict => "  • but their recorded model and tool calls are answered from the recording; a request that differs stops the run (replay strict)",
        ReplayMode::Off => "  • their model and tool calls are made again (replay off; P: replay mode)",
    }.to_string())
}

/// `R`: the next replay mode.
pub fn next_mode(m: ReplayMode) -> ReplayMode {
    match m {
        ReplayMode::Diverge => ReplayMode::Strict,
        ReplayMode::Strict => ReplayMode::Off,
        ReplayMode::Off => ReplayMode::Diverge,
    }
}

/// What `R` says about the mode it set.
pub fn mode_message(m: ReplayMode) -> String {
    match m {
        ReplayMode::Diverge => "replay diverge: model and tool calls come from the recording until a request differs, then live (P: strict)",
        ReplayMode::Strict => "replay strict: calls come from the recording; a request that differs stops the run, naming the call (P: off)",
        ReplayMode::Off => "replay off: the model and the tools are called again, still recorded (P: diverge)",
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::Call;
    use serde_json::json;

    fn call(seq: u32, status: CallStatus, task: &str) -> CallRow {
        let c: Call = serde_json::from_value(json!({
            "task_id": task, "ns": format!("agent:{task}"), "node": "agent", "attempt": 1,
            "seq": seq, "kind": "model", "name": "M", "status": status, "request": "1 msgs, last human: hello",
            "response": "ai: hi", "latency_us": 1500, "input_tokens": 10, "output_tokens": 7, "run": 2,
            "root_task_id": task,
        }))
        .unwrap();
        let diff = if status == CallStatus::Diverged {
            diff::differences(
                &json!({"messages": ["hi"]}),
                &json!({"messages": ["hello"]}),
                4,
            )
        } else {
            vec![]
        };
        CallRow { call: c, diff }
    }

    #[test]
    fn a_task_lists_its_calls_and_marks_the_first_divergence() {
        let rows = [
            call(0, CallStatus::Recorded, "t1"),
            call(1, CallStatus::Diverged, "t1"),
            call(2, CallStatus::Live, "t1"),
            call(0, CallStatus::Live, "other"),
        ];
        let l = task_lines(&rows, "t1");
        assert_eq!(
            l[1],
            "model and tool calls (1 recorded · 1 live · 1 diverged)"
        );
        assert_eq!(l[2], "  run 2");
        assert_eq!(
            l[3],
            "  ↺ #1  model M  recorded     1.5 ms  10/7 tok  1 msgs, last human: hello ⇒ ai: hi"
        );
        assert!(l[4].starts_with("  ◆ #2  model M  diverged"));
        assert_eq!(
            l[5],
            "      first divergence: the request differs from the recording"
        );
        assert_eq!(l[6], "        messages[0]: \"hi\" → \"hello\"");
        assert!(l[7].starts_with("  ● #3"));
        assert_eq!(l.len(), 8);
        assert!(task_lines(&rows, "none").is_empty());
    }

    #[test]
    fn the_status_part_counts_the_last_run_and_names_a_mode_other_than_diverge() {
        let c = Counts {
            recorded: 7,
            live: 0,
            diverged: 0,
        };
        assert_eq!(
            status_part(c, ReplayMode::Diverge).unwrap(),
            "calls 7 recorded"
        );
        assert_eq!(
            status_part(Counts::default(), ReplayMode::Strict).unwrap(),
            "replay strict"
        );
        assert_eq!(status_part(Counts::default(), ReplayMode::Diverge), None);
        assert_eq!(
            next_mode(next_mode(next_mode(ReplayMode::Diverge))),
            ReplayMode::Diverge
        );
    }
}

//! What a failing or dead bridge says: the user's error with its frame, the exit status, a hint per
//! error kind.

use super::*;

pub(super) fn message(
    reference: &PythonRef,
    py: &Interpreter,
    e: &str,
    frame: Option<&str>,
) -> String {
    let at = frame.map(|f| format!(" (at {f})")).unwrap_or_default();
    format!(
        "{}: {e}{at}; interpreter {} ({}) — choose another with --python PATH",
        reference.label,
        py.path.display(),
        py.why
    )
}

pub(super) fn task_output(o: Output) -> TaskOutput {
    TaskOutput {
        task_id: o.task_id.unwrap_or_default(),
        node: o.node.unwrap_or_default(),
        ns: o.ns.unwrap_or_default(),
        attempt: o.attempt.unwrap_or(0),
        stream: o.stream,
        text: o.text,
    }
}

pub(super) fn wire_error(e: &WireError, hint: &str) -> SourceError {
    let at = e
        .frame
        .as_deref()
        .map(|f| format!(" (at {f})"))
        .unwrap_or_default();
    SourceError::message(format!("{}{at}", e.message), hint)
}

/// Whether a run's error is a save the bridge refused or could not make (`SaveFailed` in
/// superstep_saves.py: the store locked, a value it cannot encode, the thread moved on by another
/// writer, the file gone): the CLI's exit code 2, not 3 — the graph did not fail.
pub(super) fn is_save_failure(e: &WireError) -> bool {
    matches!(
        e.kind.as_str(),
        "locked" | "encode" | "thread_moved" | "missing" | "store_lost" | "save"
    ) || !e.hint.is_empty()
}

/// The error a run ended on (`done.error`): the graph's, with its traceback — except LangGraph's
/// refusals of the request itself (nothing to run, several interrupts answered without ids).
pub(super) fn run_error(e: &WireError) -> SourceError {
    let usage = e.kind == "EmptyInputError"
        || (e.kind == "RuntimeError" && e.message.contains("multiple pending interrupts"));
    if usage {
        return wire_error(e, &hint_for(&e.kind));
    }
    let at = e
        .frame
        .as_deref()
        .map(|f| format!(" (at {f})"))
        .unwrap_or_default();
    let hint = match e.kind.as_str() {
        "InvalidUpdateError" => "a node's update does not fit the state (two values for a plain key in one superstep, or a key the state does not have): fix the node or give the key a reducer; the supersteps before it are committed".to_string(),
        _ => String::new(),
    };
    SourceError::Graph {
        message: format!("{}{at}", e.message),
        hint,
        traceback: crate::bridge::protocol::error_trace(e.frame.as_deref(), e.traceback.as_deref()),
    }
}

/// How long to wait for the exit status of a bridge whose socket closed.
pub(super) const EXIT_WAIT: Duration = Duration::from_secs(3);

/// `; it printed: …` — the last lines the module printed before the bridge exited (captured
/// output, else the bridge's own stdout/stderr), or that it printed nothing.
pub(super) fn printed(loose: &[TaskOutput], tail: &str) -> String {
    let text: String = loose.iter().map(|o| o.text.as_str()).collect();
    let text = if text.trim().is_empty() { tail } else { &text };
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return "; it printed nothing".into();
    }
    let last = &lines[lines.len().saturating_sub(3)..];
    format!("; it printed: {}", last.join(" / "))
}

pub(super) fn hint_for(kind: &str) -> String {
    match kind {
        "EmptyInputError" => {
            "there is nothing to run with this input (no pending task and no new input)".into()
        }
        "RuntimeError" => "several interrupts are pending: answer them by id".into(),
        "InvalidUpdateError" => {
            "the update does not fit the graph: check as_node and the keys".into()
        }
        _ => String::new(),
    }
}

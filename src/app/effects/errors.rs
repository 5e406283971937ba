//! What a failed effect tells `update`: an error of the graph source, the inspector or a value
//! the user gave, as an `Action::Failed`.

use crate::app::action::Action;
use crate::inspect::InspectError;
use crate::source::SourceError;

pub(super) fn source_error(e: &SourceError) -> Action {
    let mut hint = e.hint();
    if e.traceback().is_some() {
        hint = if hint.is_empty() {
            "o shows the traceback".into()
        } else {
            format!("{hint} (o shows the traceback)")
        };
    }
    let error = e.to_string();
    // the docs link does not fit a status line
    let error = match error.split_once(" Docs: ") {
        Some((head, _)) => head.to_string(),
        None => error,
    };
    Action::Failed { error, hint }
}

pub(super) fn inspect_error(e: InspectError) -> Action {
    Action::Failed {
        error: e.to_string(),
        hint: String::new(),
    }
}

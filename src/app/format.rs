//! Short text forms of values and ids that the update and the panes share.

use crate::value::ViewOptions;
use serde_json::Value as Json;

/// How long a one-line preview of a value may be in a pane row.
pub const PREVIEW: usize = 200;

/// The options every view of a stored value uses in the TUI.
pub fn opts() -> ViewOptions {
    ViewOptions::default()
}

/// A value on one line, cut at `max` columns: conversations summarised, typed leaves tagged,
/// the rest compact JSON (see [`crate::present`]).
pub fn preview(j: &Json, max: usize) -> String {
    crate::present::line(j, max)
}

/// Escaped and cut at `max` columns.
pub fn cut(s: &str, max: usize) -> String {
    crate::text::cut(&crate::text::escape(s), max).into_owned()
}

/// Pretty JSON split into lines (for the viewer).
pub fn pretty(j: &Json) -> Vec<String> {
    serde_json::to_string_pretty(j)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// `1f1ee4ae…ea1fd43f2aa2`: uuid6 ids share their time prefix, the node part tells them apart.
/// Cut by characters, escaped.
pub fn short_id(id: &str) -> String {
    crate::text::short_id(id)
}

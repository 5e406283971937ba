//! Short text forms of values and ids that the update and the panes share.

use crate::value::ViewOptions;
use serde_json::Value as Json;

/// How long a one-line preview of a value may be in a pane row.
pub const PREVIEW: usize = 200;

/// The options every view of a stored value uses in the TUI.
pub fn opts() -> ViewOptions {
    ViewOptions::default()
}

/// One-line JSON, cut at `max` characters.
pub fn preview(j: &Json, max: usize) -> String {
    let s = match j {
        Json::String(s) => serde_json::to_string(s).unwrap_or_default(),
        other => serde_json::to_string(other).unwrap_or_default(),
    };
    cut(&s, max)
}

pub fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
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
pub fn short_id(id: &str) -> String {
    if id.len() == 36 {
        format!("{}…{}", &id[..8], &id[24..])
    } else {
        id.to_string()
    }
}

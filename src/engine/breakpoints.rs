//! `should_interrupt` (spec §8): static breakpoints fire at most once per resume, tracked by the
//! `versions_seen["__interrupt__"]` watermark.

use super::pregel::State;
use crate::spec::model::Breakpoints;
use crate::store::Version;

/// Names of the tasks that trigger the breakpoint, or empty.
pub fn should_interrupt<'a>(
    state: &State,
    nodes: &Breakpoints,
    tasks: impl Iterator<Item = &'a str>,
) -> Vec<String> {
    if nodes.is_empty() {
        return Vec::new();
    }
    let seen = state.seen("__interrupt__");
    let any_updates = state.channel_versions.iter().any(|(ch, v)| {
        let s = seen.and_then(|s| s.iter().find(|(k, _)| k == ch).map(|(_, v)| v));
        Version::gt(Some(v), s)
    });
    if !any_updates {
        return Vec::new();
    }
    tasks
        .filter(|t| nodes.matches(t))
        .map(str::to_string)
        .collect()
}

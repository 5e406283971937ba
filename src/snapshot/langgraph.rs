//! A checkpoint as LangGraph itself reads it (`get_state_history` through the bridge, with the
//! user's own graph): where the rows alone cannot tell — a reducer of the app's own rebuilding a
//! DeltaChannel, a checkpoint an older LangGraph wrote — its values and next replace the ones the
//! snapshot derived, and the warnings about them go (they are exact now).

use super::Snapshot;
use rmpv::Value;

/// LangGraph's `StateSnapshot` of one checkpoint: what superstep takes from it.
#[derive(Debug, Clone, PartialEq)]
pub struct LangGraphState {
    pub checkpoint_id: String,
    pub next: Vec<String>,
    /// `values` as LangGraph returns them (key -> value, or `__root__` for a bare value).
    pub values: Vec<(String, Value)>,
    /// The graph's state is a bare value (a functional-API entrypoint's return value).
    pub root: bool,
}

impl Snapshot {
    /// Take LangGraph's values and next for this checkpoint; returns how many fields changed
    /// (a state key or next).
    pub fn take_langgraph(&mut self, lg: &LangGraphState) -> usize {
        let mut changed = 0;
        if self.next != lg.next {
            self.next = lg.next.clone();
            changed += 1;
        }
        for (k, v) in &lg.values {
            match self.values.iter_mut().find(|(sk, _)| sk == k) {
                Some((_, sv)) if sv == v => {}
                Some((_, sv)) => {
                    *sv = v.clone();
                    changed += 1;
                }
                None => {
                    self.values.push((k.clone(), v.clone()));
                    changed += 1;
                }
            }
        }
        let before = self.values.len();
        self.values
            .retain(|(k, _)| lg.values.iter().any(|(lk, _)| lk == k));
        changed += before - self.values.len();
        self.root_value = lg.root;
        // what was said about values and next is moot: they are LangGraph's now
        self.warnings
            .retain(|w| !(w.field == "next" || w.field.starts_with("values")));
        self.limitations
            .retain(|w| !(w.field == "next" || w.field.starts_with("values")));
        changed
    }
}

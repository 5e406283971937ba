//! `derive`, step 4: the values — channel values (+ reducer defaults and delta history), NULL
//! writes, and for a live `get_state` the finished tasks' outputs.

use super::tasks::status_of;
use super::{delta, reducers, Input, Learned, TaskSnapshot, Warning};
use crate::ids::{self, NULL_TASK_ID};
use rmpv::Value;

/// The snapshot's `values`, with a warning for each value that is partial or a guess.
pub(super) fn values(
    input: &Input,
    tasks: &[TaskSnapshot],
    state_keys: &[String],
    legacy: bool,
    warnings: &mut Vec<Warning>,
) -> Vec<(String, Value)> {
    let cp = input.checkpoint;
    let is_state_key = |k: &str| state_keys.iter().any(|s| s == k);
    // ---- values: channel values (+ reducer defaults) + NULL writes (+ live: finished outputs)
    let mut values: Vec<(String, Value)> = Vec::new();
    for k in state_keys {
        if let Some(v) = cp.value(k) {
            // a DeltaChannel's snapshot blob holds the value itself
            values.push((
                k.clone(),
                delta::snapshot_content(v).unwrap_or_else(|| v.clone()),
            ));
        } else if let Some(h) = input.delta.iter().find(|h| h.key == *k) {
            let default = input
                .topology
                .and_then(|t| t.key(k))
                .and_then(|k| k.default.clone());
            let (v, w) = delta::rebuild(h, input.topology, default);
            values.push((k.clone(), v));
            warnings.extend(w);
        } else if let Some(d) = input
            .topology
            .and_then(|t| t.key(k))
            .and_then(|k| k.default.clone())
        {
            values.push((k.clone(), d));
        }
    }
    let mut groups: Vec<(String, Vec<Value>)> = Vec::new();
    let mut push_write = |c: &str, v: Value| match groups.iter_mut().find(|(k, _)| k == c) {
        Some((_, vs)) => vs.push(v),
        None => groups.push((c.to_string(), vec![v])),
    };
    // LangGraph 0.2.20 (v1) applies no pending writes to the values
    // a write that is a preview (too big to load) is not applied: the value would be made up
    let mut unapplied: Vec<(String, String)> = Vec::new();
    for w in input
        .writes
        .iter()
        .filter(|w| w.task_id == NULL_TASK_ID && cp.v > 1)
    {
        if is_state_key(&w.channel) {
            if w.cut.is_some() {
                unapplied.push((w.channel.clone(), "an update_state".into()));
                continue;
            }
            push_write(&w.channel, w.value.clone().into_value());
        }
    }
    reducers::apply_groups(
        &mut values,
        std::mem::take(&mut groups),
        input.topology,
        input.learned,
        warnings,
    );
    if input.live && cp.v > 1 {
        let mut finished: Vec<&TaskSnapshot> = tasks.iter().filter(|t| t.finished).collect();
        finished.sort_by_key(|t| ids::task_path_str(&t.path));
        let mut groups: Vec<(String, Vec<Value>)> = Vec::new();
        let cut_writes: Vec<(&str, &str)> = input
            .writes
            .iter()
            .filter(|w| w.cut.is_some())
            .map(|w| (w.task_id.as_str(), w.channel.as_str()))
            .collect();
        for t in finished {
            let st = status_of(input, legacy, &t.id);
            for (c, v) in st.output {
                let cut = cut_writes.contains(&(t.id.as_str(), c.as_str()));
                if cut && is_state_key(&c) {
                    unapplied.push((c, format!("task {}'s", t.name)));
                    continue;
                }
                if is_state_key(&c) {
                    match groups.iter_mut().find(|(k, _)| *k == c) {
                        Some((_, vs)) => vs.push(v),
                        None => groups.push((c, vec![v])),
                    }
                }
            }
        }
        reducers::apply_groups(&mut values, groups, input.topology, input.learned, warnings);
    }
    unapplied.dedup();
    for (k, whose) in unapplied {
        warnings.push(Warning {
            field: format!("values.{k}"),
            message: format!(
                "'{k}' is shown without {whose} write to it: that write is a preview (too big to load whole), applying it would show made-up values"
            ),
        });
    }
    if input.topology.is_none() {
        // keys other checkpoints of the thread hold but this one lacks: LangGraph shows a reducer
        // key's default here, a last-value key not at all
        let last_value = |k: &str| {
            input
                .learned
                .iter()
                .any(|(l, r)| l == k && *r == Learned::LastValue)
        };
        for k in state_keys
            .iter()
            .filter(|k| !values.iter().any(|(v, _)| v == *k))
            // a last-value key not written yet is absent in LangGraph's view too
            .filter(|k| !last_value(k))
        {
            let default = input.defaults.iter().find(|(e, _)| e == k).map(|(_, d)| *d);
            warnings.push(Warning {
                field: format!("values.{k}"),
                message: match default {
                    Some(d) => format!(
                        "'{k}' has no value at this checkpoint though the thread writes it: if it has a reducer, LangGraph shows its default here (likely {d}); a last-value key is absent, as here (pass the graph to be exact)"
                    ),
                    None => format!(
                        "'{k}' has no value at this checkpoint though the thread writes it: if it has a reducer, LangGraph shows its default here; a last-value key is absent, as here (pass the graph to be exact)"
                    ),
                },
            });
        }
    }
    values
}

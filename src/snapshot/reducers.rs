//! Applying writes to state keys the way LangGraph's channels do: `LastValue` takes the (single)
//! write, `BinaryOperatorAggregate(operator.add)` folds with `+`, `Overwrite` bypasses the reducer.

use super::topology::{Reducer, Topology};
use super::Warning;
use crate::value::ext::overwrite_value;
use rmpv::Value;

/// `operator.add(a, b)` for the value kinds msgpack carries.
pub fn apply_reducer(a: &Value, b: &Value) -> Option<Value> {
    Some(match (a, b) {
        (Value::Array(x), Value::Array(y)) => Value::Array(x.iter().chain(y).cloned().collect()),
        (Value::String(x), Value::String(y)) => {
            Value::from(format!("{}{}", x.as_str()?, y.as_str()?))
        }
        (Value::Integer(x), Value::Integer(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => Value::from(x.checked_add(y)?),
            _ => Value::from(x.as_u64()?.checked_add(y.as_u64()?)?),
        },
        (Value::F64(x), Value::F64(y)) => Value::F64(x + y),
        (Value::F64(x), Value::Integer(y)) => Value::F64(x + y.as_f64()?),
        (Value::Integer(x), Value::F64(y)) => Value::F64(x.as_f64()? + y),
        _ => return None,
    })
}

/// How a key's channel combined writes on this thread, learned from its own checkpoints
/// (without the graph): a child checkpoint whose value is the parent's value plus the writes
/// shows an accumulating reducer (`operator.add`, `add_messages`), one whose value is the last
/// write shows a last-value channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Learned {
    Accumulates,
    LastValue,
}

/// What one parent -> child transition says about a key's reducer: the parent's value, the
/// writes applied to it (in LangGraph's order), the child's value. `None` when both readings
/// give the same value (no evidence) or neither does.
pub fn evidence(
    parent: Option<&Value>,
    writes: &[Value],
    child: Option<&Value>,
) -> Option<Learned> {
    let child = child?;
    let last = writes.last()?;
    if writes.iter().any(|w| overwrite_value(w).is_some()) {
        return None;
    }
    let mut acc = parent.cloned();
    for w in writes {
        acc = Some(match acc {
            None => w.clone(),
            Some(a) => apply_reducer(&a, w)?,
        });
    }
    match (acc.as_ref() == Some(child), last == child) {
        (true, false) => Some(Learned::Accumulates),
        (false, true) => Some(Learned::LastValue),
        _ => None,
    }
}

/// A write `add_messages` would change on its way in: a single message (it wraps it in a list)
/// or messages without ids (it gives them ids).
fn reshaped_by_add_messages(w: &Value) -> bool {
    let is_message = |v: &Value| {
        crate::value::to_view(v, crate::value::ViewOptions::default())
            .get("__type__")
            .and_then(|t| t.as_str())
            .is_some_and(|t| t.starts_with("langchain_core.messages."))
    };
    let no_id = |v: &Value| {
        crate::value::to_view(v, crate::value::ViewOptions::default())
            .get("id")
            .is_none_or(|i| i.is_null())
    };
    match w {
        Value::Array(items) => items.iter().any(|m| is_message(m) && no_id(m)),
        v => is_message(v),
    }
}

/// Apply grouped writes (channel -> values in application order) to `values`.
pub(super) fn apply_groups(
    values: &mut Vec<(String, Value)>,
    groups: Vec<(String, Vec<Value>)>,
    topology: Option<&Topology>,
    learned: &[(String, Learned)],
    warnings: &mut Vec<Warning>,
) {
    for (key, writes) in groups {
        let reducer = match topology {
            Some(t) => t
                .key(&key)
                .map(|k| k.reducer.clone())
                .unwrap_or(Reducer::LastValue),
            None => match learned.iter().find(|(k, _)| *k == key).map(|(_, l)| *l) {
                // the thread's own checkpoints show how this key combines writes
                Some(Learned::Accumulates) => Reducer::Add,
                Some(Learned::LastValue) => Reducer::LastValue,
                None => {
                    let current = values.iter().find(|(k, _)| *k == key).map(|(_, v)| v);
                    let guess = match (current, writes.first()) {
                        (Some(Value::Array(_)), Some(Value::Array(_)))
                        | (None, Some(Value::Array(_))) => Reducer::Add,
                        _ if writes.len() > 1 => Reducer::Add,
                        _ => Reducer::LastValue,
                    };
                    // one write to a key with no value: every reducer LangGraph ships gives the
                    // write itself (a default [] / 0 / "" plus it), unless add_messages reshapes it
                    let same_either_way = current.is_none()
                        && writes.len() == 1
                        && !reshaped_by_add_messages(&writes[0]);
                    if !same_either_way {
                        warnings.push(Warning {
                            field: format!("values.{key}"),
                            message: format!(
                                "reducer of '{key}' is unknown without the graph and no earlier checkpoint of the thread shows it; pending writes applied as {}",
                                if guess == Reducer::Add { "operator.add" } else { "last value" }
                            ),
                        });
                    }
                    guess
                }
            },
        };
        let pos = values.iter().position(|(k, _)| *k == key);
        let mut current = pos.map(|p| values[p].1.clone());
        match &reducer {
            Reducer::LastValue => {
                if let Some(last) = writes.last() {
                    current = Some(overwrite_value(last).unwrap_or_else(|| last.clone()));
                }
            }
            Reducer::Add | Reducer::Other(_) => {
                let mut it = writes.into_iter();
                if current.is_none() {
                    current = it.next().map(|v| overwrite_value(&v).unwrap_or(v));
                }
                let mut overwritten = false;
                for w in it {
                    if let Some(o) = overwrite_value(&w) {
                        overwritten = true;
                        current = Some(o);
                        continue;
                    }
                    if overwritten {
                        continue;
                    }
                    let cur = current.clone().unwrap_or(Value::Nil);
                    match (&reducer, apply_reducer(&cur, &w)) {
                        (Reducer::Add, Some(v)) => current = Some(v),
                        _ => {
                            warnings.push(Warning {
                                field: format!("values.{key}"),
                                message: format!(
                                    "cannot apply reducer {} of '{key}' outside the graph; showing the value before the pending write",
                                    match &reducer {
                                        Reducer::Other(n) => n.as_str(),
                                        _ => "add",
                                    }
                                ),
                            });
                        }
                    }
                }
            }
        }
        if let Some(v) = current {
            match pos {
                Some(p) => values[p].1 = v,
                None => values.push((key, v)),
            }
        }
    }
}

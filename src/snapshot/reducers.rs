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

/// Apply grouped writes (channel -> values in application order) to `values`.
pub(super) fn apply_groups(
    values: &mut Vec<(String, Value)>,
    groups: Vec<(String, Vec<Value>)>,
    topology: Option<&Topology>,
    warnings: &mut Vec<Warning>,
) {
    for (key, writes) in groups {
        let reducer = match topology {
            Some(t) => t
                .key(&key)
                .map(|k| k.reducer.clone())
                .unwrap_or(Reducer::LastValue),
            None => {
                let current = values.iter().find(|(k, _)| *k == key).map(|(_, v)| v);
                let guess = match (current, writes.first()) {
                    (Some(Value::Array(_)), Some(Value::Array(_)))
                    | (None, Some(Value::Array(_))) => Reducer::Add,
                    _ if writes.len() > 1 => Reducer::Add,
                    _ => Reducer::LastValue,
                };
                warnings.push(Warning {
                    field: format!("values.{key}"),
                    message: format!(
                        "reducer of '{key}' is unknown without the graph; pending writes applied as {}",
                        if guess == Reducer::Add { "operator.add" } else { "last value" }
                    ),
                });
                guess
            }
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

//! Applying writes to state keys the way LangGraph's channels do: `LastValue` takes the (single)
//! write, `BinaryOperatorAggregate` folds with its reducer when superstep knows it
//! (`operator.add`, `add_messages`), `DeltaChannel` hands its batch to its reducer
//! (`_messages_delta_reducer`), `Overwrite` bypasses the reducer.

use super::topology::{ChannelKind, Reducer, ReducerId, Topology};
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

/// A LangChain message object (`langchain_core.messages.*`, stored as an ext constructor): its
/// class name and its `id` (`None` for a missing or null id).
fn message(v: &Value) -> Option<(String, Option<String>)> {
    use crate::value::ext::Ext;
    let Value::Ext(code, data) = v else {
        return None;
    };
    match Ext::parse(*code, data) {
        Ext::Constructor {
            module,
            name,
            arg: Value::Map(m),
            ..
        } if module.starts_with("langchain_core.messages") => {
            let id = m
                .iter()
                .find(|(k, _)| k.as_str() == Some("id"))
                .and_then(|(_, v)| v.as_str())
                .filter(|s| !s.is_empty())
                .map(str::to_string);
            Some((name, id))
        }
        _ => None,
    }
}

const REMOVE_ALL_MESSAGES: &str = "__remove_all__";

fn as_list(v: &Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a.clone(),
        other => vec![other.clone()],
    }
}

/// Messages with their ids; an error names what superstep cannot reproduce (a message without
/// an id gets a random one in LangGraph; a dict or string is coerced to a message class).
fn typed_messages(list: &[Value]) -> Result<Vec<(Value, String, String)>, String> {
    list.iter()
        .map(|m| match message(m) {
            Some((class, Some(id))) => Ok((m.clone(), class, id)),
            Some((class, None)) => Err(format!(
                "a {class} without an id: LangGraph gives it a random uuid4"
            )),
            None => Err(
                "a value that is not a stored message object: LangGraph coerces it to a message class"
                    .into(),
            ),
        })
        .collect()
}

/// `langgraph.graph.message.add_messages(left, right)` for stored message objects.
pub fn add_messages(left: &Value, right: &Value) -> Result<Value, String> {
    let left = typed_messages(&as_list(left))?;
    let right = typed_messages(&as_list(right))?;
    if let Some(i) = right
        .iter()
        .rposition(|(_, c, id)| c == "RemoveMessage" && id == REMOVE_ALL_MESSAGES)
    {
        return Ok(Value::Array(
            right[i + 1..].iter().map(|(m, _, _)| m.clone()).collect(),
        ));
    }
    let mut merged: Vec<(Value, String)> = left.into_iter().map(|(m, _, id)| (m, id)).collect();
    let mut remove: Vec<String> = Vec::new();
    for (m, class, id) in right {
        match merged.iter().position(|(_, x)| *x == id) {
            Some(_) if class == "RemoveMessage" => remove.push(id),
            Some(i) => {
                remove.retain(|x| *x != id);
                merged[i].0 = m;
            }
            None if class == "RemoveMessage" => {
                return Err(format!(
                    "ValueError(\"Attempting to delete a message with an ID that doesn't exist ('{id}')\")"
                ))
            }
            None => merged.push((m, id)),
        }
    }
    Ok(Value::Array(
        merged
            .into_iter()
            .filter(|(_, id)| !remove.contains(id))
            .map(|(m, _)| m)
            .collect(),
    ))
}

/// `_messages_delta_reducer(state, writes)`: a DeltaChannel's batch of writes in one pass.
pub fn messages_delta(state: &Value, writes: &[Value]) -> Result<Value, String> {
    let flat: Vec<Value> = writes.iter().flat_map(as_list).collect();
    let mut state = match state {
        Value::Nil => Vec::new(),
        s => typed_messages(&as_list(s))?,
    };
    let mut msgs = typed_messages(&flat)?;
    if let Some(i) = msgs
        .iter()
        .rposition(|(_, c, id)| c == "RemoveMessage" && id == REMOVE_ALL_MESSAGES)
    {
        state.clear();
        msgs.drain(..=i);
    }
    let mut result: Vec<Option<(Value, String)>> =
        state.into_iter().map(|(m, _, id)| Some((m, id))).collect();
    for (m, class, id) in msgs {
        let at = result
            .iter()
            .position(|x| x.as_ref().is_some_and(|(_, x)| *x == id));
        match (at, class == "RemoveMessage") {
            (Some(i), true) => result[i] = None,
            (None, true) => {}
            (Some(i), false) => result[i] = Some((m, id)),
            (None, false) => result.push(Some((m, id))),
        }
    }
    Ok(Value::Array(
        result.into_iter().flatten().map(|(m, _)| m).collect(),
    ))
}

/// `reducer(current, update)` of a `BinaryOperatorAggregate` whose reducer superstep knows.
pub fn apply_known(reducer: &ReducerId, current: &Value, update: &Value) -> Result<Value, String> {
    match reducer {
        ReducerId::Add => apply_reducer(current, update)
            .ok_or_else(|| "TypeError: unsupported operand types for + (operator.add)".to_string()),
        ReducerId::AddMessages => add_messages(current, update),
        ReducerId::MessagesDelta => messages_delta(current, std::slice::from_ref(update)),
        other => Err(format!("reducer {} is the graph's code", other.display())),
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
        let kind = match topology {
            Some(t) => t
                .key(&key)
                .map(|k| k.kind.clone())
                .unwrap_or(ChannelKind::LastValue),
            None => {
                let guess = match learned.iter().find(|(k, _)| *k == key).map(|(_, l)| *l) {
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
                        // one write to a key with no value: every reducer LangGraph ships gives
                        // the write itself (a default [] / 0 / "" plus it), unless add_messages
                        // reshapes it
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
                };
                match guess {
                    Reducer::Add => ChannelKind::BinaryOperatorAggregate {
                        reducer: ReducerId::Add,
                    },
                    _ => ChannelKind::LastValue,
                }
            }
        };
        let pos = values.iter().position(|(k, _)| *k == key);
        let mut current = pos.map(|p| values[p].1.clone());
        let cannot = |reducer: &ReducerId, why: String, warnings: &mut Vec<Warning>| {
            warnings.push(Warning {
                field: format!("values.{key}"),
                message: format!(
                    "cannot apply reducer {} of '{key}' outside the graph ({why}); showing the value before the pending write",
                    reducer.display()
                ),
            });
        };
        match &kind {
            ChannelKind::BinaryOperatorAggregate { reducer } => {
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
                    match apply_known(reducer, &cur, &w) {
                        Ok(v) => current = Some(v),
                        Err(why) => {
                            cannot(reducer, why, warnings);
                            break;
                        }
                    }
                }
            }
            ChannelKind::DeltaChannel { reducer, .. } => {
                // `DeltaChannel.update`: the last Overwrite resets the base, the rest goes to the
                // reducer in one batch
                // `typ()`: where the channel starts, and what `Overwrite(None)` resets it to
                let empty = topology
                    .and_then(|t| t.key(&key))
                    .and_then(|k| k.default.clone())
                    .unwrap_or(Value::Array(Vec::new()));
                let mut base = current.clone().unwrap_or(empty.clone());
                let mut rest = writes.as_slice();
                if let Some(i) = writes.iter().rposition(|w| overwrite_value(w).is_some()) {
                    base = match overwrite_value(&writes[i]) {
                        Some(Value::Nil) | None => empty,
                        Some(v) => v,
                    };
                    rest = &writes[i + 1..];
                }
                // the graph's own reducer when it is loaded (a spec's Starlark function)
                let code = topology.and_then(|t| t.code.as_ref());
                let reduced = match (reducer, code) {
                    (ReducerId::Starlark(f), Some(c)) if !rest.is_empty() => {
                        c.0.reduce(f, &base, &Value::Array(rest.to_vec()))
                    }
                    _ => delta_reduce(reducer, &base, rest),
                };
                match reduced {
                    Ok(v) => current = Some(v),
                    Err(why) => cannot(reducer, why, warnings),
                }
            }
            _ => {
                if let Some(last) = writes.last() {
                    current = Some(overwrite_value(last).unwrap_or_else(|| last.clone()));
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

/// A DeltaChannel's reducer on a batch of writes (`reducer(state, [w1, w2, ...])`), when
/// superstep knows it. An empty batch leaves the state as it is.
pub fn delta_reduce(reducer: &ReducerId, state: &Value, batch: &[Value]) -> Result<Value, String> {
    if batch.is_empty() {
        return Ok(state.clone());
    }
    match reducer {
        ReducerId::MessagesDelta => messages_delta(state, batch),
        // `operator.add(state, [w1, w2])`: the writes are appended as items
        ReducerId::Add => apply_reducer(state, &Value::Array(batch.to_vec()))
            .ok_or_else(|| "TypeError: unsupported operand types for + (operator.add)".into()),
        other => Err(format!("reducer {} is the graph's code", other.display())),
    }
}

//! LangGraph's channel classes (spec §2.3, §4.2), one variant each: what a write does, what is
//! available, what goes into the checkpoint.

use super::EngineError;
pub use crate::value::ext::set_items;
use crate::value::ext::{constructor, overwrite_value};
use rmpv::Value;

/// How a reducer combines values.
#[derive(Debug, Clone, PartialEq)]
pub enum ReducerFn {
    /// `operator.add`.
    Add,
    /// A Starlark function `def name(current, update)` in the graph's code.
    Code(String),
}

impl ReducerFn {
    /// The reducer's identity in a topology.
    pub fn id(&self) -> crate::snapshot::topology::ReducerId {
        use crate::snapshot::topology::ReducerId;
        match self {
            ReducerFn::Add => ReducerId::Add,
            ReducerFn::Code(f) => ReducerId::Starlark(f.clone()),
        }
    }
}

/// The channel kinds a StateGraph compiles to.
#[derive(Debug, Clone, PartialEq)]
pub enum ChannelKind {
    /// Plain state key: one write per step.
    LastValue,
    /// `Annotated[T, reducer]`: `BinaryOperatorAggregate` with an initial value (`T()`).
    Reducer {
        reducer: ReducerFn,
        default: Option<Value>,
    },
    /// `Annotated[T, DeltaChannel(reducer, snapshot_frequency=N)]` (LangGraph 1.2, beta): starts
    /// at `empty` (`typ()`); a step's writes go to the reducer as one batch; the checkpoint
    /// stores nothing for it (`checkpoint()` is MISSING) except a `_DeltaSnapshot` when the
    /// cadence says so (`State::snapshot`).
    Delta {
        reducer: ReducerFn,
        empty: Value,
        snapshot_frequency: u32,
    },
    /// `__start__` (guard) and `branch:to:X` (no guard).
    Ephemeral { guard: bool },
    /// `__pregel_tasks`: `Topic(Send, accumulate=False)`.
    Tasks,
    /// `join:a+b:c`: `NamedBarrierValue`.
    Barrier { names: Vec<String> },
    /// `branch:to:X` of a deferred node: `LastValueAfterFinish` (available only after `finish()`).
    AfterFinish,
    /// `join:a+b:X` into a deferred node: `NamedBarrierValueAfterFinish`.
    BarrierAfterFinish { names: Vec<String> },
}

/// A channel's current content.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    Missing,
    Value(Value),
    Topic(Vec<Value>),
    Seen(Vec<String>),
}

/// Applies a `ReducerFn::Code` reducer (the graph's Starlark code).
pub trait ReduceWith {
    fn reduce(&self, func: &str, current: &Value, update: &Value) -> Result<Value, String>;
}

#[derive(Debug, Clone)]
pub struct Channel {
    pub name: String,
    pub kind: ChannelKind,
    pub content: Content,
    /// The `finished` flag of the after-finish kinds.
    pub finished: bool,
}

/// A Python `set` of names, as the checkpoint stores it.
fn set_value(seen: &[String]) -> Value {
    constructor(
        0,
        "builtins",
        "set",
        Value::Array(seen.iter().map(|s| Value::from(s.as_str())).collect()),
        None,
    )
}

/// Python's `operator.add` on msgpack values.
pub fn add(a: &Value, b: &Value) -> Result<Value, String> {
    crate::snapshot::apply_reducer(a, b).ok_or_else(|| {
        format!(
            "TypeError(\"unsupported operand type(s) for +: '{}' and '{}'\")",
            py_type(a),
            py_type(b)
        )
    })
}

/// The Python type name of a value, for error messages.
pub fn py_type(v: &Value) -> &'static str {
    match v {
        Value::Nil => "NoneType",
        Value::Boolean(_) => "bool",
        Value::Integer(_) => "int",
        Value::F32(_) | Value::F64(_) => "float",
        Value::String(_) => "str",
        Value::Binary(_) => "bytes",
        Value::Array(_) => "list",
        Value::Map(_) => "dict",
        Value::Ext(..) => "object",
    }
}

impl Channel {
    pub fn new(name: &str, kind: ChannelKind) -> Channel {
        let content = match &kind {
            ChannelKind::Reducer {
                default: Some(d), ..
            } => Content::Value(d.clone()),
            ChannelKind::Delta { empty, .. } => Content::Value(empty.clone()),
            ChannelKind::Tasks => Content::Topic(Vec::new()),
            ChannelKind::Barrier { .. } | ChannelKind::BarrierAfterFinish { .. } => {
                Content::Seen(Vec::new())
            }
            _ => Content::Missing,
        };
        Channel {
            name: name.to_string(),
            kind,
            content,
            finished: false,
        }
    }

    /// Restore from a checkpointed value (`from_checkpoint`).
    pub fn restore(&mut self, v: &Value) {
        self.content = match &self.kind {
            ChannelKind::Tasks => match v {
                Value::Array(a) => Content::Topic(a.clone()),
                _ => Content::Topic(Vec::new()),
            },
            ChannelKind::Barrier { .. } => Content::Seen(set_items(v)),
            // `DeltaChannel.from_checkpoint`: a `_DeltaSnapshot`'s content, or a plain value (a
            // key that was a BinaryOperatorAggregate before)
            ChannelKind::Delta { .. } => Content::Value(
                crate::snapshot::delta::snapshot_content(v).unwrap_or_else(|| v.clone()),
            ),
            // after-finish kinds checkpoint as a (content, finished) tuple
            ChannelKind::AfterFinish | ChannelKind::BarrierAfterFinish { .. } => {
                let (inner, fin) = match v {
                    Value::Array(a) if a.len() == 2 => (&a[0], a[1].as_bool().unwrap_or(false)),
                    other => (other, false),
                };
                self.finished = fin;
                if matches!(self.kind, ChannelKind::AfterFinish) {
                    Content::Value(inner.clone())
                } else {
                    Content::Seen(set_items(inner))
                }
            }
            _ => Content::Value(v.clone()),
        };
    }

    pub fn is_available(&self) -> bool {
        match (&self.kind, &self.content) {
            (_, Content::Missing) => false,
            (ChannelKind::Tasks, Content::Topic(t)) => !t.is_empty(),
            (ChannelKind::Barrier { names }, Content::Seen(seen)) => same_set(names, seen),
            (ChannelKind::AfterFinish, _) => self.finished,
            (ChannelKind::BarrierAfterFinish { names }, Content::Seen(seen)) => {
                self.finished && same_set(names, seen)
            }
            _ => true,
        }
    }

    /// The value a reader gets (`get()`), if available.
    pub fn get(&self) -> Option<Value> {
        if !self.is_available() {
            return None;
        }
        match &self.content {
            Content::Value(v) => Some(v.clone()),
            Content::Topic(t) => Some(Value::Array(t.clone())),
            Content::Seen(_) => Some(Value::Nil),
            Content::Missing => None,
        }
    }

    pub fn value_ref(&self) -> Option<&Value> {
        match &self.content {
            Content::Value(v) => Some(v),
            _ => None,
        }
    }

    /// `checkpoint()` without copying a plain value.
    pub fn checkpoint_ref(&self) -> Option<std::borrow::Cow<'_, Value>> {
        if self.is_delta() {
            return None;
        }
        match &self.content {
            Content::Value(v) if !matches!(self.kind, ChannelKind::AfterFinish) => {
                Some(std::borrow::Cow::Borrowed(v))
            }
            _ => self.checkpoint().map(std::borrow::Cow::Owned),
        }
    }

    /// `checkpoint()`: `None` is MISSING (not stored).
    pub fn checkpoint(&self) -> Option<Value> {
        if self.is_delta() {
            return None;
        }
        let fin = Value::Boolean(self.finished);
        match (&self.kind, &self.content) {
            (ChannelKind::AfterFinish, Content::Value(v)) => {
                return Some(Value::Array(vec![v.clone(), fin]))
            }
            (ChannelKind::BarrierAfterFinish { .. }, Content::Seen(seen)) => {
                return Some(Value::Array(vec![set_value(seen), fin]))
            }
            _ => {}
        }
        match &self.content {
            Content::Missing => None,
            Content::Value(v) => Some(v.clone()),
            Content::Topic(t) => Some(Value::Array(t.clone())),
            Content::Seen(seen) => Some(set_value(seen)),
        }
    }

    pub fn is_delta(&self) -> bool {
        matches!(self.kind, ChannelKind::Delta { .. })
    }

    /// The `_DeltaSnapshot(value)` blob (msgpack ext 7) a snapshotting checkpoint stores.
    pub fn delta_snapshot(&self) -> Option<Value> {
        match &self.content {
            Content::Value(v) if self.is_delta() => Some(Value::Ext(
                crate::value::ext::EXT_DELTA_SNAPSHOT,
                crate::value::encode_msgpack(v),
            )),
            _ => None,
        }
    }

    /// `DeltaChannel.replay_writes`: the ancestors' writes, oldest first, in one reducer call
    /// after the last `Overwrite` (which resets the base).
    pub fn replay(
        &mut self,
        writes: &[Value],
        code: Option<&dyn ReduceWith>,
    ) -> Result<(), EngineError> {
        let ChannelKind::Delta { reducer, empty, .. } = &self.kind else {
            return Ok(());
        };
        if writes.is_empty() {
            return Ok(());
        }
        let mut start = 0;
        let mut base = match &self.content {
            Content::Value(v) => v.clone(),
            _ => empty.clone(),
        };
        for (i, w) in writes.iter().enumerate() {
            if let Some(o) = overwrite_value(w) {
                base = if o.is_nil() { empty.clone() } else { o };
                start = i + 1;
            }
        }
        let rest = &writes[start..];
        if !rest.is_empty() {
            delta_reduce(&self.name, reducer, &mut base, rest, code)?;
        }
        self.content = Content::Value(base);
        Ok(())
    }

    /// `update(values)`: returns whether the channel changed.
    pub fn update(
        &mut self,
        values: &[Value],
        code: Option<&dyn ReduceWith>,
    ) -> Result<bool, EngineError> {
        let key = self.name.clone();
        match &self.kind {
            ChannelKind::LastValue => {
                if values.is_empty() {
                    return Ok(false);
                }
                if values.len() != 1 {
                    return Err(EngineError::InvalidUpdate(super::error_message(
                        &format!("At key '{key}': Can receive only one value per step. Use an Annotated key to handle multiple values."),
                        "INVALID_CONCURRENT_GRAPH_UPDATE",
                    )));
                }
                let v = values[0].clone();
                self.content = Content::Value(overwrite_value(&v).unwrap_or(v));
                Ok(true)
            }
            ChannelKind::Reducer { reducer, .. } => {
                if values.is_empty() {
                    return Ok(false);
                }
                let reducer = reducer.clone();
                let mut it = values.iter();
                let mut current = match std::mem::replace(&mut self.content, Content::Missing) {
                    Content::Value(v) => v,
                    _ => {
                        let first = it.next().unwrap();
                        overwrite_value(first).unwrap_or_else(|| first.clone())
                    }
                };
                let mut seen_overwrite = false;
                for v in it {
                    if let Some(o) = overwrite_value(v) {
                        if seen_overwrite {
                            self.content = Content::Value(current);
                            return Err(EngineError::InvalidUpdate(super::error_message(
                                "Can receive only one Overwrite value per super-step.",
                                "INVALID_CONCURRENT_GRAPH_UPDATE",
                            )));
                        }
                        seen_overwrite = true;
                        current = o;
                        continue;
                    }
                    if seen_overwrite {
                        continue;
                    }
                    // operator.add on two lists builds a new list; appending in place gives the
                    // same value without copying the accumulator
                    if let (ReducerFn::Add, Value::Array(acc), Value::Array(more)) =
                        (&reducer, &mut current, v)
                    {
                        acc.extend(more.iter().cloned());
                        continue;
                    }
                    let next = match &reducer {
                        ReducerFn::Add => add(&current, v),
                        ReducerFn::Code(f) => match code {
                            Some(c) => c.reduce(f, &current, v),
                            None => Err(format!("reducer {f} needs the graph's code")),
                        },
                    };
                    match next {
                        Ok(n) => current = n,
                        Err(message) => {
                            self.content = Content::Value(current);
                            return Err(EngineError::Reducer {
                                key: key.clone(),
                                message,
                            });
                        }
                    }
                }
                self.content = Content::Value(current);
                Ok(true)
            }
            ChannelKind::Delta { reducer, empty, .. } => {
                if values.is_empty() {
                    return Ok(false);
                }
                let overwrites: Vec<Value> = values.iter().filter_map(overwrite_value).collect();
                if overwrites.len() > 1 {
                    return Err(EngineError::InvalidUpdate(super::error_message(
                        "Can receive only one Overwrite value per super-step.",
                        "INVALID_CONCURRENT_GRAPH_UPDATE",
                    )));
                }
                if let Some(o) = overwrites.into_iter().next() {
                    self.content = Content::Value(if o.is_nil() { empty.clone() } else { o });
                    return Ok(true);
                }
                if !matches!(self.content, Content::Value(_)) {
                    self.content = Content::Value(empty.clone());
                }
                let reducer = reducer.clone();
                let Content::Value(base) = &mut self.content else {
                    unreachable!()
                };
                // in place: the value is not copied per step (a long list stays O(writes))
                delta_reduce(&key, &reducer, base, values, code)?;
                Ok(true)
            }
            ChannelKind::Ephemeral { guard } => {
                if values.is_empty() {
                    if matches!(self.content, Content::Missing) {
                        return Ok(false);
                    }
                    self.content = Content::Missing;
                    return Ok(true);
                }
                if values.len() != 1 && *guard {
                    return Err(EngineError::InvalidUpdate(format!(
                        "At key '{key}': EphemeralValue(guard=True) can receive only one value per step. Use guard=False if you want to store any one of multiple values."
                    )));
                }
                self.content = Content::Value(values[values.len() - 1].clone());
                Ok(true)
            }
            ChannelKind::Tasks => {
                let Content::Topic(t) = &mut self.content else {
                    unreachable!()
                };
                let mut updated = !t.is_empty();
                t.clear();
                for v in values {
                    match v {
                        Value::Array(a) => t.extend(a.iter().cloned()),
                        other => t.push(other.clone()),
                    }
                }
                if !t.is_empty() {
                    updated = true;
                }
                Ok(updated)
            }
            ChannelKind::AfterFinish => {
                let Some(last) = values.last() else {
                    return Ok(false);
                };
                self.finished = false;
                self.content = Content::Value(last.clone());
                Ok(true)
            }
            ChannelKind::Barrier { names } | ChannelKind::BarrierAfterFinish { names } => {
                let names = names.clone();
                let Content::Seen(seen) = &mut self.content else {
                    unreachable!()
                };
                let mut updated = false;
                for v in values {
                    let s = v.as_str().unwrap_or_default().to_string();
                    if !names.contains(&s) {
                        return Err(EngineError::InvalidUpdate(format!(
                            "At key '{key}': Value {s} not in {names:?}"
                        )));
                    }
                    if !seen.contains(&s) {
                        seen.push(s);
                        updated = true;
                    }
                }
                Ok(updated)
            }
        }
    }

    /// `consume()`: only barriers reset after their node ran.
    pub fn consume(&mut self) -> bool {
        match (&self.kind, &mut self.content) {
            (ChannelKind::Barrier { names }, Content::Seen(seen)) if same_set(names, seen) => {
                seen.clear();
                true
            }
            (ChannelKind::BarrierAfterFinish { names }, Content::Seen(seen))
                if self.finished && same_set(names, seen) =>
            {
                self.finished = false;
                seen.clear();
                true
            }
            (ChannelKind::AfterFinish, _) if self.finished => {
                self.finished = false;
                self.content = Content::Missing;
                true
            }
            _ => false,
        }
    }

    /// `finish()`: the run is about to end; an after-finish channel holding a value (or a full
    /// barrier) becomes available. Returns whether it changed.
    pub fn finish(&mut self) -> bool {
        let ready = match (&self.kind, &self.content) {
            (ChannelKind::AfterFinish, Content::Value(_)) => true,
            (ChannelKind::BarrierAfterFinish { names }, Content::Seen(seen)) => {
                same_set(names, seen)
            }
            _ => false,
        };
        if ready && !self.finished {
            self.finished = true;
            return true;
        }
        false
    }
}

/// A DeltaChannel's reducer on one batch, in place: `reducer(state, [w1, w2, ...])`.
/// `operator.add` is `state + writes` (each write becomes one item); a Starlark reducer gets the
/// list of writes. On an error `state` is left as it was.
fn delta_reduce(
    key: &str,
    reducer: &ReducerFn,
    state: &mut Value,
    writes: &[Value],
    code: Option<&dyn ReduceWith>,
) -> Result<(), EngineError> {
    let r = match reducer {
        ReducerFn::Add => match state {
            Value::Array(a) => {
                a.extend(writes.iter().cloned());
                return Ok(());
            }
            _ => add(state, &Value::Array(writes.to_vec())),
        },
        ReducerFn::Code(f) => match code {
            Some(c) => c.reduce(f, state, &Value::Array(writes.to_vec())),
            None => Err(format!("reducer {f} needs the graph's code")),
        },
    };
    match r {
        Ok(v) => {
            *state = v;
            Ok(())
        }
        Err(message) => Err(EngineError::Reducer {
            key: key.to_string(),
            message,
        }),
    }
}

fn same_set(a: &[String], b: &[String]) -> bool {
    a.len() == b.len() && a.iter().all(|x| b.contains(x))
}

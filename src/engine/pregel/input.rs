//! The `langgraph.types.Command` value of a Command input.

use super::{Input, Resume};
use rmpv::Value;

/// The `langgraph.types.Command` object for a Command input (used as `__start__` on a new thread).
pub(super) fn command_value(input: &Input) -> Value {
    let Input::Command {
        update,
        goto,
        resume,
    } = input
    else {
        return Value::Nil;
    };
    let resume = match resume {
        None => Value::Nil,
        Some(Resume::Plain(v)) => v.clone(),
        Some(Resume::Map(m)) => Value::Map(
            m.iter()
                .map(|(k, v)| (Value::from(k.as_str()), v.clone()))
                .collect(),
        ),
    };
    let goto = match goto.len() {
        0 => Value::Array(Vec::new()),
        _ => Value::Array(goto.clone()),
    };
    crate::value::ext::constructor(
        2,
        "langgraph.types",
        "Command",
        Value::Map(vec![
            ("graph".into(), Value::Nil),
            ("update".into(), update.clone().unwrap_or(Value::Nil)),
            ("resume".into(), resume),
            ("goto".into(), goto),
        ]),
        None,
    )
}

//! Watch and break-when expressions: one Starlark expression (the language of the specs' node
//! code, `crate::engine::starlark`) evaluated over a checkpoint's state.
//!
//! The names an expression sees:
//!
//! | name | value |
//! |---|---|
//! | each state key that is an identifier | its value (`None` where the checkpoint has none) |
//! | `state` | every key as a dict: `state["odd-key"]` |
//! | `step` | the checkpoint's `metadata.step` |
//! | `next` | the next nodes, a list of strings |
//! | `interrupts` | the pending interrupts' values, a list |
//! | `source` | `metadata.source`: `"input"`, `"loop"`, `"update"`, `"fork"` |
//!
//! (`state`, `step`, `next`, `interrupts` and `source` win over a state key of the same name,
//! which stays reachable as `state["next"]`.) A LangChain message is a struct with the fields
//! `type` (`"human"`, `"ai"`, `"tool"`, `"system"`, …), `content`, `text` (the text blocks
//! joined), `id`, `name`, `tool_calls` (structs with `name`, `args`, `id`), `tool_call_id`,
//! `status`; any other value is its JSON view (a typed value is a dict with `__type__`).
//!
//! The subset documented (docs/compare.md) and tested: names, indexing (`messages[-1]`,
//! `state["k"]`, slices), `len`, comparisons and `in`, `and` / `or` / `not`, arithmetic,
//! `any` / `all` over list comprehensions, message fields. The other builtins of standard
//! Starlark (`min`, `max`, `sorted`, `str`, …) work too; nothing reads files or prints.
//!
//! Checked at entry ([`Expr::compile`]): it must parse, be one expression (not a statement) and
//! name only the names above; the error names the column. An expression that fails on one state
//! (`messages[-1]` of an empty list) is an error of that evaluation only.

use crate::conversation::Message;
use crate::snapshot::Snapshot;
use crate::value::{to_view, ViewOptions};
use serde_json::Value as Json;
use starlark::environment::{Globals, Module};
use starlark::eval::Evaluator;
use starlark::syntax::ast::StmtP;
use starlark::syntax::{AstModule, Dialect};
use starlark::values::dict::AllocDict;
use starlark::values::list::AllocList;
use starlark::values::structs::AllocStruct;
use starlark::values::{Heap, Value};

/// The names every expression has besides the state keys.
pub const BUILTIN_NAMES: [&str; 5] = ["state", "step", "next", "interrupts", "source"];

/// Ticks one evaluation may take (a comprehension over a long list is far below).
const MAX_TICKS: u64 = 10_000_000;

/// A checked expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub text: String,
    /// The state keys it was checked against.
    keys: Vec<String>,
}

/// What an expression sees of one checkpoint.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scope {
    pub values: Vec<(String, Json)>,
    pub step: i64,
    pub next: Vec<String>,
    pub interrupts: Vec<Json>,
    pub source: Option<String>,
}

impl Scope {
    pub fn of(s: &Snapshot) -> Scope {
        let o = ViewOptions::default();
        Scope {
            values: s
                .values
                .iter()
                .map(|(k, v)| (k.clone(), to_view(v, o)))
                .collect(),
            step: s.step,
            next: s.next.clone(),
            interrupts: s.interrupts().map(|i| to_view(&i.value, o)).collect(),
            source: s
                .metadata
                .get("source")
                .and_then(Json::as_str)
                .map(str::to_string),
        }
    }
}

/// The value of one evaluation.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluated {
    /// Starlark truthiness (`[]`, `0`, `""`, `None`, `False` are false).
    pub truthy: bool,
    /// The value as Starlark writes it (`True`, `3`, `["a"]`), not escaped.
    pub repr: String,
}

fn is_ident(k: &str) -> bool {
    k.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `column N: message` (`line L, column N` when the expression spans lines) of a Starlark error
/// in the text the user wrote, which starts at line `first_line` (0-based) of what was parsed.
fn located(e: &starlark::Error, first_line: usize) -> String {
    let msg = e.without_diagnostic().to_string();
    let msg = msg.lines().next().unwrap_or("").trim().to_string();
    match e.span() {
        Some(fs) => {
            let r = fs.resolve_span();
            let line = r.begin.line.saturating_sub(first_line);
            if line == 0 {
                format!("column {}: {msg}", r.begin.column + 1)
            } else {
                format!("line {}, column {}: {msg}", line + 1, r.begin.column + 1)
            }
        }
        None => msg,
    }
}

fn dialect() -> Dialect {
    Dialect {
        enable_f_strings: true,
        ..Dialect::Standard
    }
}

impl Expr {
    /// Check `text` against the state keys `keys`: the error says what is wrong and where
    /// (`column 12: Variable `mesages` not found, did you mean `messages`?`).
    pub fn compile(text: &str, keys: &[String]) -> Result<Expr, String> {
        if text.trim().is_empty() {
            return Err("empty expression".into());
        }
        let ast = AstModule::parse("expression", text.to_owned(), &dialect())
            .map_err(|e| located(&e, 0))?;
        let one_expression = match &ast.statement().node {
            StmtP::Expression(_) => true,
            StmtP::Statements(s) => s.len() == 1 && matches!(s[0].node, StmtP::Expression(_)),
            _ => false,
        };
        if !one_expression {
            return Err("expected one expression (e.g. len(messages) > 3), not a statement".into());
        }
        // names are resolved when a function is compiled, not when it runs: wrapping the
        // expression in one checks every name without evaluating anything
        let wrapped = format!("def __check():\n  return (\n{text}\n)\n");
        let ast =
            AstModule::parse("expression", wrapped, &dialect()).map_err(|e| located(&e, 2))?;
        let expr = Expr {
            text: text.to_string(),
            keys: keys.to_vec(),
        };
        Module::with_temp_heap(|m| {
            expr.bind(&m, &Scope::default());
            let mut eval = Evaluator::new(&m);
            eval.eval_module(ast, &Globals::standard()).map(|_| ())
        })
        .map_err(|e| located(&e, 2))?;
        Ok(expr)
    }

    /// Every name the module holds: the builtins and the keys (a key missing from `scope` is
    /// `None`).
    fn bind<'v>(&self, m: &Module<'v>, scope: &Scope) {
        let heap = m.heap();
        let get = |k: &str| scope.values.iter().find(|(x, _)| x == k).map(|(_, v)| v);
        for k in self.keys.iter().chain(scope.values.iter().map(|(k, _)| k)) {
            if is_ident(k) && !BUILTIN_NAMES.contains(&k.as_str()) {
                let v = get(k).map_or(Value::new_none(), |j| json_to_star(heap, j));
                m.set(k, v);
            }
        }
        let state = heap.alloc(AllocDict(
            scope
                .values
                .iter()
                .map(|(k, v)| (heap.alloc(k.as_str()), json_to_star(heap, v))),
        ));
        m.set("state", state);
        m.set("step", heap.alloc(scope.step));
        m.set(
            "next",
            heap.alloc(AllocList(scope.next.iter().map(|n| heap.alloc(n.as_str())))),
        );
        m.set(
            "interrupts",
            heap.alloc(AllocList(
                scope.interrupts.iter().map(|j| json_to_star(heap, j)),
            )),
        );
        m.set(
            "source",
            match &scope.source {
                Some(s) => heap.alloc(s.as_str()),
                None => Value::new_none(),
            },
        );
    }

    /// Evaluate over one checkpoint's state.
    pub fn eval(&self, scope: &Scope) -> Result<Evaluated, String> {
        let ast = AstModule::parse("expression", self.text.clone(), &dialect())
            .map_err(|e| located(&e, 0))?;
        Module::with_temp_heap(|m| {
            self.bind(&m, scope);
            let mut eval = Evaluator::new(&m);
            eval.set_max_tick_count(MAX_TICKS)
                .map_err(starlark::Error::new_other)?;
            eval.eval_module(ast, &Globals::standard())
                .map(|v| Evaluated {
                    truthy: v.to_bool(),
                    repr: v.to_repr(),
                })
        })
        .map_err(|e| located(&e, 0))
    }
}

/// A JSON view as a Starlark value; a LangChain message as a struct of its fields.
pub fn json_to_star<'v>(heap: Heap<'v>, j: &Json) -> Value<'v> {
    match j {
        Json::Null => Value::new_none(),
        Json::Bool(b) => Value::new_bool(*b),
        Json::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => heap.alloc(i),
            (None, Some(u)) => heap.alloc(u),
            _ => heap.alloc(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => heap.alloc(s.as_str()),
        Json::Array(a) => heap.alloc(AllocList(a.iter().map(|x| json_to_star(heap, x)))),
        Json::Object(o) => {
            if let Some(m) = Message::from_view(j) {
                return message_struct(heap, j, &m);
            }
            heap.alloc(AllocDict(
                o.iter()
                    .map(|(k, v)| (heap.alloc(k.as_str()), json_to_star(heap, v))),
            ))
        }
    }
}

/// The fields a message struct has.
pub const MESSAGE_FIELDS: [&str; 8] = [
    "type",
    "content",
    "text",
    "id",
    "name",
    "tool_calls",
    "tool_call_id",
    "status",
];

fn message_struct<'v>(heap: Heap<'v>, j: &Json, m: &Message) -> Value<'v> {
    // LangChain's own serialisation keeps the fields under kwargs
    let fields = j
        .get("kwargs")
        .filter(|_| j.get("lc").is_some())
        .unwrap_or(j);
    let raw = |k: &str| {
        fields
            .get(k)
            .map_or(Value::new_none(), |v| json_to_star(heap, v))
    };
    let ty = match fields.get("type").and_then(Json::as_str) {
        Some(t) if j.get("lc").is_none() => t.to_string(),
        _ => match &m.role {
            crate::conversation::Role::Human => "human".into(),
            crate::conversation::Role::Ai => "ai".into(),
            crate::conversation::Role::Tool => "tool".into(),
            crate::conversation::Role::System => "system".into(),
            crate::conversation::Role::Function => "function".into(),
            crate::conversation::Role::Chat(_) => "chat".into(),
            crate::conversation::Role::Remove => "remove".into(),
        },
    };
    let calls = fields
        .get("tool_calls")
        .and_then(Json::as_array)
        .map(|a| {
            a.iter()
                .map(|c| {
                    let f = |k: &str| {
                        c.get(k)
                            .map_or(Value::new_none(), |v| json_to_star(heap, v))
                    };
                    // OpenAI-style dicts keep name and arguments under "function"
                    let name = c
                        .get("name")
                        .or_else(|| c.get("function").and_then(|f| f.get("name")))
                        .map_or(Value::new_none(), |v| json_to_star(heap, v));
                    heap.alloc(AllocStruct([
                        ("name", name),
                        ("args", f("args")),
                        ("id", f("id")),
                    ]))
                })
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let text = m.text();
    heap.alloc(AllocStruct([
        ("type", heap.alloc(ty)),
        ("content", raw("content")),
        ("text", heap.alloc(text)),
        ("id", raw("id")),
        ("name", raw("name")),
        ("tool_calls", heap.alloc(AllocList(calls))),
        ("tool_call_id", raw("tool_call_id")),
        ("status", raw("status")),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn keys() -> Vec<String> {
        vec!["messages".into(), "count".into(), "odd-key".into()]
    }

    fn scope() -> Scope {
        Scope {
            values: vec![
                (
                    "messages".into(),
                    json!([
                        {"__type__": "langchain_core.messages.human.HumanMessage", "content": "hi", "type": "human", "id": "h"},
                        {"__type__": "langchain_core.messages.ai.AIMessage", "content": "", "type": "ai", "id": "a",
                         "tool_calls": [{"name": "search", "args": {"q": "x"}, "id": "c1"}]},
                    ]),
                ),
                ("count".into(), json!(3)),
                ("odd-key".into(), json!({"a": [1, 2]})),
            ],
            step: 4,
            next: vec!["tools".into()],
            interrupts: vec![json!("approve?")],
            source: Some("loop".into()),
        }
    }

    fn eval(text: &str) -> Result<Evaluated, String> {
        Expr::compile(text, &keys())?.eval(&scope())
    }

    #[test]
    fn the_documented_subset_evaluates() {
        for (text, want) in [
            ("count > 2", "True"),
            ("len(messages)", "2"),
            ("messages[-1].type == \"ai\"", "True"),
            ("messages[0].text", "\"hi\""),
            (
                "any([c.name == \"search\" for c in messages[-1].tool_calls])",
                "True",
            ),
            ("all([m.id != None for m in messages])", "True"),
            ("messages[-1].tool_calls[0].args[\"q\"]", "\"x\""),
            ("state[\"odd-key\"][\"a\"][1]", "2"),
            ("\"tools\" in next and step >= 4", "True"),
            ("interrupts[0]", "\"approve?\""),
            ("source", "\"loop\""),
            ("count * 2 + 1", "7"),
            ("not messages", "False"),
            ("messages[:1][0].type", "\"human\""),
        ] {
            assert_eq!(eval(text).map(|e| e.repr), Ok(want.to_string()), "{text}");
        }
        assert!(eval("count > 2").unwrap().truthy);
        assert!(!eval("count - 3").unwrap().truthy);
    }

    #[test]
    fn a_bad_expression_is_an_error_at_entry_naming_the_column() {
        for (text, want) in [
            ("len(mesages) > 3", "column 5: Variable `mesages` not found"),
            ("count >", "column 8: Parse error"),
            ("count = 3", "not a statement"),
            ("(count >\n 2 +)", "line 2, column 5: Parse error"),
            ("", "empty expression"),
            ("count > 2; count", "not a statement"),
            (
                "[m for m in messages if zz]",
                "column 25: Variable `zz` not found",
            ),
        ] {
            let e = Expr::compile(text, &keys()).unwrap_err();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn a_failure_on_one_state_is_an_error_of_that_evaluation() {
        let x = Expr::compile("messages[5].type == 'ai'", &keys()).unwrap();
        let e = x.eval(&scope()).unwrap_err();
        assert!(e.contains("column 1") && e.contains("out of bound"), "{e}");
        // a key this checkpoint lacks is None
        let x = Expr::compile("count == None", &keys()).unwrap();
        assert!(x.eval(&Scope::default()).unwrap().truthy);
    }
}

//! Node code in Starlark (the `starlark` crate): Python syntax, no file/network/environment
//! access, step and heap limits. Implements [`NodeCode`] for the engine.
//!
//! Builtins available to node code:
//!
//! | builtin | meaning |
//! |---|---|
//! | `interrupt(value)` | LangGraph's `interrupt()`: returns the answer, or pauses the node |
//! | `Command(goto=, update=, resume=, graph=)` | `langgraph.types.Command` |
//! | `Send(node, arg)` | `langgraph.types.Send` |
//! | `fail(msg)` | raise `Exception(msg)` (an ERROR write; retried by the default policy) |
//! | `raise_error(kind, msg)` | raise a Python exception class by name, e.g. `"ValueError"` |
//! | `effect(name, data=None)` | record a side effect (shown per execution, so repeats are visible) |
//! | `random()`, `uuid4()`, `now()`, `llm(prompt)` | seeded nondeterminism (see `TaskContext::helper_u64`) |
//! | `print(...)` | recorded as an effect named `print` |

use super::{Arg, Failure, NodeCode, NodeError, NodeInput, TaskContext};
use crate::value::{to_view, ViewOptions};
use rmpv::Value as RValue;
use starlark::any::ProvidesStaticType;
use starlark::environment::{FrozenModule, Globals, GlobalsBuilder, LibraryExtension, Module};
use starlark::eval::Evaluator;
use starlark::syntax::AstModule;
use starlark::values::dict::{AllocDict, DictRef};
use starlark::values::float::StarlarkFloat;
use starlark::values::list::{AllocList, ListRef};
use starlark::values::none::NoneType;
use starlark::values::structs::{AllocStruct, StructRef};
use starlark::values::tuple::{AllocTuple, TupleRef};
use starlark::values::{Heap, UnpackValue, Value, ValueLike};
use starlark::{starlark_module, ErrorKind, PrintHandler};
use std::cell::RefCell;
use std::fmt;

/// Default limits for one node execution.
pub const MAX_TICKS: u64 = 5_000_000;
pub const MAX_HEAP_BYTES: usize = 128 << 20;

pub use crate::spec::dialect;

/// `file:line:col: message` for a Starlark error.
pub fn format_error(e: &starlark::Error) -> String {
    match e.span() {
        Some(fs) => {
            let r = fs.resolve_span();
            format!(
                "{}:{}:{}: {}",
                fs.filename(),
                r.begin.line + 1,
                r.begin.column + 1,
                e.without_diagnostic()
            )
        }
        None => format!("{}", e.without_diagnostic()),
    }
}

#[derive(Debug)]
struct InterruptSignal;
impl fmt::Display for InterruptSignal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GraphInterrupt")
    }
}
impl std::error::Error for InterruptSignal {}

#[derive(Debug)]
struct Raised(Failure);
impl fmt::Display for Raised {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.repr)
    }
}
impl std::error::Error for Raised {}

#[derive(Debug)]
struct HeapLimit(usize);
impl fmt::Display for HeapLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "heap limit of {} MiB exceeded", self.0 >> 20)
    }
}
impl std::error::Error for HeapLimit {}

/// Checks the Starlark heap before every statement: growth that the evaluator's own (periodic)
/// heap check would miss, such as doubling a string in a short loop, is stopped within a
/// statement of crossing the limit.
struct HeapGuard {
    max: usize,
}

impl<'e> starlark::eval::BeforeStmtFuncDyn<'e> for HeapGuard {
    fn call<'v>(
        &mut self,
        _span: starlark::codemap::FileSpanRef,
        _continued: bool,
        eval: &mut Evaluator<'v, '_, 'e>,
    ) -> starlark::Result<()> {
        if eval.heap().allocated_bytes() > self.max {
            return Err(starlark::Error::new_native(HeapLimit(self.max)));
        }
        Ok(())
    }
}

#[derive(ProvidesStaticType)]
struct Extra<'a> {
    cx: RefCell<&'a mut TaskContext>,
}

fn extra<'a, 'e>(eval: &Evaluator<'_, 'a, 'e>) -> anyhow::Result<&'a Extra<'e>> {
    eval.extra
        .and_then(|x| x.downcast_ref::<Extra<'e>>())
        .ok_or_else(|| {
            anyhow::anyhow!("this builtin only works inside a node (not at module load time)")
        })
}

struct PrintToEffects<'a>(&'a Extra<'a>);
impl PrintHandler for PrintToEffects<'_> {
    fn println(&self, text: &str) -> starlark::Result<()> {
        self.0.cx.borrow_mut().effect("print", RValue::from(text));
        Ok(())
    }
}

const WORDS: [&str; 24] = [
    "quick", "draft", "summary", "plan", "careful", "bold", "revised", "final", "short",
    "detailed", "friendly", "formal", "option", "proposal", "answer", "note", "brief", "update",
    "report", "idea", "reply", "version", "outline", "sketch",
];

#[starlark_module]
fn node_builtins(builder: &mut GlobalsBuilder) {
    fn interrupt<'v>(
        value: Value<'v>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> anyhow::Result<Value<'v>> {
        let x = extra(eval)?;
        let payload = from_star(value)
            .map_err(|e| anyhow::anyhow!("interrupt payload is not serialisable: {e}"))?;
        let r = x.cx.borrow_mut().interrupt(payload);
        match r {
            Ok(answer) => Ok(to_star(eval.heap(), &answer)),
            Err(_) => Err(InterruptSignal.into()),
        }
    }

    fn effect<'v>(
        name: &str,
        #[starlark(default = NoneType)] data: Value<'v>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> anyhow::Result<NoneType> {
        let x = extra(eval)?;
        let d = from_star(data).map_err(|e| anyhow::anyhow!("effect data: {e}"))?;
        x.cx.borrow_mut().effect(name, d);
        Ok(NoneType)
    }

    fn raise_error(kind: &str, message: &str) -> anyhow::Result<NoneType> {
        Err(Raised(Failure::new(kind, message)).into())
    }

    fn random(eval: &mut Evaluator<'_, '_, '_>) -> anyhow::Result<f64> {
        let h = extra(eval)?.cx.borrow_mut().helper_u64("random");
        Ok((h >> 11) as f64 / (1u64 << 53) as f64)
    }

    fn uuid4(eval: &mut Evaluator<'_, '_, '_>) -> anyhow::Result<String> {
        let x = extra(eval)?;
        let a = x.cx.borrow_mut().helper_u64("uuid4a");
        let b = x.cx.borrow_mut().helper_u64("uuid4b");
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&a.to_be_bytes());
        bytes[8..].copy_from_slice(&b.to_be_bytes());
        Ok(uuid::Builder::from_random_bytes(bytes)
            .into_uuid()
            .to_string())
    }

    fn now(eval: &mut Evaluator<'_, '_, '_>) -> anyhow::Result<String> {
        let h = extra(eval)?.cx.borrow_mut().helper_u64("now");
        // 2026-01-01T00:00:00Z plus up to a year, to the second
        let secs = 1_767_225_600u128 + (h % 31_536_000) as u128;
        Ok(crate::engine::clock::iso_utc(secs * 1_000_000_000))
    }

    fn llm<'v>(prompt: Value<'v>, eval: &mut Evaluator<'v, '_, '_>) -> anyhow::Result<String> {
        let x = extra(eval)?;
        let mut cx = x.cx.borrow_mut();
        let h = cx.helper_u64("llm");
        let words: Vec<&str> = (0..3)
            .map(|i| WORDS[((h >> (i * 8)) % WORDS.len() as u64) as usize])
            .collect();
        let p = match prompt.unpack_str() {
            Some(s) => s.to_string(),
            None => prompt.to_repr(),
        };
        Ok(format!(
            "{} {} {} #{:04x}: {}",
            words[0],
            words[1],
            words[2],
            (h >> 32) & 0xffff,
            p
        ))
    }

    #[allow(non_snake_case)]
    fn Command<'v>(
        #[starlark(require = named, default = NoneType)] goto: Value<'v>,
        #[starlark(require = named, default = NoneType)] update: Value<'v>,
        #[starlark(require = named, default = NoneType)] resume: Value<'v>,
        #[starlark(require = named, default = NoneType)] graph: Value<'v>,
        heap: Heap<'v>,
    ) -> anyhow::Result<Value<'v>> {
        Ok(heap.alloc(AllocStruct([
            ("__kind__", heap.alloc("Command")),
            ("graph", graph),
            ("update", update),
            ("resume", resume),
            ("goto", goto),
        ])))
    }

    #[allow(non_snake_case)]
    fn Send<'v>(node: &str, arg: Value<'v>, heap: Heap<'v>) -> anyhow::Result<Value<'v>> {
        Ok(heap.alloc(AllocStruct([
            ("__kind__", heap.alloc("Send")),
            ("node", heap.alloc(node)),
            ("arg", arg),
        ])))
    }
}

fn globals() -> Globals {
    GlobalsBuilder::extended_by(&[
        LibraryExtension::StructType,
        LibraryExtension::Json,
        LibraryExtension::Map,
        LibraryExtension::Filter,
        LibraryExtension::Print,
        LibraryExtension::SetType,
    ])
    .with(node_builtins)
    .build()
}

/// An argument of a Starlark call.
enum CallArg<'a> {
    Input(&'a NodeInput<'a>),
    Value(&'a RValue),
}

impl CallArg<'_> {
    /// The Starlark value; a state dict holds only the keys in `only` when that is given (the
    /// function provably reads no others: see `spec::reads`).
    fn to_star<'v>(
        &self,
        heap: Heap<'v>,
        only: Option<&[String]>,
        tracked: Option<&mut Vec<(String, Value<'v>)>>,
    ) -> Value<'v> {
        match self {
            CallArg::Value(v) => to_star(heap, v),
            CallArg::Input(NodeInput::Value(v)) => to_star(heap, v),
            CallArg::Input(NodeInput::State(entries)) => {
                let seen = |k: &str| only.is_none_or(|o| o.iter().any(|x| x == k));
                let items: Vec<(&str, Value<'v>)> = entries
                    .iter()
                    .filter(|(k, _)| seen(k))
                    .map(|(k, a)| (*k, arg_to_star(heap, a)))
                    .collect();
                if let Some(t) = tracked {
                    // the lists and dicts handed over: LangGraph hands the channels' own objects,
                    // so changes made to them in place are changes to the channels
                    t.extend(
                        items
                            .iter()
                            .filter(|(_, v)| matches!(v.get_type(), "list" | "dict"))
                            .map(|(k, v)| (k.to_string(), *v)),
                    );
                }
                heap.alloc(AllocDict(items))
            }
        }
    }
}

fn arg_to_star<'v>(heap: Heap<'v>, a: &Arg) -> Value<'v> {
    match a {
        Arg::Ref(v) => to_star(heap, v),
        Arg::Owned(v) => to_star(heap, v),
        Arg::Concat(a, b) => heap.alloc(AllocList(
            a.iter().chain(b.iter()).map(|x| to_star(heap, x)),
        )),
    }
}

/// msgpack value -> Starlark value. Extension types arrive as their JSON view (tagged dicts).
pub fn to_star<'v>(heap: Heap<'v>, v: &RValue) -> Value<'v> {
    match v {
        RValue::Nil => Value::new_none(),
        RValue::Boolean(b) => Value::new_bool(*b),
        RValue::Integer(i) => match i.as_i64() {
            Some(x) => heap.alloc(x),
            None => heap.alloc(i.as_u64().unwrap_or(0)),
        },
        RValue::F32(f) => heap.alloc(*f as f64),
        RValue::F64(f) => heap.alloc(*f),
        RValue::String(s) => match s.as_str() {
            Some(x) => heap.alloc(x),
            None => heap.alloc(String::from_utf8_lossy(s.as_bytes()).as_ref()),
        },
        RValue::Array(a) => heap.alloc(AllocList(a.iter().map(|x| to_star(heap, x)))),
        RValue::Map(m) => heap.alloc(AllocDict(
            m.iter()
                .map(|(k, x)| (key_to_star(heap, k), to_star(heap, x))),
        )),
        other => json_to_star(heap, &to_view(other, ViewOptions::default())),
    }
}

fn key_to_star<'v>(heap: Heap<'v>, k: &RValue) -> Value<'v> {
    match k {
        RValue::Array(a) => heap.alloc(AllocTuple(a.iter().map(|x| key_to_star(heap, x)))),
        RValue::Nil
        | RValue::Boolean(_)
        | RValue::Integer(_)
        | RValue::String(_)
        | RValue::F64(_)
        | RValue::F32(_) => to_star(heap, k),
        other => heap.alloc(to_view(other, ViewOptions::default()).to_string()),
    }
}

fn json_to_star<'v>(heap: Heap<'v>, j: &serde_json::Value) -> Value<'v> {
    match crate::value::from_view(j) {
        Ok(RValue::Map(m)) => heap.alloc(AllocDict(
            m.iter()
                .map(|(k, x)| (key_to_star(heap, k), to_star(heap, x))),
        )),
        Ok(v) if !matches!(v, RValue::Ext(..)) => to_star(heap, &v),
        _ => heap.alloc(j.to_string()),
    }
}

/// Starlark value -> msgpack value, as LangGraph would serialise the Python equivalent.
pub fn from_star(v: Value) -> Result<RValue, String> {
    if v.is_none() {
        return Ok(RValue::Nil);
    }
    if let Some(b) = v.unpack_bool() {
        return Ok(RValue::Boolean(b));
    }
    if let Some(s) = v.unpack_str() {
        return Ok(RValue::from(s));
    }
    match v.get_type() {
        "int" => {
            if let Ok(Some(i)) = i64::unpack_value(v) {
                return Ok(RValue::from(i));
            }
            if let Ok(Some(u)) = u64::unpack_value(v) {
                return Ok(RValue::from(u));
            }
            return Err(format!("Integer exceeds 64-bit range: {v}"));
        }
        "float" => {
            return Ok(RValue::F64(
                v.downcast_ref::<StarlarkFloat>()
                    .map(|f| f.0)
                    .unwrap_or(f64::NAN),
            ))
        }
        _ => {}
    }
    let items = ListRef::from_value(v)
        .map(|l| l.content())
        .or_else(|| TupleRef::from_value(v).map(|t| t.content()));
    if let Some(items) = items {
        return items
            .iter()
            .copied()
            .map(from_star)
            .collect::<Result<Vec<_>, _>>()
            .map(RValue::Array);
    }
    if let Some(d) = DictRef::from_value(v) {
        let mut m = Vec::new();
        for (k, x) in d.iter() {
            m.push((from_star(k)?, from_star(x)?));
        }
        // tagged forms that have a unique msgpack encoding (bytes, floats, maps)
        let as_json = to_view(&RValue::Map(m.clone()), ViewOptions::default());
        if as_json.get("__type__").is_some() {
            if let Ok(r) = crate::value::from_view(&as_json) {
                if !matches!(r, RValue::Map(_)) {
                    return Ok(r);
                }
            }
        }
        return Ok(RValue::Map(m));
    }
    if let Some(s) = StructRef::from_value(v) {
        let fields: Vec<(String, Value)> =
            s.iter().map(|(k, x)| (k.as_str().to_string(), x)).collect();
        let get = |k: &str| fields.iter().find(|(f, _)| f == k).map(|(_, x)| *x);
        match get("__kind__").and_then(|k| k.unpack_str()) {
            Some("Command") => {
                let goto = match get("goto") {
                    Some(g) if !g.is_none() => from_star(g)?,
                    _ => RValue::Array(Vec::new()),
                };
                let f = |k: &str| {
                    get(k)
                        .map(from_star)
                        .transpose()
                        .map(|o| o.unwrap_or(RValue::Nil))
                };
                return Ok(crate::value::ext::constructor(
                    2,
                    "langgraph.types",
                    "Command",
                    RValue::Map(vec![
                        ("graph".into(), f("graph")?),
                        ("update".into(), f("update")?),
                        ("resume".into(), f("resume")?),
                        ("goto".into(), goto),
                    ]),
                    None,
                ));
            }
            Some("Send") => {
                let node = get("node")
                    .and_then(|n| n.unpack_str())
                    .unwrap_or_default()
                    .to_string();
                let arg = from_star(get("arg").unwrap_or(Value::new_none()))?;
                return Ok(crate::value::Send { node, arg }.to_value());
            }
            _ => {
                let mut m = Vec::new();
                for (k, x) in fields {
                    m.push((RValue::from(k), from_star(x)?));
                }
                return Ok(RValue::Map(m));
            }
        }
    }
    Err(format!(
        "a {} value cannot be stored in the checkpoint ({v})",
        v.get_type()
    ))
}

/// A loaded Starlark module holding a graph's functions.
#[derive(Clone)]
pub struct StarlarkCode {
    module: FrozenModule,
    /// Per function: the only state keys it reads (`spec::reads`), when that is provable.
    reads: std::collections::HashMap<String, Vec<String>>,
    /// Whether the code can change a value in place (`spec::aliasing`): then the lists and
    /// dicts of the state handed to a function are compared after the call.
    mutates: bool,
    pub max_ticks: u64,
    pub max_heap: usize,
}

/// Number of positional parameters a function accepts (`None` if not a def/lambda).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Callable {
    Missing,
    NotAFunction,
    Takes(bool),
}

impl StarlarkCode {
    /// Parse and evaluate a module. Errors read `file:line:col: message`.
    pub fn load(file: &str, source: &str) -> Result<StarlarkCode, String> {
        let globals = globals();
        let ast =
            AstModule::parse(file, source.to_owned(), &dialect()).map_err(|e| format_error(&e))?;
        let reads = crate::spec::reads::state_reads(&ast);
        let mutates = crate::spec::aliasing::may_mutate(&ast);
        let module = Module::with_temp_heap(|module| -> starlark::Result<FrozenModule> {
            {
                let mut eval = Evaluator::new(&module);
                eval.set_max_tick_count(MAX_TICKS)
                    .map_err(starlark::Error::new_other)?;
                eval.eval_module(ast, &globals)?;
            }
            module.freeze().map_err(starlark::Error::new_other)
        })
        .map_err(|e| format_error(&e))?;
        Ok(StarlarkCode {
            module,
            reads,
            mutates,
            max_ticks: MAX_TICKS,
            max_heap: MAX_HEAP_BYTES,
        })
    }

    /// Whether `name` is a function callable with `nargs` positional arguments.
    pub fn check(&self, name: &str, nargs: usize) -> Callable {
        let Ok(Some(f)) = self.module.get_option(name) else {
            return Callable::Missing;
        };
        let fv = f.value();
        if fv.get_type() != "function" {
            return Callable::NotAFunction;
        }
        match fv.parameters_spec() {
            Some(p) => Callable::Takes(p.can_fill_with_args(nargs, &[])),
            None => Callable::Takes(true),
        }
    }

    pub fn names(&self) -> Vec<String> {
        self.module
            .names()
            .map(|n| n.as_str().to_string())
            .collect()
    }

    fn call(
        &self,
        func: &str,
        args: &[CallArg],
        cx: &mut TaskContext,
    ) -> Result<RValue, NodeError> {
        let f = self
            .module
            .get(func)
            .map_err(|e| NodeError::Failed(Failure::new("NameError", &format!("{func}: {e}"))))?;
        let max_ticks = self.max_ticks;
        let max_heap = self.max_heap;
        let extra = Extra {
            cx: RefCell::new(cx),
        };
        let printer = PrintToEffects(&extra);
        let run = std::panic::AssertUnwindSafe(|| {
            Module::with_temp_heap(|module| {
                let mut eval = Evaluator::new(&module);
                eval.extra = Some(&extra);
                eval.set_print_handler(&printer);
                let _ = eval.set_max_tick_count(max_ticks);
                let _ = eval.set_max_heap_size(max_heap);
                let _ = eval.set_max_callstack_size(200);
                eval.before_stmt_for_dap(starlark::eval::BeforeStmtFunc::from_dyn(Box::new(
                    HeapGuard { max: max_heap },
                )));
                let fv = module.heap().access_owned_frozen_value(&f);
                let only = self.reads.get(func).map(Vec::as_slice);
                let mut tracked: Vec<(String, Value)> = Vec::new();
                let argv: Vec<Value> = args
                    .iter()
                    .map(|a| a.to_star(module.heap(), only, self.mutates.then_some(&mut tracked)))
                    .collect();
                // the converted values as handed over, to see in-place changes after the call
                let before: Vec<Option<RValue>> =
                    tracked.iter().map(|(_, v)| from_star(*v).ok()).collect();
                let out = eval.eval_function(fv, &argv, &[]);
                for ((k, v), b) in tracked.iter().zip(before) {
                    let Ok(now) = from_star(*v) else { continue };
                    if b.as_ref() != Some(&now) {
                        extra.cx.borrow_mut().mutated.push((k.clone(), now));
                    }
                }
                let ticks = eval.get_total_tick_count();
                match out {
                    Ok(v) => {
                        from_star(v).map_err(|e| NodeError::Failed(Failure::new("TypeError", &e)))
                    }
                    Err(e) => Err(classify(func, &e, ticks > max_ticks, max_ticks)),
                }
            })
        });
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let r = std::panic::catch_unwind(run);
        std::panic::set_hook(prev);
        match r {
            Ok(r) => r,
            Err(p) => {
                let msg = p
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "interpreter panic".into());
                Err(NodeError::Failed(Failure::new(
                    "MemoryError",
                    &format!("{func}: the Starlark interpreter gave up: {msg}"),
                )))
            }
        }
    }
}

fn classify(func: &str, e: &starlark::Error, over_ticks: bool, max_ticks: u64) -> NodeError {
    if let ErrorKind::Native(a) = e.kind() {
        if a.downcast_ref::<InterruptSignal>().is_some() {
            return NodeError::Interrupt;
        }
        if let Some(Raised(f)) = a.downcast_ref::<Raised>() {
            return NodeError::Failed(f.clone());
        }
        if let Some(h) = a.downcast_ref::<HeapLimit>() {
            return NodeError::Failed(Failure::new("MemoryError", &format!("{func}: {h}")));
        }
    }
    if let ErrorKind::Fail(a) = e.kind() {
        return NodeError::Failed(Failure::new("Exception", a.to_string().trim()));
    }
    if over_ticks {
        return NodeError::Failed(Failure::new(
            "RuntimeError",
            &format!("{func}: stopped after {max_ticks} Starlark steps (runaway loop?)"),
        ));
    }
    let msg = format_error(e);
    let plain = e.without_diagnostic().to_string();
    // Python's class and message for the runtime errors node code commonly hits
    if let Some(key) = plain
        .strip_prefix("Key `")
        .and_then(|r| r.strip_suffix("` was not found"))
    {
        let key = key.trim_matches('"');
        return NodeError::Failed(Failure {
            kind: "KeyError".into(),
            repr: format!("KeyError({})", crate::engine::py_repr_str(key)),
        });
    }
    if plain.contains("out of bound") || plain.contains("Index `") {
        return NodeError::Failed(Failure::new("IndexError", "list index out of range"));
    }
    if plain.contains("not supported for type") || plain.contains("Type of parameter") {
        return NodeError::Failed(Failure::new("TypeError", &msg));
    }
    if msg.contains("Heap memory limit") {
        let first = plain.lines().next().unwrap_or_default();
        return NodeError::Failed(Failure::new("MemoryError", &format!("{func}: {first}")));
    }
    if matches!(e.kind(), ErrorKind::StackOverflow(_)) {
        return NodeError::Failed(Failure::new(
            "RecursionError",
            &format!("{func}: maximum recursion depth exceeded"),
        ));
    }
    NodeError::Failed(Failure::new("RuntimeError", &msg))
}

impl NodeCode for StarlarkCode {
    fn call_node(
        &self,
        func: &str,
        input: &NodeInput,
        cx: &mut TaskContext,
    ) -> Result<RValue, NodeError> {
        self.call(func, &[CallArg::Input(input)], cx)
    }

    fn call_path(
        &self,
        func: &str,
        input: &NodeInput,
        cx: &mut TaskContext,
    ) -> Result<RValue, NodeError> {
        self.call(func, &[CallArg::Input(input)], cx)
    }

    fn reduce(&self, func: &str, current: &RValue, update: &RValue) -> Result<RValue, String> {
        let null = std::rc::Rc::new(RefCell::new(None));
        let mut cx = TaskContext::new("", "", func, Vec::new(), null, 0, "", 0);
        self.call(
            func,
            &[CallArg::Value(current), CallArg::Value(update)],
            &mut cx,
        )
        .map_err(|e| match e {
            NodeError::Failed(f) => f.repr,
            NodeError::Interrupt => "interrupt() cannot be called in a reducer".into(),
            NodeError::ParentCommand(_) => "a reducer cannot return Command(graph=PARENT)".into(),
        })
    }
}

impl crate::snapshot::topology::ReducerCode for StarlarkCode {
    fn reduce(&self, func: &str, current: &RValue, update: &RValue) -> Result<RValue, String> {
        NodeCode::reduce(self, func, current, update)
    }
}

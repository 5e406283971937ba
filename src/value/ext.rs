//! Msgpack extension types written by `JsonPlusSerializer` (spec §12.3), read structurally.
//!
//! Every code 0–5 carries a msgpack payload `[module, name, arg, (method)]`; nothing here imports
//! or instantiates anything: the module and class names are kept as strings.

use super::envelope::decode_msgpack;
use rmpv::Value;

pub const EXT_CONSTRUCTOR_SINGLE_ARG: i8 = 0;
pub const EXT_CONSTRUCTOR_POS_ARGS: i8 = 1;
pub const EXT_CONSTRUCTOR_KW_ARGS: i8 = 2;
pub const EXT_METHOD_SINGLE_ARG: i8 = 3;
pub const EXT_PYDANTIC_V1: i8 = 4;
pub const EXT_PYDANTIC_V2: i8 = 5;
pub const EXT_NUMPY_ARRAY: i8 = 6;
pub const EXT_DELTA_SNAPSHOT: i8 = 7;
/// Not a LangGraph code: marks an opaque `pickle` envelope when it has to live inside a value.
pub const PICKLE_PSEUDO_EXT: i8 = -128;
/// Not a LangGraph code: an envelope LangGraph's `EncryptedSerializer` wrote (`type` is
/// `"<serializer>+<cipher>"`, e.g. `msgpack+aes`), kept opaque: superstep has no key. The data is
/// msgpack `[type, bin(ciphertext)]`.
pub const ENCRYPTED_PSEUDO_EXT: i8 = -127;

/// A decoded extension: `Ext(code, msgpack(payload))`.
#[derive(Debug, Clone, PartialEq)]
pub enum Ext {
    /// Codes 0–5 with the expected `[module, name, arg, ...]` shape.
    Constructor {
        code: i8,
        module: String,
        name: String,
        arg: Value,
        method: Option<String>,
    },
    /// Code 6.
    Numpy {
        dtype: String,
        shape: Vec<Value>,
        order: String,
        data: Vec<u8>,
    },
    /// Code 7.
    DeltaSnapshot(Value),
    /// Anything else (unknown code, payload of an unexpected shape, undecodable payload).
    Opaque { code: i8, data: Vec<u8> },
}

fn as_str(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

impl Ext {
    pub fn parse(code: i8, data: &[u8]) -> Ext {
        let opaque = || Ext::Opaque {
            code,
            data: data.to_vec(),
        };
        if !(0..=7).contains(&code) {
            return opaque();
        }
        let Ok(payload) = decode_msgpack(data) else {
            return opaque();
        };
        match code {
            EXT_DELTA_SNAPSHOT => Ext::DeltaSnapshot(payload),
            EXT_NUMPY_ARRAY => match payload {
                Value::Array(mut a) if a.len() == 4 => {
                    let data = match a.pop() {
                        Some(Value::Binary(b)) => b,
                        _ => return opaque(),
                    };
                    let order = a.pop().and_then(|v| as_str(&v));
                    let shape = match a.pop() {
                        Some(Value::Array(s)) => s,
                        _ => return opaque(),
                    };
                    let dtype = a.pop().and_then(|v| as_str(&v));
                    match (dtype, order) {
                        (Some(dtype), Some(order)) => Ext::Numpy {
                            dtype,
                            shape,
                            order,
                            data,
                        },
                        _ => opaque(),
                    }
                }
                _ => opaque(),
            },
            _ => match payload {
                Value::Array(a) if a.len() >= 3 => {
                    let (Some(module), Some(name)) = (as_str(&a[0]), as_str(&a[1])) else {
                        return opaque();
                    };
                    let method = a.get(3).and_then(as_str);
                    let mut it = a.into_iter();
                    let arg = it.nth(2).unwrap_or(Value::Nil);
                    Ext::Constructor {
                        code,
                        module,
                        name,
                        arg,
                        method,
                    }
                }
                _ => opaque(),
            },
        }
    }

    /// `module.name` for constructor-style extensions.
    pub fn qualname(&self) -> Option<String> {
        match self {
            Ext::Constructor { module, name, .. } => Some(format!("{module}.{name}")),
            _ => None,
        }
    }
}

/// `langgraph.types.Interrupt` (ext 2, fields value/id/response_schema), as stored in INTERRUPT
/// writes.
#[derive(Debug, Clone, PartialEq)]
pub struct Interrupt {
    pub value: Value,
    pub id: String,
    pub response_schema: Value,
}

impl Interrupt {
    /// Read an Interrupt from its msgpack form. Legacy payloads with `ns` and no `id` get the id
    /// `xxh3_128_hexdigest("|".join(ns))` (spec §5.6). LangGraph 0.2.x wrote Interrupts with no
    /// id at all (`langgraph.constants.Interrupt(value, when)` in 0.2.20, `langgraph.types.
    /// Interrupt(value, resumable, ns, when)` in 0.2.76): read with an empty id.
    pub fn from_value(v: &Value) -> Option<Interrupt> {
        let fields = interrupt_fields(v)?;
        let get = |k: &str| {
            fields
                .iter()
                .find(|(fk, _)| fk.as_str() == Some(k))
                .map(|(_, v)| v.clone())
        };
        let id = match get("id").as_ref().and_then(Value::as_str) {
            Some(id) => id.to_string(),
            None => match Interrupt::ns_of(v) {
                Some(ns) => crate::ids::xxh3_hex(ns.join("|").as_bytes()),
                None => String::new(),
            },
        };
        Some(Interrupt {
            value: get("value").unwrap_or(Value::Nil),
            id,
            response_schema: get("response_schema").unwrap_or(Value::Nil),
        })
    }

    /// The `ns` a legacy (LangGraph 0.2.6x–0.3) Interrupt carries: `["node:task_id", …]`.
    pub fn ns_of(v: &Value) -> Option<Vec<String>> {
        let fields = interrupt_fields(v)?;
        match fields.iter().find(|(k, _)| k.as_str() == Some("ns")) {
            Some((_, Value::Array(parts))) => Some(
                parts
                    .iter()
                    .filter_map(|p| p.as_str().map(str::to_string))
                    .collect(),
            ),
            _ => None,
        }
    }

    /// The msgpack form LangGraph writes: `Ext(2, ["langgraph.types","Interrupt",{value,id,response_schema}])`.
    pub fn to_value(&self) -> Value {
        constructor(
            EXT_CONSTRUCTOR_KW_ARGS,
            "langgraph.types",
            "Interrupt",
            Value::Map(vec![
                ("value".into(), self.value.clone()),
                ("id".into(), Value::from(self.id.as_str())),
                ("response_schema".into(), self.response_schema.clone()),
            ]),
            None,
        )
    }
}

/// The keyword fields of an Interrupt (`langgraph.types`, or `langgraph.constants` in 0.2.20).
fn interrupt_fields(v: &Value) -> Option<Vec<(Value, Value)>> {
    let Value::Ext(code, data) = v else {
        return None;
    };
    let Ext::Constructor {
        module, name, arg, ..
    } = Ext::parse(*code, data)
    else {
        return None;
    };
    if !matches!(module.as_str(), "langgraph.types" | "langgraph.constants") || name != "Interrupt"
    {
        return None;
    }
    match arg {
        Value::Map(fields) => Some(fields),
        _ => None,
    }
}

/// `langgraph.types.Send` (ext 1, `[node, arg]`; `langgraph.constants.Send` in LangGraph 0.2).
#[derive(Debug, Clone, PartialEq)]
pub struct Send {
    pub node: String,
    pub arg: Value,
}

impl Send {
    pub fn from_value(v: &Value) -> Option<Send> {
        let Value::Ext(code, data) = v else {
            return None;
        };
        match Ext::parse(*code, data) {
            Ext::Constructor {
                module, name, arg, ..
            } if matches!(module.as_str(), "langgraph.types" | "langgraph.constants")
                && name == "Send" =>
            {
                match arg {
                    Value::Array(a) if a.len() >= 2 => Some(Send {
                        node: a[0].as_str()?.to_string(),
                        arg: a[1].clone(),
                    }),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    pub fn to_value(&self) -> Value {
        constructor(
            EXT_CONSTRUCTOR_POS_ARGS,
            "langgraph.types",
            "Send",
            Value::Array(vec![Value::from(self.node.as_str()), self.arg.clone()]),
            None,
        )
    }
}

/// Build a constructor-style extension value.
pub fn constructor(code: i8, module: &str, name: &str, arg: Value, method: Option<&str>) -> Value {
    let mut payload = vec![Value::from(module), Value::from(name), arg];
    if let Some(m) = method {
        payload.push(Value::from(m));
    }
    Value::Ext(code, super::encode_msgpack(&Value::Array(payload)))
}

/// The value inside `Overwrite(v)` (ext 2 `langgraph.types.Overwrite`) or `{"__overwrite__": v}`:
/// a write that bypasses a reducer.
pub fn overwrite_value(v: &Value) -> Option<Value> {
    match v {
        Value::Ext(code, data) => match Ext::parse(*code, data) {
            Ext::Constructor {
                module,
                name,
                arg: Value::Map(m),
                ..
            } if module == "langgraph.types" && name == "Overwrite" => m
                .into_iter()
                .find(|(k, _)| k.as_str() == Some("value"))
                .map(|(_, v)| v),
            _ => None,
        },
        Value::Map(m) if m.len() == 1 && m[0].0.as_str() == Some("__overwrite__") => {
            Some(m[0].1.clone())
        }
        _ => None,
    }
}

/// String items of a stored `builtins.set` (ext 0) or a plain list.
pub fn set_items(v: &Value) -> Vec<String> {
    let strings = |a: &[Value]| {
        a.iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect()
    };
    match v {
        Value::Ext(code, data) => match Ext::parse(*code, data) {
            Ext::Constructor {
                arg: Value::Array(a),
                ..
            } => strings(&a),
            _ => Vec::new(),
        },
        Value::Array(a) => strings(a),
        _ => Vec::new(),
    }
}

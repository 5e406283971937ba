//! What the graph knows and the DB does not (spec §11): node order, each node's full trigger
//! list, the state keys and the channel class behind each (with its reducer's identity).
//! Supplied by a graph spec, a `--topology` file or a live Python graph, or inferred from the DB
//! (with warnings wherever the inference can be wrong).
//!
//! The JSON interchange form is the object `tests/oracle/common.py::topology()` dumps:
//!
//! ```json
//! {"nodes": [{"name": "__start__", "triggers": ["__start__"]}, ...],
//!  "state_keys": ["messages", "count"],
//!  "channels": {"messages": {"kind": "BinaryOperatorAggregate", "reducer": "_add_messages",
//!                            "reducer_qualname": "langgraph.graph.message.add_messages", "default": []},
//!               "history": {"kind": "DeltaChannel", "reducer": "_messages_delta_reducer",
//!                           "reducer_qualname": "langgraph.pregel._messages._messages_delta_reducer",
//!                           "snapshot_frequency": 100, "default": []},
//!               "count": {"kind": "LastValue", "reducer": null, "default": null}, ...},
//!  "subgraphs": ["sub"]}
//! ```
//!
//! `reducer_qualname`, `snapshot_frequency`, `accumulate` and `guard` were added after the first
//! fixtures; a topology without them still reads (the reducer is then known by its short name).

use rmpv::Value;

/// The identity of a reducer function (`BinaryOperatorAggregate.operator`, `DeltaChannel.reducer`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReducerId {
    /// `operator.add` (lists/strings concatenate, numbers add).
    Add,
    /// `langgraph.graph.message.add_messages`.
    AddMessages,
    /// `langgraph.graph.message._messages_delta_reducer` (the batch reducer for a DeltaChannel of
    /// messages).
    MessagesDelta,
    /// A function `def name(current, update)` in a spec's Starlark code.
    Starlark(String),
    /// Any other function, by its qualified Python name (`myapp.state.merge`), or by its short
    /// name when an older topology gave only that.
    Named(String),
}

impl ReducerId {
    /// From a qualified Python name (`module.qualname`), or a bare `__name__` from an older
    /// topology file.
    pub fn from_python(qualname: &str) -> ReducerId {
        match qualname {
            "operator.add" | "_operator.add" | "add" => ReducerId::Add,
            "langgraph.graph.message.add_messages" | "add_messages" | "_add_messages" => {
                ReducerId::AddMessages
            }
            q if q.ends_with("._messages_delta_reducer") || q == "_messages_delta_reducer" => {
                ReducerId::MessagesDelta
            }
            // what `qualname()` writes for a spec's Starlark reducer (and the differential twin's
            // module name for the same function)
            q if q.starts_with("starlark_module.") => {
                ReducerId::Starlark(q["starlark_module.".len()..].to_string())
            }
            q => ReducerId::Named(q.to_string()),
        }
    }

    /// How the reducer is named to a user (its qualified Python name where LangGraph has one).
    pub fn display(&self) -> String {
        match self {
            ReducerId::Add => "operator.add".into(),
            ReducerId::AddMessages => "langgraph.graph.message.add_messages".into(),
            ReducerId::MessagesDelta => "langgraph.graph.message._messages_delta_reducer".into(),
            ReducerId::Starlark(f) => format!("{f} (Starlark)"),
            ReducerId::Named(n) => n.clone(),
        }
    }

    /// The name the interchange JSON carries in `reducer_qualname`.
    pub fn qualname(&self) -> String {
        match self {
            ReducerId::Starlark(f) => format!("starlark_module.{f}"),
            other => other.display(),
        }
    }
}

/// The LangGraph channel class behind a channel (state key or machinery).
#[derive(Debug, Clone, PartialEq)]
pub enum ChannelKind {
    /// `LastValue`: one write per step, the value replaces the old one.
    LastValue,
    /// `BinaryOperatorAggregate(typ, operator)`: writes fold through the reducer.
    BinaryOperatorAggregate { reducer: ReducerId },
    /// `DeltaChannel(reducer, snapshot_frequency=N)` (LangGraph 1.2, beta): checkpoints hold a
    /// `_DeltaSnapshot` every N updates and nothing in between; the value is rebuilt from the
    /// nearest snapshot plus the ancestors' writes, through the (batch) reducer.
    DeltaChannel {
        reducer: ReducerId,
        snapshot_frequency: u32,
    },
    /// `Topic(typ, accumulate)` (`__pregel_tasks` is `Topic(Send, accumulate=False)`).
    Topic { accumulate: bool },
    /// `EphemeralValue(typ, guard)`: cleared after the step that read it.
    EphemeralValue { guard: bool },
    /// `UntrackedValue(typ, guard)`: never checkpointed.
    UntrackedValue { guard: bool },
    /// `NamedBarrierValue` (`join:a+b:c`).
    NamedBarrierValue,
    /// `LastValueAfterFinish` (trigger of a deferred node).
    LastValueAfterFinish,
    /// `NamedBarrierValueAfterFinish` (waiting edge into a deferred node).
    NamedBarrierValueAfterFinish,
    /// `AnyValue`.
    AnyValue,
    /// A channel class superstep does not know, by class name.
    Other(String),
}

impl ChannelKind {
    /// LangGraph's class name.
    pub fn class_name(&self) -> &str {
        match self {
            ChannelKind::LastValue => "LastValue",
            ChannelKind::BinaryOperatorAggregate { .. } => "BinaryOperatorAggregate",
            ChannelKind::DeltaChannel { .. } => "DeltaChannel",
            ChannelKind::Topic { .. } => "Topic",
            ChannelKind::EphemeralValue { .. } => "EphemeralValue",
            ChannelKind::UntrackedValue { .. } => "UntrackedValue",
            ChannelKind::NamedBarrierValue => "NamedBarrierValue",
            ChannelKind::LastValueAfterFinish => "LastValueAfterFinish",
            ChannelKind::NamedBarrierValueAfterFinish => "NamedBarrierValueAfterFinish",
            ChannelKind::AnyValue => "AnyValue",
            ChannelKind::Other(n) => n,
        }
    }

    /// The reducer of a reducer channel.
    pub fn reducer_id(&self) -> Option<&ReducerId> {
        match self {
            ChannelKind::BinaryOperatorAggregate { reducer }
            | ChannelKind::DeltaChannel { reducer, .. } => Some(reducer),
            _ => None,
        }
    }

    /// Read one entry of the interchange JSON's `channels` object.
    pub fn from_json(ch: &serde_json::Value) -> ChannelKind {
        let reducer = || {
            let q = ch["reducer_qualname"]
                .as_str()
                .or_else(|| ch["reducer"].as_str())
                .unwrap_or("?");
            ReducerId::from_python(q)
        };
        let flag = |k: &str, d: bool| ch[k].as_bool().unwrap_or(d);
        match ch["kind"].as_str().unwrap_or("LastValue") {
            "LastValue" => ChannelKind::LastValue,
            "BinaryOperatorAggregate" => {
                ChannelKind::BinaryOperatorAggregate { reducer: reducer() }
            }
            "DeltaChannel" => ChannelKind::DeltaChannel {
                reducer: reducer(),
                snapshot_frequency: ch["snapshot_frequency"]
                    .as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .unwrap_or(100),
            },
            "Topic" => ChannelKind::Topic {
                accumulate: flag("accumulate", false),
            },
            "EphemeralValue" => ChannelKind::EphemeralValue {
                guard: flag("guard", true),
            },
            "UntrackedValue" => ChannelKind::UntrackedValue {
                guard: flag("guard", true),
            },
            "NamedBarrierValue" => ChannelKind::NamedBarrierValue,
            "LastValueAfterFinish" => ChannelKind::LastValueAfterFinish,
            "NamedBarrierValueAfterFinish" => ChannelKind::NamedBarrierValueAfterFinish,
            "AnyValue" => ChannelKind::AnyValue,
            other => ChannelKind::Other(other.to_string()),
        }
    }

    /// This kind as an entry of the interchange JSON's `channels` object (without `default`).
    pub fn to_json(&self) -> serde_json::Value {
        let mut o = serde_json::Map::new();
        o.insert("kind".into(), self.class_name().into());
        let reducer = self.reducer_id();
        o.insert(
            "reducer".into(),
            match reducer {
                Some(ReducerId::Add) => "add".into(),
                Some(ReducerId::AddMessages) => "_add_messages".into(),
                Some(ReducerId::MessagesDelta) => "_messages_delta_reducer".into(),
                Some(ReducerId::Starlark(f)) => f.as_str().into(),
                Some(ReducerId::Named(n)) => n.rsplit('.').next().unwrap_or(n).into(),
                None => serde_json::Value::Null,
            },
        );
        if let Some(r) = reducer {
            o.insert("reducer_qualname".into(), r.qualname().into());
        }
        match self {
            ChannelKind::DeltaChannel {
                snapshot_frequency, ..
            } => {
                o.insert("snapshot_frequency".into(), (*snapshot_frequency).into());
            }
            ChannelKind::Topic { accumulate } => {
                o.insert("accumulate".into(), (*accumulate).into());
            }
            ChannelKind::EphemeralValue { guard } | ChannelKind::UntrackedValue { guard } => {
                o.insert("guard".into(), (*guard).into());
            }
            _ => {}
        }
        serde_json::Value::Object(o)
    }
}

/// How a state key combines writes (what applying pending writes needs).
#[derive(Debug, Clone, PartialEq)]
pub enum Reducer {
    /// `LastValue`: one write per step, the value replaces the old one.
    LastValue,
    /// `BinaryOperatorAggregate` with `operator.add` (lists/strings concatenate, numbers add).
    Add,
    /// Another reducer (a user function): cannot be applied without the graph's code.
    Other(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct StateKey {
    pub name: String,
    pub reducer: Reducer,
    /// Initial value of a reducer channel (`typ()`, e.g. `[]`); `None` if it has none.
    pub default: Option<Value>,
    /// The channel class (and reducer identity) behind the key.
    pub kind: ChannelKind,
}

impl StateKey {
    /// A key of channel class `kind`; `reducer` is derived from it.
    pub fn new(name: &str, kind: ChannelKind, default: Option<Value>) -> StateKey {
        let reducer = match kind.reducer_id() {
            // a DeltaChannel's reducer takes a batch (`reducer(state, [w1, w2])`), so even
            // `operator.add` there is not the `+` of a BinaryOperatorAggregate
            Some(ReducerId::Add) if !matches!(kind, ChannelKind::DeltaChannel { .. }) => {
                Reducer::Add
            }
            Some(r) => Reducer::Other(match r {
                ReducerId::Starlark(f) => f.clone(),
                other => other.display(),
            }),
            None => Reducer::LastValue,
        };
        StateKey {
            name: name.to_string(),
            reducer,
            default: match kind.reducer_id() {
                Some(_) => default,
                None => None,
            },
            kind,
        }
    }

    pub fn is_delta(&self) -> bool {
        matches!(self.kind, ChannelKind::DeltaChannel { .. })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct NodeTopo {
    pub name: String,
    pub triggers: Vec<String>,
    pub subgraph: bool,
}

/// A graph's own reducer functions, callable by the inspector (a spec's Starlark code): what it
/// needs to rebuild a DeltaChannel key whose reducer is the graph's function.
pub trait ReducerCode: Send + Sync {
    /// `func(current, update)`; a DeltaChannel passes the list of writes as `update`.
    fn reduce(&self, func: &str, current: &Value, update: &Value) -> Result<Value, String>;
}

/// The code behind a topology, when the graph is loaded (a spec); not part of its shape: two
/// topologies compare equal whatever their code.
#[derive(Clone)]
pub struct GraphCode(pub std::sync::Arc<dyn ReducerCode>);

impl std::fmt::Debug for GraphCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GraphCode")
    }
}

impl PartialEq for GraphCode {
    fn eq(&self, _: &GraphCode) -> bool {
        true
    }
}

/// A graph's shape as far as snapshots need it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Topology {
    /// Registration order, `__start__` first.
    pub nodes: Vec<NodeTopo>,
    /// State keys in spec order.
    pub state_keys: Vec<StateKey>,
    /// The graph's reducer functions, when the graph itself is loaded (a spec).
    pub code: Option<GraphCode>,
    /// LangGraph's values are the bare value of the one state key (a functional-API
    /// entrypoint's `__end__`, a `__root__` graph), not a dict.
    pub root_value: bool,
}

impl Topology {
    pub fn node(&self, name: &str) -> Option<&NodeTopo> {
        self.nodes.iter().find(|n| n.name == name)
    }

    pub fn key(&self, name: &str) -> Option<&StateKey> {
        self.state_keys.iter().find(|k| k.name == name)
    }

    /// The state keys that are delta channels.
    pub fn delta_keys(&self) -> impl Iterator<Item = &StateKey> {
        self.state_keys.iter().filter(|k| k.is_delta())
    }

    /// Read the `topology` object the oracle scripts dump (see tests/oracle/common.py).
    pub fn from_oracle_json(j: &serde_json::Value) -> Result<Topology, String> {
        let nodes = j["nodes"]
            .as_array()
            .ok_or("topology.nodes missing")?
            .iter()
            .map(|n| {
                Ok(NodeTopo {
                    name: n["name"].as_str().ok_or("node name")?.to_string(),
                    triggers: n["triggers"]
                        .as_array()
                        .ok_or("node triggers")?
                        .iter()
                        .filter_map(|t| t.as_str().map(str::to_string))
                        .collect(),
                    subgraph: j["subgraphs"]
                        .as_array()
                        .is_some_and(|s| s.iter().any(|x| x == &n["name"])),
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let channels = &j["channels"];
        let state_keys = j["state_keys"]
            .as_array()
            .ok_or("topology.state_keys missing")?
            .iter()
            .filter_map(|k| k.as_str())
            .map(|k| {
                let ch = &channels[k];
                let kind = ChannelKind::from_json(ch);
                let default = (!ch["default"].is_null())
                    .then(|| crate::value::from_plain_json(&ch["default"]).ok())
                    .flatten();
                StateKey::new(k, kind, default)
            })
            .collect();
        let root_value = j["root_value"].as_bool().unwrap_or(false);
        Ok(Topology {
            nodes,
            state_keys,
            code: None,
            root_value,
        })
    }

    /// The interchange JSON (what `from_oracle_json` reads). Channels other than the state keys
    /// are not listed: a topology made from a spec knows them only through the node triggers.
    pub fn to_json(&self) -> serde_json::Value {
        let channels: serde_json::Map<String, serde_json::Value> = self
            .state_keys
            .iter()
            .map(|k| {
                let mut c = k.kind.to_json();
                c["default"] = k
                    .default
                    .as_ref()
                    .map(|d| crate::value::to_view(d, crate::value::ViewOptions::default()))
                    .unwrap_or(serde_json::Value::Null);
                (k.name.clone(), c)
            })
            .collect();
        serde_json::json!({
            "nodes": self.nodes.iter().map(|n| serde_json::json!({"name": n.name, "triggers": n.triggers})).collect::<Vec<_>>(),
            "state_keys": self.state_keys.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(),
            "channels": channels,
            "subgraphs": self.nodes.iter().filter(|n| n.subgraph).map(|n| n.name.as_str()).collect::<Vec<_>>(),
        })
    }
}

/// Channels that are LangGraph machinery, not state keys.
pub fn is_reserved_channel(ch: &str) -> bool {
    (ch.starts_with("__") && ch != "__root__")
        || ch.starts_with("branch:")
        || ch.starts_with("join:")
        || ch.starts_with("start:")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_old_topology_without_qualnames_still_reads() {
        let t = Topology::from_oracle_json(&json!({
            "nodes": [{"name": "__start__", "triggers": ["__start__"]}],
            "state_keys": ["a", "b", "m", "u"],
            "channels": {
                "a": {"kind": "LastValue", "reducer": null, "default": null},
                "b": {"kind": "BinaryOperatorAggregate", "reducer": "add", "default": []},
                "m": {"kind": "BinaryOperatorAggregate", "reducer": "_add_messages", "default": []},
                "u": {"kind": "BinaryOperatorAggregate", "reducer": "merge", "default": {}}
            },
            "subgraphs": []
        }))
        .unwrap();
        assert_eq!(t.key("a").unwrap().reducer, Reducer::LastValue);
        assert_eq!(t.key("b").unwrap().reducer, Reducer::Add);
        assert_eq!(
            t.key("m").unwrap().kind,
            ChannelKind::BinaryOperatorAggregate {
                reducer: ReducerId::AddMessages
            }
        );
        assert_eq!(t.key("u").unwrap().reducer, Reducer::Other("merge".into()));
    }

    #[test]
    fn delta_channels_and_qualified_reducers_round_trip() {
        let j = json!({
            "nodes": [{"name": "__start__", "triggers": ["__start__"]}, {"name": "s", "triggers": ["branch:to:s"]}],
            "state_keys": ["h", "u", "t", "e"],
            "channels": {
                "h": {"kind": "DeltaChannel", "reducer": "_messages_delta_reducer",
                      "reducer_qualname": "langgraph.pregel._messages._messages_delta_reducer",
                      "snapshot_frequency": 3, "default": []},
                "u": {"kind": "BinaryOperatorAggregate", "reducer": "merge",
                      "reducer_qualname": "myapp.state.merge", "default": {}},
                "t": {"kind": "Topic", "reducer": null, "accumulate": true, "default": null},
                "e": {"kind": "UntrackedValue", "reducer": null, "guard": true, "default": null}
            },
            "subgraphs": ["s"]
        });
        let t = Topology::from_oracle_json(&j).unwrap();
        assert_eq!(
            t.key("h").unwrap().kind,
            ChannelKind::DeltaChannel {
                reducer: ReducerId::MessagesDelta,
                snapshot_frequency: 3
            }
        );
        assert!(t.key("h").unwrap().is_delta());
        assert_eq!(
            t.key("u").unwrap().kind.reducer_id(),
            Some(&ReducerId::Named("myapp.state.merge".into()))
        );
        assert_eq!(
            t.key("t").unwrap().kind,
            ChannelKind::Topic { accumulate: true }
        );
        assert_eq!(t.delta_keys().count(), 1);
        let back = Topology::from_oracle_json(&t.to_json()).unwrap();
        assert_eq!(back, t);
    }
}

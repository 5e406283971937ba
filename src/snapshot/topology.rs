//! What the graph knows and the DB does not (spec §11): node order, each node's full trigger
//! list, the state keys and their reducers. Supplied by a graph spec, or inferred from the DB
//! (with warnings wherever the inference can be wrong).

use rmpv::Value;

/// How a state key combines writes.
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
}

#[derive(Debug, Clone, PartialEq)]
pub struct NodeTopo {
    pub name: String,
    pub triggers: Vec<String>,
    pub subgraph: bool,
}

/// A graph's shape as far as snapshots need it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Topology {
    /// Registration order, `__start__` first.
    pub nodes: Vec<NodeTopo>,
    /// State keys in spec order.
    pub state_keys: Vec<StateKey>,
}

impl Topology {
    pub fn node(&self, name: &str) -> Option<&NodeTopo> {
        self.nodes.iter().find(|n| n.name == name)
    }

    pub fn key(&self, name: &str) -> Option<&StateKey> {
        self.state_keys.iter().find(|k| k.name == name)
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
                let reducer = match (ch["kind"].as_str(), ch["reducer"].as_str()) {
                    (Some("BinaryOperatorAggregate"), Some("add")) => Reducer::Add,
                    (Some("BinaryOperatorAggregate"), r) => {
                        Reducer::Other(r.unwrap_or("?").to_string())
                    }
                    _ => Reducer::LastValue,
                };
                let default = match reducer {
                    Reducer::LastValue => None,
                    _ => (!ch["default"].is_null())
                        .then(|| crate::value::from_plain_json(&ch["default"]).ok())
                        .flatten(),
                };
                StateKey {
                    name: k.to_string(),
                    reducer,
                    default,
                }
            })
            .collect();
        Ok(Topology { nodes, state_keys })
    }
}

/// Channels that are LangGraph machinery, not state keys.
pub fn is_reserved_channel(ch: &str) -> bool {
    (ch.starts_with("__") && ch != "__root__")
        || ch.starts_with("branch:")
        || ch.starts_with("join:")
        || ch.starts_with("start:")
}

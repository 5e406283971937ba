//! A spec compiled the way `StateGraph.compile()` builds its Pregel graph (spec §6.1, §6.2):
//! channels in spec order, nodes with triggers and writers.

use super::channels::{ChannelKind, ReducerFn};
use crate::snapshot::topology::{ChannelKind as TopoKind, NodeTopo, StateKey, Topology};
use crate::spec::model::{Breakpoints, GraphSpec, ReducerSpec, RetrySpec, END, START};
use crate::value::from_view;
use rmpv::Value;
use std::collections::HashMap;

/// What runs after a node's own state/control writes (in this order).
#[derive(Debug, Clone, PartialEq)]
pub enum Writer {
    /// Plain edge: `("branch:to:X", None)`.
    Edge(String),
    /// Waiting edge: `("join:a+b:c", "<this node>")`.
    Join(String),
    /// Conditional edge: path function on the fresh state, mapped through `path_map`.
    Branch {
        path: String,
        path_map: Option<Vec<(Value, String)>>,
    },
}

#[derive(Debug, Clone)]
pub struct Node {
    pub name: String,
    /// `None` for `__start__`.
    pub func: Option<String>,
    pub triggers: Vec<String>,
    pub writers: Vec<Writer>,
    pub retry: Option<RetrySpec>,
    pub subgraph: Option<String>,
}

impl Node {
    pub fn hidden(&self) -> bool {
        self.name == START
    }
}

#[derive(Debug, Clone)]
pub struct Graph {
    pub name: String,
    /// Every channel in spec order.
    pub channels: Vec<(String, ChannelKind)>,
    /// State keys in spec order.
    pub state_keys: Vec<String>,
    /// Registration order, `__start__` first.
    pub nodes: Vec<Node>,
    pub trigger_to_nodes: HashMap<String, Vec<String>>,
    pub interrupt_before: Breakpoints,
    pub interrupt_after: Breakpoints,
    pub input: Option<Value>,
}

impl Graph {
    pub fn compile(spec: &GraphSpec) -> Graph {
        let mut channels: Vec<(String, ChannelKind)> = Vec::new();
        for k in &spec.state {
            let reducer_fn = match &k.reducer {
                ReducerSpec::Code(f) => ReducerFn::Code(f.clone()),
                _ => ReducerFn::Add,
            };
            let kind = match &k.reducer {
                ReducerSpec::LastValue => ChannelKind::LastValue,
                _ if k.delta.is_some() => ChannelKind::Delta {
                    reducer: reducer_fn,
                    empty: k
                        .default
                        .as_ref()
                        .and_then(|d| from_view(d).ok())
                        .unwrap_or(Value::Array(Vec::new())),
                    snapshot_frequency: k.delta.unwrap_or(100),
                },
                ReducerSpec::Add => ChannelKind::Reducer {
                    reducer: ReducerFn::Add,
                    default: k.default.as_ref().and_then(|d| from_view(d).ok()),
                },
                ReducerSpec::Code(f) => ChannelKind::Reducer {
                    reducer: ReducerFn::Code(f.clone()),
                    default: k.default.as_ref().and_then(|d| from_view(d).ok()),
                },
            };
            channels.push((k.name.clone(), kind));
        }
        channels.push((START.into(), ChannelKind::Ephemeral { guard: true }));
        channels.push(("__pregel_tasks".into(), ChannelKind::Tasks));
        let mut nodes = vec![Node {
            name: START.into(),
            func: None,
            triggers: vec![START.into()],
            writers: Vec::new(),
            retry: None,
            subgraph: None,
        }];
        for n in &spec.nodes {
            let ch = format!("branch:to:{}", n.name);
            // a deferred node's trigger is a LastValueAfterFinish
            let kind = if n.defer {
                ChannelKind::AfterFinish
            } else {
                ChannelKind::Ephemeral { guard: false }
            };
            channels.push((ch.clone(), kind));
            nodes.push(Node {
                name: n.name.clone(),
                func: Some(n.func.clone()),
                triggers: vec![ch],
                writers: Vec::new(),
                retry: n.retry.clone(),
                subgraph: n.subgraph.clone(),
            });
        }
        let node_mut = |nodes: &mut Vec<Node>, name: &str| -> usize {
            nodes.iter().position(|n| n.name == name).unwrap()
        };
        // plain edges (LangGraph attaches them in set order; we keep spec order), then waiting
        // edges, then branches — the order writers run in.
        for e in spec.edges.iter().filter(|e| !e.waiting) {
            if e.target != END {
                let i = node_mut(&mut nodes, &e.sources[0]);
                nodes[i]
                    .writers
                    .push(Writer::Edge(format!("branch:to:{}", e.target)));
            }
        }
        for e in spec.edges.iter().filter(|e| e.waiting) {
            if e.target == END {
                continue;
            }
            let ch = format!("join:{}:{}", e.sources.join("+"), e.target);
            let names = e.sources.clone();
            let deferred = spec.nodes.iter().any(|n| n.name == e.target && n.defer);
            channels.push((
                ch.clone(),
                if deferred {
                    ChannelKind::BarrierAfterFinish { names }
                } else {
                    ChannelKind::Barrier { names }
                },
            ));
            let t = node_mut(&mut nodes, &e.target);
            nodes[t].triggers.push(ch.clone());
            for s in &e.sources {
                let i = node_mut(&mut nodes, s);
                nodes[i].writers.push(Writer::Join(ch.clone()));
            }
        }
        for b in &spec.branches {
            let i = node_mut(&mut nodes, &b.source);
            nodes[i].writers.push(Writer::Branch {
                path: b.path.clone(),
                path_map: b.path_map.as_ref().map(|m| {
                    m.iter()
                        .map(|(k, d)| (from_view(k).unwrap_or(Value::Nil), d.clone()))
                        .collect()
                }),
            });
        }
        let mut trigger_to_nodes: HashMap<String, Vec<String>> = HashMap::new();
        for n in &nodes {
            for t in &n.triggers {
                trigger_to_nodes
                    .entry(t.clone())
                    .or_default()
                    .push(n.name.clone());
            }
        }
        Graph {
            name: spec.name.clone(),
            state_keys: spec.state.iter().map(|k| k.name.clone()).collect(),
            channels,
            nodes,
            trigger_to_nodes,
            interrupt_before: spec.interrupt_before.clone(),
            interrupt_after: spec.interrupt_after.clone(),
            input: spec.input.as_ref().and_then(|i| from_view(i).ok()),
        }
    }

    pub fn node(&self, name: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.name == name)
    }

    pub fn channel_kind(&self, name: &str) -> Option<&ChannelKind> {
        self.channels
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, k)| k)
    }

    pub fn is_state_key(&self, k: &str) -> bool {
        self.state_keys.iter().any(|s| s == k)
    }

    /// What the snapshot derivation needs from the graph.
    pub fn topology(&self) -> Topology {
        Topology {
            nodes: self
                .nodes
                .iter()
                .map(|n| NodeTopo {
                    name: n.name.clone(),
                    triggers: n.triggers.clone(),
                    subgraph: n.subgraph.is_some(),
                })
                .collect(),
            state_keys: self
                .state_keys
                .iter()
                .map(|k| {
                    let (kind, default) = match self.channel_kind(k) {
                        Some(ChannelKind::Reducer { reducer, default }) => (
                            TopoKind::BinaryOperatorAggregate {
                                reducer: reducer.id(),
                            },
                            default.clone(),
                        ),
                        Some(ChannelKind::Delta {
                            reducer,
                            empty,
                            snapshot_frequency,
                        }) => (
                            TopoKind::DeltaChannel {
                                reducer: reducer.id(),
                                snapshot_frequency: *snapshot_frequency,
                            },
                            Some(empty.clone()),
                        ),
                        _ => (TopoKind::LastValue, None),
                    };
                    StateKey::new(k, kind, default)
                })
                .collect(),
            code: None,
            root_value: false,
        }
    }
}

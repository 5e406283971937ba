//! The in-memory checkpoint and its channels (`create_checkpoint`, `empty_checkpoint`,
//! `channels_from_checkpoint`; spec §2).

use super::channels::Channel;
use super::graph::Graph;
use crate::store::{Checkpoint, Version};
use crate::value::encode_msgpack;
use rmpv::Value;

/// Checkpoint fields plus live channels, mutated step by step.
#[derive(Debug, Clone)]
pub struct State {
    pub v: i64,
    pub id: String,
    pub ts: String,
    pub channels: Vec<Channel>,
    pub channel_versions: Vec<(String, Version)>,
    pub versions_seen: Vec<(String, Vec<(String, Version)>)>,
    pub updated_channels: Option<Vec<String>>,
}

impl State {
    /// `empty_checkpoint()` with channels at their initial values.
    pub fn empty(graph: &Graph, id: String, ts: String) -> State {
        State {
            v: 4,
            id,
            ts,
            channels: graph
                .channels
                .iter()
                .map(|(n, k)| Channel::new(n, k.clone()))
                .collect(),
            channel_versions: Vec::new(),
            versions_seen: Vec::new(),
            updated_channels: None,
        }
    }

    /// `channels_from_checkpoint`: restore channel contents from a stored checkpoint.
    pub fn load(graph: &Graph, cp: &Checkpoint) -> State {
        let mut s = State::empty(graph, cp.id.clone(), cp.ts.clone());
        for ch in &mut s.channels {
            if let Some(v) = cp.value(&ch.name) {
                ch.restore(v);
            }
        }
        s.v = cp.v;
        s.channel_versions = cp.channel_versions.clone();
        s.versions_seen = cp.versions_seen.clone();
        s.updated_channels = cp.updated_channels.clone();
        s
    }

    pub fn channel(&self, name: &str) -> Option<&Channel> {
        self.channels.iter().find(|c| c.name == name)
    }

    pub fn channel_mut(&mut self, name: &str) -> Option<&mut Channel> {
        self.channels.iter_mut().find(|c| c.name == name)
    }

    pub fn version(&self, ch: &str) -> Option<&Version> {
        self.channel_versions
            .iter()
            .find(|(k, _)| k == ch)
            .map(|(_, v)| v)
    }

    pub fn set_version(&mut self, ch: &str, v: Version) {
        match self.channel_versions.iter_mut().find(|(k, _)| k == ch) {
            Some((_, old)) => *old = v,
            None => self.channel_versions.push((ch.to_string(), v)),
        }
    }

    pub fn seen(&self, node: &str) -> Option<&Vec<(String, Version)>> {
        self.versions_seen
            .iter()
            .find(|(k, _)| k == node)
            .map(|(_, v)| v)
    }

    /// `versions_seen.setdefault(node, {})`.
    pub fn seen_mut(&mut self, node: &str) -> &mut Vec<(String, Version)> {
        let i = match self.versions_seen.iter().position(|(k, _)| k == node) {
            Some(i) => i,
            None => {
                self.versions_seen.push((node.to_string(), Vec::new()));
                self.versions_seen.len() - 1
            }
        };
        &mut self.versions_seen[i].1
    }

    /// The state keys that are available, as the dict a node receives.
    pub fn read_state(&self, graph: &Graph) -> Value {
        Value::Map(
            graph
                .state_keys
                .iter()
                .filter_map(|k| {
                    self.channel(k)
                        .and_then(|c| c.get())
                        .map(|v| (Value::from(k.as_str()), v))
                })
                .collect(),
        )
    }

    /// `create_checkpoint(...)` as a msgpack blob, keys in LangGraph's order.
    pub fn blob(&self, updated_channels: Option<&[String]>) -> Vec<u8> {
        let s = |x: &str| Value::from(x);
        let values: Vec<(Value, Value)> = self
            .channels
            .iter()
            .filter(|c| self.version(&c.name).is_some())
            .filter_map(|c| c.checkpoint().map(|v| (s(&c.name), v)))
            .collect();
        let versions = |m: &[(String, Version)]| {
            Value::Map(m.iter().map(|(k, v)| (s(k), v.to_value())).collect())
        };
        let seen = Value::Map(
            self.versions_seen
                .iter()
                .map(|(k, m)| (s(k), versions(m)))
                .collect(),
        );
        let updated = match updated_channels {
            Some(u) => Value::Array(u.iter().map(|c| s(c)).collect()),
            None => Value::Nil,
        };
        encode_msgpack(&Value::Map(vec![
            (s("v"), Value::from(self.v)),
            (s("ts"), s(&self.ts)),
            (s("id"), s(&self.id)),
            (s("channel_values"), Value::Map(values)),
            (s("channel_versions"), versions(&self.channel_versions)),
            (s("versions_seen"), seen),
            (s("updated_channels"), updated),
        ]))
    }
}

//! The in-memory checkpoint and its channels (`create_checkpoint`, `empty_checkpoint`,
//! `channels_from_checkpoint`; spec §2).

use super::channels::Channel;
use super::graph::Graph;
use super::{Arg, NodeInput};
use crate::store::{Checkpoint, Version};
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
    /// The size of the last blob made from this state: the next one is about as big (a list
    /// channel only grows), so its buffer starts there instead of doubling its way up.
    pub blob_len: std::cell::Cell<usize>,
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
            blob_len: Default::default(),
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
    pub fn read_state<'a>(&'a self, graph: &'a Graph) -> NodeInput<'a> {
        NodeInput::State(
            graph
                .state_keys
                .iter()
                .filter_map(|k| {
                    let c = self.channel(k)?;
                    if !c.is_available() {
                        return None;
                    }
                    c.value_ref().map(|v| (k.as_str(), Arg::Ref(v)))
                })
                .collect(),
        )
    }

    /// `create_checkpoint(...)` as a msgpack blob, keys in LangGraph's order; channel values are
    /// encoded straight from the channels (no copies).
    pub fn blob(&self, updated_channels: Option<&[String]>) -> Vec<u8> {
        use rmp::encode::{write_array_len, write_map_len, write_nil, write_sint, write_str};
        let mut buf: Vec<u8> = Vec::with_capacity(512.max(self.blob_len.get() + 256));
        let w = &mut buf;
        let versions = |w: &mut Vec<u8>, m: &[(String, Version)]| {
            write_map_len(w, m.len() as u32).unwrap();
            for (k, v) in m {
                write_str(w, k).unwrap();
                rmpv::encode::write_value(w, &v.to_value()).unwrap();
            }
        };
        write_map_len(w, 7).unwrap();
        write_str(w, "v").unwrap();
        write_sint(w, self.v).unwrap();
        write_str(w, "ts").unwrap();
        write_str(w, &self.ts).unwrap();
        write_str(w, "id").unwrap();
        write_str(w, &self.id).unwrap();
        write_str(w, "channel_values").unwrap();
        let stored: Vec<(&str, std::borrow::Cow<Value>)> = self
            .channels
            .iter()
            .filter(|c| self.version(&c.name).is_some())
            .filter_map(|c| c.checkpoint_ref().map(|v| (c.name.as_str(), v)))
            .collect();
        write_map_len(w, stored.len() as u32).unwrap();
        for (k, v) in &stored {
            write_str(w, k).unwrap();
            rmpv::encode::write_value(w, v).unwrap();
        }
        write_str(w, "channel_versions").unwrap();
        versions(w, &self.channel_versions);
        write_str(w, "versions_seen").unwrap();
        write_map_len(w, self.versions_seen.len() as u32).unwrap();
        for (k, m) in &self.versions_seen {
            write_str(w, k).unwrap();
            versions(w, m);
        }
        write_str(w, "updated_channels").unwrap();
        match updated_channels {
            Some(u) => {
                write_array_len(w, u.len() as u32).unwrap();
                for c in u {
                    write_str(w, c).unwrap();
                }
            }
            None => write_nil(w).unwrap(),
        }
        self.blob_len.set(buf.len());
        buf
    }
}

//! The in-memory checkpoint and its channels (`create_checkpoint`, `empty_checkpoint`,
//! `channels_from_checkpoint`; spec §2).

use super::channels::Channel;
use super::graph::Graph;
use super::{Arg, NodeInput};
use crate::store::{Checkpoint, CheckpointRef, Version};

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
    /// The size of the last checkpoint encoded from this state: the next one is about as big (a
    /// list channel only grows), so its buffer starts there instead of doubling its way up.
    pub blob_len: std::cell::Cell<usize>,
    /// The delta channels the next saved checkpoint stores as a `_DeltaSnapshot`
    /// (`channels_to_snapshot` of `create_checkpoint`).
    pub snapshot: Vec<String>,
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
            snapshot: Vec::new(),
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

    /// `create_checkpoint(...)` as the store's saver receives it: channel values borrowed
    /// straight from the channels (no copies), and `new_versions` — the channels whose version
    /// is newer than in `previous` (`get_new_channel_versions`: every channel when `previous` is
    /// empty).
    pub fn checkpoint_ref<'a>(
        &'a self,
        updated_channels: Option<&'a [String]>,
        previous: &'a [(String, Version)],
    ) -> CheckpointRef<'a> {
        let channel_values = self
            .channels
            .iter()
            .filter(|c| self.version(&c.name).is_some())
            .filter_map(|c| {
                if c.is_delta() {
                    return self
                        .snapshot
                        .contains(&c.name)
                        .then(|| c.delta_snapshot())
                        .flatten()
                        .map(|v| (c.name.as_str(), std::borrow::Cow::Owned(v)));
                }
                c.checkpoint_ref().map(|v| (c.name.as_str(), v))
            })
            .collect();
        let new_versions = self
            .channel_versions
            .iter()
            .filter(|(k, v)| {
                previous.is_empty()
                    || Version::gt(
                        Some(v),
                        previous.iter().find(|(p, _)| p == k).map(|(_, pv)| pv),
                    )
            })
            .map(|(k, v)| (k.as_str(), v))
            .collect();
        CheckpointRef {
            v: self.v,
            ts: &self.ts,
            id: &self.id,
            channel_values,
            channel_versions: &self.channel_versions,
            versions_seen: &self.versions_seen,
            updated_channels,
            new_versions,
            size_hint: self.blob_len.get(),
        }
    }
}

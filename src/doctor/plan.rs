//! `prune` planning: which rows of a thread go, and why every other row stays.
//!
//! What LangGraph 1.2.24 needs to read a kept checkpoint `C` (`get_state`, `get_state_history`,
//! resuming it) and what therefore stays with it:
//! * its row and its pending writes (interrupts, resume values, the writes of tasks that
//!   finished beside a failed or paused one);
//! * Postgres: the `checkpoint_blobs` rows its `channel_versions` name, shared with other
//!   checkpoints at the same version (a blob goes only when no kept checkpoint names it);
//! * a DeltaChannel key stored at `C` as nothing (`metadata.counters_since_delta_snapshot`
//!   names it) is rebuilt by `get_delta_channel_history`: the parent chain from `C` back to
//!   the nearest ancestor holding a value for the key (its `_DeltaSnapshot`, the seed), with
//!   every ancestor's writes. That chain stays whole (a gap would end the walk early and the
//!   value would silently rebuild from the wrong seed);
//! * a checkpoint of format `v` < 4 takes its pending sends from its parent's writes: the
//!   parent stays;
//! * a subgraph call's namespace (`node:<task id>`) belongs to the root checkpoint the call
//!   started from (`metadata.parents[""]`): it stays whole with that checkpoint, and goes whole
//!   with it (a `checkpointer=True` subgraph's namespace, without a task id, is pruned like the
//!   root's);
//! * a thread parked — on an interrupt or a breakpoint — is parked on its newest checkpoint,
//!   which every policy keeps; a fork tip that is paused stays too.
//!
//! A kept checkpoint's `parent_checkpoint_id` is left as it is even when its parent goes, so
//! `get_state` shows the same `parent_config` as before (LangGraph's own `prune` sets it to
//! NULL instead).

use super::{glob, is_call_ns, when};
use crate::store::sizes::{CheckpointSize, Held, Removal, ThreadSizes};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// What to drop.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// Keep the newest N checkpoints of each namespace (at least 1); `None` with no
    /// `older_than`: checkpoints are not pruned (only whole threads are deleted).
    pub keep: Option<usize>,
    pub keep_fork_tips: bool,
    /// Drop only checkpoints created before this (ns since the Unix epoch).
    pub older_than: Option<u128>,
    /// Only threads matching one of these patterns (empty: every thread).
    pub only: Vec<String>,
    /// Delete these threads whole (unless parked).
    pub delete: Vec<String>,
}

impl Policy {
    fn prunes_checkpoints(&self) -> bool {
        self.keep.is_some() || self.older_than.is_some()
    }

    /// The policy in words (for `du`'s estimate and the report).
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.prunes_checkpoints() {
            parts.push(format!("keep the newest {}", self.keep.unwrap_or(1).max(1)));
        }
        if let Some(t) = self.older_than {
            parts.push(format!("drop only what is older than {}", iso(t)));
        }
        if self.keep_fork_tips {
            parts.push("keep every fork tip".into());
        }
        if !self.delete.is_empty() {
            parts.push(format!("delete threads {}", self.delete.join(", ")));
        }
        if !self.only.is_empty() {
            parts.push(format!("only threads {}", self.only.join(", ")));
        }
        parts.join("; ")
    }
}

fn iso(ns: u128) -> String {
    crate::engine::clock::iso_utc(ns)
}

/// Why a checkpoint stays (the first reason that applies).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reason {
    Newest,
    Young,
    ForkTip,
    Paused,
    DeltaChain,
    SendsParent,
    Call,
}

/// Checkpoints kept, by reason.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Kept {
    pub newest: u64,
    pub not_older: u64,
    pub fork_tips: u64,
    pub paused: u64,
    pub delta_chain: u64,
    pub sends_parent: u64,
    pub subgraph_calls: u64,
}

impl Kept {
    fn count(&mut self, r: Reason) {
        match r {
            Reason::Newest => self.newest += 1,
            Reason::Young => self.not_older += 1,
            Reason::ForkTip => self.fork_tips += 1,
            Reason::Paused => self.paused += 1,
            Reason::DeltaChain => self.delta_chain += 1,
            Reason::SendsParent => self.sends_parent += 1,
            Reason::Call => self.subgraph_calls += 1,
        }
    }
}

/// One thread's plan.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct ThreadPlan {
    pub thread_id: String,
    /// `prune` (some checkpoints go), `delete` (the whole thread), `keep` (nothing goes).
    pub action: &'static str,
    pub checkpoints: u64,
    pub dropped: u64,
    pub dropped_writes: u64,
    pub dropped_blobs: u64,
    /// Bytes the dropped rows take (checkpoint rows, writes, blobs).
    pub bytes: u64,
    pub kept: Kept,
    /// Why a requested deletion did not happen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// `(namespace, checkpoint id)` of every dropped checkpoint.
    pub dropped_ids: Vec<(String, String)>,
    #[serde(skip)]
    pub removal: Removal,
}

/// Plan one thread. `paused(cp)`: whether the thread is stopped at this checkpoint with work
/// left (an interrupt, a breakpoint, an error) — asked only of heads and fork tips.
pub fn plan_thread<E>(
    t: &ThreadSizes,
    policy: &Policy,
    paused: &mut dyn FnMut(&CheckpointSize) -> Result<bool, E>,
) -> Result<Option<ThreadPlan>, E> {
    let matches = |pats: &[String]| pats.iter().any(|p| glob(p, &t.thread_id));
    let mut plan = ThreadPlan {
        thread_id: t.thread_id.clone(),
        action: "keep",
        checkpoints: t.checkpoints.len() as u64,
        removal: Removal {
            thread_id: t.thread_id.clone(),
            ..Default::default()
        },
        ..Default::default()
    };
    if matches(&policy.delete) {
        let head = t.checkpoints.iter().rfind(|c| c.ns.is_empty());
        if let Some(h) = head {
            if paused(h)? {
                plan.refused = Some(
                    "parked (its newest checkpoint waits on an interrupt, a breakpoint or an error): not deleted"
                        .into(),
                );
                return Ok(Some(plan));
            }
        }
        plan.action = "delete";
        plan.removal.whole = true;
        plan.dropped = plan.checkpoints;
        plan.dropped_writes = t.writes.len() as u64;
        plan.dropped_blobs = t.blobs.len() as u64;
        plan.bytes = t
            .checkpoints
            .iter()
            .map(|c| c.bytes + c.metadata_bytes)
            .chain(t.writes.iter().map(|w| w.bytes))
            .chain(t.blobs.iter().map(|b| b.bytes))
            .sum();
        plan.dropped_ids = t
            .checkpoints
            .iter()
            .map(|c| (c.ns.clone(), c.id.clone()))
            .collect();
        return Ok(Some(plan));
    }
    if !policy.prunes_checkpoints() || !(policy.only.is_empty() || matches(&policy.only)) {
        return Ok(None);
    }
    let mut keep: HashMap<(&str, &str), Reason> = HashMap::new();
    let mut namespaces: Vec<&str> = t.checkpoints.iter().map(|c| c.ns.as_str()).collect();
    namespaces.dedup();
    // lines first (the root among them), so calls see which root checkpoints stay
    namespaces.sort_by_key(|ns| is_call_ns(ns));
    for ns in namespaces {
        let cps: Vec<&CheckpointSize> = t.checkpoints.iter().filter(|c| c.ns == ns).collect();
        if is_call_ns(ns) {
            let anchor = cps.iter().find_map(|c| c.anchor.as_deref());
            let root_has = |a: &str| t.checkpoints.iter().any(|c| c.ns.is_empty() && c.id == a);
            let stays = match anchor {
                Some(a) if root_has(a) => keep.contains_key(&("", a)),
                // its root checkpoint is not saved (yet): leave the call alone
                _ => true,
            };
            if stays {
                for c in &cps {
                    keep.insert((ns, &c.id), Reason::Call);
                }
            }
            continue;
        }
        plan_line(ns, &cps, policy, &mut keep, paused)?;
    }
    // the removal
    let dropped: HashSet<(&str, &str)> = t
        .checkpoints
        .iter()
        .map(|c| (c.ns.as_str(), c.id.as_str()))
        .filter(|k| !keep.contains_key(k))
        .collect();
    for c in &t.checkpoints {
        match keep.get(&(c.ns.as_str(), c.id.as_str())) {
            Some(r) => plan.kept.count(*r),
            None => {
                plan.bytes += c.bytes + c.metadata_bytes;
                plan.dropped_ids.push((c.ns.clone(), c.id.clone()));
            }
        }
    }
    for w in &t.writes {
        if dropped.contains(&(w.ns.as_str(), w.checkpoint_id.as_str())) {
            plan.dropped_writes += 1;
            plan.bytes += w.bytes;
        }
    }
    // blobs a dropped checkpoint names and no kept one does (a dropped call's: all of them)
    let mut named_kept: HashSet<(&str, &str, &str)> = HashSet::new();
    let mut named_dropped: HashSet<(&str, &str, &str)> = HashSet::new();
    for c in &t.checkpoints {
        let set = if dropped.contains(&(c.ns.as_str(), c.id.as_str())) {
            &mut named_dropped
        } else {
            &mut named_kept
        };
        for ch in &c.channels {
            if let Some(v) = &ch.version {
                set.insert((&c.ns, &ch.channel, v));
            }
        }
    }
    let gone_calls: HashSet<&str> = t
        .checkpoints
        .iter()
        .filter(|c| is_call_ns(&c.ns) && dropped.contains(&(c.ns.as_str(), c.id.as_str())))
        .map(|c| c.ns.as_str())
        .collect();
    for b in &t.blobs {
        let k = (b.ns.as_str(), b.channel.as_str(), b.version.as_str());
        let garbage = if gone_calls.contains(b.ns.as_str()) {
            true
        } else {
            named_dropped.contains(&k) && !named_kept.contains(&k)
        };
        if garbage {
            plan.dropped_blobs += 1;
            plan.bytes += b.bytes;
            plan.removal
                .blobs
                .push((b.ns.clone(), b.channel.clone(), b.version.clone()));
        }
    }
    plan.dropped = plan.dropped_ids.len() as u64;
    plan.removal.checkpoints = plan.dropped_ids.clone();
    if plan.dropped > 0 || plan.dropped_blobs > 0 {
        plan.action = "prune";
    }
    Ok(Some(plan))
}

/// A namespace pruned on its own (the root, or a `checkpointer=True` subgraph's): the newest,
/// the young, the fork tips asked for or paused, then everything those need.
fn plan_line<'a, E>(
    ns: &'a str,
    cps: &[&'a CheckpointSize],
    policy: &Policy,
    keep: &mut HashMap<(&'a str, &'a str), Reason>,
    paused: &mut dyn FnMut(&CheckpointSize) -> Result<bool, E>,
) -> Result<(), E> {
    let index: HashMap<&str, usize> = cps
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id.as_str(), i))
        .collect();
    let parent = |i: usize| cps[i].parent.as_deref().and_then(|p| index.get(p).copied());
    let mut has_child = vec![false; cps.len()];
    for i in 0..cps.len() {
        if let Some(p) = parent(i) {
            has_child[p] = true;
        }
    }
    let mut why: Vec<Option<Reason>> = vec![None; cps.len()];
    let n = policy.keep.unwrap_or(1).max(1);
    for w in why.iter_mut().rev().take(n) {
        *w = Some(Reason::Newest);
    }
    if let Some(cut) = policy.older_than {
        for (i, c) in cps.iter().enumerate() {
            let old = when::id_time_ns(&c.id).is_some_and(|t| t < cut);
            if !old && why[i].is_none() {
                why[i] = Some(Reason::Young);
            }
        }
    }
    for i in 0..cps.len() {
        if has_child[i] || why[i].is_some() {
            continue;
        }
        if policy.keep_fork_tips {
            why[i] = Some(Reason::ForkTip);
        } else if paused(cps[i])? {
            why[i] = Some(Reason::Paused);
        }
    }
    // what the kept ones need, until nothing new is kept
    let mut work: Vec<usize> = (0..cps.len()).filter(|i| why[*i].is_some()).collect();
    while let Some(i) = work.pop() {
        let stores = |j: usize, key: &str| {
            cps[j]
                .channels
                .iter()
                .any(|c| c.channel == key && c.held != Held::Nothing)
        };
        for key in &cps[i].delta_pending {
            let mut p = parent(i);
            while let Some(j) = p {
                if why[j].is_none() {
                    why[j] = Some(Reason::DeltaChain);
                    work.push(j);
                }
                if stores(j, key) {
                    break;
                }
                p = parent(j);
            }
        }
        if cps[i].format.is_some_and(|v| v < 4) {
            if let Some(j) = parent(i) {
                if why[j].is_none() {
                    why[j] = Some(Reason::SendsParent);
                    work.push(j);
                }
            }
        }
    }
    for (i, w) in why.into_iter().enumerate() {
        if let Some(r) = w {
            keep.insert((ns, &cps[i].id), r);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sizes::{BlobSize, ChannelAt, WriteSize};

    fn cp(ns: &str, id: &str, parent: Option<&str>) -> CheckpointSize {
        CheckpointSize {
            ns: ns.into(),
            id: id.into(),
            parent: parent.map(Into::into),
            bytes: 100,
            metadata_bytes: 10,
            step: None,
            source: None,
            anchor: None,
            delta_pending: vec![],
            format: Some(4),
            channels: vec![],
            opaque: None,
        }
    }

    fn chan(name: &str, version: &str, held: Held) -> ChannelAt {
        ChannelAt {
            channel: name.into(),
            version: Some(version.into()),
            bytes: 5,
            held,
            snapshot: false,
        }
    }

    fn never(_: &CheckpointSize) -> Result<bool, ()> {
        Ok(false)
    }

    fn keep1() -> Policy {
        Policy {
            keep: Some(1),
            ..Default::default()
        }
    }

    #[test]
    fn a_delta_chain_back_to_its_snapshot_stays() {
        // 01 (snapshot of log) <- 02 <- 03 <- 04 (head: log rebuilt from 01's value + writes)
        let mut cps = vec![
            cp("", "01", None),
            cp("", "02", Some("01")),
            cp("", "03", Some("02")),
            cp("", "04", Some("03")),
        ];
        cps[0].channels = vec![chan("log", "1", Held::Inline)];
        cps[1].channels = vec![chan("log", "2", Held::Inline)];
        cps[2].channels = vec![chan("log", "3", Held::Nothing)];
        cps[3].channels = vec![chan("log", "4", Held::Nothing)];
        cps[2].delta_pending = vec!["log".into()];
        cps[3].delta_pending = vec!["log".into()];
        let t = ThreadSizes {
            thread_id: "t".into(),
            checkpoints: cps,
            writes: vec![WriteSize {
                ns: "".into(),
                checkpoint_id: "01".into(),
                task_id: "x".into(),
                idx: 0,
                channel: "log".into(),
                bytes: 7,
            }],
            blobs: vec![],
        };
        let p = plan_thread(&t, &keep1(), &mut never).unwrap().unwrap();
        // 02 holds a value of log: the walk stops there; 01 goes with its write
        assert_eq!(p.dropped_ids, vec![("".into(), "01".into())]);
        assert_eq!(p.kept.delta_chain, 2);
        assert_eq!(p.dropped_writes, 1);
        assert_eq!(p.bytes, 110 + 7);
    }

    #[test]
    fn calls_go_with_their_root_checkpoint_and_paused_tips_stay() {
        // root 01 <- 02 <- 04 (head) and an older fork 01 <- 03 (tip, paused); a call from 02
        let mut cps = vec![
            cp("", "01", None),
            cp("", "02", Some("01")),
            cp("", "04", Some("02")),
            cp("", "03", Some("01")),
            cp("sub:abc", "05", None),
            cp("sub:abc", "06", Some("05")),
            cp("sub:def", "07", None),
        ];
        cps[4].anchor = Some("02".into());
        cps[5].anchor = Some("02".into());
        cps[6].anchor = Some("04".into());
        // order as the backends give them: by (namespace, id)
        cps.sort_by(|a, b| (&a.ns, &a.id).cmp(&(&b.ns, &b.id)));
        let t = ThreadSizes {
            thread_id: "t".into(),
            checkpoints: cps,
            writes: vec![],
            blobs: vec![BlobSize {
                ns: "sub:abc".into(),
                channel: "x".into(),
                version: "1".into(),
                bytes: 3,
                empty: false,
            }],
        };
        let mut asked = Vec::new();
        let mut paused = |c: &CheckpointSize| -> Result<bool, ()> {
            asked.push(c.id.clone());
            Ok(c.id == "03")
        };
        let p = plan_thread(&t, &keep1(), &mut paused).unwrap().unwrap();
        let mut ids: Vec<&str> = p.dropped_ids.iter().map(|(_, i)| i.as_str()).collect();
        ids.sort();
        assert_eq!(ids, ["01", "02", "05", "06"]);
        assert_eq!(asked, ["03"]);
        assert_eq!(p.kept.paused, 1);
        assert_eq!(p.kept.subgraph_calls, 1);
        assert_eq!(
            p.removal.blobs,
            vec![("sub:abc".into(), "x".into(), "1".into())]
        );
    }

    #[test]
    fn shared_blobs_go_only_when_no_kept_checkpoint_names_them() {
        let mut cps = vec![cp("", "01", None), cp("", "02", Some("01"))];
        cps[0].channels = vec![chan("a", "1", Held::Blob), chan("b", "1", Held::Blob)];
        cps[1].channels = vec![chan("a", "1", Held::Blob), chan("b", "2", Held::Blob)];
        let blob = |ch: &str, v: &str| BlobSize {
            ns: "".into(),
            channel: ch.into(),
            version: v.into(),
            bytes: 50,
            empty: false,
        };
        let t = ThreadSizes {
            thread_id: "t".into(),
            checkpoints: cps,
            writes: vec![],
            blobs: vec![blob("a", "1"), blob("b", "1"), blob("b", "2")],
        };
        let p = plan_thread(&t, &keep1(), &mut never).unwrap().unwrap();
        assert_eq!(p.removal.blobs, vec![("".into(), "b".into(), "1".into())]);
        assert_eq!(p.bytes, 110 + 50);
    }

    #[test]
    fn a_parked_thread_is_not_deleted_and_other_threads_are_left_alone() {
        let t = ThreadSizes {
            thread_id: "user-1".into(),
            checkpoints: vec![cp("", "01", None)],
            ..Default::default()
        };
        let policy = Policy {
            delete: vec!["user-*".into()],
            ..Default::default()
        };
        let p = plan_thread(&t, &policy, &mut |_| Ok::<_, ()>(true))
            .unwrap()
            .unwrap();
        assert_eq!(p.action, "keep");
        assert!(p.refused.is_some());
        let p = plan_thread(&t, &policy, &mut never).unwrap().unwrap();
        assert_eq!((p.action, p.removal.whole), ("delete", true));
        let other = ThreadSizes {
            thread_id: "admin".into(),
            ..t
        };
        assert!(plan_thread(&other, &policy, &mut never).unwrap().is_none());
    }

    #[test]
    fn a_v3_checkpoint_keeps_its_parent() {
        let mut cps = vec![cp("", "01", None), cp("", "02", Some("01"))];
        cps[1].format = Some(3);
        let t = ThreadSizes {
            thread_id: "t".into(),
            checkpoints: cps,
            ..Default::default()
        };
        let p = plan_thread(&t, &keep1(), &mut never).unwrap().unwrap();
        assert_eq!(p.action, "keep");
        assert_eq!(p.kept.sends_parent, 1);
    }
}

//! `du`: where a store's bytes go — by thread, namespace and channel, per-step growth, the
//! biggest values, and what a DeltaChannel or a prune would save — added up from
//! [`crate::store::sizes::ThreadSizes`] as the backend streams them (one thread in memory at a
//! time, plus one summary line per thread and per channel).

use super::plan::{plan_thread, Policy};
use crate::store::sizes::{Held, Space, ThreadSizes};
use crate::store::{Store, StoreError};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// How many biggest values are kept.
pub const BIGGEST: usize = 10;

/// The DeltaChannel cadence the savings estimate assumes (LangGraph's default).
pub const SNAPSHOT_FREQUENCY: u64 = 100;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Totals {
    pub threads: u64,
    pub namespaces: u64,
    pub checkpoints: u64,
    pub writes: u64,
    pub blobs: u64,
    /// The checkpoint rows' `checkpoint` columns.
    pub checkpoint_bytes: u64,
    pub metadata_bytes: u64,
    pub write_bytes: u64,
    pub blob_bytes: u64,
    /// Checkpoints whose structure could not be read (sized by their row only).
    pub opaque: u64,
}

impl Totals {
    pub fn bytes(&self) -> u64 {
        self.checkpoint_bytes + self.metadata_bytes + self.write_bytes + self.blob_bytes
    }
}

/// One namespace of a thread.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct NsDu {
    pub ns: String,
    pub checkpoints: u64,
    /// Checkpoint rows (checkpoint + metadata), their writes, the blobs of this namespace.
    pub checkpoint_bytes: u64,
    pub write_bytes: u64,
    pub blob_bytes: u64,
    /// Bytes a checkpoint row grows by per step, oldest to newest (`None`: one checkpoint).
    pub growth_per_step: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ThreadDu {
    pub thread_id: String,
    pub checkpoints: u64,
    pub bytes: u64,
    pub namespaces: Vec<NsDu>,
    /// Root namespace's growth per step.
    pub growth_per_step: Option<f64>,
    /// The channel whose value grows fastest per step in this thread, and by how much.
    pub fastest_channel: Option<(String, f64)>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ChannelDu {
    pub channel: String,
    /// Bytes its values take in the store: copies inside checkpoint rows (SQLite stores every
    /// value at every checkpoint) plus blobs (Postgres stores one per version).
    pub stored_bytes: u64,
    /// Its pending writes.
    pub write_bytes: u64,
    /// Checkpoints holding a value of it.
    pub held_at: u64,
    /// The largest single value.
    pub biggest: u64,
    /// Mean bytes its value grows by per step (over every thread's namespaces that hold it).
    pub growth_per_step: Option<f64>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct BigValue {
    pub bytes: u64,
    pub thread_id: String,
    pub ns: String,
    pub checkpoint_id: String,
    pub channel: String,
    /// `checkpoint` (inside the row), `blob`, or `write`.
    pub place: &'static str,
}

/// What storing a channel as a `DeltaChannel` would leave of its stored bytes.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DeltaSaving {
    pub channel: String,
    pub stored_bytes: u64,
    /// Bytes at every `snapshot_frequency`-th update instead (writes are stored either way).
    pub as_delta_bytes: u64,
    pub snapshot_frequency: u64,
    /// Updates that made the value larger, of the updates after each namespace's first: a
    /// reducer that appends.
    pub growing_updates: u64,
    pub updates: u64,
}

/// What `prune` with a policy would free, computed by the planner itself.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PruneSaving {
    pub policy: String,
    pub checkpoints: u64,
    pub bytes: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Du {
    pub store: String,
    pub kind: String,
    pub space: Space,
    pub totals: Totals,
    /// Every thread, largest first.
    pub threads: Vec<ThreadDu>,
    /// Every channel, largest first.
    pub channels: Vec<ChannelDu>,
    pub biggest: Vec<BigValue>,
    pub delta: Vec<DeltaSaving>,
    pub prune: Option<PruneSaving>,
}

/// Per channel while adding up.
#[derive(Default)]
struct ChannelAcc {
    du: ChannelDu,
    growth_sum: f64,
    growth_steps: f64,
    delta: DeltaAcc,
}

#[derive(Default)]
struct DeltaAcc {
    as_delta: u64,
    updates: u64,
    /// First updates of a namespace (nothing to grow from).
    firsts: u64,
    growing: u64,
    already_delta: bool,
}

/// Adds threads up as they stream by.
#[derive(Default)]
pub struct Builder {
    totals: Totals,
    threads: Vec<ThreadDu>,
    channels: HashMap<String, ChannelAcc>,
    biggest: Vec<BigValue>,
    snapshot_frequency: u64,
}

/// Steps between two checkpoints: the metadata's step numbers, else their count.
fn steps(first: (Option<i64>, usize), last: (Option<i64>, usize)) -> f64 {
    match (first.0, last.0) {
        (Some(a), Some(b)) if b > a => (b - a) as f64,
        _ => (last.1 - first.1) as f64,
    }
}

impl Builder {
    pub fn new(snapshot_frequency: u64) -> Builder {
        Builder {
            snapshot_frequency: snapshot_frequency.max(1),
            ..Default::default()
        }
    }

    fn big(&mut self, v: BigValue) {
        if self.biggest.len() < BIGGEST || self.biggest.last().is_some_and(|b| v.bytes > b.bytes) {
            let at = self
                .biggest
                .partition_point(|b| (b.bytes, &b.thread_id) >= (v.bytes, &v.thread_id));
            self.biggest.insert(at, v);
            self.biggest.truncate(BIGGEST);
        }
    }

    pub fn add(&mut self, t: &ThreadSizes) {
        let tot = &mut self.totals;
        tot.threads += 1;
        tot.checkpoints += t.checkpoints.len() as u64;
        tot.writes += t.writes.len() as u64;
        tot.blobs += t.blobs.iter().filter(|b| !b.empty).count() as u64;
        let mut by_ns: BTreeMap<&str, NsDu> = BTreeMap::new();
        for cp in &t.checkpoints {
            tot.checkpoint_bytes += cp.bytes;
            tot.metadata_bytes += cp.metadata_bytes;
            tot.opaque += u64::from(cp.opaque.is_some());
            let n = by_ns.entry(&cp.ns).or_default();
            n.checkpoints += 1;
            n.checkpoint_bytes += cp.bytes + cp.metadata_bytes;
        }
        for w in &t.writes {
            tot.write_bytes += w.bytes;
            by_ns.entry(&w.ns).or_default().write_bytes += w.bytes;
            let acc = self.channels.entry(w.channel.clone()).or_default();
            acc.du.write_bytes += w.bytes;
            acc.du.biggest = acc.du.biggest.max(w.bytes);
        }
        for b in &t.blobs {
            tot.blob_bytes += b.bytes;
            by_ns.entry(&b.ns).or_default().blob_bytes += b.bytes;
            let acc = self.channels.entry(b.channel.clone()).or_default();
            acc.du.stored_bytes += b.bytes;
            acc.du.biggest = acc.du.biggest.max(b.bytes);
        }
        tot.namespaces += by_ns.len() as u64;
        let mut fastest: Option<(String, f64)> = None;
        let mut root_growth = None;
        let mut nss = Vec::with_capacity(by_ns.len());
        for (ns, mut n) in by_ns {
            let cps: Vec<_> = t.checkpoints.iter().filter(|c| c.ns == ns).collect();
            if let (Some(first), Some(last)) = (cps.first(), cps.last()) {
                let s = steps((first.step, 0), (last.step, cps.len() - 1));
                if s > 0.0 {
                    let g = (last.bytes as f64 - first.bytes as f64) / s;
                    n.growth_per_step = Some(g);
                    if ns.is_empty() {
                        root_growth = Some(g);
                    }
                }
                self.channels_of(t, ns, &cps, &mut fastest);
            }
            n.ns = ns.to_string();
            nss.push(n);
        }
        let bytes = nss
            .iter()
            .map(|n| n.checkpoint_bytes + n.write_bytes + n.blob_bytes)
            .sum();
        self.threads.push(ThreadDu {
            thread_id: t.thread_id.clone(),
            checkpoints: t.checkpoints.len() as u64,
            bytes,
            namespaces: nss,
            growth_per_step: root_growth,
            fastest_channel: fastest,
        });
    }

    /// One namespace's channels, checkpoint by checkpoint in id order: stored copies, growth,
    /// what a DeltaChannel would store instead, the biggest values.
    fn channels_of(
        &mut self,
        t: &ThreadSizes,
        ns: &str,
        cps: &[&crate::store::sizes::CheckpointSize],
        fastest: &mut Option<(String, f64)>,
    ) {
        // channel -> (first (step, index, size), last (step, index, size), last version, last size)
        struct Seen {
            first: (Option<i64>, usize, u64),
            last: (Option<i64>, usize, u64),
            version: Option<String>,
            updates: u64,
        }
        let mut seen: HashMap<&str, Seen> = HashMap::new();
        for (i, cp) in cps.iter().enumerate() {
            for ch in &cp.channels {
                if crate::snapshot::topology::is_reserved_channel(&ch.channel)
                    || ch.channel.starts_with("branch:")
                {
                    continue;
                }
                let acc = self.channels.entry(ch.channel.clone()).or_default();
                if ch.snapshot || cp.delta_pending.contains(&ch.channel) {
                    acc.delta.already_delta = true;
                }
                if ch.held == Held::Nothing {
                    continue;
                }
                acc.du.held_at += 1;
                if ch.held == Held::Inline {
                    acc.du.stored_bytes += ch.bytes;
                }
                acc.du.biggest = acc.du.biggest.max(ch.bytes);
                let here = (cp.step, i, ch.bytes);
                let s = seen.entry(&ch.channel).or_insert(Seen {
                    first: here,
                    last: here,
                    version: None,
                    updates: 0,
                });
                let updated = s.version.is_none() || s.version != ch.version;
                if updated {
                    acc.delta.updates += 1;
                    s.updates += 1;
                    if s.version.is_none() {
                        acc.delta.firsts += 1;
                    } else if ch.bytes > s.last.2 {
                        acc.delta.growing += 1;
                    }
                    // a DeltaChannel stores a snapshot every `snapshot_frequency` updates
                    if s.updates.is_multiple_of(self.snapshot_frequency) {
                        acc.delta.as_delta += ch.bytes;
                    }
                }
                s.last = here;
                s.version = ch.version.clone();
                if i == cps.len() - 1 {
                    let place = if ch.held == Held::Blob {
                        "blob"
                    } else {
                        "checkpoint"
                    };
                    self.big(BigValue {
                        bytes: ch.bytes,
                        thread_id: t.thread_id.clone(),
                        ns: ns.to_string(),
                        checkpoint_id: cp.id.clone(),
                        channel: ch.channel.clone(),
                        place,
                    });
                }
            }
        }
        for w in t.writes.iter().filter(|w| w.ns == ns) {
            if w.bytes > self.biggest.last().map_or(0, |b| b.bytes) {
                self.big(BigValue {
                    bytes: w.bytes,
                    thread_id: t.thread_id.clone(),
                    ns: ns.to_string(),
                    checkpoint_id: w.checkpoint_id.clone(),
                    channel: w.channel.clone(),
                    place: "write",
                });
            }
        }
        for (ch, s) in seen {
            let st = steps((s.first.0, s.first.1), (s.last.0, s.last.1));
            if st <= 0.0 {
                continue;
            }
            let grew = s.last.2 as f64 - s.first.2 as f64;
            let acc = self
                .channels
                .get_mut(ch)
                .expect("seen channels are counted");
            acc.growth_sum += grew;
            acc.growth_steps += st;
            let g = grew / st;
            if g > 0.0 && fastest.as_ref().is_none_or(|(_, f)| g > *f) {
                *fastest = Some((ch.to_string(), g));
            }
        }
    }

    pub fn finish(self, store: &str, kind: &str, space: Space, prune: Option<PruneSaving>) -> Du {
        let mut threads = self.threads;
        threads.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.thread_id.cmp(&b.thread_id)));
        let mut delta = Vec::new();
        let mut channels: Vec<ChannelDu> = self
            .channels
            .into_iter()
            // machinery with nothing stored (trigger channels)
            .filter(|(_, acc)| acc.du.stored_bytes + acc.du.write_bytes + acc.du.held_at > 0)
            .map(|(name, mut acc)| {
                acc.du.channel = name;
                if acc.growth_steps > 0.0 {
                    acc.du.growth_per_step = Some(acc.growth_sum / acc.growth_steps);
                }
                let d = &acc.delta;
                // a reducer that appends: the value grew on most updates (a LastValue that
                // happens to grow would need a reducer first; DeltaChannel requires one)
                let later = d.updates - d.firsts;
                let appends = later >= 2 && d.growing * 5 >= later * 4;
                if appends && !d.already_delta && acc.du.stored_bytes > d.as_delta {
                    delta.push(DeltaSaving {
                        channel: acc.du.channel.clone(),
                        stored_bytes: acc.du.stored_bytes,
                        as_delta_bytes: d.as_delta,
                        snapshot_frequency: self.snapshot_frequency,
                        growing_updates: d.growing,
                        updates: later,
                    });
                }
                acc.du
            })
            .collect();
        channels.sort_by(|a, b| {
            (b.stored_bytes + b.write_bytes)
                .cmp(&(a.stored_bytes + a.write_bytes))
                .then(a.channel.cmp(&b.channel))
        });
        delta.sort_by(|a, b| {
            (b.stored_bytes - b.as_delta_bytes)
                .cmp(&(a.stored_bytes - a.as_delta_bytes))
                .then(a.channel.cmp(&b.channel))
        });
        Du {
            store: store.to_string(),
            kind: kind.to_string(),
            space,
            totals: self.totals,
            threads,
            channels,
            biggest: self.biggest,
            delta,
            prune,
        }
    }
}

/// Add a store up: every thread (or those matching `pattern`), one at a time, and what
/// `prune --keep 1 --keep-fork-tips` would free (planned without looking into any checkpoint:
/// fork tips are kept, so nothing needs to know which are paused).
pub fn measure(
    store: &Store,
    pattern: Option<&str>,
    snapshot_frequency: u64,
    tables: bool,
) -> Result<Du, StoreError> {
    let mut b = Builder::new(snapshot_frequency);
    let policy = Policy {
        keep: Some(1),
        keep_fork_tips: true,
        ..Default::default()
    };
    let mut prune = PruneSaving {
        policy: "prune --keep 1 --keep-fork-tips".into(),
        checkpoints: 0,
        bytes: 0,
    };
    let want = |t: &str| pattern.is_none_or(|p| super::glob(p, t));
    store.scan_sizes(&want, &mut |t| {
        b.add(&t);
        let mut never = |_: &crate::store::sizes::CheckpointSize| Ok::<_, ()>(true);
        if let Ok(Some(p)) = plan_thread(&t, &policy, &mut never) {
            prune.checkpoints += p.dropped;
            prune.bytes += p.bytes;
        }
        Ok(())
    })?;
    let space = store.space(tables)?;
    Ok(b.finish(store.label(), store.kind(), space, Some(prune)))
}

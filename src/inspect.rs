//! The inspector: store + snapshot derivation for one thread, paged. Used by the CLI and the TUI.

use crate::snapshot::topology::{is_reserved_channel, Topology};
use crate::snapshot::{self, Snapshot};
use crate::store::{CheckpointRow, Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{path}: no thread {thread:?}{ns} (superstep threads --db {path} lists them)")]
    UnknownThread {
        path: String,
        thread: String,
        ns: String,
    },
    #[error("{path}: thread {thread:?}{ns} has no checkpoint {checkpoint}")]
    UnknownCheckpoint {
        path: String,
        thread: String,
        ns: String,
        checkpoint: String,
    },
}

/// A thread (and namespace) opened for inspection.
pub struct Thread<'s> {
    store: &'s Store,
    pub thread_id: String,
    pub ns: String,
    topology: Option<Topology>,
    catalogue: Vec<String>,
    /// Likely defaults of the keys the newest checkpoint holds (said where one is missing).
    defaults: Vec<(String, &'static str)>,
    /// Without a topology: how keys combine writes, as the thread's newest checkpoints show.
    learned: Vec<(String, snapshot::Learned)>,
    /// The newest checkpoint's `versions_seen`: node -> trigger channels it saw.
    seen_nodes: Vec<(String, Vec<String>)>,
    namespaces: Vec<String>,
}

fn ns_note(ns: &str) -> String {
    if ns.is_empty() {
        String::new()
    } else {
        format!(" in namespace {ns:?}")
    }
}

/// Checkpoints (newest first) read to learn how each key combines writes when the graph is not
/// known: enough to see the keys of a typical agent loop at work, bounded on long threads.
pub const LEARN_FROM: usize = 32;

/// How each state key of a thread combines writes, from its newest checkpoints: for every
/// `loop` checkpoint whose parent is in the window, the parent's value, the parent's pending
/// writes and the child's value ([`snapshot::evidence`]). A key whose transitions disagree is
/// left unknown.
fn learn_reducers(
    store: &Store,
    thread_id: &str,
    ns: &str,
) -> Result<Vec<(String, snapshot::Learned)>, InspectError> {
    let rows = store.history(thread_id, ns, None, LEARN_FROM)?;
    let mut decoded: Vec<(String, crate::store::Checkpoint)> = Vec::new();
    for r in &rows {
        decoded.push((r.checkpoint_id.clone(), store.decode(r)?));
    }
    let mut learned: Vec<(String, Option<snapshot::Learned>)> = Vec::new();
    for (r, (_, child)) in rows.iter().zip(&decoded) {
        if r.metadata.get("source").and_then(|s| s.as_str()) != Some("loop") {
            continue;
        }
        let Some(pid) = &r.parent_checkpoint_id else {
            continue;
        };
        let Some((_, parent)) = decoded.iter().find(|(id, _)| id == pid) else {
            continue;
        };
        let writes = store.writes(thread_id, ns, pid)?;
        let mut keys: Vec<&str> = writes
            .iter()
            .map(|w| w.channel.as_str())
            .filter(|c| !is_reserved_channel(c))
            .collect();
        keys.dedup();
        for k in keys {
            let ws: Vec<rmpv::Value> = writes
                .iter()
                .filter(|w| w.channel == k && w.cut.is_none())
                .map(|w| w.value.clone().into_value())
                .collect();
            let Some(e) = snapshot::evidence(parent.value(k), &ws, child.value(k)) else {
                continue;
            };
            match learned.iter_mut().find(|(n, _)| n == k) {
                Some((_, seen)) if *seen != Some(e) => *seen = None,
                Some(_) => {}
                None => learned.push((k.to_string(), Some(e))),
            }
        }
    }
    Ok(learned
        .into_iter()
        .filter_map(|(k, l)| Some((k, l?)))
        .collect())
}

impl<'s> Thread<'s> {
    pub fn open(
        store: &'s Store,
        thread_id: &str,
        ns: &str,
        topology: Option<Topology>,
    ) -> Result<Self, InspectError> {
        let latest = store.checkpoint(thread_id, ns, None)?;
        let Some(latest) = latest else {
            return Err(InspectError::UnknownThread {
                path: store.label().to_string(),
                thread: thread_id.to_string(),
                ns: ns_note(ns),
            });
        };
        let newest = store.decode(&latest)?;
        // keys the newest checkpoint's pending writes hold are written by the thread too, even
        // when no checkpoint has them yet (tasks that finished beside a failed or paused one)
        let pending: Vec<(String, rmpv::Value)> = store
            .writes(thread_id, ns, &latest.checkpoint_id)?
            .into_iter()
            .filter(|w| !is_reserved_channel(&w.channel) && w.cut.is_none())
            .map(|w| (w.channel, w.value.into_value()))
            .collect();
        let mut defaults: Vec<(String, &'static str)> = newest
            .channel_values
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), snapshot::likely_default(v)?)))
            .collect();
        for (k, v) in &pending {
            if !defaults.iter().any(|(d, _)| d == k) {
                if let Some(d) = snapshot::likely_default(v) {
                    defaults.push((k.clone(), d));
                }
            }
        }
        let seen_nodes = newest
            .versions_seen
            .iter()
            .map(|(n, v)| (n.clone(), v.iter().map(|(c, _)| c.clone()).collect()))
            .collect();
        let mut catalogue: Vec<String> = newest
            .channel_versions
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        for (k, _) in pending {
            if !catalogue.contains(&k) {
                catalogue.push(k);
            }
        }
        let namespaces = store.namespaces(thread_id)?;
        let learned = if topology.is_none() {
            learn_reducers(store, thread_id, ns)?
        } else {
            Vec::new()
        };
        Ok(Thread {
            store,
            thread_id: thread_id.to_string(),
            ns: ns.to_string(),
            topology,
            catalogue,
            defaults,
            learned,
            seen_nodes,
            namespaces,
        })
    }

    pub fn snapshot_of(&self, row: &CheckpointRow, live: bool) -> Result<Snapshot, InspectError> {
        let cp = self.store.decode(row)?;
        let writes = self
            .store
            .writes(&row.thread_id, &row.checkpoint_ns, &row.checkpoint_id)?;
        // DeltaChannel keys with nothing stored here: LangGraph's get_delta_channel_history
        let keys: Vec<String> = match &self.topology {
            Some(t) => t.state_keys.iter().map(|k| k.name.clone()).collect(),
            None => cp
                .channel_versions
                .iter()
                .map(|(k, _)| k.clone())
                .filter(|k| !is_reserved_channel(k))
                .collect(),
        };
        let replay = snapshot::delta::keys_to_replay(row, &cp, self.topology.as_ref(), &keys);
        let delta = if replay.is_empty() {
            Vec::new()
        } else {
            snapshot::delta::history(self.store, row, &replay)?
        };
        Ok(snapshot::derive(&snapshot::Input {
            row,
            checkpoint: &cp,
            writes: &writes,
            topology: self.topology.as_ref(),
            catalogue: &self.catalogue,
            defaults: &self.defaults,
            learned: &self.learned,
            seen_nodes: &self.seen_nodes,
            namespaces: &self.namespaces,
            live,
            channel_order: self.store.keeps_channel_order(),
            delta: &delta,
        }))
    }

    /// How state key `key` combines writes, in words: the graph's reducer or channel class
    /// (with a topology), else what the thread's newest checkpoints showed; `None`: unknown.
    pub fn reducer_label(&self, key: &str) -> Option<String> {
        if let Some(t) = &self.topology {
            let k = t.key(key)?;
            return Some(match k.kind.reducer_id() {
                Some(r) => r.display(),
                None => k.kind.class_name().to_string(),
            });
        }
        self.learned
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, l)| match l {
                snapshot::Learned::Accumulates => {
                    "accumulates (a reducer, as the thread's checkpoints show)".to_string()
                }
                snapshot::Learned::LastValue => {
                    "last value (as the thread's checkpoints show)".to_string()
                }
            })
    }

    /// What holds for every snapshot of this thread as derived here (without the graph:
    /// [`snapshot::db_only_limitation`]), to be stated once.
    pub fn limitations(&self) -> Vec<snapshot::Warning> {
        if self.topology.is_none() {
            vec![snapshot::db_only_limitation()]
        } else {
            Vec::new()
        }
    }

    /// `get_state`: live view of the latest checkpoint, or the addressed one (history view).
    pub fn show(&self, checkpoint_id: Option<&str>) -> Result<Snapshot, InspectError> {
        let row = self
            .store
            .checkpoint(&self.thread_id, &self.ns, checkpoint_id)?;
        let Some(row) = row else {
            return Err(InspectError::UnknownCheckpoint {
                path: self.store.label().to_string(),
                thread: self.thread_id.clone(),
                ns: ns_note(&self.ns),
                checkpoint: checkpoint_id.unwrap_or("").to_string(),
            });
        };
        self.snapshot_of(&row, checkpoint_id.is_none())
    }

    /// `get_state_history` page: newest first, strictly before `before`.
    pub fn history_page(
        &self,
        before: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Snapshot>, InspectError> {
        self.store
            .history(&self.thread_id, &self.ns, before, limit)?
            .iter()
            .map(|r| self.snapshot_of(r, false))
            .collect()
    }

    /// Visit the whole history newest first, `page` rows at a time, stopping after `limit`.
    pub fn for_each_history<E: From<InspectError>>(
        &self,
        limit: Option<usize>,
        page: usize,
        mut f: impl FnMut(Snapshot) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut before: Option<String> = None;
        let mut left = limit.unwrap_or(usize::MAX);
        while left > 0 {
            let rows = self
                .store
                .history(&self.thread_id, &self.ns, before.as_deref(), page.min(left))
                .map_err(InspectError::from)?;
            if rows.is_empty() {
                break;
            }
            before = rows.last().map(|r| r.checkpoint_id.clone());
            left = left.saturating_sub(rows.len());
            for r in &rows {
                f(self.snapshot_of(r, false)?)?;
            }
        }
        Ok(())
    }
}

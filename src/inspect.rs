//! The inspector: store + snapshot derivation for one thread, paged. Used by the CLI and the TUI.

use crate::snapshot::{self, topology::Topology, Snapshot};
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
    namespaces: Vec<String>,
}

fn ns_note(ns: &str) -> String {
    if ns.is_empty() {
        String::new()
    } else {
        format!(" in namespace {ns:?}")
    }
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
        let catalogue = store
            .decode(&latest)?
            .channel_versions
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        let namespaces = store.namespaces(thread_id)?;
        Ok(Thread {
            store,
            thread_id: thread_id.to_string(),
            ns: ns.to_string(),
            topology,
            catalogue,
            namespaces,
        })
    }

    pub fn snapshot_of(&self, row: &CheckpointRow, live: bool) -> Result<Snapshot, InspectError> {
        let cp = self.store.decode(row)?;
        let writes = self
            .store
            .writes(&row.thread_id, &row.checkpoint_ns, &row.checkpoint_id)?;
        Ok(snapshot::derive(&snapshot::Input {
            row,
            checkpoint: &cp,
            writes: &writes,
            topology: self.topology.as_ref(),
            catalogue: &self.catalogue,
            namespaces: &self.namespaces,
            live,
            channel_order: self.store.keeps_channel_order(),
        }))
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

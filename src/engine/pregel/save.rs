//! `put_writes` / `_put_checkpoint` and the buffered saver a step commits in one transaction.

use super::{Engine, Run};
use crate::engine::checkpoint::State;
use crate::engine::EngineError;
use crate::ids::NULL_TASK_ID;
use crate::store::Version;
use rmpv::Value;
use serde_json::{json, Map, Value as Json};

impl<'g> Engine<'g> {
    pub(super) fn put_writes(
        &mut self,
        run: &mut Run,
        task_id: &str,
        task_path: &str,
        mut writes: Vec<(String, Value)>,
    ) {
        if writes.is_empty() {
            return;
        }
        let all_special = writes
            .iter()
            .all(|(c, _)| crate::engine::saver::special_idx(c).is_some());
        if all_special {
            // dedupe per channel, last wins, in first-occurrence order
            let mut out: Vec<(String, Value)> = Vec::new();
            for (c, v) in writes {
                match out.iter_mut().find(|(k, _)| *k == c) {
                    Some((_, old)) => *old = v,
                    None => out.push((c, v)),
                }
            }
            writes = out;
        }
        let to_save: Vec<(String, Value)> = if task_id == NULL_TASK_ID {
            run.pending.retain(|(t, c, _)| {
                !(t == NULL_TASK_ID && crate::engine::saver::special_idx(c).is_some())
            });
            writes.sort_by_key(|(c, _)| crate::engine::saver::special_idx(c).is_some());
            run.pending
                .iter()
                .filter(|(t, _, _)| t == NULL_TASK_ID)
                .map(|(_, c, v)| (c.clone(), v.clone()))
                .chain(writes.iter().cloned())
                .collect()
        } else {
            run.pending.retain(|(t, _, _)| t != task_id);
            writes.clone()
        };
        run.pending
            .extend(writes.into_iter().map(|(c, v)| (task_id.to_string(), c, v)));
        let cid = run.state.id.clone();
        self.sh
            .saver
            .borrow_mut()
            .put_writes(&self.ns, &cid, task_id, task_path, &to_save);
    }

    /// `_put_checkpoint`: new id (clock_seq = step), parent = last saved, step += 1.
    pub(super) fn put_checkpoint(
        &mut self,
        run: &mut Run,
        source: &str,
        updated: Option<Vec<String>>,
    ) -> String {
        let mut md = Map::new();
        md.insert("source".into(), json!(source));
        md.insert("step".into(), json!(run.step));
        md.insert(
            "parents".into(),
            Json::Object(
                self.nested
                    .as_ref()
                    .map(|n| n.parents.clone())
                    .unwrap_or_else(|| self.checkpoint_map.clone()),
            ),
        );
        // DeltaChannel: counters, cadence, snapshots (`_put_checkpoint` / `create_checkpoint`)
        let counters = crate::engine::delta::bumped(
            self.graph,
            &run.metadata,
            updated.as_deref().unwrap_or(&[]),
        );
        run.state.snapshot = crate::engine::delta::to_snapshot(
            self.graph,
            &run.state,
            &counters,
            &run.forced_snapshot,
        );
        if !run.state.snapshot.is_empty() {
            let frac = self.next_fraction();
            crate::engine::delta::bump_versions(
                self.graph,
                &mut run.state,
                &run.previous_versions,
                &mut |old| crate::engine::versions::next_version(old, frac),
            );
            let snap = run.state.snapshot.clone();
            run.forced_snapshot.retain(|c| !snap.contains(c));
        }
        crate::engine::delta::finish_metadata(&mut md, counters, &run.state.snapshot);
        let (id, ts) = self.next_id(run.step);
        run.state.id = id.clone();
        run.state.ts = ts;
        self.saver_put(
            &self.ns,
            run.saved_id.as_deref(),
            &run.state,
            updated.as_deref(),
            &run.previous_versions,
            &md,
        );
        run.state.snapshot.clear();
        run.previous_versions
            .clone_from(&run.state.channel_versions);
        run.metadata = md;
        run.saved_id = Some(id.clone());
        run.step += 1;
        id
    }

    pub(crate) fn saver_mut_commit(&mut self) -> Result<(), EngineError> {
        self.commit()
    }

    pub(crate) fn saver_mut_discard(&mut self) {
        self.discard()
    }

    /// `put`: `state` as a checkpoint of `ns` with parent `parent`, encoded by the store
    /// (`new_versions` relative to `previous`), buffered for the next commit.
    pub(crate) fn saver_put(
        &self,
        ns: &str,
        parent: Option<&str>,
        state: &State,
        updated: Option<&[String]>,
        previous: &[(String, Version)],
        md: &Map<String, Json>,
    ) {
        let cp = state.checkpoint_ref(updated, previous);
        let enc = self.sh.store.encode_checkpoint(
            ns,
            parent,
            &cp,
            crate::engine::saver::py_json(&Json::Object(md.clone())),
        );
        state.blob_len.set(enc.checkpoint.len());
        self.sh.saver.borrow_mut().put(enc);
    }

    pub(crate) fn saver_put_writes(
        &mut self,
        ns: &str,
        cid: &str,
        task_id: &str,
        path: &str,
        writes: &[(String, Value)],
    ) {
        self.sh
            .saver
            .borrow_mut()
            .put_writes(ns, cid, task_id, path, writes)
    }

    pub(crate) fn next_id(&mut self, clock_seq: i64) -> (String, String) {
        let mut ids = self.sh.ids.borrow_mut();
        self.sh.uuid.borrow_mut().next(ids.as_mut(), clock_seq)
    }

    /// Commit the buffered rows; a nested (subgraph) engine leaves them to its parent's step.
    pub(super) fn commit(&mut self) -> Result<(), EngineError> {
        if self.nested.is_some() {
            return Ok(());
        }
        self.sh.saver.borrow_mut().commit(&self.sh.store)
    }

    pub(super) fn discard(&mut self) {
        if self.nested.is_none() {
            self.sh.saver.borrow_mut().discard()
        }
    }
}

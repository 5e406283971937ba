//! `update_state` (spec §10.3; `Pregel.bulk_update_state` with one update): the node's writers run
//! on the given values as if the node had returned them.

use super::apply::{null_task_writes, TaskWrites};
use super::checkpoint::State;
use super::pregel::Engine;
use super::runner::writer_writes;
use super::tasks::prepare_next_tasks;
use super::EngineError;
pub use crate::source::types::AsNode;

use crate::ids::{update_task_id, PathPart};
use crate::spec::model::START;
use crate::store::Version;
use rmpv::Value;
use serde_json::{json, Map, Value as Json};

/// `_infer_as_node`.
pub fn infer_as_node(
    engine: &Engine,
    seen: &[(String, Vec<(String, Version)>)],
) -> Result<String, EngineError> {
    let graph = engine.graph;
    if !seen.iter().any(|(_, m)| !m.is_empty()) {
        return Ok(START.to_string());
    }
    let mut last: Vec<(&Version, &str)> = seen
        .iter()
        .filter(|(n, _)| graph.node(n).is_some())
        .flat_map(|(n, m)| m.iter().map(move |(_, v)| (v, n.as_str())))
        .collect();
    last.sort_by(|a, b| {
        a.0.partial_cmp(b.0)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| a.1.cmp(b.1))
    });
    match last.len() {
        0 => Err(EngineError::Update(
            "Ambiguous update, specify as_node".into(),
        )),
        1 => Ok(last[0].1.to_string()),
        n if last[n - 1].0 != last[n - 2].0 => Ok(last[n - 1].1.to_string()),
        _ => Err(EngineError::Update(
            "Ambiguous update, specify as_node".into(),
        )),
    }
}

impl<'g> Engine<'g> {
    /// Apply `values` as if `as_node` had returned them, on `checkpoint_id` (or the latest).
    /// Returns the new checkpoint's id.
    pub fn update_state(
        &mut self,
        checkpoint_id: Option<&str>,
        values: Option<Value>,
        as_node: AsNode,
    ) -> Result<String, EngineError> {
        self.read_head()?;
        let r = self.update_state_inner(checkpoint_id, values, as_node);
        match r {
            Ok(id) => {
                self.saver_mut_commit()?;
                Ok(id)
            }
            Err(e) => {
                self.saver_mut_discard();
                Err(e)
            }
        }
    }

    fn update_state_inner(
        &mut self,
        checkpoint_id: Option<&str>,
        values: Option<Value>,
        as_node: AsNode,
    ) -> Result<String, EngineError> {
        let graph = self.graph;
        let loaded = self.load_for_update(checkpoint_id)?;
        if let (Some(id), None) = (checkpoint_id, &loaded) {
            return Err(EngineError::UnknownCheckpoint(id.to_string()));
        }
        let ns = self.ns.clone();
        let (mut state, saved) = match &loaded {
            Some((row, cp, writes)) => (
                self.load_state(row, cp)?,
                Some((row.clone(), writes.clone())),
            ),
            None => {
                let (id, ts) = self.next_id(-2);
                (State::empty(graph, id, ts), None)
            }
        };
        state.updated_channels = None;
        // `checkpoint_previous_versions`: the saved checkpoint's (nothing for a new thread)
        let previous = state.channel_versions.clone();
        let step = saved
            .as_ref()
            .and_then(|(r, _)| r.metadata.get("step").and_then(Json::as_i64))
            .unwrap_or(-1);
        let parents = saved
            .as_ref()
            .and_then(|(r, _)| r.metadata.get("parents").cloned())
            .unwrap_or_else(|| json!({}));
        let saved_id = saved.as_ref().map(|(r, _)| r.checkpoint_id.clone());
        let parent_of_saved = saved
            .as_ref()
            .and_then(|(r, _)| r.parent_checkpoint_id.clone());
        let pending: Vec<(String, String, Value)> =
            saved.as_ref().map(|(_, w)| w.clone()).unwrap_or_default();
        let superseded = match &saved_id {
            Some(id) => !self.is_latest(id)?,
            None => false,
        };
        let code = self.code();
        // `delta_channels_with_pending_writes(saved.pending_writes)`: a new branch from here
        // snapshots the delta channels those writes touch
        let mut fork: Vec<String> = Vec::new();
        for (_, c, _) in &pending {
            if super::delta::is_delta(graph, c) && !fork.contains(c) {
                fork.push(c.clone());
            }
        }
        let saved_md = saved.as_ref().map(|(r, _)| r.metadata.clone());
        let md = |source: &str, step: i64| {
            let mut m = Map::new();
            m.insert("source".into(), json!(source));
            m.insert("step".into(), json!(step));
            m.insert("parents".into(), parents.clone());
            m
        };
        match as_node {
            AsNode::End => {
                if values.is_some() {
                    return Err(EngineError::Update(
                        "as_node END takes no values (it finishes the pending tasks)".into(),
                    ));
                }
                let mut updated: Vec<String> = Vec::new();
                if saved.is_some() {
                    let mut tasks = prepare_next_tasks(&state, graph, &ns, step + 1, None);
                    let null_writes = null_task_writes(&pending);
                    if !null_writes.is_empty() {
                        updated.extend(
                            self.apply(&mut state, &mut [TaskWrites::input(&null_writes)])?,
                        );
                    }
                    for (tid, st) in super::interrupts::read_task_statuses(&pending) {
                        if let Some(t) = tasks.iter_mut().find(|t| t.id == tid) {
                            t.writes.extend(st.output);
                        }
                    }
                    let mut tw: Vec<TaskWrites> = tasks.iter().map(TaskWrites::from).collect();
                    updated.extend(self.apply(&mut state, &mut tw)?);
                }
                let mut m = md("update", step + 1);
                self.plan_delta(
                    &mut state,
                    &mut m,
                    saved_md.as_ref(),
                    &updated,
                    &fork,
                    &previous,
                );
                let (id, ts) = self.next_id(step);
                state.id = id.clone();
                state.ts = ts;
                self.saver_put(&ns, saved_id.as_deref(), &state, None, &previous, &m);
                Ok(id)
            }
            AsNode::Input => {
                let Some(v) = values else {
                    return Err(EngineError::Update(
                        "Received no input writes for __start__".into(),
                    ));
                };
                let writes = vec![("__start__".to_string(), v)];
                // `_store_or_fork_delta_writes`: the input's writes go on the checkpoint it
                // builds on (under `uuid5(checkpoint_id, "__input__")`), unless the thread
                // moved past it
                if let Some(sid) = &saved_id {
                    if !superseded {
                        let tid = uuid::Uuid::new_v5(
                            &uuid::Uuid::try_parse(sid).unwrap_or_default(),
                            b"__input__",
                        )
                        .to_string();
                        self.saver_put_writes(&ns, sid, &tid, "", &writes);
                    }
                }
                let updated = self.apply(&mut state, &mut [TaskWrites::input(&writes)])?;
                let next_step = if saved.is_some() { step + 1 } else { -1 };
                let mut m = md("input", next_step);
                self.plan_delta(
                    &mut state,
                    &mut m,
                    saved_md.as_ref(),
                    &updated,
                    &fork,
                    &previous,
                );
                let (id, ts) = self.next_id(next_step);
                state.id = id.clone();
                state.ts = ts;
                self.saver_put(&ns, saved_id.as_deref(), &state, None, &previous, &m);
                Ok(id)
            }
            AsNode::Copy => {
                if saved.is_none() {
                    return Err(EngineError::Update(
                        "Cannot copy a non-existent checkpoint".into(),
                    ));
                }
                // `create_checkpoint(checkpoint, None, step)`: the stored values as they are
                // (a delta channel's `_DeltaSnapshot` included), and the counters copied
                if let Some((_, cp, _)) = &loaded {
                    state.snapshot = super::delta::delta_channels(graph)
                        .filter(|(k, _)| cp.value(k).is_some())
                        .map(|(k, _)| k.to_string())
                        .collect();
                }
                let mut m = md("fork", step + 1);
                if let Some(c) = saved_md
                    .as_ref()
                    .and_then(|s| s.get("counters_since_delta_snapshot"))
                {
                    m.insert("counters_since_delta_snapshot".into(), c.clone());
                }
                let (id, ts) = self.next_id(step);
                state.id = id.clone();
                state.ts = ts;
                self.saver_put(&ns, parent_of_saved.as_deref(), &state, None, &previous, &m);
                Ok(id)
            }
            AsNode::Infer | AsNode::Node(_) => {
                let node = match as_node {
                    AsNode::Node(n) => n,
                    _ => infer_as_node(self, &state.versions_seen)?,
                };
                if graph.node(&node).is_none() {
                    return Err(EngineError::Update(format!("Node {node} does not exist")));
                }
                let task_id = if saved.is_some() {
                    prepare_next_tasks(&state, graph, &ns, step + 1, None)
                        .into_iter()
                        .find(|t| t.name == node)
                        .map(|t| t.id)
                } else {
                    None
                }
                .unwrap_or_else(|| update_task_id(&uuid::Uuid::try_parse(&state.id).unwrap(), 0));
                let path = vec![PathPart::Str("__interrupt__".into()), PathPart::Int(0)];
                let ret = values.unwrap_or(Value::Nil);
                let writes =
                    writer_writes(graph, &state, &node, &ret, code).map_err(EngineError::Raised)?;
                let updated: Vec<String> = writes
                    .iter()
                    .map(|(c, _)| c.clone())
                    .filter(|c| c != "__pregel_push")
                    .fold(Vec::new(), |mut acc, c| {
                        if !acc.contains(&c) {
                            acc.push(c);
                        }
                        acc
                    });
                for (c, v) in &writes {
                    let overwritten = crate::value::ext::overwrite_value(v).is_some();
                    let forked = superseded && saved_id.is_some();
                    if (overwritten || forked)
                        && super::delta::is_delta(graph, c)
                        && !fork.contains(c)
                    {
                        fork.push(c.clone());
                    }
                }
                if let Some(sid) = &saved_id {
                    if !superseded {
                        let rows: Vec<(String, Value)> = writes
                            .iter()
                            .filter(|(c, _)| c != "__pregel_push")
                            .cloned()
                            .collect();
                        self.saver_put_writes(
                            &ns,
                            sid,
                            &task_id,
                            &crate::ids::task_path_str(&path),
                            &rows,
                        );
                    }
                }
                let trig = vec!["__interrupt__".to_string()];
                self.apply(
                    &mut state,
                    &mut [TaskWrites {
                        name: &node,
                        path: &path,
                        triggers: &trig,
                        writes: &writes,
                    }],
                )?;
                let mut m = md("update", step + 1);
                self.plan_delta(
                    &mut state,
                    &mut m,
                    saved_md.as_ref(),
                    &updated,
                    &fork,
                    &previous,
                );
                let (id, ts) = self.next_id(step + 1);
                state.id = id.clone();
                state.ts = ts;
                self.saver_put(&ns, saved_id.as_deref(), &state, None, &previous, &m);
                Ok(id)
            }
        }
    }

    /// The DeltaChannel part of an update_state head: which channels it snapshots (bumping
    /// their versions if needed) and its `counters_since_delta_snapshot`.
    fn plan_delta(
        &mut self,
        state: &mut State,
        md: &mut Map<String, Json>,
        saved_md: Option<&Map<String, Json>>,
        updated: &[String],
        fork: &[String],
        previous: &[(String, Version)],
    ) {
        if super::delta::delta_channels(self.graph).next().is_none() {
            return;
        }
        let frac = self.next_fraction();
        let counters = super::delta::plan_update(
            self.graph,
            state,
            saved_md,
            updated,
            fork,
            previous,
            &mut |old| super::versions::next_version(old, frac),
        );
        if let Some(c) = counters {
            super::delta::finish_metadata(md, c, &state.snapshot);
        }
    }
}

//! `GraphSource` for `PythonSource`: the seam the TUI and CLI drive.

use super::*;
use crate::source::graph_text::{GraphText, NodeText};

impl GraphSource for PythonSource {
    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn revive_classes(
        &mut self,
        classes: &[(i8, Vec<u8>)],
    ) -> Result<Vec<Option<String>>, SourceError> {
        self.revive(classes)
    }

    fn topology(&self, ns: &str) -> Option<Topology> {
        if ns.is_empty() {
            return self.topology.clone();
        }
        let mut t = &self.info.topology;
        for seg in ns.split('|') {
            let name = seg.split(':').next().unwrap_or(seg);
            t = t["subgraph_topologies"].get(name)?;
        }
        Topology::from_oracle_json(t).ok()
    }

    fn run(&mut self, req: RunRequest) -> RunOutcome {
        self.begin(req);
        loop {
            if let Some(out) = self.poll_blocking() {
                return out;
            }
        }
    }

    fn update_state(
        &mut self,
        thread: &str,
        checkpoint: Option<&str>,
        values: Option<Json>,
        as_node: AsNode,
    ) -> Result<String, SourceError> {
        self.update_state_in(thread, "", checkpoint, values, as_node)
    }

    /// LangGraph's `update_state` with a subgraph's config: `{thread_id, checkpoint_ns}`, or the
    /// config of the addressed checkpoint's own snapshot (its `checkpoint_map` included, the
    /// `__pregel_*` objects dropped) — LangGraph hands it to that subgraph.
    fn update_state_in(
        &mut self,
        thread: &str,
        ns: &str,
        checkpoint: Option<&str>,
        values: Option<Json>,
        as_node: AsNode,
    ) -> Result<String, SourceError> {
        let config = self.settings.config_json();
        let p = self.ensure()?;
        let id = p.id();
        let as_node = match as_node {
            AsNode::Infer => None,
            AsNode::Node(n) => Some(n),
            AsNode::Input => Some("__input__".to_string()),
            AsNode::Copy => Some("__copy__".to_string()),
            AsNode::End => Some("__end__".to_string()),
        };
        p.send(&Request::UpdateState {
            id,
            thread: thread.to_string(),
            ns: ns.to_string(),
            checkpoint: checkpoint.map(str::to_string),
            values: values.unwrap_or(Json::Null),
            as_node,
            config,
        })
        .map_err(|e| SourceError::message(e, ""))?;
        match self.wait_simple(id)? {
            Event::Updated { checkpoint, .. } => Ok(checkpoint),
            other => Err(SourceError::message(
                format!("unexpected answer to update_state: {other:?}"),
                "",
            )),
        }
    }

    fn reset(&mut self) {
        if let Some(p) = self.proc.as_mut() {
            let id = p.id();
            if p.send(&Request::Reset { id }).is_ok() {
                let _ = self.wait_simple(id);
            }
        }
    }

    /// A run from a subgraph checkpoint's config: `invoke(input, config)` with the config of that
    /// checkpoint's own snapshot (LangGraph starts the root from the checkpoint its
    /// `checkpoint_map` names, and the subgraph task of `ns` from the addressed checkpoint).
    fn run_in(&mut self, req: RunRequest, ns: &str) -> RunOutcome {
        if let Some(out) = GraphSource::begin_in(self, req, ns) {
            return out;
        }
        loop {
            if let Some(out) = self.poll_blocking() {
                return out;
            }
        }
    }

    /// A run from a subgraph checkpoint's config, begun like any other: the TUI polls it (spinner,
    /// Esc cancels a hung node) — only a request LangGraph would not address is answered at once.
    fn begin_in(&mut self, req: RunRequest, ns: &str) -> Option<RunOutcome> {
        if !ns.is_empty()
            && !matches!(
                req.start,
                Start::Fresh {
                    checkpoint: Some(_),
                    ..
                }
            )
        {
            // LangGraph's invoke drops a namespace given without a checkpoint id
            return Some(RunOutcome {
                error: Some(SourceError::message(
                    format!(
                        "namespace {}: a run in a subgraph namespace starts from one of its checkpoints",
                        crate::text::escape(ns)
                    ),
                    "name the checkpoint (--checkpoint ID; history --ns lists them)",
                )),
                ..RunOutcome::default()
            });
        }
        self.send_run(req, ns);
        None
    }

    fn begin(&mut self, req: RunRequest) {
        self.send_run(req, "")
    }

    fn poll(&mut self) -> Option<RunOutcome> {
        if let Some(out) = self.finished.take() {
            return Some(out);
        }
        self.pump(Wait::No)
    }

    fn poll_wait(&mut self, timeout: Duration) -> Option<RunOutcome> {
        if let Some(out) = self.finished.take() {
            return Some(out);
        }
        self.pump(Wait::Until(Instant::now() + timeout))
    }

    fn progress(&self) -> Option<&RunOutcome> {
        self.pending.as_ref().map(|p| &p.out)
    }

    fn running_nodes(&self) -> Vec<String> {
        self.pending
            .as_ref()
            .map(|p| p.running.clone())
            .unwrap_or_default()
    }

    fn cancel(&mut self) {
        let Some(p) = self.pending.as_mut() else {
            return;
        };
        if p.cancel_at.is_none() {
            p.cancel_at = Some(Instant::now());
            if let Some(proc) = self.proc.as_mut() {
                let _ = proc.send(&Request::Cancel);
            }
        }
    }

    fn graph_text(&self, mermaid: bool) -> String {
        let t = &self.info.topology;
        if mermaid {
            return t["mermaid"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| "(LangGraph could not draw this graph)\n".into());
        }
        let mut text = GraphText {
            title: format!("{}  ({})", self.info.name, self.reference.label),
            about: vec![format!(
                "Python {}: {} ({}{})",
                self.info.kind,
                self.interpreter.path.display(),
                self.langgraph_version()
                    .map(|v| format!("langgraph {v}"))
                    .unwrap_or_default(),
                if self.info.is_async { ", async" } else { "" }
            )],
            ..GraphText::default()
        };
        for k in &self.shape.state_keys {
            let ch = &t["channels"][k];
            let kind = ch["kind"].as_str().unwrap_or("?");
            let r = match (kind, ch["reducer_qualname"].as_str()) {
                ("LastValue", _) => "last value".to_string(),
                (k, Some(q)) => format!("{k}({q})"),
                (k, None) => k.to_string(),
            };
            text.state.push((k.clone(), r));
        }
        for n in &self.shape.nodes {
            let mut marks = Vec::new();
            if self.shape.fixed_before.matches(&n.name) {
                marks.push("break-before (compiled in)".to_string());
            }
            if self.shape.fixed_after.matches(&n.name) {
                marks.push("break-after (compiled in)".to_string());
            }
            if t["subgraphs"]
                .as_array()
                .is_some_and(|s| s.iter().any(|x| x == n.name.as_str()))
            {
                marks.push("subgraph".to_string());
            }
            text.nodes.push(NodeText {
                name: n.name.clone(),
                edges: n.successors.clone(),
                marks,
            });
        }
        text.to_string()
    }

    fn gone(&self) -> Option<String> {
        self.gone.clone()
    }

    fn reads_pickled_checkpoints(&self) -> bool {
        true
    }

    fn live_state(
        &mut self,
        thread: &str,
        checkpoint: Option<&str>,
    ) -> Option<Result<(Json, Vec<String>), SourceError>> {
        Some(self.get_state(thread, checkpoint))
    }

    fn configure(
        &mut self,
        settings: &crate::source::RunSettings,
    ) -> Result<Vec<String>, SourceError> {
        self.apply_settings(settings)
    }

    fn context_in_use(&self) -> Option<Result<crate::source::ContextInUse, String>> {
        self.context.clone()
    }

    /// LangGraph runs the graph: it continues a 0.2 thread as LangGraph 1.2 does.
    fn continues_older_formats(&self) -> bool {
        true
    }

    fn reload(&mut self) -> Result<String, SourceError> {
        self.reload_bridge()
    }

    fn code_changed(&mut self) -> bool {
        self.files_changed()
    }

    fn set_replay(&mut self, mode: crate::replay::ReplayMode, record: bool) {
        self.calls = crate::bridge::calls::CallSettings { mode, record };
    }

    fn replay_mode(&self) -> crate::replay::ReplayMode {
        self.calls.mode
    }
}

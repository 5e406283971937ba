//! `PythonSource::langgraph_states`: LangGraph's own `get_state_history` of a thread, over the
//! checkpoint database opened read-only by the bridge (superstep_inspect.py) — the file and its
//! directory stay byte-identical.

use super::super::protocol::{Event, Request};
use super::PythonSource;
use crate::snapshot::langgraph::LangGraphState;
use crate::source::SourceError;
use std::path::Path;

impl PythonSource {
    /// Every checkpoint of `(thread, ns)` in `db` as LangGraph reads it with this graph, newest
    /// first (at most `limit`).
    pub fn langgraph_states(
        &mut self,
        db: &Path,
        thread: &str,
        ns: &str,
        limit: Option<usize>,
    ) -> Result<Vec<LangGraphState>, SourceError> {
        let db = if crate::store::Store::is_server(db) {
            db.display().to_string()
        } else {
            std::path::absolute(db)
                .unwrap_or_else(|_| db.to_path_buf())
                .display()
                .to_string()
        };
        let p = self.ensure()?;
        let id = p.id();
        p.send(&Request::States {
            id,
            db,
            thread: thread.to_string(),
            ns: ns.to_string(),
            limit,
        })
        .map_err(|e| SourceError::message(e, ""))?;
        let Event::States { entries, .. } = self.wait_simple(id)? else {
            return Err(SourceError::message("unexpected answer to states", ""));
        };
        entries
            .into_iter()
            .map(|e| {
                let values = e
                    .values
                    .into_iter()
                    .map(|(k, v)| v.decode().map(|v| (k, v)))
                    .collect::<Result<Vec<_>, String>>()
                    .map_err(|m| SourceError::message(m, ""))?;
                Ok(LangGraphState {
                    checkpoint_id: e.checkpoint_id,
                    next: e.next,
                    values,
                    root: e.root,
                })
            })
            .collect()
    }
}

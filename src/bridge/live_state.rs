//! LangGraph's own `get_state` of a checkpoint, through the bridge: what superstep shows for a
//! checkpoint it does not read itself (a pickled one — unpickling runs code, and LangGraph does it
//! with the app's own serializer).

use super::protocol::{Event, Request};
use super::source::PythonSource;
use crate::source::SourceError;
use crate::value::{to_view, ViewOptions};
use serde_json::Value as Json;

impl PythonSource {
    /// The values (JSON view, every reducer applied) and next nodes LangGraph's `get_state`
    /// gives for `checkpoint` of `thread` (`None`: the latest).
    pub fn get_state(
        &mut self,
        thread: &str,
        checkpoint: Option<&str>,
    ) -> Result<(Json, Vec<String>), SourceError> {
        let p = self.ensure()?;
        let id = p.id();
        p.send(&Request::GetState {
            id,
            thread: thread.to_string(),
            ns: String::new(),
            checkpoint: checkpoint.map(str::to_string),
        })
        .map_err(|e| SourceError::message(e, ""))?;
        match self.wait_simple(id)? {
            Event::State { values, next, .. } => {
                let mut out = serde_json::Map::new();
                for (k, v) in values {
                    let v = v.decode().map_err(|e| SourceError::message(e, ""))?;
                    out.insert(k, to_view(&v, ViewOptions::default()));
                }
                Ok((Json::Object(out), next))
            }
            other => Err(SourceError::message(
                format!("unexpected answer to get_state: {other:?}"),
                "",
            )),
        }
    }
}

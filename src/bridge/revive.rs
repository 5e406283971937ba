//! The store doctor's question to a Python graph (`superstep check`): would its serializer —
//! the graph's own checkpointer's, else LangGraph's default `JsonPlusSerializer`, with its
//! allow-lists and `LANGGRAPH_STRICT_MSGPACK` — give back an instance of each class the store
//! holds? One `revive` request (protocol `Request::Revive`, `doctor_revive` in bridge.py) for
//! all of them; nothing is run.

use super::protocol::{Event, Request, WireClass};
use super::PythonSource;
use crate::source::SourceError;

/// Classes per request: a store can hold many distinct values.
const BATCH: usize = 2000;

impl PythonSource {
    pub(super) fn revive(
        &mut self,
        classes: &[(i8, Vec<u8>)],
    ) -> Result<Vec<Option<String>>, SourceError> {
        let mut out = Vec::with_capacity(classes.len());
        for chunk in classes.chunks(BATCH) {
            let p = self.ensure()?;
            let id = p.id();
            let wire = chunk
                .iter()
                .map(|(code, data)| WireClass {
                    code: *code,
                    hex: data.iter().map(|b| format!("{b:02x}")).collect(),
                })
                .collect();
            p.send(&Request::Revive { id, classes: wire })
                .map_err(|e| SourceError::message(e, ""))?;
            match self.wait_simple(id)? {
                Event::Revived { problems, .. } if problems.len() == chunk.len() => {
                    out.extend(problems)
                }
                other => {
                    return Err(SourceError::message(
                        format!("the bridge answered revive with {other:?}"),
                        "",
                    ))
                }
            }
        }
        Ok(out)
    }
}

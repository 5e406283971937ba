//! `PythonSource`'s run settings: the user's `RunnableConfig` fields and the runtime context,
//! checked by the bridge against the graph's `context_schema` (LangGraph's own coercion) before
//! anything runs, then sent with every run and update.

use super::super::protocol::{Event, Request};
use super::PythonSource;
use crate::source::{ContextInUse, RunSettings, SourceError};
use serde_json::Value as Json;

impl PythonSource {
    /// Ask the bridge what context a run would get (`None`: none given).
    fn check_context(&mut self, given: Option<Json>) -> Result<ContextInUse, SourceError> {
        let p = self.ensure()?;
        let id = p.id();
        p.send(&Request::CheckContext { id, context: given })
            .map_err(|e| SourceError::message(e, ""))?;
        match self.wait_simple(id)? {
            Event::Context {
                value,
                built,
                schema,
                ..
            } => Ok(ContextInUse {
                schema,
                value,
                built,
            }),
            other => Err(SourceError::message(
                format!("unexpected answer to check_context: {other:?}"),
                "",
            )),
        }
    }

    /// At load: a graph with a `context_schema` gets the schema's defaults (as `langgraph dev`
    /// sends `{}`), or — when a required field has none — runs are refused until one is given.
    pub(super) fn check_default_context(&mut self) -> Result<(), SourceError> {
        if self.info.context_schema.is_none() {
            return Ok(());
        }
        self.context = Some(match self.check_context(None) {
            Ok(c) => Ok(c),
            Err(e) if self.gone.is_none() => Err(no_context(&e.to_string())),
            Err(e) => return Err(e),
        });
        Ok(())
    }

    pub(super) fn apply_settings(
        &mut self,
        settings: &RunSettings,
    ) -> Result<Vec<String>, SourceError> {
        let mut notes = Vec::new();
        match (&settings.context, &self.info.context_schema) {
            (None, None) => self.context = None,
            (None, Some(_)) => {
                let c = self
                    .check_context(None)
                    .map_err(|e| SourceError::message(no_context(&e.to_string()), e.hint()))?;
                notes.push(format!("context: {}", c.line()));
                self.context = Some(Ok(c));
            }
            (Some(given), _) => {
                let c = self.check_context(Some(given.clone()))?;
                self.context = Some(Ok(c));
            }
        }
        self.settings = settings.clone();
        Ok(notes)
    }

    /// What a run sends besides its input: the config the user set, and the context (the one
    /// given, or `{}` for the schema's defaults). Refused while the context is wrong.
    pub(super) fn run_settings(&self) -> Result<(Option<Json>, Option<Json>), SourceError> {
        let context = match &self.context {
            None => self.settings.context.clone(),
            Some(Ok(_)) => Some(
                self.settings
                    .context
                    .clone()
                    .unwrap_or_else(|| Json::Object(Default::default())),
            ),
            Some(Err(why)) => {
                return Err(SourceError::message(
                    why.clone(),
                    "give the context: --context JSON (the TUI: :context {…})",
                ))
            }
        };
        Ok((self.settings.config_json(), context))
    }
}

/// The schema cannot be built from its defaults and no context was given.
fn no_context(why: &str) -> String {
    format!("{why}: no --context was given and its defaults do not make one")
}

/// The app compiled its own store in: say that runs get LangGraph's own store on the database
/// instead (as `langgraph dev` gives every graph its store). Nothing is said when nothing will
/// run (`db: None`) or when langgraph.json's `store.path` names the app's own store.
pub(super) fn store_warning(
    reference: &super::PythonRef,
    info: &super::LoadInfo,
    db: Option<&std::path::Path>,
) -> Option<String> {
    let had = info.had_store.as_deref()?;
    let db = db?;
    if reference
        .store
        .as_ref()
        .is_some_and(|s| s.get("path").is_some())
    {
        return None;
    }
    let ours = if crate::store::Store::is_server(db) {
        "PostgresStore on the chosen database"
    } else {
        "SqliteStore on the chosen file"
    };
    Some(format!(
        "{}: the graph was compiled with its own store ({had}); superstep gives it LangGraph's {ours} instead, so memory persists between runs (as langgraph dev gives every graph its store)",
        reference.label
    ))
}

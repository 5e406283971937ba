//! Effects for what a run is given besides its input: the runtime context (`:context`) and
//! LangGraph's store kept in the DB (`:store`).

use super::super::action::Action;
use super::Runtime;
use crate::store::items::ItemQuery;

/// Items shown at most in the Store view.
pub const STORE_ITEMS: usize = 2_000;

impl Runtime<'_> {
    /// LangGraph's store items in (and under) `prefix`, read through the TUI's read connection:
    /// nothing is created in a DB without a store.
    pub(super) fn load_store(&self, prefix: Option<Vec<String>>) -> Vec<Action> {
        let q = ItemQuery {
            prefix: prefix.clone(),
            key: None,
            limit: STORE_ITEMS,
        };
        match self.store.store_items(&q) {
            Ok(items) => vec![Action::StoreLoaded { prefix, items }],
            Err(e) => vec![Action::Failed {
                error: e.to_string(),
                hint: String::new(),
            }],
        }
    }

    /// `:context JSON`: checked against the graph's `context_schema` by the source; kept for
    /// every later run when it fits.
    pub(super) fn set_context(&mut self, text: &str) -> Vec<Action> {
        let fail = |error: String, hint: &str| {
            vec![Action::Failed {
                error,
                hint: hint.into(),
            }]
        };
        if !self.stepping() {
            return fail(
                "no graph runs here: the context is for runs (open a Python graph)".into(),
                "",
            );
        }
        let settings = match self.settings.with_context(text) {
            Ok(s) => s,
            Err(e) => return fail(e, "e.g. :context {\"user_id\": \"u1\"}"),
        };
        let src = self.source.as_mut().expect("stepping");
        if let Err(e) = src.configure(&settings) {
            return fail(e.to_string(), &e.hint());
        }
        self.settings = settings;
        match src.context_in_use() {
            Some(Ok(c)) => vec![Action::ContextSet(c)],
            Some(Err(e)) => fail(e, ""),
            None => fail("the graph took no context".into(), ""),
        }
    }
}

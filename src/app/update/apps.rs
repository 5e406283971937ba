//! `:store` (LangGraph's store kept in the DB: namespaces → keys → values, in the viewer) and
//! `:context` (the runtime context runs get: shown, or set for every later run).

use super::say;
use crate::app::action::Effect;
use crate::app::state::*;
use crate::app::viewer::{Section, Viewer};
use crate::source::ContextInUse;
use crate::store::items::{ns_text, parse_namespace, Item};

pub(super) fn store_command(s: &mut AppState, arg: &str) -> Vec<Effect> {
    if arg.is_empty() {
        return vec![Effect::LoadStore { prefix: None }];
    }
    match parse_namespace(arg) {
        Ok(p) => vec![Effect::LoadStore { prefix: Some(p) }],
        Err(e) => {
            say(s, Level::Error, e);
            vec![]
        }
    }
}

/// The Store view: one heading per namespace (with its item count), then each item's value
/// under its key — foldable, searchable, copyable like any value.
pub(super) fn store_loaded(
    s: &mut AppState,
    prefix: Option<Vec<String>>,
    items: Option<Vec<Item>>,
) -> Vec<Effect> {
    let Some(items) = items else {
        say(
            s,
            Level::Info,
            "no LangGraph store in this DB (SqliteStore / PostgresStore make their \"store\" table when a graph first uses the store)",
        );
        return vec![];
    };
    let under = prefix
        .as_ref()
        .map(|p| format!(" in {}", ns_text(p)))
        .unwrap_or_default();
    if items.is_empty() {
        say(s, Level::Info, format!("the store holds no item{under}"));
        return vec![];
    }
    let mut sections = Vec::new();
    let spaces = {
        let mut v: Vec<&Vec<String>> = items.iter().map(|i| &i.namespace).collect();
        v.dedup();
        v.len()
    };
    let mut i = 0;
    while i < items.len() {
        let ns = &items[i].namespace;
        let n = items[i..].iter().take_while(|x| &x.namespace == ns).count();
        sections.push(Section::Text(vec![format!(
            "{}  ({n} item{})",
            ns_text(ns),
            if n == 1 { "" } else { "s" }
        )]));
        for it in &items[i..i + n] {
            sections.push(Section::Value {
                label: format!("{}  · {}", it.key, it.updated_at),
                value: it.value.clone(),
            });
        }
        i += n;
    }
    let title = format!(
        "Store{under} · {} item{} in {spaces} namespace{}{}",
        items.len(),
        if items.len() == 1 { "" } else { "s" },
        if spaces == 1 { "" } else { "s" },
        if items.len() >= crate::app::effects::STORE_ITEMS {
            " (first ones)"
        } else {
            ""
        }
    );
    let (w, h) = s.viewer_area();
    s.modal = Some(Modal::Viewer(Box::new(Viewer::new(title, sections, w, h))));
    vec![]
}

pub(super) fn context_command(s: &mut AppState, arg: &str) -> Vec<Effect> {
    if !arg.is_empty() {
        return vec![Effect::SetContext {
            text: arg.to_string(),
        }];
    }
    match &s.context {
        None => say(
            s,
            Level::Info,
            "no context: the graph declares no context_schema (:context {…} gives one anyway)",
        ),
        Some(Err(e)) => {
            let e = e.clone();
            say(s, Level::Error, format!("{e} — :context {{…}} gives it"));
        }
        Some(Ok(c)) => {
            let title = format!(
                "Runtime context{}{}",
                c.schema
                    .as_deref()
                    .map(|n| format!(" · {n}"))
                    .unwrap_or_default(),
                if c.built {
                    " · built from its defaults (:context {…} sets it)"
                } else {
                    " · :context {…} changes it"
                }
            );
            let (w, h) = s.viewer_area();
            let v = Viewer::new(
                title,
                vec![Section::Value {
                    label: "context".into(),
                    value: c.value.clone(),
                }],
                w,
                h,
            );
            s.modal = Some(Modal::Viewer(Box::new(v)));
        }
    }
    vec![]
}

pub(super) fn context_set(s: &mut AppState, c: ContextInUse) -> Vec<Effect> {
    say(
        s,
        Level::Info,
        format!("context for every later run: {}", c.line()),
    );
    s.context = Some(Ok(c));
    vec![]
}

/// The context in a few characters for the status line: `Context{"user_id":"u1",…}`.
pub fn context_short(c: &Option<Result<ContextInUse, String>>, max: usize) -> Option<String> {
    match c.as_ref()? {
        Err(_) => Some("context missing (:context)".into()),
        Ok(c) => {
            let text = format!("{}{}", c.schema.as_deref().unwrap_or(""), c.value);
            Some(if crate::text::width(&text) > max {
                format!("{}…", crate::text::head(&text, max.saturating_sub(1)))
            } else {
                text
            })
        }
    }
}

//! What a run is given besides its input: the `RunnableConfig` fields the user set (`--config`,
//! `--recursion-limit`) and the runtime context (`--context`, `--context-file`). Only what the
//! user set is ever sent: LangGraph's defaults stay LangGraph's (its recursion limit is 10,007 in
//! 1.2.24, not superstep's choice).

use serde_json::{Map, Value as Json};
use std::path::Path;

/// The `RunnableConfig` keys `--config` accepts (callbacks are objects, not JSON).
pub const CONFIG_KEYS: &[&str] = &[
    "configurable",
    "tags",
    "metadata",
    "recursion_limit",
    "max_concurrency",
    "run_name",
];

/// `configurable` keys superstep sets itself (from `-t`, `--checkpoint`, `--ns`).
const RESERVED: &[(&str, &str)] = &[
    ("thread_id", "-t/--thread"),
    ("checkpoint_id", "--checkpoint"),
    ("checkpoint_ns", "--ns"),
    ("checkpoint_map", "--ns"),
];

/// The run settings of a session: sent with every run, resume, replay and update.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunSettings {
    /// The `RunnableConfig` fields the user set, as given (empty: none).
    pub config: Map<String, Json>,
    /// The runtime context the user gave (`None`: none given — a Python graph with a
    /// `context_schema` then gets the schema's defaults, as `langgraph dev` builds it).
    pub context: Option<Json>,
}

/// `--flag`: invalid JSON at line L column C, or the parsed value.
fn json_arg(flag: &str, text: &str) -> Result<Json, String> {
    serde_json::from_str(text).map_err(|e| {
        format!(
            "{flag}: invalid JSON at line {} column {}: {e}",
            e.line(),
            e.column()
        )
    })
}

impl RunSettings {
    /// From the command line: `--config JSON`, `--recursion-limit N` (the same field: both
    /// given must agree), `--context JSON` or `--context-file PATH`.
    pub fn from_args(
        config: Option<&str>,
        recursion_limit: Option<i64>,
        context: Option<&str>,
        context_file: Option<&Path>,
    ) -> Result<RunSettings, String> {
        let mut s = RunSettings::default();
        if let Some(text) = config {
            s.config = check_config(json_arg("--config", text)?)?;
        }
        if let Some(n) = recursion_limit {
            match s.config.get("recursion_limit") {
                Some(v) if v.as_i64() != Some(n) => {
                    return Err(format!(
                        "--recursion-limit {n} and --config recursion_limit {v} disagree: give one"
                    ))
                }
                _ => {}
            }
            if n < 1 {
                return Err(format!("--recursion-limit {n}: LangGraph needs at least 1"));
            }
            s.config.insert("recursion_limit".into(), Json::from(n));
        }
        s.context = match (context, context_file) {
            (Some(_), Some(_)) => return Err("give --context or --context-file, not both".into()),
            (Some(text), None) => Some(check_context(json_arg("--context", text)?, "--context")?),
            (None, Some(p)) => {
                let text = std::fs::read_to_string(p)
                    .map_err(|e| format!("--context-file {}: {e}", p.display()))?;
                let flag = format!("--context-file {}", p.display());
                Some(check_context(json_arg(&flag, &text)?, &flag)?)
            }
            (None, None) => None,
        };
        Ok(s)
    }

    /// The recursion limit the user set, if any.
    pub fn recursion_limit(&self) -> Option<i64> {
        self.config.get("recursion_limit").and_then(Json::as_i64)
    }

    /// The config to send (`None`: the user set nothing).
    pub fn config_json(&self) -> Option<Json> {
        (!self.config.is_empty()).then(|| Json::Object(self.config.clone()))
    }

    /// The settings with the context `:context JSON` gave.
    pub fn with_context(&self, text: &str) -> Result<RunSettings, String> {
        let mut s = self.clone();
        s.context = Some(check_context(json_arg(":context", text)?, ":context")?);
        Ok(s)
    }
}

/// The context a run gets, as the graph's `context_schema` made it.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextInUse {
    /// The schema's class name (`None`: the graph declares none; the context is passed as is).
    pub schema: Option<String>,
    /// Its fields and values (environment defaults resolved).
    pub value: Json,
    /// Built from the schema's defaults: no context was given.
    pub built: bool,
}

impl ContextInUse {
    /// One line for the user: `Context {"model": "…"} (built from its defaults)`.
    pub fn line(&self) -> String {
        format!(
            "{}{}{}",
            self.schema
                .as_deref()
                .map(|s| format!("{s} "))
                .unwrap_or_default(),
            self.value,
            if self.built {
                " (built from its defaults, as langgraph dev does; --context / :context to set it)"
            } else {
                ""
            }
        )
    }
}

/// Settings for a graph spec: superstep's engine takes a recursion limit, nothing else.
pub fn spec_only(s: &RunSettings) -> Result<(), crate::source::SourceError> {
    let refuse = |what: &str| {
        Err(crate::source::SourceError::message(
            format!(
                "{what}: a graph spec has no {}",
                if what == "--context" {
                    "runtime context (context_schema is a Python graph's)"
                } else {
                    "RunnableConfig fields but recursion_limit"
                }
            ),
            "",
        ))
    };
    if s.context.is_some() {
        return refuse("--context");
    }
    if s.config.keys().any(|k| k != "recursion_limit") {
        return refuse("--config");
    }
    Ok(())
}

fn check_context(j: Json, flag: &str) -> Result<Json, String> {
    match j {
        Json::Object(_) => Ok(j),
        other => Err(format!(
            "{flag}: expected a JSON object of the context_schema's fields, got {other}"
        )),
    }
}

/// `--config`: an object of `RunnableConfig` fields, each of its type.
pub fn check_config(j: Json) -> Result<Map<String, Json>, String> {
    let Json::Object(m) = j else {
        return Err(format!(
            "--config: expected a JSON object of RunnableConfig fields ({}), got {j}",
            CONFIG_KEYS.join(", ")
        ));
    };
    for (k, v) in &m {
        let ok = match k.as_str() {
            "configurable" | "metadata" => v.is_object(),
            "tags" => v.as_array().is_some_and(|a| a.iter().all(Json::is_string)),
            "recursion_limit" | "max_concurrency" => v.as_i64().is_some_and(|n| n >= 1),
            "run_name" => v.is_string(),
            _ => {
                return Err(format!(
                    "--config: unknown RunnableConfig field {k:?} (superstep passes: {})",
                    CONFIG_KEYS.join(", ")
                ))
            }
        };
        if !ok {
            let want = match k.as_str() {
                "configurable" | "metadata" => "an object",
                "tags" => "a list of strings",
                "run_name" => "a string",
                _ => "an integer of at least 1",
            };
            return Err(format!("--config: {k}: expected {want}, got {v}"));
        }
    }
    if let Some(c) = m.get("configurable").and_then(Json::as_object) {
        for (key, flag) in RESERVED {
            if c.contains_key(*key) {
                return Err(format!(
                    "--config: configurable.{key} is superstep's to set: use {flag}"
                ));
            }
        }
        if let Some(k) = c.keys().find(|k| k.starts_with("__")) {
            return Err(format!(
                "--config: configurable.{k}: keys starting with \"__\" are LangGraph's own"
            ));
        }
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(
        config: Option<&str>,
        rl: Option<i64>,
        context: Option<&str>,
    ) -> Result<RunSettings, String> {
        RunSettings::from_args(config, rl, context, None)
    }

    #[test]
    fn nothing_set_sends_nothing() {
        let s = args(None, None, None).unwrap();
        assert_eq!(s.config_json(), None);
        assert_eq!(s.context, None);
        assert_eq!(s.recursion_limit(), None);
    }

    #[test]
    fn config_fields_are_checked_and_kept_as_given() {
        let s = args(
            Some(r#"{"configurable": {"user_id": "u1"}, "tags": ["a"], "max_concurrency": 2}"#),
            None,
            None,
        )
        .unwrap();
        assert_eq!(
            s.config_json().unwrap(),
            serde_json::json!({"configurable": {"user_id": "u1"}, "tags": ["a"], "max_concurrency": 2})
        );
        let e = args(Some(r#"{"callbacks": []}"#), None, None).unwrap_err();
        assert!(
            e.contains("unknown RunnableConfig field \"callbacks\""),
            "{e}"
        );
        let e = args(Some(r#"{"tags": "a"}"#), None, None).unwrap_err();
        assert_eq!(e, "--config: tags: expected a list of strings, got \"a\"");
        let e = args(Some(r#"{"configurable": {"thread_id": "x"}}"#), None, None).unwrap_err();
        assert!(e.contains("use -t/--thread"), "{e}");
        let e = args(Some("[1]"), None, None).unwrap_err();
        assert!(e.starts_with("--config: expected a JSON object"), "{e}");
        let e = args(Some("{"), None, None).unwrap_err();
        assert!(e.starts_with("--config: invalid JSON at line 1"), "{e}");
    }

    #[test]
    fn recursion_limit_flag_is_the_config_field() {
        let s = args(None, Some(7), None).unwrap();
        assert_eq!(
            s.config_json().unwrap(),
            serde_json::json!({"recursion_limit": 7})
        );
        assert!(args(Some(r#"{"recursion_limit": 7}"#), Some(7), None).is_ok());
        let e = args(Some(r#"{"recursion_limit": 8}"#), Some(7), None).unwrap_err();
        assert!(e.contains("disagree"), "{e}");
        assert!(args(None, Some(0), None).is_err());
    }

    #[test]
    fn context_is_an_object() {
        let s = args(None, None, Some(r#"{"user_id": "u1"}"#)).unwrap();
        assert_eq!(s.context, Some(serde_json::json!({"user_id": "u1"})));
        let e = args(None, None, Some("3")).unwrap_err();
        assert!(e.starts_with("--context: expected a JSON object"), "{e}");
        let e = s.with_context("[").unwrap_err();
        assert!(e.starts_with(":context: invalid JSON"), "{e}");
        assert_eq!(
            s.with_context(r#"{"user_id": "u2"}"#).unwrap().context,
            Some(serde_json::json!({"user_id": "u2"}))
        );
    }
}

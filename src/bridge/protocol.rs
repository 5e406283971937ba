//! The bridge protocol, version [`PROTOCOL`]: one JSON object per line, each typed by `"type"`.
//! Requests carry an `id`; answers and events carry `re`, the id they belong to. Values cross as
//! LangGraph's own serialisation (`{"type": "msgpack", "hex": ...}`, what `dumps_typed` makes),
//! decoded here exactly like a row of the checkpoint file.

use crate::source::{Pause, StepReport, TaskOutcome, TaskReport};
use crate::value::{Interrupt, Typed};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// Bumped on any incompatible change; the Python side says which one it speaks in `hello`.
/// 2: `run` takes `inner`, breakpoints inside subgraphs (absent = none, as in 1); a fresh run's
/// `start` and `update_state` take `ns`, a subgraph's namespace (absent = the root).
/// 3: `run` takes `config` (the RunnableConfig fields the user set, absent = none) and `context`
/// (absent = none) instead of an always-sent `recursion_limit`; `update_state` takes `config`;
/// `check_context` / `context`; `loaded` carries `context_schema`.
/// 4: `load` takes `store` (langgraph.json's `store` key); every run gets LangGraph's own store
/// on the checkpoint database; `loaded` carries `had_store`.
/// 5: `states` — LangGraph's own `get_state_history` over a database opened read-only (inspection
/// with `--graph`).
pub const PROTOCOL: u32 = 5;

/// superstep -> bridge.
// one message at a time: boxing the large variants would buy nothing
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Request {
    Load {
        id: u64,
        #[serde(rename = "ref")]
        target: WireRef,
        /// The checkpoint file (opened by LangGraph's SqliteSaver on the first run), or a Postgres
        /// URL (PostgresSaver).
        db: Option<String>,
        env: std::collections::BTreeMap<String, String>,
        paths: Vec<String>,
        /// langgraph.json's `store` (`index`, `ttl`, `path`): how the run's store is made.
        #[serde(skip_serializing_if = "Option::is_none")]
        store: Option<Json>,
        /// Where model and tool calls are recorded (`replay::store::Location`); absent: not
        /// recorded.
        #[serde(skip_serializing_if = "Option::is_none")]
        recordings: Option<WireRecordings>,
    },
    /// Create the saver (and its schema) now instead of on the first run.
    Open {
        id: u64,
    },
    Run {
        id: u64,
        thread: String,
        start: WireStart,
        steps: Option<usize>,
        before: Option<WireBreaks>,
        after: Option<WireBreaks>,
        /// RunnableConfig fields the user set (`configurable`, `tags`, `recursion_limit` ...),
        /// merged under superstep's `configurable` keys; absent: LangGraph's defaults.
        #[serde(skip_serializing_if = "Option::is_none")]
        config: Option<Json>,
        /// The runtime context (`stream(..., context=)`, coerced into the graph's
        /// `context_schema` by LangGraph); absent: none.
        #[serde(skip_serializing_if = "Option::is_none")]
        context: Option<Json>,
        /// Breakpoints inside subgraphs, by subgraph path as LangGraph's
        /// `get_subgraphs(recurse=True)` names it (`inner`, `inner|child`): set on the compiled
        /// subgraph objects for this request (runtime breakpoints do not reach subgraphs).
        #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
        inner: std::collections::BTreeMap<String, WireInnerBreaks>,
        /// `diverge` (absent), `strict` or `off`: how recorded calls answer this run's.
        #[serde(skip_serializing_if = "Option::is_none")]
        replay: Option<String>,
        /// `false`: record nothing (absent: record).
        #[serde(skip_serializing_if = "Option::is_none")]
        record: Option<bool>,
    },
    UpdateState {
        id: u64,
        thread: String,
        /// A subgraph's namespace (`inner:<task id>`): LangGraph hands the update to that
        /// subgraph. Absent: the root.
        #[serde(skip_serializing_if = "String::is_empty")]
        ns: String,
        checkpoint: Option<String>,
        values: Json,
        as_node: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        config: Option<Json>,
    },
    GetState {
        id: u64,
        thread: String,
        ns: String,
        checkpoint: Option<String>,
    },
    /// Check a context against the graph's `context_schema` (`null`: none given — the schema's
    /// defaults, as `langgraph dev` builds it); answered by `context` or an error.
    CheckContext {
        id: u64,
        context: Option<Json>,
    },
    /// LangGraph's `get_state_history` of `(thread, ns)` in `db`, opened read-only (nothing is
    /// written, no file appears): answered by `states`.
    States {
        id: u64,
        db: String,
        thread: String,
        ns: String,
        limit: Option<usize>,
    },
    /// Abandon the run in progress (nothing is written).
    Reset {
        id: u64,
    },
    /// The store doctor (`superstep check`): would the graph's serializer revive these stored
    /// classes? Each is a msgpack extension as stored (code, hex of its payload); nothing is
    /// run. Answered by `revived`.
    Revive {
        id: u64,
        classes: Vec<WireClass>,
    },
    /// Interrupt the run in progress (SIGINT to the bridge's main thread).
    Cancel,
    Shutdown {
        id: u64,
    },
}

/// A stored msgpack extension naming a class (`JsonPlusSerializer`'s codes 0-5).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct WireClass {
    pub code: i8,
    pub hex: String,
}

/// Where the recorder keeps its rows: `{"kind": "sqlite", "path": ...}` or
/// `{"kind": "postgres", "url": ...}`.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WireRecordings {
    Sqlite { path: String },
    Postgres { url: String },
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct WireRef {
    pub file: Option<String>,
    pub module: Option<String>,
    pub attr: String,
}

// one short-lived message per run: boxing the fresh start would buy nothing
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WireStart {
    Continue,
    Fresh {
        input: WireInput,
        checkpoint: Option<String>,
        /// The namespace of `checkpoint` (a subgraph's: the run starts from that checkpoint's
        /// config). Absent: the root.
        #[serde(skip_serializing_if = "String::is_empty", default)]
        ns: String,
    },
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WireInput {
    Value {
        value: Json,
    },
    Continue,
    Command {
        update: Option<Json>,
        goto: Vec<String>,
        resume: Option<WireResume>,
    },
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(untagged)]
pub enum WireResume {
    Value { value: Json },
    Map { map: Vec<(String, Json)> },
}

/// The breakpoints of one subgraph (`None`: only its compiled-in ones).
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct WireInnerBreaks {
    pub before: Option<WireBreaks>,
    pub after: Option<WireBreaks>,
}

/// `"*"` or node names.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(untagged)]
pub enum WireBreaks {
    All(String),
    Nodes(Vec<String>),
}

/// bridge -> superstep.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    Hello(Hello),
    Loaded {
        re: u64,
        name: Option<String>,
        #[serde(rename = "async")]
        is_async: bool,
        kind: String,
        topology: Json,
        had_checkpointer: Option<String>,
        /// `{name, kind, fields: [{name, type, required}]}` of the graph's `context_schema`.
        #[serde(default)]
        context_schema: Option<Json>,
        /// The app's own module files imported by the load (not the standard library's, not an
        /// installed package's): what `--watch` watches.
        #[serde(default)]
        files: Vec<String>,
        /// The store the app compiled with (replaced by LangGraph's own on the database).
        #[serde(default)]
        had_store: Option<String>,
    },
    Output(Output),
    Step {
        re: u64,
        report: WireReport,
    },
    Done {
        re: u64,
        checkpoint: Option<String>,
        error: Option<WireError>,
        suspended: bool,
    },
    Updated {
        re: u64,
        checkpoint: String,
    },
    State {
        re: u64,
        values: std::collections::BTreeMap<String, WireValue>,
        next: Vec<String>,
    },
    /// The checked context, as runs will get it (`built`: from the schema's defaults).
    Context {
        re: u64,
        value: Json,
        built: bool,
        schema: Option<String>,
    },
    /// LangGraph's snapshots of the checkpoints `states` asked for, newest first.
    States {
        re: u64,
        entries: Vec<WireState>,
    },
    Ok {
        re: u64,
    },
    /// The answer to `revive`: for each class, why the serializer would not give back an
    /// instance of it (`None`: it would).
    Revived {
        re: u64,
        problems: Vec<Option<String>>,
    },
    Bye {
        re: u64,
    },
    Error {
        re: Option<u64>,
        kind: String,
        message: String,
        #[serde(default)]
        hint: String,
        #[serde(default)]
        frame: Option<String>,
        /// The traceback as Python prints it (the bridge's own frames left out).
        #[serde(default)]
        traceback: Option<String>,
    },
    /// The nodes of the superstep about to run (the TUI's spinner names them).
    Running {
        re: u64,
        nodes: Vec<String>,
    },
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Hello {
    pub protocol: u32,
    pub pid: u32,
    pub python: String,
    pub executable: String,
    #[serde(default)]
    pub langgraph: Option<String>,
    #[serde(default, rename = "langgraph-checkpoint-sqlite")]
    pub checkpoint_sqlite: Option<String>,
    /// Importing langgraph failed: why.
    #[serde(default)]
    pub error: Option<String>,
}

/// Text a node (or the module import, `task_id: None`) printed or logged.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Output {
    pub stream: String,
    pub text: String,
    #[serde(default)]
    pub task_id: Option<String>,
    #[serde(default)]
    pub node: Option<String>,
    #[serde(default)]
    pub ns: Option<String>,
    #[serde(default)]
    pub attempt: Option<u32>,
}

/// One checkpoint as LangGraph's `get_state_history` reads it.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct WireState {
    pub checkpoint_id: String,
    pub next: Vec<String>,
    /// `[key, value]` in the order of LangGraph's values.
    pub values: Vec<(String, WireValue)>,
    pub root: bool,
}

/// A value as LangGraph serialises it.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct WireValue {
    #[serde(rename = "type")]
    pub type_: String,
    pub hex: String,
}

impl WireValue {
    pub fn decode(&self) -> Result<rmpv::Value, String> {
        let bytes = hex_decode(&self.hex).ok_or("bad hex from the bridge")?;
        Typed::decode(&self.type_, &bytes)
            .map(Typed::into_value)
            .map_err(|e| e.to_string())
    }
}

fn hex_decode(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct WireError {
    pub kind: String,
    pub message: String,
    /// `file:line in func` of the app's own innermost frame.
    #[serde(default)]
    pub frame: Option<String>,
    /// What to do about it (a failed save says what became of the step).
    #[serde(default)]
    pub hint: String,
    #[serde(default)]
    pub traceback: Option<String>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct WireReport {
    pub step: Option<i64>,
    pub tasks: Vec<WireTask>,
    pub checkpoint: Option<String>,
    pub pause: Option<WirePause>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct WireTask {
    pub id: String,
    pub name: String,
    /// LangGraph's task path (`["__pregel_pull", "b"]`; tuples as lists).
    pub path: Json,
    pub outcome: WireOutcome,
    pub attempts: u32,
    /// The model and tool calls the task made (recorded / live / diverged).
    #[serde(default)]
    pub calls: Vec<crate::replay::Call>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum WireOutcome {
    /// `"done"` / `"reused"`.
    Word(String),
    Interrupt {
        interrupt: WireInterrupt,
    },
    Error {
        error: String,
        /// `file:line in func` of the app's own innermost frame.
        #[serde(default)]
        at: Option<String>,
        #[serde(default)]
        traceback: Option<String>,
    },
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct WireInterrupt {
    pub id: String,
    pub value: WireValue,
    #[serde(default)]
    pub node: Option<String>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WirePause {
    Done,
    Before { nodes: Vec<String> },
    After { nodes: Vec<String> },
    Interrupt { interrupts: Vec<WireInterrupt> },
    Error { node: String, error: String },
    RecursionLimit { limit: i64 },
}

fn interrupt(i: &WireInterrupt) -> Result<Interrupt, String> {
    Ok(Interrupt {
        value: i.value.decode()?,
        id: i.id.clone(),
        response_schema: rmpv::Value::Nil,
    })
}

impl WireReport {
    /// The engine's report type, so the TUI and the CLI show a Python step like a spec's.
    pub fn to_step_report(&self) -> Result<StepReport, String> {
        let mut tasks = Vec::new();
        for t in &self.tasks {
            let mut traceback = None;
            let outcome = match &t.outcome {
                WireOutcome::Word(w) if w == "reused" => TaskOutcome::Reused,
                WireOutcome::Word(w) if w == "done" => TaskOutcome::Done,
                WireOutcome::Word(w) => return Err(format!("unknown task outcome {w:?}")),
                WireOutcome::Interrupt { interrupt: i } => TaskOutcome::Interrupted(interrupt(i)?),
                WireOutcome::Error {
                    error,
                    at,
                    traceback: tb,
                } => {
                    traceback = error_trace(at.as_deref(), tb.as_deref());
                    TaskOutcome::Error(error.clone())
                }
            };
            tasks.push(TaskReport {
                id: t.id.clone(),
                name: t.name.clone(),
                path: path_parts(&t.path),
                traceback,
                outcome,
                writes: Vec::new(),
                attempts: t.attempts,
                calls: Vec::new(),
                effects: Vec::new(),
            });
        }
        let pause = match &self.pause {
            None => None,
            Some(WirePause::Done) => Some(Pause::Done),
            Some(WirePause::Before { nodes }) => Some(Pause::Before(nodes.clone())),
            Some(WirePause::After { nodes }) => Some(Pause::After(nodes.clone())),
            Some(WirePause::Interrupt { interrupts }) => Some(Pause::Interrupt(
                interrupts
                    .iter()
                    .map(|i| Ok((i.node.clone().unwrap_or_default(), interrupt(i)?)))
                    .collect::<Result<Vec<_>, String>>()?,
            )),
            Some(WirePause::Error { node, error }) => {
                Some(Pause::Error(node.clone(), error.clone()))
            }
            Some(WirePause::RecursionLimit { limit }) => Some(Pause::RecursionLimit(*limit)),
        };
        Ok(StepReport {
            step: self.step.unwrap_or(-1),
            tasks,
            checkpoint: self.checkpoint.clone(),
            pause,
        })
    }
}

/// A task path from JSON (a string from an older bridge: one part).
fn path_parts(j: &Json) -> Vec<crate::ids::PathPart> {
    use crate::ids::PathPart;
    fn one(j: &Json) -> PathPart {
        match j {
            Json::Bool(b) => PathPart::Bool(*b),
            Json::Number(n) => PathPart::Int(n.as_i64().unwrap_or_default()),
            Json::Array(a) => PathPart::Nested(a.iter().map(one).collect()),
            Json::String(s) => PathPart::Str(s.clone()),
            other => PathPart::Str(other.to_string()),
        }
    }
    match j {
        Json::Array(a) => a.iter().map(one).collect(),
        other => vec![one(other)],
    }
}

/// What a traceback view shows: `at FILE:LINE in FUNC` (the app's own frame) first, then the
/// traceback as Python prints it.
pub fn error_trace(at: Option<&str>, traceback: Option<&str>) -> Option<String> {
    match (at, traceback) {
        (None, None) => None,
        (Some(a), None) => Some(format!("at {a}")),
        (None, Some(t)) => Some(t.to_string()),
        (Some(a), Some(t)) => Some(format!("at {a}\n{t}")),
    }
}

/// One line of the protocol.
pub fn parse_event(line: &str) -> Result<Event, String> {
    serde_json::from_str(line).map_err(|e| format!("bad message from the bridge ({e}): {line}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_typed_json_lines() {
        let r = Request::Run {
            id: 3,
            thread: "t".into(),
            start: WireStart::Fresh {
                input: WireInput::Command {
                    update: None,
                    goto: vec![],
                    resume: Some(WireResume::Map {
                        map: vec![("ab".into(), serde_json::json!(1))],
                    }),
                },
                checkpoint: None,
                ns: String::new(),
            },
            steps: Some(1),
            before: Some(WireBreaks::All("*".into())),
            after: None,
            config: None,
            context: None,
            inner: Default::default(),
            replay: None,
            record: None,
        };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"type":"run","id":3,"thread":"t","start":{"kind":"fresh","input":{"kind":"command","update":null,"goto":[],"resume":{"map":[["ab",1]]}},"checkpoint":null},"steps":1,"before":"*","after":null}"#
        );
        // breakpoints inside subgraphs: an additive field, keyed by subgraph path
        let Request::Run { mut inner, .. } = r.clone() else {
            unreachable!()
        };
        inner.insert(
            "inner|child".into(),
            WireInnerBreaks {
                before: Some(WireBreaks::Nodes(vec!["ask".into()])),
                after: Some(WireBreaks::All("*".into())),
            },
        );
        let mut r2 = r;
        if let Request::Run { inner: i, .. } = &mut r2 {
            *i = inner;
        }
        assert!(serde_json::to_string(&r2)
            .unwrap()
            .ends_with(r#""after":null,"inner":{"inner|child":{"before":["ask"],"after":"*"}}}"#));
        // the user's RunnableConfig fields and the context: sent only when set
        let mut r3 = r2.clone();
        if let Request::Run {
            config, context, ..
        } = &mut r3
        {
            *config = Some(serde_json::json!({"recursion_limit": 5}));
            *context = Some(serde_json::json!({}));
        }
        let text = serde_json::to_string(&r3).unwrap();
        assert!(
            text.contains(r#""after":null,"config":{"recursion_limit":5},"context":{},"inner""#),
            "{text}"
        );
        assert!(!serde_json::to_string(&r2).unwrap().contains("config"));
        // replay (issue 23): sent only when not the default (diverge, recording)
        if let Request::Run { replay, record, .. } = &mut r3 {
            *replay = Some("strict".into());
            *record = Some(false);
        }
        let text = serde_json::to_string(&r3).unwrap();
        assert!(
            text.ends_with(r#","replay":"strict","record":false}"#),
            "{text}"
        );
        assert_eq!(
            serde_json::to_string(&Request::Cancel).unwrap(),
            r#"{"type":"cancel"}"#
        );
    }

    #[test]
    fn a_step_reports_each_tasks_calls() {
        let line = r#"{"type": "step", "re": 4, "report": {"step": 3, "tasks": [{"id": "b81b", "name": "agent", "path": "~__pregel_pull, agent", "outcome": "done", "attempts": 1, "calls": [{"seq": 0, "task_id": "b81b", "ns": "agent:b81b", "node": "agent", "attempt": 1, "kind": "model", "name": "M", "status": "diverged", "request": "1 msgs, last human: hello", "response": "ai: hi", "latency_us": 412, "input_tokens": 10, "output_tokens": 7, "error": false, "id": 12, "checkpoint": "1f0", "run": 2, "root_task_id": "b81b", "step": 3, "ref_id": 2}]}], "checkpoint": "1f1", "pause": null}}"#;
        let Event::Step { report, .. } = parse_event(line).unwrap() else {
            panic!()
        };
        let c = &report.tasks[0].calls[0];
        assert_eq!(c.status, crate::replay::CallStatus::Diverged);
        assert_eq!(
            (c.latency_us, c.ref_id, c.run),
            (Some(412), Some(2), Some(2))
        );
    }

    #[test]
    fn a_step_report_becomes_the_engines() {
        // as the bridge sent it for a node that interrupted with "q?" (msgpack a2713f)
        let line = r#"{"type": "step", "re": 4, "report": {"step": 2, "tasks": [{"id": "b81b", "name": "b", "path": ["__pregel_pull", "b"], "outcome": {"interrupt": {"id": "eacf", "value": {"type": "msgpack", "hex": "a2713f"}}}, "attempts": 1}, {"id": "75ad", "name": "d", "path": "~__pregel_pull, d", "outcome": "reused", "attempts": 0}, {"id": "99", "name": "e", "path": ["__pregel_push", ["__pregel_pull", "a"], 2, false], "outcome": {"error": "ValueError('x')", "at": "app.py:3 in e", "traceback": "Traceback (most recent call last):\n  File \"app.py\", line 3, in e\nValueError: x"}, "attempts": 3}], "checkpoint": null, "pause": {"kind": "interrupt", "interrupts": [{"node": "b", "id": "eacf", "value": {"type": "msgpack", "hex": "a2713f"}}]}}}"#;
        let Event::Step { re, report } = parse_event(line).unwrap() else {
            panic!()
        };
        assert_eq!(re, 4);
        let r = report.to_step_report().unwrap();
        assert_eq!(r.step, 2);
        let q = Interrupt {
            value: rmpv::Value::from("q?"),
            id: "eacf".into(),
            response_schema: rmpv::Value::Nil,
        };
        assert_eq!(r.tasks[0].outcome, TaskOutcome::Interrupted(q.clone()));
        assert_eq!(r.tasks[1].outcome, TaskOutcome::Reused);
        assert_eq!(
            r.tasks[2].outcome,
            TaskOutcome::Error("ValueError('x')".into())
        );
        assert_eq!(r.tasks[2].attempts, 3);
        // the task's path as LangGraph's (a list, tuples nested), the traceback with the app's frame first
        use crate::ids::PathPart::*;
        assert_eq!(
            r.tasks[0].path,
            vec![Str("__pregel_pull".into()), Str("b".into())]
        );
        assert_eq!(
            r.tasks[2].path,
            vec![
                Str("__pregel_push".into()),
                Nested(vec![Str("__pregel_pull".into()), Str("a".into())]),
                Int(2),
                Bool(false)
            ]
        );
        assert_eq!(
            r.tasks[2].traceback.as_deref(),
            Some("at app.py:3 in e\nTraceback (most recent call last):\n  File \"app.py\", line 3, in e\nValueError: x")
        );
        assert_eq!(r.tasks[0].traceback, None);
        assert_eq!(r.pause, Some(Pause::Interrupt(vec![("b".into(), q)])));
    }

    #[test]
    fn events_parse_or_say_what_was_wrong() {
        let h = parse_event(r#"{"type":"hello","protocol":1,"pid":7,"python":"3.11.7","executable":"/v/bin/python","langgraph":"1.2.24"}"#).unwrap();
        assert!(matches!(h, Event::Hello(Hello { protocol: 1, .. })));
        let o = parse_event(r#"{"type":"output","stream":"stdout","text":"hi\n","task_id":"t1","node":"a","ns":"","attempt":2}"#).unwrap();
        assert!(matches!(
            o,
            Event::Output(Output {
                attempt: Some(2),
                ..
            })
        ));
        let e = parse_event(r#"{"type":"nonsense"}"#).unwrap_err();
        assert!(e.starts_with("bad message from the bridge"), "{e}");
        let d = parse_event(r#"{"type":"done","re":1,"checkpoint":null,"error":{"kind":"EmptyInputError","message":"EmptyInputError: Received no input for __start__","frame":null},"suspended":false}"#).unwrap();
        assert!(matches!(d, Event::Done { error: Some(_), .. }));
    }
}

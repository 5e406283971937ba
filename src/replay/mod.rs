//! Recorded replay: the model and tool calls a Python graph's nodes make, recorded per task
//! attempt by the bridge (`src/bridge/recorder.py`) beside LangGraph's rows, and answered from
//! the recording when a branch is run again (time travel, a fork by update, a retry, a resume).
//!
//! * `store` — where recordings live (a sibling SQLite file, or `superstep_call*` tables in a
//!   Postgres store) and reading, exporting and dropping them;
//! * `diff` — where a diverged call's request first differs from the recorded one.
//!
//! The Python side decides and records; this side reads: `superstep calls`, the TUI's task view
//! and the per-task `calls` of a run's report.

pub mod diff;
pub mod store;

use serde::{Deserialize, Serialize};

/// `--replay`: how a run uses the recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ReplayMode {
    /// Answer calls from the recording until the first request that differs, then go live.
    #[default]
    Diverge,
    /// Answer every call from the recording; fail at the first one that differs, naming it.
    Strict,
    /// Call the model and the tools again (still recording).
    Off,
}

impl ReplayMode {
    pub fn name(self) -> &'static str {
        match self {
            ReplayMode::Diverge => "diverge",
            ReplayMode::Strict => "strict",
            ReplayMode::Off => "off",
        }
    }
}

/// Whether a call was answered from the recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    /// Answered from the recording: the model / tool was not called.
    Recorded,
    /// Called: nothing recorded at this position (a new branch, past the recording's end).
    Live,
    /// The request differs from the recorded one here (the task's first divergence): called
    /// live (`--replay diverge`; the task's later calls are live too), or refused (`strict`).
    Diverged,
}

impl CallStatus {
    pub fn word(self) -> &'static str {
        match self {
            CallStatus::Recorded => "recorded",
            CallStatus::Live => "live",
            CallStatus::Diverged => "diverged",
        }
    }
}

/// One call of a node to a chat model / LLM (`model`) or a tool (`tool`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Call {
    /// Row id in the recording (absent before it was written).
    #[serde(default)]
    pub id: Option<i64>,
    /// The task that made it (innermost: a subgraph's task for a call inside a subgraph).
    pub task_id: String,
    /// That task's checkpoint namespace (`agent:<id>`, `inner:<id>|ask:<id>`).
    pub ns: String,
    pub node: String,
    /// 1-based attempt of the task (a retry policy runs it again).
    pub attempt: u32,
    /// The call's number within the attempt, from 0.
    pub seq: u32,
    /// `model` or `tool`.
    pub kind: String,
    /// The model (its `model_name`, or class) or the tool's name.
    pub name: String,
    pub status: CallStatus,
    /// One line each: the request (`3 msgs, last human: …`, `lookup_order({"order_id":…})`) and
    /// the answer (`ai: … → issue_refund({…})`, the tool's result, `error: …`).
    pub request: String,
    pub response: String,
    /// How long the call took in this run, in microseconds (an answer from the recording: the
    /// time to read it).
    #[serde(default)]
    pub latency_us: Option<i64>,
    #[serde(default)]
    pub input_tokens: Option<i64>,
    #[serde(default)]
    pub output_tokens: Option<i64>,
    /// The call raised (recorded errors are raised again on replay).
    #[serde(default)]
    pub error: bool,
    /// Where it sits in the recording (read from the store; absent in a run's report): the root
    /// checkpoint its root task ran from, the run (one per LangGraph `stream`), the root task, the
    /// task's superstep in its own graph, and the recorded call it was answered from or diverged
    /// from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_task_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ref_id: Option<i64>,
}

impl Call {
    /// `model CountingModel  recorded  0.1 ms  30/7 tok  3 msgs, last tool: … ⇒ ai: turn 1 → bump(…)`
    /// (unescaped: callers escape).
    pub fn line(&self) -> String {
        let mut s = format!("{} {}  {}", self.kind, self.name, self.status.word());
        if let Some(us) = self.latency_us {
            // a fixed width: the calls of a task line up
            s.push_str(&format!("  {:>9}", latency(us)));
        }
        if self.input_tokens.is_some() || self.output_tokens.is_some() {
            let n = |v: Option<i64>| v.map(|v| v.to_string()).unwrap_or_else(|| "?".into());
            s.push_str(&format!(
                "  {}/{} tok",
                n(self.input_tokens),
                n(self.output_tokens)
            ));
        }
        s.push_str(&format!("  {} ⇒ {}", self.request, self.response));
        s
    }
}

/// `0.3 ms`, `1.2 s`.
pub fn latency(us: i64) -> String {
    if us >= 1_000_000 {
        format!("{:.1} s", us as f64 / 1e6)
    } else {
        format!("{:.1} ms", us as f64 / 1e3)
    }
}

/// A call with, for a divergence, where its request differs from the recorded one.
#[derive(Debug, Clone, PartialEq)]
pub struct CallRow {
    pub call: Call,
    pub diff: Vec<diff::Difference>,
}

/// The recorded calls of these tasks of `thread` in store `db` (their own, and those of subgraph
/// tasks inside them), for the TUI's task view; nothing when nothing was recorded or the
/// recordings cannot be read (reading them is never what stops the view).
pub fn task_calls(db: &std::path::Path, thread: &str, task_ids: &[&str]) -> Vec<CallRow> {
    let Ok(Some(rec)) = store::Recordings::open(db) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for t in task_ids {
        for call in rec.task_calls(thread, t).unwrap_or_default() {
            let diff = divergence(&rec, &call);
            out.push(CallRow { call, diff });
        }
    }
    out
}

/// Where a diverged call's request differs from the recorded one it was matched against (empty
/// for any other call, or when the recording does not hold both).
pub fn divergence(rec: &store::Recordings, call: &Call) -> Vec<diff::Difference> {
    let (Some(id), Some(r), CallStatus::Diverged) = (call.id, call.ref_id, call.status) else {
        return Vec::new();
    };
    match (rec.request(r), rec.request(id)) {
        (Ok(Some(a)), Ok(Some(b))) => diff::differences(&a, &b, 8),
        _ => Vec::new(),
    }
}

/// Calls of a run (or a task) by status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub recorded: usize,
    pub live: usize,
    pub diverged: usize,
}

impl Counts {
    pub fn of<'a>(calls: impl IntoIterator<Item = &'a Call>) -> Counts {
        let mut c = Counts::default();
        for call in calls {
            match call.status {
                CallStatus::Recorded => c.recorded += 1,
                CallStatus::Live => c.live += 1,
                CallStatus::Diverged => c.diverged += 1,
            }
        }
        c
    }

    pub fn total(&self) -> usize {
        self.recorded + self.live + self.diverged
    }

    /// The non-zero counts: `4 recorded, 1 diverged` (`sep` between them).
    pub fn words(&self, sep: &str) -> String {
        [
            (self.recorded, "recorded"),
            (self.live, "live"),
            (self.diverged, "diverged"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, w)| format!("{n} {w}"))
        .collect::<Vec<_>>()
        .join(sep)
    }

    /// `calls: 4 recorded, 1 live, 1 diverged` (the non-zero ones); empty when there were none.
    pub fn line(&self) -> String {
        if self.total() == 0 {
            return String::new();
        }
        format!("calls: {}", self.words(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(status: CallStatus) -> Call {
        Call {
            id: None,
            task_id: "t".into(),
            ns: "a:t".into(),
            node: "a".into(),
            attempt: 1,
            seq: 0,
            kind: "model".into(),
            name: "m".into(),
            status,
            request: String::new(),
            response: String::new(),
            latency_us: None,
            input_tokens: None,
            output_tokens: None,
            error: false,
            checkpoint: None,
            run: None,
            root_task_id: None,
            step: None,
            ref_id: None,
        }
    }

    #[test]
    fn counts_say_recorded_live_and_diverged() {
        let calls = [
            call(CallStatus::Recorded),
            call(CallStatus::Recorded),
            call(CallStatus::Diverged),
            call(CallStatus::Live),
        ];
        let c = Counts::of(&calls);
        assert_eq!(c.line(), "calls: 2 recorded, 1 live, 1 diverged");
        assert_eq!(Counts::default().line(), "");
    }

    #[test]
    fn a_wire_call_reads_with_its_optional_fields_absent() {
        let c: Call = serde_json::from_str(
            r#"{"task_id":"x","ns":"a:x","node":"a","attempt":1,"seq":0,"kind":"tool",
                "name":"bump","status":"recorded","request":"bump({})","response":"ok"}"#,
        )
        .unwrap();
        assert_eq!(
            (c.status, c.latency_us, c.error),
            (CallStatus::Recorded, None, false)
        );
    }
}

//! Helpers for the recorded-replay tests: the apps of `tests/replay/` (a fake chat model that
//! counts its calls, tools with side effects counted in files), the CLI run on them, and the rows
//! of a thread's branches read back for comparison.

use super::bridge::{command, python};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::process::Output;
use superstep::store::{Mode, Store};
use superstep::value::{to_view, ViewOptions};

/// `tests/replay/<file>:<attr>`.
pub fn app(file: &str, attr: &str) -> String {
    format!(
        "{}:{attr}",
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/replay")
            .join(file)
            .display()
    )
}

/// A checkpoint file and a directory of call counters ($REPLAY_COUNTS).
pub struct Scene {
    pub dir: tempfile::TempDir,
    pub db: PathBuf,
    pub counts: PathBuf,
    pub graph: String,
}

impl Scene {
    pub fn new(graph: String) -> Scene {
        let _ = python();
        let dir = tempfile::tempdir().unwrap();
        let counts = dir.path().join("counts");
        std::fs::create_dir(&counts).unwrap();
        Scene {
            db: dir.path().join("app.sqlite"),
            counts,
            dir,
            graph,
        }
    }

    /// `superstep SUBCOMMAND GRAPH ARGS...` on the scene's file.
    pub fn run(&self, sub: &str, args: &[&str]) -> Output {
        let mut all = vec![sub, self.graph.as_str()];
        all.extend_from_slice(args);
        command(&self.db, &all)
            .env("REPLAY_COUNTS", &self.counts)
            .output()
            .expect("run superstep")
    }

    /// [`Scene::run`] that must succeed; its stdout.
    pub fn ok(&self, sub: &str, args: &[&str]) -> String {
        let out = self.run(sub, args);
        assert!(
            out.status.success(),
            "superstep {sub} {args:?} failed: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// [`Scene::ok`] with `--json`, parsed.
    pub fn json(&self, sub: &str, args: &[&str]) -> Json {
        let mut a = args.to_vec();
        a.push("--json");
        serde_json::from_str(&self.ok(sub, &a)).unwrap()
    }

    /// [`Scene::run`] that must end on an error of the graph (exit 3, the --json still printed);
    /// its stdout.
    pub fn ended(&self, sub: &str, args: &[&str]) -> String {
        let out = self.run(sub, args);
        assert_eq!(
            out.status.code(),
            Some(3),
            "superstep {sub} {args:?} did not end on a graph error: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// The lines counter file `what` holds (`model`, `tool`): one per real call.
    pub fn lines(&self, what: &str) -> Vec<String> {
        std::fs::read_to_string(self.counts.join(format!("{what}.count")))
            .map(|s| s.lines().map(str::to_string).collect())
            .unwrap_or_default()
    }

    /// (real model calls, real tool calls) so far.
    pub fn counted(&self) -> (usize, usize) {
        (self.lines("model").len(), self.lines("tool").len())
    }

    /// `superstep calls -t THREAD --json`'s calls.
    pub fn calls(&self, thread: &str) -> Vec<Json> {
        let out = command(&self.db, &["calls", "-t", thread, "--json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let j: Json = serde_json::from_slice(&out.stdout).unwrap();
        j["calls"].as_array().unwrap().clone()
    }
}

/// The calls of a run's `--json` report, in order: `steps[].tasks[].calls[]`.
pub fn run_calls(j: &Json) -> Vec<Json> {
    j["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["tasks"].as_array().into_iter().flatten())
        .flat_map(|t| t["calls"].as_array().into_iter().flatten())
        .cloned()
        .collect()
}

/// `status` of each call, in order.
pub fn statuses(calls: &[Json]) -> Vec<String> {
    calls
        .iter()
        .map(|c| c["status"].as_str().unwrap().to_string())
        .collect()
}

/// One root checkpoint of a branch: its step and source, its values and the writes stored with
/// it (channel and value, sorted: task ids differ between branches), as LangGraph stored them.
#[derive(Debug, PartialEq)]
pub struct Row {
    pub step: i64,
    pub source: String,
    pub values: Json,
    pub writes: Vec<(String, String)>,
}

fn rows_of(db: &Path, thread: &str) -> (Store, Vec<superstep::store::CheckpointRow>) {
    let store = Store::open(db, Mode::ReadOnly).unwrap();
    let rows = store.history(thread, "", None, 100_000).unwrap();
    (store, rows)
}

/// The root checkpoint of `thread` at `step` on its first branch (the original run).
pub fn checkpoint_at(db: &Path, thread: &str, step: i64) -> String {
    let b = branches(db, thread);
    b[0].iter()
        .find(|(s, _)| *s == step)
        .map(|(_, id)| id.clone())
        .unwrap_or_else(|| panic!("no checkpoint at step {step} on the first branch"))
}

/// Every branch of the thread (root to leaf, as (step, checkpoint id)), oldest leaf first.
pub fn branches(db: &Path, thread: &str) -> Vec<Vec<(i64, String)>> {
    let (_store, rows) = rows_of(db, thread);
    let step = |r: &superstep::store::CheckpointRow| r.metadata["step"].as_i64().unwrap();
    let mut leaves: Vec<&superstep::store::CheckpointRow> = rows
        .iter()
        .filter(|r| {
            !rows
                .iter()
                .any(|x| x.parent_checkpoint_id.as_deref() == Some(&r.checkpoint_id))
        })
        .collect();
    leaves.sort_by(|a, b| a.checkpoint_id.cmp(&b.checkpoint_id));
    leaves
        .into_iter()
        .map(|leaf| {
            let mut out = Vec::new();
            let mut cur = Some(leaf);
            while let Some(r) = cur {
                out.push((step(r), r.checkpoint_id.clone()));
                cur = r
                    .parent_checkpoint_id
                    .as_ref()
                    .and_then(|p| rows.iter().find(|x| &x.checkpoint_id == p));
            }
            out.reverse();
            out
        })
        .collect()
}

/// The rows of `branch` from the checkpoint `from` on (inclusive: a checkpoint holds the writes of
/// the tasks that ran from it).
pub fn branch_rows(db: &Path, thread: &str, branch: &[(i64, String)], from: &str) -> Vec<Row> {
    let (store, rows) = rows_of(db, thread);
    let o = ViewOptions::default();
    let start = branch
        .iter()
        .position(|(_, id)| id == from)
        .expect("the branch passes through the checkpoint");
    branch[start..]
        .iter()
        .map(|(step, id)| {
            let r = rows.iter().find(|r| &r.checkpoint_id == id).unwrap();
            let cp = store.decode(r).unwrap();
            let values: serde_json::Map<String, Json> = cp
                .channel_values
                .iter()
                .map(|(k, v)| (k.clone(), to_view(v, o)))
                .collect();
            let mut writes: Vec<(String, String)> = store
                .writes(thread, "", id)
                .unwrap()
                .iter()
                .map(|w| (w.channel.clone(), w.value.view(o).to_string()))
                .collect();
            writes.sort();
            Row {
                step: *step,
                source: r.metadata["source"].as_str().unwrap_or("").to_string(),
                values: Json::Object(values),
                writes,
            }
        })
        .collect()
}

/// LangGraph's own race, evened out: it saves a task's writes in the background while
/// `add_messages` gives a message without an id its uuid, on the same object — so a stored write
/// holds that id or `null` depending on which ran first (10 plain LangGraph runs of
/// tests/replay/agent.py: 39 of 40 ToolMessage writes hold it). A message id that is `null` on
/// one side is left out on both; every other field, and the values (ids included), must be equal.
fn unrace(a: &[(String, String)], b: &[(String, String)]) -> (Vec<Json>, Vec<Json>) {
    let parse = |w: &[(String, String)]| -> Vec<Json> {
        w.iter()
            .map(|(c, v)| {
                serde_json::json!([c, serde_json::from_str::<Json>(v).unwrap_or(Json::Null)])
            })
            .collect()
    };
    let (mut x, mut y) = (parse(a), parse(b));
    fn walk(p: &mut Json, q: &mut Json) {
        match (p, q) {
            (Json::Object(m), Json::Object(n)) => {
                let typed = |o: &serde_json::Map<String, Json>| {
                    o.get("__type__")
                        .and_then(Json::as_str)
                        .is_some_and(|t| t.ends_with("Message"))
                };
                if typed(m)
                    && typed(n)
                    && (m.get("id") == Some(&Json::Null) || n.get("id") == Some(&Json::Null))
                {
                    m.remove("id");
                    n.remove("id");
                }
                for (k, v) in m.iter_mut() {
                    if let Some(w) = n.get_mut(k) {
                        walk(v, w);
                    }
                }
            }
            (Json::Array(m), Json::Array(n)) => {
                for (v, w) in m.iter_mut().zip(n.iter_mut()) {
                    walk(v, w);
                }
            }
            _ => {}
        }
    }
    for (p, q) in x.iter_mut().zip(y.iter_mut()) {
        walk(p, q);
    }
    (x, y)
}

/// A time travel to `from` replayed: the newest branch — from LangGraph's fork of `from` (a copy of
/// its values) to its end — holds the same values and the same writes, checkpoint by checkpoint,
/// as the original branch from `from` on.
pub fn assert_branch_replayed(db: &Path, thread: &str, from: &str) {
    let b = branches(db, thread);
    assert!(b.len() >= 2, "expected a second branch");
    let original = branch_rows(db, thread, &b[0], from);
    let mut replayed = branch_rows(db, thread, b.last().unwrap(), from);
    replayed.remove(0);
    assert_eq!(replayed.first().map(|r| r.source.as_str()), Some("fork"));
    assert_eq!(
        original.len(),
        replayed.len(),
        "checkpoints from the fork on"
    );
    for (a, b) in original.iter().zip(&replayed) {
        assert_eq!(a.values, b.values, "values at step {} (original)", a.step);
        let (wa, wb) = unrace(&a.writes, &b.writes);
        assert_eq!(wa, wb, "writes of step {} (original)", a.step);
    }
}

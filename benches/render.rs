//! TUI render cost (a bench, not a timed test):
//!
//!     cargo bench --bench render
//!
//! median µs per frame with a large state (10k keys) and a long history (10k checkpoints), and
//! the time to the first frame on a DB of 1,000 threads × 25 checkpoints.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use std::time::Instant;
use superstep::app::action::{CheckpointData, HistoryEntry, ThreadData};
use superstep::app::state::{AppState, GraphInfo, Mode};
use superstep::app::update::update;
use superstep::snapshot::Snapshot;

fn big_state() -> AppState {
    let mut s = AppState::new(Mode::Inspect, "/tmp/big.sqlite", None, GraphInfo::default());
    let n = 10_000;
    let id = |i: usize| format!("1f1ee3be-2296-61c0-8001-{i:012x}");
    let history: Vec<HistoryEntry> = (0..n)
        .rev()
        .map(|i| HistoryEntry {
            id: id(i),
            parent: (i > 0).then(|| id(i - 1)),
            step: i as i64,
            source: "loop".into(),
            next: vec!["count".into()],
            pending: vec![],
            interrupted: vec![],
            errored: vec![],
            created_at: String::new(),
        })
        .collect();
    let values: Vec<(String, rmpv::Value)> = (0..n)
        .map(|i| {
            (
                format!("key{i:05}"),
                rmpv::Value::from(format!("value number {i}")),
            )
        })
        .collect();
    let snapshot = Snapshot {
        thread_id: "big".into(),
        checkpoint_ns: String::new(),
        checkpoint_id: id(n - 1),
        parent_checkpoint_id: Some(id(n - 2)),
        parents: Default::default(),
        created_at: String::new(),
        metadata: Default::default(),
        step: n as i64,
        values: values.clone(),
        root_value: false,
        next: vec!["count".into()],
        tasks: vec![],
        pending_writes: vec![],
        warnings: vec![],
        limitations: vec![],
        live: true,
        format: None,
    };
    let t = Instant::now();
    update(
        &mut s,
        superstep::app::action::Action::ThreadLoaded(Box::new(ThreadData {
            thread: "big".into(),
            history,
            ns: String::new(),
            more: false,
            selected: CheckpointData {
                snapshot,
                parent_values: Some(values),
                calls: Vec::new(),
            },
        })),
    );
    println!(
        "load 10k checkpoints + 10k keys into the model: {:?}",
        t.elapsed()
    );
    s
}

fn frame_with_10k_keys_and_10k_checkpoints() {
    let mut s = big_state();
    let area = Rect::new(0, 0, 120, 40);
    let mut times = Vec::new();
    for i in 0..31 {
        // move the selection around so different windows render
        s.sel[1] = (i * 311) % 10_000;
        s.sel[2] = (i * 733) % 10_000;
        let mut buf = Buffer::empty(area);
        let t = Instant::now();
        superstep::ui::draw(&s, &mut buf, area);
        times.push(t.elapsed());
    }
    times.sort();
    let median = times[times.len() / 2];
    println!(
        "median frame (10k keys, 10k checkpoints, 120x40): {} µs over 31 frames",
        median.as_micros()
    );
}

/// A DB of 1,000 threads × 25 checkpoints: one thread made by the engine (the loop graph), its
/// rows copied under 1,000 thread ids.
fn thousand_threads(dir: &std::path::Path) -> std::path::PathBuf {
    let db = dir.join("big.sqlite");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_superstep"))
        .args(["--db", db.to_str().unwrap(), "run"])
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/graphs/loop.json"))
        .args([
            "-t",
            "base",
            "--input",
            r#"{"n": 0, "limit": 23}"#,
            "--recursion-limit",
            "100",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let c = rusqlite::Connection::open(&db).unwrap();
    let n: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM checkpoints WHERE thread_id='base'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 25);
    c.execute_batch(
        "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 1000)
         INSERT INTO checkpoints SELECT printf('thread-%04d', i), checkpoint_ns, checkpoint_id,
           parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints, k WHERE thread_id = 'base';
         WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 1000)
         INSERT INTO writes SELECT printf('thread-%04d', i), checkpoint_ns, checkpoint_id, task_id,
           task_path, idx, channel, type, value FROM writes, k WHERE thread_id = 'base';
         DELETE FROM checkpoints WHERE thread_id = 'base'; DELETE FROM writes WHERE thread_id = 'base';
         PRAGMA wal_checkpoint(TRUNCATE);",
    )
    .unwrap();
    db
}

fn first_frame_on_1000_threads_of_25_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let db = thousand_threads(dir.path());
    let t = Instant::now();
    let rt = superstep::app::effects::Runtime::inspect(&db).unwrap();
    let mut app = superstep::app::App::inspect(rt);
    app.start(None);
    let area = Rect::new(0, 0, 120, 40);
    let mut buf = Buffer::empty(area);
    superstep::ui::draw(&app.state, &mut buf, area);
    let first = t.elapsed();
    println!(
        "first frame (1,000 threads × 25 checkpoints): {} ms",
        first.as_millis()
    );
    assert_eq!(app.state.threads.len(), 1000);
    assert_eq!(app.state.history.len(), 25);
}

fn main() {
    frame_with_10k_keys_and_10k_checkpoints();
    first_frame_on_1000_threads_of_25_checkpoints();
}

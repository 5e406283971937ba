//! Replay benchmark (issue 23): what recording model and tool calls adds to a run through the
//! bridge, side by side with recording off in one run, and what a fully replayed run costs.
//!
//!     cargo bench --bench replay -- --python PY [--n 200] [--k 0,4] [--repeat 3] [--dir DIR]
//!
//! The graph (benches/replay_graph.py) loops one node N times; each superstep asks an instant fake
//! chat model K times and calls a tool once (K > 0). Each side is one `continue` to the end
//! (`c`) on a fresh file, timed from the first superstep boundary:
//! * off: `--no-record` — the recorder stays out of the run (the anchor);
//! * recording: the default — every call recorded, one commit per superstep;
//! * replay: a time travel to the input checkpoint of the recorded thread, every call answered
//!   from the recording.
//!
//! Added per superstep = (recording − off) / N at K = 0; added per call = ((recording − off) / N
//! − that) / (K + 1) at K > 0.

use std::path::{Path, PathBuf};
use std::time::Instant;
use superstep::bridge::{GraphRef, Interpreter, PythonSource};
use superstep::replay::{Counts, ReplayMode};
use superstep::source::{GraphSource, Input, Pause, RunOutcome, RunRequest, RunSettings, Start};
use superstep::spec::model::Breakpoints;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn fresh(db: &Path) {
    for s in [
        "",
        "-wal",
        "-shm",
        ".superstep-calls.sqlite",
        ".superstep-calls.sqlite-wal",
        ".superstep-calls.sqlite-shm",
    ] {
        let _ = std::fs::remove_file(format!("{}{s}", db.display()));
    }
}

fn graph_ref() -> superstep::bridge::PythonRef {
    let r = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/replay_graph.py:graph");
    match GraphRef::parse(r.to_str().unwrap(), None).unwrap() {
        GraphRef::Python(p) => p,
        _ => unreachable!(),
    }
}

fn req(start: Start, steps: Option<usize>) -> RunRequest {
    RunRequest {
        thread: "bench".into(),
        start,
        steps,
        before: Breakpoints::None,
        after: Breakpoints::None,
    }
}

fn done(out: &RunOutcome) -> bool {
    out.reports
        .last()
        .and_then(|r| r.pause.as_ref())
        .is_some_and(|p| matches!(p, Pause::Done))
}

/// Seconds to run `start` to the end (from its first boundary), and the run's calls.
fn timed(src: &mut PythonSource, start: Start) -> (f64, Counts) {
    let first = src.run(req(start, Some(0)));
    assert!(
        first.error.is_none(),
        "{:?}",
        first.error.map(|e| e.to_string())
    );
    let t = Instant::now();
    let out = src.run(req(Start::Continue, None));
    let secs = t.elapsed().as_secs_f64();
    assert!(
        out.error.is_none(),
        "{:?}",
        out.error.map(|e| e.to_string())
    );
    assert!(done(&out), "the run ends");
    (secs, Counts::of(&out.calls))
}

/// (off, recording, replay) seconds for N supersteps with K model calls each.
fn sides(py: &str, dir: &Path, n: u64, k: u64) -> (f64, f64, f64, Counts, Counts) {
    std::env::set_var("REPLAY_BENCH_K", k.to_string());
    let open = |db: &Path| {
        fresh(db);
        let interp = Interpreter {
            path: PathBuf::from(py),
            why: "--python",
        };
        let mut src = PythonSource::open(graph_ref(), interp, Some(db)).expect("the bridge loads");
        let limit = RunSettings::from_args(None, Some(n as i64 + 10), None, None).unwrap();
        src.configure(&limit).expect("settings");
        src
    };
    let input = Input::Value(serde_json::json!({"i": 0, "n": n}));
    let fresh_run = || Start::Fresh {
        input: input.clone(),
        checkpoint: None,
    };
    let mut off = open(&dir.join("off.sqlite"));
    off.set_replay(ReplayMode::Diverge, false);
    let (t_off, c_off) = timed(&mut off, fresh_run());
    assert_eq!(c_off.total(), 0, "recording off records nothing");
    drop(off);
    let db = dir.join("on.sqlite");
    let mut on = open(&db);
    let (t_on, c_on) = timed(&mut on, fresh_run());
    assert_eq!(
        c_on.live as u64,
        n * (k + u64::from(k > 0)),
        "every call recorded"
    );
    // the input checkpoint (step -1): the oldest of the thread
    let store = superstep::store::Store::open(&db, superstep::store::Mode::ReadOnly).unwrap();
    let first = store
        .history("bench", "", None, 100_000)
        .unwrap()
        .last()
        .unwrap()
        .checkpoint_id
        .clone();
    drop(store);
    let (t_re, c_re) = timed(
        &mut on,
        Start::Fresh {
            input: Input::Continue,
            checkpoint: Some(first),
        },
    );
    assert_eq!(c_re.live, 0, "a replay calls nothing");
    (t_off, t_on, t_re, c_on, c_re)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: &str| {
        args.iter()
            .position(|a| a == k)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let py = arg("--python")
        .or_else(|| std::env::var("SUPERSTEP_TEST_PYTHON").ok())
        .unwrap_or_else(|| "python3".into());
    let n: u64 = arg("--n").map_or(200, |x| x.parse().unwrap());
    let ks: Vec<u64> = arg("--k")
        .unwrap_or_else(|| "0,4".into())
        .split(',')
        .map(|x| x.parse().unwrap())
        .collect();
    let repeat: usize = arg("--repeat").map_or(3, |r| r.parse().unwrap());
    let dir = PathBuf::from(arg("--dir").unwrap_or_else(|| {
        std::env::temp_dir()
            .join("superstep-replay-bench")
            .display()
            .to_string()
    }));
    std::fs::create_dir_all(&dir).unwrap();
    println!("## Recording and replaying calls (benches/replay_graph.py, N = {n} supersteps)\n");
    println!("python: {py}; ms per superstep, medians of {repeat} runs (the sides interleaved)\n");
    println!("| K model calls + 1 tool call per superstep | off | recording | replay | added per superstep | added per call | replay vs off |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    let mut per_step = None;
    for &k in &ks {
        let (mut a, mut b, mut c) = (vec![], vec![], vec![]);
        for _ in 0..repeat {
            let (off, on, re, _, _) = sides(&py, &dir, n, k);
            a.push(off);
            b.push(on);
            c.push(re);
        }
        let ms = |x: f64| x * 1000.0 / n as f64;
        let (off, on, re) = (ms(median(a)), ms(median(b)), ms(median(c)));
        let added = on - off;
        let calls = if k == 0 { 0 } else { k + 1 };
        let per_call = match (k, per_step) {
            (0, _) => {
                per_step = Some(added);
                "–".to_string()
            }
            (_, Some(s)) => format!("{:.3}", (added - s) / calls as f64),
            (_, None) => format!("{:.3} (with the superstep's)", added / calls as f64),
        };
        println!(
            "| {k} + {} | {off:.3} | {on:.3} | {re:.3} | {added:+.3} | {per_call} | {:.2}× |",
            u64::from(k > 0),
            re / off
        );
    }
}

//! Bridge benchmark (issue 11 item 8): stepping a Python graph through superstep's bridge vs a
//! plain Python `invoke` of the same graph, side by side in one run.
//!
//!     cargo bench --bench bridge -- --python PY [--n 100,1000] [--repeat 3] [--dir DIR]
//!
//! The graph (benches/bridge_graph.py) is one trivial node looping N times, so each figure is the
//! per-superstep machinery. Both sides use LangGraph's SqliteSaver on a fresh file at its defaults.
//! * plain: `graph.invoke(input)` straight through, and `graph.stream(input, stream_mode=["checkpoints",
//!   "tasks"])` (what the bridge pulls), timed inside Python (no process start);
//! * bridge, stepped: `PythonSource::run` with `steps: Some(1)` N times — what the TUI's `n` does:
//!   one request and one answer over the socket per superstep, the run held between them;
//! * bridge, continue: one `run` to the end (`c`): the bridge's per-superstep reports, no round trip.
//!
//! Times start after the bridge has loaded the graph (import + topology: reported apart) and the
//! first superstep boundary; the plain side warms up on another thread first. The added cost per
//! superstep is (bridge − plain) / N.
//!
//! A second table (issue 20): the demo app (examples/support) from launch to its first frame —
//! `superstep examples/support/langgraph.json --print` on a fresh DB, process start to exit (the
//! frame is written as it exits) — against its floor, `python -c "import support.agent"` (the
//! same interpreter importing the same module), and a reload (`R`: a new bridge imports the app
//! again), interleaved, medians of `--repeat` (`--launch-only` skips the first table).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
use superstep::bridge::{GraphRef, Interpreter, PythonSource};
use superstep::source::{GraphSource, Input, Pause, RunRequest, RunSettings, Start};
use superstep::spec::model::Breakpoints;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn fresh(db: &Path) {
    for s in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{s}", db.display()));
    }
}

fn graph_ref() -> superstep::bridge::PythonRef {
    let r = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/bridge_graph.py:graph");
    match GraphRef::parse(r.to_str().unwrap(), None).unwrap() {
        GraphRef::Python(p) => p,
        _ => unreachable!(),
    }
}

fn plain(py: &str, db: &Path, n: u64, how: &str) -> f64 {
    fresh(db);
    let o = Command::new(py)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/bridge_graph.py"))
        .arg(db)
        .arg(n.to_string())
        .arg(how)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        j["checkpoints"].as_u64(),
        Some(n + 2),
        "plain run's checkpoints"
    );
    j["secs"].as_f64().unwrap()
}

/// (load seconds, run seconds, checkpoints written)
fn bridged(py: &str, db: &Path, n: u64, stepped: bool) -> (f64, f64, usize) {
    fresh(db);
    let interp = Interpreter {
        path: PathBuf::from(py),
        why: "--python",
    };
    let t0 = Instant::now();
    let mut src = PythonSource::open(graph_ref(), interp, Some(db)).expect("the bridge loads");
    let limit = RunSettings::from_args(None, Some(n.max(50) as i64 + 10), None, None).unwrap();
    src.configure(&limit).expect("settings");
    let load = t0.elapsed().as_secs_f64();
    let req = |thread: &str, start, steps| RunRequest {
        thread: thread.into(),
        start,
        steps,
        before: Breakpoints::None,
        after: Breakpoints::None,
    };
    let input = |n: u64| Input::Value(serde_json::json!({"i": 0, "n": n}));
    // warm-up thread, like the plain side
    let w = src.run(req(
        "warm",
        Start::Fresh {
            input: input(50),
            checkpoint: None,
        },
        None,
    ));
    assert!(w.error.is_none(), "{:?}", w.error.map(|e| e.to_string()));
    // the first boundary (LangGraph's input checkpoint), then the measured supersteps
    let first = src.run(req(
        "bench",
        Start::Fresh {
            input: input(n),
            checkpoint: None,
        },
        Some(0),
    ));
    assert!(first.error.is_none());
    let t1 = Instant::now();
    let mut written = first
        .reports
        .iter()
        .filter(|r| r.checkpoint.is_some())
        .count();
    loop {
        let out = src.run(req(
            "bench",
            Start::Continue,
            if stepped { Some(1) } else { None },
        ));
        assert!(
            out.error.is_none(),
            "{:?}",
            out.error.map(|e| e.to_string())
        );
        written += out
            .reports
            .iter()
            .filter(|r| r.checkpoint.is_some())
            .count();
        if out
            .reports
            .last()
            .and_then(|r| r.pause.as_ref())
            .is_some_and(|p| matches!(p, Pause::Done))
        {
            break;
        }
        assert!(!out.reports.is_empty(), "a step that reports nothing");
    }
    let secs = t1.elapsed().as_secs_f64();
    drop(src);
    (load, secs, written)
}

/// Seconds of one run of `cmd` (it must succeed).
fn timed(cmd: &mut Command) -> f64 {
    let t = Instant::now();
    let o = cmd.output().unwrap();
    let secs = t.elapsed().as_secs_f64();
    assert!(
        o.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    secs
}

/// The demo app: launch → first frame, its import floor, and a reload.
fn launch(py: &str, dir: &Path, repeat: usize) {
    let support = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/support");
    let db = dir.join("launch.sqlite");
    let (mut floor, mut frame, mut reload) = (vec![], vec![], vec![]);
    for _ in 0..repeat {
        floor.push(timed(
            Command::new(py)
                .args(["-c", "import support.agent"])
                .current_dir(&support),
        ));
        fresh(&db);
        frame.push(timed(
            Command::new(env!("CARGO_BIN_EXE_superstep"))
                .arg(support.join("langgraph.json"))
                .arg("--db")
                .arg(&db)
                .args(["--print", "--python", py])
                .env("NO_COLOR", "1"),
        ));
        let r = match GraphRef::parse(support.join("langgraph.json").to_str().unwrap(), None) {
            Ok(GraphRef::Python(p)) => p,
            _ => unreachable!(),
        };
        let interp = Interpreter {
            path: PathBuf::from(py),
            why: "--python",
        };
        let mut src = PythonSource::open(r, interp, Some(&db)).expect("the bridge loads");
        let t = Instant::now();
        src.reload().expect("reload");
        reload.push(t.elapsed().as_secs_f64());
    }
    let (floor, frame, reload) = (median(floor), median(frame), median(reload));
    println!("\n## The demo app (examples/support): launch to first frame\n");
    println!("seconds, each the median of {repeat} runs (interleaved)\n");
    println!("| python -c \"import support.agent\" (floor) | superstep --print: launch → first frame → exit | added over the floor | reload (R) |");
    println!("|---:|---:|---:|---:|");
    println!(
        "| {floor:.3} | {frame:.3} | {:+.3} ({:.2}×) | {reload:.3} |",
        frame - floor,
        frame / floor
    );
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
    let ns: Vec<u64> = arg("--n")
        .unwrap_or_else(|| "100,1000".into())
        .split(',')
        .map(|x| x.parse().unwrap())
        .collect();
    let repeat: usize = arg("--repeat").map_or(3, |r| r.parse().unwrap());
    let dir = PathBuf::from(arg("--dir").unwrap_or_else(|| {
        std::env::temp_dir()
            .join("superstep-bridge-bench")
            .display()
            .to_string()
    }));
    std::fs::create_dir_all(&dir).unwrap();
    if args.iter().any(|a| a == "--launch-only") {
        launch(&py, &dir, repeat);
        return;
    }
    println!("## Python bridge vs plain LangGraph (benches/bridge_graph.py, SqliteSaver)\n");
    println!(
        "python: {py}; ms per superstep, each the median of {repeat} runs (the four sides interleaved)\n"
    );
    println!("| N | plain invoke | plain stream | bridge, continue (c) | bridge, stepped (n) | added per superstep, n − invoke | n − stream | c − stream | bridge load s |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for &n in &ns {
        let (mut pi, mut ps, mut c, mut s, mut l) = (vec![], vec![], vec![], vec![], vec![]);
        for _ in 0..repeat {
            pi.push(plain(&py, &dir.join("plain.sqlite"), n, "invoke"));
            ps.push(plain(&py, &dir.join("plain.sqlite"), n, "stream"));
            let (load, secs, written) = bridged(&py, &dir.join("cont.sqlite"), n, false);
            assert_eq!(
                written as u64,
                n + 1,
                "continue: checkpoints after the input one"
            );
            c.push(secs);
            l.push(load);
            let (_, secs, written) = bridged(&py, &dir.join("step.sqlite"), n, true);
            assert_eq!(
                written as u64,
                n + 1,
                "stepped: checkpoints after the input one"
            );
            s.push(secs);
        }
        let ms = |x: f64| x * 1000.0 / n as f64;
        let (pi, ps, c, s) = (median(pi), median(ps), median(c), median(s));
        println!(
            "| {n} | {:.3} | {:.3} | {:.3} | {:.3} | {:+.3} | {:+.3} | {:+.3} | {:.2} |",
            ms(pi),
            ms(ps),
            ms(c),
            ms(s),
            ms(s - pi),
            ms(s - ps),
            ms(c - ps),
            median(l)
        );
    }
    launch(&py, &dir, repeat);
}

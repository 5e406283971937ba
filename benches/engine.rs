//! Engine benchmark, side by side with LangGraph in one run (issue: engine).
//!
//!     cargo bench --bench engine -- [--python PY] [--n 100,1000,10000] [--dir DIR]
//!
//! For each N: the loop graph (graphs/loop.json) for N supersteps on superstep's engine and on
//! LangGraph 1.2.24 + SqliteSaver (benches/lg_engine.py), at three SQLite settings: SqliteSaver's
//! defaults (WAL, synchronous=FULL), synchronous=NORMAL, and an in-memory database. Plus the
//! physical ceiling: raw SQLite commits/s at FULL and NORMAL on the same disk.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use superstep::engine::pregel::{Engine, Input, Pause};
use superstep::store::{Mode, Store};

struct Run {
    steps: u64,
    secs: f64,
    txns: u64,
    bytes: u64,
}

fn superstep_run(n: u64, mode: &str, dir: &Path) -> Run {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lg = superstep::spec::load(&root.join("graphs/loop.json")).unwrap();
    let db: PathBuf = if mode == "memory" {
        PathBuf::from(":memory:")
    } else {
        dir.join(format!("ss-{mode}-{n}.sqlite"))
    };
    for s in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{s}", db.display()));
    }
    let store = Store::open(&db, Mode::ReadWrite).unwrap();
    if mode == "normal" {
        store
            .conn()
            .pragma_update(None, "synchronous", "NORMAL")
            .unwrap();
    }
    let mut e = Engine::for_graph(&lg, store, "bench");
    e.recursion_limit = n as i64 + 10;
    let input = superstep::value::from_view(&serde_json::json!({"n": 0, "limit": n})).unwrap();
    let t0 = Instant::now();
    e.start(Input::Value(input), None).unwrap();
    let mut steps = 0;
    loop {
        let r = e.step().unwrap();
        if r.checkpoint.is_some() {
            steps += 1;
        }
        match r.pause {
            None => {}
            Some(Pause::Done) => break,
            Some(p) => panic!("unexpected pause {p:?}"),
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    let txns = e.commits();
    let bytes = if mode == "memory" {
        0
    } else {
        e.store()
            .conn()
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
            .unwrap();
        std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0)
    };
    Run {
        steps,
        secs,
        txns,
        bytes,
    }
}

fn langgraph_run(py: &str, n: u64, mode: &str, dir: &Path) -> Run {
    let db = dir.join(format!("lg-{mode}-{n}.sqlite"));
    let out = Command::new(py)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/lg_engine.py"))
        .args([
            "--n",
            &n.to_string(),
            "--mode",
            mode,
            "--db",
            db.to_str().unwrap(),
        ])
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "lg_engine.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    Run {
        steps: j["steps"].as_u64().unwrap(),
        secs: j["seconds"].as_f64().unwrap(),
        txns: j["txns"].as_u64().unwrap(),
        bytes: j["db_bytes"].as_u64().unwrap(),
    }
}

/// Raw SQLite commits per second (one small INSERT per transaction) in WAL mode.
fn ceiling(mode: &str, dir: &Path) -> f64 {
    ceiling_shaped(mode, dir, 200, 0)
}

/// Commits per second of transactions shaped like one superstep's rows: a checkpoint-sized
/// blob plus `writes` small rows (what the loop graph commits per step), no engine work.
fn ceiling_shaped(mode: &str, dir: &Path, blob_bytes: usize, writes: usize) -> f64 {
    let p = dir.join(format!("ceiling-{mode}.sqlite"));
    for s in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{s}", p.display()));
    }
    let c = rusqlite::Connection::open(&p).unwrap();
    c.pragma_update(None, "journal_mode", "WAL").unwrap();
    c.pragma_update(
        None,
        "synchronous",
        if mode == "normal" { "NORMAL" } else { "FULL" },
    )
    .unwrap();
    c.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB); CREATE TABLE w (id INTEGER PRIMARY KEY, v BLOB)")
        .unwrap();
    let blob = vec![7u8; blob_bytes];
    let small = vec![7u8; 16];
    let t0 = Instant::now();
    let mut n = 0u64;
    while t0.elapsed() < Duration::from_secs(2) {
        let tx = c.unchecked_transaction().unwrap();
        tx.execute("INSERT INTO t (v) VALUES (?1)", [&blob])
            .unwrap();
        for _ in 0..writes {
            tx.execute("INSERT INTO w (v) VALUES (?1)", [&small])
                .unwrap();
        }
        tx.commit().unwrap();
        n += 1;
    }
    n as f64 / t0.elapsed().as_secs_f64()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: &str| {
        args.iter()
            .position(|a| a == k)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let py = arg("--python").unwrap_or_else(|| "python3".into());
    let ns: Vec<u64> = arg("--n")
        .unwrap_or_else(|| "100,1000,10000".into())
        .split(',')
        .map(|x| x.parse().unwrap())
        .collect();
    let dir = PathBuf::from(arg("--dir").unwrap_or_else(|| {
        std::env::temp_dir()
            .join("superstep-bench")
            .display()
            .to_string()
    }));
    std::fs::create_dir_all(&dir).unwrap();
    let only = args.iter().any(|a| a == "--superstep-only");
    let ceil_full = if only { 0.0 } else { ceiling("full", &dir) };
    let ceil_normal = if only { 0.0 } else { ceiling("normal", &dir) };
    println!("## superstep engine vs LangGraph 1.2.24 + SqliteSaver (loop graph)\n");
    println!(
        "raw SQLite ceiling on {}: {:.0} commits/s at synchronous=FULL, {:.0} at NORMAL (WAL)\n",
        dir.display(),
        ceil_full,
        ceil_normal
    );
    println!("| N | setting | superstep steps/s | LangGraph steps/s | ratio | txns/step (ss / LG) | superstep % of raw ceiling | step-shaped ceiling (commits/s) | superstep % of it | µs/step ss | DB MB (ss / LG) |");
    println!("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let modes: Vec<String> = arg("--modes")
        .unwrap_or_else(|| "full,normal,memory".into())
        .split(',')
        .map(str::to_string)
        .collect();
    if args.iter().any(|a| a == "--superstep-only") {
        for &n in &ns {
            for mode in &modes {
                let s = superstep_run(n, mode, &dir);
                println!(
                    "superstep N={n} {mode}: {:.0} steps/s, {:.1} µs/step, {} txns",
                    s.steps as f64 / s.secs,
                    1e6 * s.secs / s.steps as f64,
                    s.txns
                );
            }
        }
        return;
    }
    for &n in &ns {
        for mode in modes.iter().map(String::as_str) {
            let s = superstep_run(n, mode, &dir);
            let l = langgraph_run(&py, n, mode, &dir);
            let (sr, lr) = (s.steps as f64 / s.secs, l.steps as f64 / l.secs);
            let ceil = match mode {
                "full" => format!(
                    "{:.0}%",
                    100.0 * sr * (s.txns as f64 / s.steps as f64) / ceil_full
                ),
                "normal" => format!(
                    "{:.0}%",
                    100.0 * sr * (s.txns as f64 / s.steps as f64) / ceil_normal
                ),
                _ => "-".into(),
            };
            let (shaped, shaped_pct) = if mode == "memory" {
                ("-".to_string(), "-".to_string())
            } else {
                let avg_blob = (s.bytes as f64 / s.steps as f64) as usize;
                let c = ceiling_shaped(mode, &dir, avg_blob.max(200), 3);
                (
                    format!("{c:.0}"),
                    format!("{:.0}%", 100.0 * sr * (s.txns as f64 / s.steps as f64) / c),
                )
            };
            println!(
                "| {n} | {mode} | {sr:.0} | {lr:.0} | {:.1}x | {:.2} / {:.2} | {ceil} | {shaped} | {shaped_pct} | {:.0} | {:.1} / {:.1} |",
                sr / lr,
                s.txns as f64 / s.steps as f64,
                l.txns as f64 / l.steps as f64,
                1e6 * s.secs / s.steps as f64,
                s.bytes as f64 / 1e6,
                l.bytes as f64 / 1e6
            );
        }
    }
}

//! Engine benchmark, side by side with LangGraph in one run (issue: engine).
//!
//!     cargo bench --bench engine -- [--python PY] [--n 100,1000,10000] [--repeat 3] [--modes full,normal,memory] [--dir DIR] [--delta]
//!
//! `--delta`: the loop's list as a DeltaChannel on both sides (superstep: benches/loop_delta.json;
//! LangGraph: lg_engine.py --delta, `DeltaChannel(operator.add, snapshot_frequency=100)`).
//!
//! For each N: the loop graph (graphs/loop.json) for N supersteps on superstep's engine and on
//! LangGraph 1.2.24 + SqliteSaver (benches/lg_engine.py), at three SQLite settings: SqliteSaver's
//! defaults (WAL, synchronous=FULL), synchronous=NORMAL, and an in-memory database. Plus the
//! physical ceiling: raw SQLite commits/s at FULL and NORMAL on the same disk.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use superstep::engine::pregel::{Engine, Input, Pause};
use superstep::store::{create_sqlite_schema, Mode, SqliteStore, Store};

struct Run {
    steps: u64,
    secs: f64,
    txns: u64,
    bytes: u64,
    /// The rows the run left, one entry per superstep transaction (superstep side only).
    rows: Vec<StepRows>,
}

type Sql = rusqlite::types::Value;

/// One superstep's rows: the writes pending on the previous checkpoint, then the new checkpoint.
struct StepRows {
    writes: Vec<Vec<Sql>>,
    checkpoint: Vec<Sql>,
}

/// The rows a run left in `conn`, grouped the way the engine commits them: checkpoint k with the
/// writes made against checkpoint k-1.
fn rows_by_step(conn: &rusqlite::Connection) -> Vec<StepRows> {
    let all = |sql: &str, ncols: usize| -> Vec<Vec<Sql>> {
        let mut st = conn.prepare(sql).unwrap();
        let rows = st
            .query_map([], |r| (0..ncols).map(|i| r.get::<_, Sql>(i)).collect())
            .unwrap();
        rows.collect::<Result<_, _>>().unwrap()
    };
    let cps = all(
        "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata
         FROM checkpoints ORDER BY checkpoint_id",
        7,
    );
    let mut writes = all(
        "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value
         FROM writes ORDER BY checkpoint_id, task_id, idx",
        9,
    )
    .into_iter()
    .peekable();
    let mut out = Vec::new();
    for cp in cps {
        let mut ws = Vec::new();
        while let Some(w) = writes.next_if(|w| Some(&w[2]) == Some(&cp[3])) {
            ws.push(w);
        }
        out.push(StepRows {
            writes: ws,
            checkpoint: cp,
        });
    }
    assert!(writes.next().is_none(), "writes not pending on a parent");
    out
}

/// The floor under the engine: the exact rows a superstep run left, inserted again into a fresh
/// database with SqliteSaver's schema at the same setting, one transaction per superstep, with
/// prepared statements and nothing else. Returns transactions (supersteps) per second.
fn replay_floor(mode: &str, dir: &Path, steps: &[StepRows]) -> f64 {
    let db: PathBuf = if mode == "memory" {
        PathBuf::from(":memory:")
    } else {
        dir.join(format!("floor-{mode}.sqlite"))
    };
    for s in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{s}", db.display()));
    }
    // the engine's own schema set-up (SqliteSaver.setup: WAL + the two tables)
    let c = rusqlite::Connection::open(&db).unwrap();
    create_sqlite_schema(&c).unwrap();
    if mode == "normal" {
        c.pragma_update(None, "synchronous", "NORMAL").unwrap();
    }
    let mut begin = c.prepare("BEGIN IMMEDIATE").unwrap();
    let mut commit = c.prepare("COMMIT").unwrap();
    let mut put = c
        .prepare("INSERT OR REPLACE INTO checkpoints VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
        .unwrap();
    let mut put_w = c
        .prepare("INSERT OR IGNORE INTO writes VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")
        .unwrap();
    let t0 = Instant::now();
    for s in steps {
        begin.execute([]).unwrap();
        for w in &s.writes {
            put_w.execute(rusqlite::params_from_iter(w.iter())).unwrap();
        }
        put.execute(rusqlite::params_from_iter(s.checkpoint.iter()))
            .unwrap();
        commit.execute([]).unwrap();
    }
    steps.len() as f64 / t0.elapsed().as_secs_f64()
}

fn superstep_run(n: u64, mode: &str, dir: &Path, delta: bool) -> Run {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let spec = if delta {
        "benches/loop_delta.json"
    } else {
        "graphs/loop.json"
    };
    let lg = superstep::engine::loaded::load(&root.join(spec)).unwrap();
    let db: PathBuf = if mode == "memory" {
        PathBuf::from(":memory:")
    } else {
        dir.join(format!("ss-{mode}-{n}.sqlite"))
    };
    for s in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{s}", db.display()));
    }
    // the connection is ours (its pragmas, and the rows of an in-memory database afterwards)
    let conn = rusqlite::Connection::open(&db).unwrap();
    if mode == "normal" {
        conn.pragma_update(None, "synchronous", "NORMAL").unwrap();
    }
    let store = SqliteStore::from_connection(conn, Mode::ReadWrite).unwrap();
    let mut e = Engine::for_graph(&lg, Store::from_backend(Box::new(store)), "bench");
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
    let conn_after = e
        .into_store()
        .and_then(Store::into_sqlite)
        .expect("a SQLite store")
        .into_connection();
    let rows = rows_by_step(&conn_after);
    let bytes = if mode == "memory" {
        0
    } else {
        conn_after
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
            .unwrap();
        std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0)
    };
    Run {
        steps,
        secs,
        txns,
        bytes,
        rows,
    }
}

fn langgraph_run(py: &str, n: u64, mode: &str, dir: &Path, delta: bool) -> Run {
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
        .args(delta.then_some("--delta"))
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
        rows: Vec::new(),
    }
}

/// Raw SQLite commits per second in WAL mode: one small INSERT per transaction.
fn ceiling(mode: &str, dir: &Path) -> f64 {
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
    c.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)")
        .unwrap();
    let blob = vec![7u8; 200];
    let t0 = Instant::now();
    let mut n = 0u64;
    while t0.elapsed() < Duration::from_secs(2) {
        let tx = c.unchecked_transaction().unwrap();
        tx.execute("INSERT INTO t (v) VALUES (?1)", [&blob])
            .unwrap();
        tx.commit().unwrap();
        n += 1;
    }
    n as f64 / t0.elapsed().as_secs_f64()
}

/// The median of `xs` (non-empty).
fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
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
    let delta = args.iter().any(|a| a == "--delta");
    let ceil_full = if only { 0.0 } else { ceiling("full", &dir) };
    let ceil_normal = if only { 0.0 } else { ceiling("normal", &dir) };
    println!(
        "## superstep engine vs LangGraph 1.2.24 + SqliteSaver (loop graph{})\n",
        if delta {
            ", its list as DeltaChannel(operator.add, snapshot_frequency=100)"
        } else {
            ""
        }
    );
    println!(
        "raw SQLite ceiling on {}: {:.0} commits/s at synchronous=FULL, {:.0} at NORMAL (WAL)\n",
        dir.display(),
        ceil_full,
        ceil_normal
    );
    let repeat: usize = arg("--repeat").map_or(3, |r| r.parse().unwrap());
    println!(
        "Each figure: the median of {repeat} runs. Floor: the same rows superstep wrote, re-inserted by a \
         bare loop of prepared statements into a fresh DB at the same setting, one transaction per \
         superstep (no engine). Max ratio: the floor's rate over LangGraph's (what a zero-cost engine \
         would reach).\n"
    );
    println!("| N | setting | superstep steps/s | LangGraph steps/s | ratio | txns/step (ss / LG) | % of raw ceiling | floor steps/s | % of floor | max ratio | µs/step ss / floor | DB MB (ss / LG) |");
    println!("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let modes: Vec<String> = arg("--modes")
        .unwrap_or_else(|| "full,normal,memory".into())
        .split(',')
        .map(str::to_string)
        .collect();
    if args.iter().any(|a| a == "--superstep-only") {
        for &n in &ns {
            for mode in &modes {
                let s = superstep_run(n, mode, &dir, delta);
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
            let (mut ss, mut lg, mut fl) = (Vec::new(), Vec::new(), Vec::new());
            let (mut last_s, mut last_l) = (None, None);
            for _ in 0..repeat {
                let s = superstep_run(n, mode, &dir, delta);
                let l = langgraph_run(&py, n, mode, &dir, delta);
                ss.push(s.steps as f64 / s.secs);
                lg.push(l.steps as f64 / l.secs);
                fl.push(replay_floor(mode, &dir, &s.rows));
                (last_s, last_l) = (Some(s), Some(l));
            }
            let (s, l) = (last_s.unwrap(), last_l.unwrap());
            let (sr, lr, fr) = (median(ss), median(lg), median(fl));
            let txns = s.txns as f64 / s.steps as f64;
            let ceil = match mode {
                "full" => format!("{:.0}%", 100.0 * sr * txns / ceil_full),
                "normal" => format!("{:.0}%", 100.0 * sr * txns / ceil_normal),
                _ => "-".into(),
            };
            println!(
                "| {n} | {mode} | {sr:.0} | {lr:.0} | {:.1}x | {txns:.2} / {:.2} | {ceil} | {fr:.0} | {:.0}% | {:.1}x | {:.1} / {:.1} | {:.1} / {:.1} |",
                sr / lr,
                l.txns as f64 / l.steps as f64,
                100.0 * sr / fr,
                fr / lr,
                1e6 / sr,
                1e6 / fr,
                s.bytes as f64 / 1e6,
                l.bytes as f64 / 1e6
            );
        }
    }
}

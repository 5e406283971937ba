//! The store doctor judged by LangGraph itself (issue 24): after a prune, LangGraph reads every
//! kept checkpoint and resumes every parked thread (tests/doctor/verify_pruned.py); `check`
//! against changed graphs names exactly the threads LangGraph breaks (tests/doctor/check_oracle.py's
//! doctor_check.json). Ignored: they need Python with LangGraph (`SUPERSTEP_TEST_PYTHON`; .ci/run),
//! and with `SUPERSTEP_DOCTOR_FIXTURES` naming a directory gen_doctor.py wrote (.ci/run: a live
//! one; with a `doctor.pgurl` in it, tests/postgres/ci.sh: on PostgresSaver) run on that store —
//! one test at a time there (`--test-threads 1`: a database is copied as a template, which no
//! other session may be using).

use crate::common::bridge::python;
use crate::common::{fixture, stderr, stdout, superstep};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use superstep::store::{Mode, Store};

fn json_of(o: &std::process::Output) -> Json {
    serde_json::from_str(&stdout(o))
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", stdout(o), stderr(o)))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The directory gen_doctor.py wrote (default: the committed fixtures), and the store in it:
/// its `doctor.pgurl` (a PostgresSaver database) or `doctor.sqlite`.
fn live_fixtures() -> (PathBuf, String) {
    let dir = std::env::var_os("SUPERSTEP_DOCTOR_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures"));
    let pg = dir.join("doctor.pgurl");
    let store = if pg.exists() {
        std::fs::read_to_string(pg).unwrap().trim().to_string()
    } else {
        dir.join("doctor.sqlite").to_str().unwrap().to_string()
    };
    (dir, store)
}

/// A scratch copy of the store (a file, or a Postgres database made from it as a template).
fn copy_store(store: &str, tag: &str, tmp: &Path) -> String {
    if !store.starts_with("postgres") {
        let to = tmp.join(format!("{tag}.sqlite"));
        std::fs::copy(store, &to).unwrap();
        return to.to_str().unwrap().to_string();
    }
    let (base, name) = store.rsplit_once('/').unwrap();
    let name = name.split('?').next().unwrap();
    let new = format!("{name}_{tag}");
    let mut admin =
        postgres::Client::connect(&format!("{base}/postgres"), postgres::NoTls).unwrap();
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS \"{new}\" WITH (FORCE)"))
        .unwrap();
    admin
        .batch_execute(&format!("CREATE DATABASE \"{new}\" TEMPLATE \"{name}\""))
        .unwrap();
    format!("{base}/{new}")
}

fn run_py(args: &[&str]) -> std::process::Output {
    std::process::Command::new(python())
        .args(args)
        .env("PYTHONHASHSEED", "0")
        .output()
        .expect("run python")
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run; on Postgres: tests/postgres/ci.sh)"]
fn after_a_prune_langgraph_reads_every_kept_checkpoint_and_resumes_every_parked_thread() {
    let (dir, store) = live_fixtures();
    let tmp = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let verify = root.join("tests/doctor/verify_pruned.py");
    let expected = dir.join("doctor.json");
    for (tag, policy) in [
        ("keep1", vec!["--keep", "1"]),
        (
            "keep3",
            vec!["--keep", "3", "--keep-fork-tips", "--delete-thread", "done"],
        ),
    ] {
        let copy = copy_store(&store, tag, tmp.path());
        let mut args = vec!["prune", "--db", &copy, "--yes", "--vacuum"];
        args.extend(&policy);
        let o = superstep(&args);
        assert!(o.status.success(), "{policy:?}: {}", stderr(&o));
        eprintln!("{}", stdout(&o));
        let v = run_py(&[
            s(&verify),
            "--before",
            &store,
            "--after",
            &copy,
            "--expected",
            s(&expected),
        ]);
        eprintln!("{policy:?}: {}{}", stdout(&v), stderr(&v));
        assert!(
            v.status.success(),
            "{policy:?}: LangGraph reads the pruned store differently"
        );
        assert!(
            stdout(&v).contains("7 parked checkpoints resumed; 0 differences"),
            "{}",
            stdout(&v)
        );
    }
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run; on Postgres: tests/postgres/ci.sh)"]
fn check_names_exactly_the_threads_langgraph_breaks_under_each_changed_graph() {
    let (dir, store) = live_fixtures();
    let oracle_file = dir.join("doctor_check.json");
    let oracle: Json = serde_json::from_str(
        &std::fs::read_to_string(if oracle_file.exists() {
            oracle_file
        } else {
            fixture("doctor_check.json")
        })
        .unwrap(),
    )
    .unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let py = python();
    for (version, want) in oracle.as_object().unwrap() {
        let graph = root.join(format!("tests/doctor/graphs/{version}/graph.py"));
        let g = format!("{}:graph", graph.display());
        let o = superstep(&[
            "check",
            "--db",
            &store,
            "--graph",
            &g,
            "--python",
            s(&py),
            "--json",
        ]);
        let r = json_of(&o);
        let broken: Vec<&str> = r["threads"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["broken"] == true)
            .map(|t| t["thread_id"].as_str().unwrap())
            .collect();
        let parked: Vec<&str> = r["threads"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["broken"] == true && t["parked"] == true)
            .map(|t| t["thread_id"].as_str().unwrap())
            .collect();
        let list = |k: &str| -> Vec<&str> {
            want[k]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_str().unwrap())
                .collect()
        };
        assert_eq!(broken, list("broken"), "{version}: {r}");
        assert_eq!(parked, list("parked_broken"), "{version}");
        assert_eq!(
            o.status.code(),
            Some(if parked.is_empty() { 0 } else { 1 }),
            "{version}: {}",
            stderr(&o)
        );
    }
    // the graph that wrote the store: nothing breaks
    let g = format!(
        "{}:graph",
        root.join("tests/doctor/graphs/v1/graph.py").display()
    );
    let o = superstep(&["check", "--db", &store, "--graph", &g, "--python", s(&py)]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("8 threads checked, 6 parked; 0 would break"),
        "{}",
        stdout(&o)
    );
}

#[test]
#[ignore = "needs a Postgres server: tests/postgres/ci.sh (SUPERSTEP_DOCTOR_FIXTURES with a doctor.pgurl)"]
fn on_postgres_du_measures_blobs_and_prune_refuses_while_a_session_writes() {
    let (dir, store) = live_fixtures();
    assert!(
        store.starts_with("postgres"),
        "SUPERSTEP_DOCTOR_FIXTURES has no doctor.pgurl"
    );
    let exp: Json =
        serde_json::from_str(&std::fs::read_to_string(dir.join("doctor.json")).unwrap()).unwrap();
    // every blob-held value is as long as LangGraph's serializer made it
    let st = Store::open(Path::new(&store), Mode::ReadOnly).unwrap();
    let mut compared = 0;
    st.scan_sizes(&|_| true, &mut |t| {
        for cp in &t.checkpoints {
            for ch in cp
                .channels
                .iter()
                .filter(|c| c.held == superstep::store::sizes::Held::Blob)
            {
                assert_eq!(
                    exp["sizes"][&t.thread_id][&cp.ns][&cp.id][&ch.channel].as_u64(),
                    Some(ch.bytes),
                    "{} {} {}",
                    t.thread_id,
                    cp.id,
                    ch.channel
                );
                compared += 1;
            }
        }
        Ok(())
    })
    .unwrap();
    assert!(compared > 50, "{compared}");
    // and superstep reads the store as PostgresSaver did (as oracle_fixtures does for the rest)
    let mut tally = crate::oracle_fixtures::Tally::default();
    crate::oracle_fixtures::compare_fixture("doctor (Postgres)", &exp, &st, &mut tally);
    tally.report("doctor on PostgresSaver");
    drop(st);
    let du = json_of(&superstep(&["du", "--db", &store, "--json"]));
    let mut c = postgres::Client::connect(&store, postgres::NoTls).unwrap();
    let q = |c: &mut postgres::Client, sql: &str| -> i64 { c.query_one(sql, &[]).unwrap().get(0) };
    assert_eq!(
        du["totals"]["checkpoints"],
        q(&mut c, "SELECT COUNT(*) FROM checkpoints")
    );
    assert_eq!(
        du["totals"]["blob_bytes"],
        q(
            &mut c,
            "SELECT COALESCE(SUM(octet_length(blob)), 0)::int8 FROM checkpoint_blobs"
        )
    );
    assert_eq!(
        du["totals"]["write_bytes"],
        q(
            &mut c,
            "SELECT SUM(octet_length(blob))::int8 FROM checkpoint_writes"
        )
    );
    // a template may have no other session
    drop(c);
    // a session in the middle of a write: prune refuses and names it
    let tmp = tempfile::tempdir().unwrap();
    let copy = copy_store(&store, "busy", tmp.path());
    let mut writer = postgres::Client::connect(&copy, postgres::NoTls).unwrap();
    writer.batch_execute("SET application_name = 'busy-app'; BEGIN; UPDATE checkpoint_writes SET idx = idx WHERE false; LOCK TABLE checkpoint_writes IN ROW EXCLUSIVE MODE").unwrap();
    let o = superstep(&["prune", "--db", &copy, "--keep", "1", "--yes"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("another session is writing the checkpoint tables (pid")
            && stderr(&o).contains("busy-app"),
        "{}",
        stderr(&o)
    );
    writer.batch_execute("ROLLBACK").unwrap();
    let o = superstep(&["prune", "--db", &copy, "--keep", "1", "--yes"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

//! The store doctor: `du`, `prune`, `check` (issue 24), on the store tests/oracle/gen_doctor.py
//! writes with real LangGraph (threads with forks, parked interrupts and breakpoints, a
//! DeltaChannel, a subgraph call, an app class) and on the differential suite's stores.
//!
//! These use the committed fixture (tests/fixtures/doctor.*) and the differential suite's
//! stores; doctor_live has the tests LangGraph judges (Python, Postgres).

use crate::common::{dir_state, fixture, scratch, stderr, stdout, superstep};
use crate::oracle_fixtures::{compare_fixture, Tally};
use serde_json::Value as Json;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use superstep::store::{Mode, Store};

fn json_of(o: &std::process::Output) -> Json {
    serde_json::from_str(&stdout(o))
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", stdout(o), stderr(o)))
}

fn expected() -> Json {
    serde_json::from_str(&std::fs::read_to_string(fixture("doctor.json")).unwrap()).unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn du_measures_each_value_as_langgraph_encoded_it() {
    // gen_doctor.py recorded the length of every stored channel value as LangGraph's serializer
    // writes it; du reads the same lengths out of the checkpoint blobs without decoding them
    let exp = expected();
    let store = Store::open(&fixture("doctor.sqlite"), Mode::ReadOnly).unwrap();
    let mut compared = 0;
    store
        .scan_sizes(&|_| true, &mut |t| {
            for cp in &t.checkpoints {
                let want = &exp["sizes"][&t.thread_id][&cp.ns][&cp.id];
                assert!(
                    want.is_object(),
                    "{} {} {}: not recorded",
                    t.thread_id,
                    cp.ns,
                    cp.id
                );
                for ch in &cp.channels {
                    if ch.held == superstep::store::sizes::Held::Nothing {
                        assert!(want.get(&ch.channel).is_none() || want[&ch.channel].is_null());
                        continue;
                    }
                    assert_eq!(
                        want[&ch.channel].as_u64(),
                        Some(ch.bytes),
                        "{} {} {} {}",
                        t.thread_id,
                        cp.ns,
                        cp.id,
                        ch.channel
                    );
                    compared += 1;
                }
                let held = cp
                    .channels
                    .iter()
                    .filter(|c| c.held != superstep::store::sizes::Held::Nothing)
                    .count();
                assert_eq!(
                    held,
                    want.as_object().unwrap().len(),
                    "{} {}: channels",
                    t.thread_id,
                    cp.id
                );
            }
            Ok(())
        })
        .unwrap();
    assert!(compared > 250, "{compared} values compared");
}

#[test]
fn du_totals_are_what_the_tables_hold() {
    let db = fixture("doctor.sqlite");
    let o = superstep(&["du", "--db", s(&db), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let du = json_of(&o);
    let c = rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap();
    let q = |sql: &str| -> u64 { c.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap() as u64 };
    let t = &du["totals"];
    assert_eq!(
        t["threads"],
        q("SELECT COUNT(DISTINCT thread_id) FROM checkpoints")
    );
    assert_eq!(
        t["namespaces"],
        q("SELECT COUNT(*) FROM (SELECT DISTINCT thread_id, checkpoint_ns FROM checkpoints)")
    );
    assert_eq!(t["checkpoints"], q("SELECT COUNT(*) FROM checkpoints"));
    assert_eq!(t["writes"], q("SELECT COUNT(*) FROM writes"));
    assert_eq!(
        t["checkpoint_bytes"],
        q("SELECT SUM(length(checkpoint)) FROM checkpoints")
    );
    assert_eq!(
        t["metadata_bytes"],
        q("SELECT SUM(length(metadata)) FROM checkpoints")
    );
    assert_eq!(t["write_bytes"], q("SELECT SUM(length(value)) FROM writes"));
    assert_eq!(
        du["space"]["total"],
        q("SELECT page_count * page_size FROM pragma_page_count, pragma_page_size")
    );
    // the thread with the most bytes first; `long` holds 32 checkpoints of a growing state
    assert_eq!(du["threads"][0]["thread_id"], "long");
    assert_eq!(du["threads"][0]["checkpoints"], 32);
    let threads_bytes: u64 = du["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(
        threads_bytes,
        t["checkpoint_bytes"].as_u64().unwrap()
            + t["metadata_bytes"].as_u64().unwrap()
            + t["write_bytes"].as_u64().unwrap()
    );
    // `messages` (a DeltaChannel) is the biggest channel; `notes` (operator.add) grows on every
    // update and is stored whole at every checkpoint: the DeltaChannel estimate names it
    assert_eq!(du["channels"][0]["channel"], "messages");
    let delta: Vec<&str> = du["delta"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["channel"].as_str().unwrap())
        .collect();
    assert_eq!(delta, ["notes"]);
    // the prune estimate is the planner's own (--keep 1 --keep-fork-tips)
    let p = superstep(&[
        "prune",
        "--db",
        s(&db),
        "--keep",
        "1",
        "--keep-fork-tips",
        "--json",
    ]);
    assert_eq!(du["prune"]["bytes"], json_of(&p)["totals"]["bytes"]);
}

#[test]
fn du_and_a_dry_run_leave_the_store_alone() {
    let (dir, db) = scratch("doctor.sqlite");
    let before = dir_state(dir.path());
    for args in [
        vec!["du", "--db", s(&db)],
        vec!["du", "--db", s(&db), "--tables", "--json"],
        vec!["prune", "--db", s(&db), "--keep", "1"],
        vec!["prune", "--db", s(&db), "--delete-thread", "*", "--json"],
    ] {
        let o = superstep(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    }
    assert_eq!(before, dir_state(dir.path()));
}

/// Threads and namespaces of the expected dump still in `db`, each history cut to what is kept.
fn kept_part(exp: &Json, db: &Path) -> Json {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut out = exp.clone();
    let threads: Vec<Json> = exp["threads"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| {
            let mut st = c
                .prepare("SELECT checkpoint_id FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2")
                .unwrap();
            let ids: BTreeSet<String> = st
                .query_map([t["thread_id"].as_str().unwrap(), t["checkpoint_ns"].as_str().unwrap()], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            if ids.is_empty() {
                return None;
            }
            let mut t = t.clone();
            let hist: Vec<Json> = t["history"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|h| ids.contains(h["config"]["configurable"]["checkpoint_id"].as_str().unwrap()))
                .cloned()
                .collect();
            assert_eq!(hist.len(), ids.len(), "every kept checkpoint was in the history");
            t["history"] = Json::Array(hist);
            Some(t)
        })
        .collect();
    out["threads"] = Json::Array(threads);
    out
}

#[test]
fn prune_deletes_what_the_dry_run_said_and_langgraphs_reading_of_the_rest_holds() {
    let (_dir, db) = scratch("doctor.sqlite");
    let dry = json_of(&superstep(&[
        "prune",
        "--db",
        s(&db),
        "--keep",
        "1",
        "--json",
    ]));
    let o = superstep(&["prune", "--db", s(&db), "--keep", "1", "--yes", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let done = json_of(&o);
    assert_eq!(dry["totals"], done["totals"]);
    assert_eq!(dry["threads"], done["threads"]);
    let t = &done["totals"];
    assert_eq!(done["deleted"]["checkpoints"], t["checkpoints_dropped"]);
    assert_eq!(done["deleted"]["writes"], t["writes_dropped"]);
    // what stays: every thread's newest checkpoint, the paused fork tip of `forked`, and the
    // DeltaChannel chains of heads whose `messages` is rebuilt from the writes since a snapshot
    let c = rusqlite::Connection::open(&db).unwrap();
    let left: u64 = c
        .query_row("SELECT COUNT(*) FROM checkpoints", [], |r| {
            r.get::<_, i64>(0)
        })
        .unwrap() as u64;
    assert_eq!(
        left,
        t["checkpoints"].as_u64().unwrap() - t["checkpoints_dropped"].as_u64().unwrap()
    );
    let forked = done["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["thread_id"] == "forked")
        .unwrap();
    assert_eq!(forked["kept"]["paused"], 1);
    assert!(forked["kept"]["delta_chain"].as_u64().unwrap() >= 1);
    // superstep reads every kept checkpoint as LangGraph read it before the prune
    let mut tally = Tally::default();
    let store = Store::open(&db, Mode::ReadOnly).unwrap();
    compare_fixture(
        "doctor-pruned",
        &kept_part(&expected(), &db),
        &store,
        &mut tally,
    );
    tally.report("pruned doctor store");
    assert!(tally.checkpoints >= 20);
    // a second prune finds nothing more to drop
    let again = json_of(&superstep(&[
        "prune",
        "--db",
        s(&db),
        "--keep",
        "1",
        "--json",
    ]));
    assert_eq!(again["totals"]["checkpoints_dropped"], 0);
}

#[test]
fn the_reading_check_fails_on_a_prune_that_ignores_the_delta_chain() {
    // the control for the test above: keep only each thread's newest root checkpoint, as a
    // prune that knows nothing of DeltaChannels would; `messages` then rebuilds from nothing
    let (_dir, db) = scratch("doctor.sqlite");
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch(
        "DELETE FROM writes WHERE checkpoint_ns = '' AND checkpoint_id NOT IN (SELECT MAX(checkpoint_id) FROM checkpoints WHERE checkpoint_ns = '' GROUP BY thread_id);
         DELETE FROM checkpoints WHERE checkpoint_ns = '' AND checkpoint_id NOT IN (SELECT MAX(checkpoint_id) FROM checkpoints WHERE checkpoint_ns = '' GROUP BY thread_id);",
    )
    .unwrap();
    drop(c);
    let mut tally = Tally::default();
    let store = Store::open(&db, Mode::ReadOnly).unwrap();
    compare_fixture(
        "doctor-naive",
        &kept_part(&expected(), &db),
        &store,
        &mut tally,
    );
    assert!(
        tally.failures.iter().any(|f| f.contains("values")),
        "a naive prune should read differently: {:?}",
        tally.failures
    );
}

#[test]
fn whole_threads_go_by_pattern_but_not_a_parked_one() {
    let (_dir, db) = scratch("doctor.sqlite");
    let o = superstep(&[
        "prune",
        "--db",
        s(&db),
        "--delete-thread",
        "*ed*",
        "--yes",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = json_of(&o);
    let by = |a: &str| -> Vec<String> {
        r["threads"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["action"] == a)
            .map(|p| p["thread_id"].as_str().unwrap().to_string())
            .collect()
    };
    // forked's newest checkpoint is finished; the parked_* threads wait on an interrupt (in the
    // graph, in the subgraph) or at a breakpoint
    assert_eq!(by("delete"), ["forked"]);
    assert_eq!(by("keep"), ["parked_break", "parked_review", "parked_sub"]);
    let c = rusqlite::Connection::open(&db).unwrap();
    let n = |t: &str| -> i64 {
        c.query_row(
            "SELECT COUNT(*) FROM checkpoints WHERE thread_id = ?1",
            [t],
            |r| r.get::<_, i64>(0),
        )
        .unwrap()
            + c.query_row(
                "SELECT COUNT(*) FROM writes WHERE thread_id = ?1",
                [t],
                |r| r.get::<_, i64>(0),
            )
            .unwrap()
    };
    assert_eq!(n("forked"), 0);
    assert!(n("parked_review") > 0);
    assert!(
        n("done") > 0,
        "threads the pattern does not name are left alone"
    );
}

#[test]
fn prune_refuses_a_store_another_process_has_open() {
    let (_dir, db) = scratch("doctor.sqlite");
    let c = rusqlite::Connection::open(&db).unwrap();
    // as SqliteSaver leaves it: WAL, a connection open (it holds the -shm's lock)
    c.pragma_update(None, "journal_mode", "WAL").unwrap();
    let _: i64 = c
        .query_row("SELECT COUNT(*) FROM checkpoints", [], |r| r.get(0))
        .unwrap();
    let rows = |c: &rusqlite::Connection| -> i64 {
        c.query_row("SELECT COUNT(*) FROM checkpoints", [], |r| r.get(0))
            .unwrap()
    };
    let before = rows(&c);
    let o = superstep(&["prune", "--db", s(&db), "--keep", "1", "--yes"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("process {} has it open", std::process::id())),
        "{err}"
    );
    assert!(
        err.contains("prune changes nothing while another process may be writing"),
        "{err}"
    );
    assert_eq!(rows(&c), before);
    drop(c);
    let o = superstep(&["prune", "--db", s(&db), "--keep", "1", "--yes"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn prune_says_what_is_wrong_with_its_arguments() {
    let db = fixture("doctor.sqlite");
    for (args, says) in [
        (vec!["prune", "--db", s(&db)], "say what to drop"),
        (
            vec!["prune", "--db", s(&db), "--keep", "0"],
            "--keep is at least 1",
        ),
        (
            vec!["prune", "--db", s(&db), "--older-than", "last tuesday"],
            "--older-than \"last tuesday\"",
        ),
        (vec!["prune", "--keep", "1"], "--db FILE is required"),
        (
            vec![
                "prune",
                "--db",
                "/nonexistent/x.sqlite",
                "--keep",
                "1",
                "--yes",
            ],
            "no such file",
        ),
    ] {
        let o = superstep(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn prune_older_than_keeps_what_is_newer() {
    // every checkpoint of the fixture is newer than 2000: nothing goes
    let db = fixture("doctor.sqlite");
    let r = json_of(&superstep(&[
        "prune",
        "--db",
        s(&db),
        "--older-than",
        "2000-01-01",
        "--json",
    ]));
    assert_eq!(r["totals"]["checkpoints_dropped"], 0);
    // and all of them older than a day in the future: as --keep 1
    let r1 = json_of(&superstep(&[
        "prune",
        "--db",
        s(&db),
        "--older-than",
        "2999-01-01",
        "--json",
    ]));
    let k1 = json_of(&superstep(&[
        "prune",
        "--db",
        s(&db),
        "--keep",
        "1",
        "--json",
    ]));
    assert_eq!(
        r1["totals"]["checkpoints_dropped"],
        k1["totals"]["checkpoints_dropped"]
    );
}

fn spec_for(db: &Path) -> Option<PathBuf> {
    let g = db.file_stem()?.to_str()?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    [root.join("graphs"), root.join("tests/differential/graphs")]
        .into_iter()
        .map(|d| d.join(format!("{g}.json")))
        .find(|p| p.exists())
}

#[test]
fn check_of_every_spec_against_the_store_langgraph_wrote_for_it_finds_nothing() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/differential/expected");
    let mut graphs = 0;
    let mut parked = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let db = e.unwrap().path();
        if db.extension().is_none_or(|x| x != "sqlite") {
            continue;
        }
        let Some(spec) = spec_for(&db) else { continue };
        let o = superstep(&["check", "--db", s(&db), "--graph", s(&spec), "--json"]);
        assert!(
            o.status.success(),
            "{}: {}{}",
            db.display(),
            stdout(&o),
            stderr(&o)
        );
        let r = json_of(&o);
        assert_eq!(r["broken"], 0, "{}: {r}", db.display());
        graphs += 1;
        parked += r["parked"].as_u64().unwrap();
    }
    assert!(
        graphs >= 30 && parked >= 25,
        "{graphs} graphs, {parked} parked threads"
    );
}

#[test]
fn check_of_a_changed_spec_names_exactly_the_threads_parked_in_the_change() {
    let db =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/differential/expected/subgraph.sqlite");
    let specs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/doctor/specs");
    // the threads LangGraph left parked inside the subgraph node `interview`
    let inside = [
        "paused",
        "sub_update_at",
        "sub_update_unknown_node",
        "timetravel",
    ];
    for (spec, what) in [
        ("subgraph_renamed.json", "node"),
        ("subgraph_flat.json", "subgraph"),
    ] {
        let o = superstep(&[
            "check",
            "--db",
            s(&db),
            "--graph",
            s(&specs.join(spec)),
            "--json",
        ]);
        assert_eq!(o.status.code(), Some(1), "{spec}: {}", stderr(&o));
        let r = json_of(&o);
        let broken: Vec<&str> = r["threads"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["broken"] == true)
            .map(|t| t["thread_id"].as_str().unwrap())
            .collect();
        assert_eq!(broken, inside, "{spec}");
        for t in r["threads"].as_array().unwrap() {
            assert_eq!(t["findings"][0]["what"], what, "{spec}: {t}");
        }
        let human = stdout(&superstep(&[
            "check",
            "--db",
            s(&db),
            "--graph",
            s(&specs.join(spec)),
        ]));
        assert!(
            human.contains("11 threads checked, 4 parked; 4 would break (4 of them parked)"),
            "{human}"
        );
    }
}

#[test]
fn check_needs_a_graph_and_says_so() {
    let o = superstep(&["check", "--db", s(&fixture("doctor.sqlite"))]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--graph NEWREF"), "{}", stderr(&o));
}

#[test]
fn the_tui_du_view_shows_the_report_du_prints() {
    let db = "tests/fixtures/doctor.sqlite";
    let o = superstep(&[
        "--db",
        db,
        "--keys",
        ":du<Enter>",
        "--print",
        "--size",
        "120x40",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let screen = stdout(&o);
    assert!(screen.contains("Store sizes (superstep du)"), "{screen}");
    let cli = stdout(&superstep(&["du", "--db", db, "--top", "50"]));
    for line in cli.lines().skip(3).take(10) {
        assert!(
            screen.contains(line.trim_end()),
            "{line:?} not on screen:\n{screen}"
        );
    }
    crate::common::snapshot_settings().bind(|| insta::assert_snapshot!("doctor_du_view", screen));
}

#[test]
fn check_parked_looks_only_at_parked_threads() {
    let db =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/differential/expected/subgraph.sqlite");
    let spec =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/doctor/specs/subgraph_renamed.json");
    let o = superstep(&[
        "check",
        "--db",
        s(&db),
        "--graph",
        s(&spec),
        "--parked",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let r = json_of(&o);
    assert_eq!(
        (r["checked"].as_u64(), r["parked"].as_u64()),
        (Some(4), Some(4))
    );
    let o = superstep(&[
        "check",
        "--db",
        s(&db),
        "--graph",
        s(&spec),
        "--thread",
        "by_*",
        "--json",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "a finished thread breaks nothing: {}",
        stderr(&o)
    );
    assert_eq!(json_of(&o)["checked"], 1);
}

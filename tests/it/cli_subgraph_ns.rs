//! `update`, `replay` and `resume --checkpoint` with `--ns`: a subgraph's config, addressed from
//! the command line. The threads of `tests/differential/scenarios/subgraph.json` that address a
//! subgraph (sub_update, sub_update_at, sub_replay, sub_resume_at) are played through the CLI
//! binary and their rows compared with the ones real LangGraph 1.2.24 wrote for the same ops
//! (`tests/differential/expected/subgraph.sqlite`, made by run_twin.py). Rejected addresses exit 2
//! and leave the file alone.

use crate::common;
use common::normalize::{first_diff, read_only, Normalizer};
use common::*;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn ok(args: &[&str]) -> String {
    let o = superstep(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

/// The thread's first subgraph namespace of node `interview` (as run_twin.py's "interview").
fn interview_ns(db: &Path, thread: &str) -> String {
    let c = read_only(db);
    c.query_row(
        "SELECT checkpoint_ns FROM checkpoints WHERE thread_id=? AND checkpoint_ns LIKE 'interview:%' \
         GROUP BY checkpoint_ns ORDER BY MIN(checkpoint_id) LIMIT 1",
        [thread],
        |r| r.get(0),
    )
    .unwrap()
}

/// The `n`-th checkpoint (oldest first) of the thread in namespace `ns`.
fn nth(db: &Path, thread: &str, ns: &str, n: usize) -> String {
    let c = read_only(db);
    let mut s = c
        .prepare(
            "SELECT checkpoint_id FROM checkpoints WHERE thread_id=? AND checkpoint_ns=? \
             ORDER BY checkpoint_id",
        )
        .unwrap();
    let ids: Vec<String> = s
        .query_map([thread, ns], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    ids[n].clone()
}

#[test]
fn subgraph_addressing_from_the_cli_writes_langgraphs_rows() {
    let dir = tempfile::tempdir().unwrap();
    let dbp = dir.path().join("ns.sqlite");
    let db = dbp.to_str().unwrap();
    let g = root().join("graphs/subgraph.json");
    let g = g.to_str().unwrap();
    let cmd = |t: &str, sub: &str, rest: &[&str]| {
        let mut a = vec!["--db", db, sub, g, "-t", t];
        a.extend_from_slice(rest);
        ok(&a)
    };

    // sub_update: update_state on the subgraph's latest checkpoint, then resume
    cmd("sub_update", "run", &[]);
    let ns = interview_ns(&dbp, "sub_update");
    let out = cmd(
        "sub_update",
        "update",
        &[
            "--ns",
            &ns,
            "--values",
            r#"{"topic": "edited inside the subgraph"}"#,
        ],
    );
    assert!(out.contains("edited inside the subgraph"), "{out}");
    cmd(
        "sub_update",
        "resume",
        &["--value", r#""after a subgraph edit""#],
    );

    // sub_update_at: on the subgraph's input checkpoint, as __start__
    cmd("sub_update_at", "run", &[]);
    let ns = interview_ns(&dbp, "sub_update_at");
    let at = nth(&dbp, "sub_update_at", &ns, 0);
    cmd(
        "sub_update_at",
        "update",
        &[
            "--ns",
            &ns,
            "--checkpoint",
            &at,
            "--values",
            r#"{"log": ["from the input checkpoint"]}"#,
            "--as-node",
            "__start__",
        ],
    );
    // LangGraph ends this resume on the subgraph's KeyError: exit code 3, the error pause printed
    let o = superstep(&[
        "--db",
        db,
        "resume",
        g,
        "-t",
        "sub_update_at",
        "--value",
        r#""answered""#,
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stdout(&o).contains("paused: error in interview: KeyError('topic')"));

    // sub_replay: time travel through the subgraph's checkpoint #1
    cmd("sub_replay", "run", &[]);
    cmd("sub_replay", "resume", &["--value", r#""first""#]);
    let ns = interview_ns(&dbp, "sub_replay");
    let at = nth(&dbp, "sub_replay", &ns, 1);
    cmd("sub_replay", "replay", &["--ns", &ns, "--checkpoint", &at]);
    cmd("sub_replay", "resume", &["--value", r#""second""#]);

    // sub_resume_at: a Command(resume) on the subgraph's checkpoint #1
    cmd("sub_resume_at", "run", &[]);
    cmd("sub_resume_at", "resume", &["--value", r#""first""#]);
    let ns = interview_ns(&dbp, "sub_resume_at");
    let at = nth(&dbp, "sub_resume_at", &ns, 1);
    cmd(
        "sub_resume_at",
        "resume",
        &["--ns", &ns, "--checkpoint", &at, "--value", r#""again""#],
    );

    let lg = superstep::engine::loaded::load(&root().join("graphs/subgraph.json")).unwrap();
    let norm = Normalizer::new(&lg);
    let names: Vec<String> = ["sub_update", "sub_update_at", "sub_replay", "sub_resume_at"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let ours = norm.normalize_threads(&dbp, Some(&names));
    let expected = root().join("tests/differential/expected/subgraph.sqlite");
    let langgraph = norm.normalize_threads(&expected, Some(&names));
    if let Some(d) = first_diff(&ours, &langgraph, "subgraph") {
        panic!("the CLI's rows differ from LangGraph's: {d}");
    }
    // the comparison saw the subgraph's rows (namespaces, their checkpoints and writes)
    let text = ours.to_string();
    assert!(text.contains("interview"), "no subgraph rows compared");
}

#[test]
fn a_bad_subgraph_address_is_one_line_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let dbp = dir.path().join("ns.sqlite");
    let db = dbp.to_str().unwrap();
    let g = root().join("graphs/subgraph.json");
    let g = g.to_str().unwrap();
    ok(&["--db", db, "run", g, "-t", "t"]);
    let ns = interview_ns(&dbp, "t");
    let root_cp = nth(&dbp, "t", "", 0);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "--db", db, "update", g, "-t", "t", "--ns", "nope:1", "--values", "{}",
            ],
            "has no namespace \"nope:1\"",
        ),
        (
            vec![
                "--db",
                db,
                "replay",
                g,
                "-t",
                "t",
                "--ns",
                &ns,
                "--checkpoint",
                &root_cp,
            ],
            "in namespace",
        ),
        (
            vec![
                "--db", db, "resume", g, "-t", "t", "--ns", &ns, "--value", "1",
            ],
            "--checkpoint",
        ),
        (
            vec![
                "--db",
                db,
                "update",
                g,
                "-t",
                "t",
                "--ns",
                &ns,
                "--values",
                r#"{"topic": "x"}"#,
                "--as-node",
                "prep",
            ],
            "prep",
        ),
    ];
    for (args, needle) in cases {
        let before = dir_state(dir.path());
        let o = superstep(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
        // (clap's own usage errors carry a usage block)
        if !err.starts_with("error: the following required arguments") {
            assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err:?}");
        }
        assert_eq!(
            before,
            dir_state(dir.path()),
            "{args:?} changed the directory"
        );
    }
}

/// The TUI in an opened subgraph namespace (`s`): `u` is the subgraph's update_state and `t` time
/// travel from its checkpoint, writing the rows `update --ns` / `replay --ns` write (which the test
/// above checks against LangGraph); stepping stays refused there.
#[test]
fn the_tui_updates_and_time_travels_inside_a_subgraph_namespace() {
    let dir = tempfile::tempdir().unwrap();
    let (tui, cli) = (dir.path().join("tui.sqlite"), dir.path().join("cli.sqlite"));
    let g = root().join("graphs/subgraph.json");
    let g = g.to_str().unwrap();
    // paused at the subgraph's interrupt: the newest root checkpoint has the subgraph task
    for db in [&tui, &cli] {
        ok(&["--db", db.to_str().unwrap(), "run", g, "-t", "t"]);
    }
    let tdb = tui.to_str().unwrap();
    // in the namespace: stepping is refused with a message, the file is unchanged
    let before = dir_state(dir.path());
    let f = ok(&[g, "--db", tdb, "-t", "t", "--print", "--keys", "s n"]);
    assert!(
        f.contains("t (time travel) and u (update) work here"),
        "{f}"
    );
    assert_eq!(before, dir_state(dir.path()));
    // u: update_state on the subgraph's newest checkpoint
    let f = ok(&[
        g,
        "--db",
        tdb,
        "-t",
        "t",
        "--print",
        "--keys",
        r#"s u {"topic":"from_the_tui"}<Enter>"#,
    ]);
    assert!(f.contains("the subgraph resumes from it"), "{f}");
    let ns = interview_ns(&tui, "t");
    // (task ids hash each DB's own checkpoint ids: the namespaces differ)
    let cli_ns = interview_ns(&cli, "t");
    ok(&[
        "--db",
        cli.to_str().unwrap(),
        "update",
        g,
        "-t",
        "t",
        "--ns",
        &cli_ns,
        "--values",
        r#"{"topic": "from_the_tui"}"#,
    ]);
    // :travel (t on the checkpoint it selects) to the subgraph's checkpoint #1, y to confirm
    // (the TUI writes the fork), c to run on in the same session (the CLI's replay runs on)
    let tui_at = nth(&tui, "t", &ns, 1);
    let keys = format!("s :travel<Space>{tui_at}<Enter> y c");
    let f = ok(&[g, "--db", tdb, "-t", "t", "--print", "--keys", &keys]);
    assert!(f.contains("paused: interrupt in interview"), "{f}");
    let at = nth(&cli, "t", &cli_ns, 1);
    ok(&[
        "--db",
        cli.to_str().unwrap(),
        "replay",
        g,
        "-t",
        "t",
        "--ns",
        &cli_ns,
        "--checkpoint",
        &at,
    ]);
    let lg = superstep::engine::loaded::load(&root().join("graphs/subgraph.json")).unwrap();
    let norm = Normalizer::new(&lg);
    let names = vec!["t".to_string()];
    let (a, b) = (
        norm.normalize_threads(&tui, Some(&names)),
        norm.normalize_threads(&cli, Some(&names)),
    );
    if let Some(d) = first_diff(&a, &b, "tui-vs-cli") {
        panic!("the TUI's rows differ from the CLI's: {d}");
    }
    // both wrote the update and the fork
    let c = read_only(&tui);
    let updates: i64 = c
        .query_row(
            "SELECT count(*) FROM checkpoints WHERE thread_id='t' AND checkpoint_ns=? \
             AND json_extract(CAST(metadata AS TEXT), '$.source')='update'",
            [&ns],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(updates, 1);
}

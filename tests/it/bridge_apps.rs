//! Real-style LangGraph 1.x apps (tests/bridge/apps: the react-agent and memory-agent templates'
//! shapes, a prebuilt ReAct agent, a functional-API graph — each with a fake chat model) driven
//! through superstep's command line, compared with a straight run of the same operations
//! (tests/bridge/straight.py: plain `invoke` / `update_state` with the same context and config).
//! Rows are normalised like bridge_rows (ids recomputed and labelled; random message ids
//! relabelled).
//!
//! These need Python with LangGraph: `#[ignore]`d, run by `.ci/run` with `SUPERSTEP_TEST_PYTHON`.

use crate::common;

use crate::common::bridge::{bridge_dir as here, python, scenario};
use common::normalize::{
    first_diff, null_raced_message_ids, relabel_random_ids, store_items, Normalizer,
};
use serde_json::{json, Value as Json};
use std::path::Path;
use std::process::{Command, Output};
use superstep::store::{Mode, Store};

/// superstep with the pinned interpreter, in `cwd`.
pub fn superstep_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_superstep"))
        .args(args)
        .arg("--python")
        .arg(python())
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .env("PYTHONHASHSEED", "0")
        .output()
        .expect("run superstep")
}

/// The graph argument(s) of a scenario: `apps/langgraph.json:ID` -> [FILE, ID].
fn graph_args(scen: &Json) -> Vec<String> {
    let g = scen["graph"].as_str().unwrap();
    match g.split_once(".json:") {
        Some((f, id)) => vec![
            here().join(format!("{f}.json")).display().to_string(),
            id.to_string(),
        ],
        None => vec![here().join(g).display().to_string()],
    }
}

/// The straight run of a scenario into `db`.
fn straight(name: &str, db: &Path, dir: &Path) {
    let st = Command::new(python())
        .arg(here().join("straight.py"))
        .arg(name)
        .arg(db)
        .arg(dir.join("straight.events.json"))
        .env("PYTHONHASHSEED", "0")
        .output()
        .expect("run the straight Python run");
    assert!(
        st.status.success(),
        "straight.py {name} failed: {}",
        String::from_utf8_lossy(&st.stderr)
    );
}

fn root_checkpoint(db: &Path, thread: &str, n: usize) -> String {
    let store = Store::open(db, Mode::ReadOnly).unwrap();
    let mut ids: Vec<String> = store
        .history(thread, "", None, usize::MAX)
        .unwrap()
        .into_iter()
        .map(|r| r.checkpoint_id)
        .collect();
    ids.reverse();
    ids[n].clone()
}

/// Every op of the scenario as a superstep command (run / resume / continue / replay / update,
/// with --context / --config as the op, its thread or the scenario sets them).
fn drive_cli(scen: &Json, db: &Path) -> Vec<Output> {
    let graph = graph_args(scen);
    let mut outs = Vec::new();
    for th in scen["threads"].as_array().unwrap() {
        let thread = th["thread"].as_str().unwrap();
        for op in th["ops"].as_array().unwrap() {
            let kind = op["op"].as_str().unwrap();
            let mut args: Vec<String> = vec![kind.to_string()];
            args.extend(graph.iter().cloned());
            args.extend(["--db".into(), db.display().to_string()]);
            args.extend(["-t".into(), thread.into()]);
            for k in ["context", "config"] {
                if let Some(v) = [op, th, scen].into_iter().find_map(|x| x.get(k)) {
                    args.extend([format!("--{k}"), v.to_string()]);
                }
            }
            match kind {
                "run" => args.extend(["--input".into(), op["input"].to_string()]),
                "resume" => args.extend(["--value".into(), op["value"].to_string()]),
                "continue" => {}
                "replay" => {
                    let n = op["checkpoint"].as_u64().unwrap() as usize;
                    args.extend(["--checkpoint".into(), root_checkpoint(db, thread, n)]);
                }
                "update" => {
                    args.extend(["--values".into(), op["values"].to_string()]);
                    if let Some(a) = op["as_node"].as_str() {
                        args.extend(["--as-node".into(), a.into()]);
                    }
                    if let Some(n) = op["checkpoint"].as_u64() {
                        args.extend([
                            "--checkpoint".into(),
                            root_checkpoint(db, thread, n as usize),
                        ]);
                    }
                }
                other => panic!("op {other}: not driven from the CLI here"),
            }
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = superstep_in(&here(), &refs);
            assert!(
                out.status.success(),
                "superstep {}: {}",
                args.join(" "),
                common::stderr(&out)
            );
            outs.push(out);
        }
    }
    outs
}

/// The two files' rows, normalised.
fn rows(scen: &Json, straight_db: &Path, cli_db: &Path) -> (Json, Json) {
    // the topology, from the bridge (as bridge_rows takes it from PythonSource)
    let GraphRef::Python(r) = superstep::bridge::GraphRef::parse_flag(
        here()
            .join(scen["graph"].as_str().unwrap())
            .to_str()
            .unwrap(),
    )
    .unwrap() else {
        panic!("not a Python graph")
    };
    let src = superstep::bridge::PythonSource::open(
        r,
        superstep::bridge::Interpreter {
            path: python(),
            why: "SUPERSTEP_TEST_PYTHON",
        },
        None,
    )
    .expect("the bridge loads");
    let norm = Normalizer::from_topology(&src.info.topology);
    drop(src);
    let mut a = norm.normalize(straight_db);
    let mut b = norm.normalize(cli_db);
    for x in [&mut a, &mut b] {
        null_raced_message_ids(x);
        relabel_random_ids(x);
    }
    (a, b)
}

use superstep::bridge::GraphRef;

/// Drive the scenario through the CLI and compare with the straight run.
fn cli_equals_straight(name: &str) -> Vec<Output> {
    let scen = scenario(name);
    let dir = tempfile::tempdir().unwrap();
    let (s_db, c_db) = (
        dir.path().join("straight.sqlite"),
        dir.path().join("cli.sqlite"),
    );
    straight(name, &s_db, dir.path());
    let outs = drive_cli(&scen, &c_db);
    let (a, b) = rows(&scen, &s_db, &c_db);
    assert!(a.to_string().contains("\"C1\""), "{name}: nothing compared");
    if let Some(d) = first_diff(&b, &a, "") {
        panic!("{name}: rows differ (superstep = the CLI, langgraph = straight run)\n{d}");
    }
    if scen["store"] == true {
        let mut a = store_items(&s_db);
        let mut b = store_items(&c_db);
        relabel_random_ids(&mut a);
        relabel_random_ids(&mut b);
        assert!(
            a.as_array().is_some_and(|x| !x.is_empty()),
            "{name}: no store items"
        );
        assert_eq!(
            b, a,
            "{name}: store items differ (superstep = the CLI, langgraph = straight)"
        );
    }
    outs
}

/// Fix: the recursion limit is LangGraph's unless the user sets one. A prebuilt ReAct agent's
/// tool Send carries `remaining_steps` (recursion_limit - step): superstep sent 25 always, so
/// its rows said 24 where a plain invoke's say 10006.
#[test]
#[ignore = "needs Python with LangGraph: .ci/run runs it (SUPERSTEP_TEST_PYTHON)"]
fn a_prebuilt_agent_driven_by_the_cli_writes_the_rows_of_a_plain_invoke() {
    cli_equals_straight("prebuilt_agent");
}

/// LangGraph's official react-agent template itself (tests/bridge/templates: its code unmodified,
/// a scripted model in place of `langchain`'s): driven by the CLI — context given and from its
/// defaults, a follow-up turn, a fork of an old checkpoint under a configurable user id — it
/// leaves the rows of a straight run, and its `is_last_step` is LangGraph's (the tool Send of a
/// ReAct loop carries no recursion limit of superstep's).
#[test]
#[ignore = "needs Python with LangGraph: .ci/run runs it (SUPERSTEP_TEST_PYTHON)"]
fn the_official_react_agent_template_runs_unmodified() {
    let outs = cli_equals_straight("template_react_agent");
    for o in &outs {
        assert_eq!(o.status.code(), Some(0), "{}", common::stderr(o));
    }
    let given = common::stdout(&outs[1]);
    assert!(
        given.contains("[fake/m1] You are given.") && given.contains("and python? #1"),
        "{given}"
    );
    assert!(
        !given.contains("and python? #2"),
        "max_search_results 2 not honoured: {given}"
    );
    let defaults = common::stdout(&outs[2]);
    assert!(
        defaults.contains("[anthropic/claude-sonnet-4-5-20250929] You are a helpful AI assistant."),
        "{defaults}"
    );
    let fork = common::stdout(&outs[5]);
    assert!(fork.contains("zig #0"), "{fork}");
}

/// The react-agent template's shape: `context_schema` dataclass with environment defaults,
/// `Runtime[Context]` in the node and `get_runtime` in the tool. `--context` given on one thread,
/// none on another (the schema's defaults, SYSTEM_PROMPT from langgraph.json's env: said on
/// stderr), `--config` (configurable user id, tags, metadata, recursion_limit 2) on a third, and
/// an update with that config.
#[test]
#[ignore = "needs Python with LangGraph: .ci/run runs it (SUPERSTEP_TEST_PYTHON)"]
fn the_react_agent_template_runs_with_context_and_config_from_the_cli() {
    let outs = cli_equals_straight("react_agent");
    let given = common::stdout(&outs[0]);
    assert!(given.contains("3 results for 'rust'"), "{given}");
    assert!(given.contains("You are given."), "{given}");
    // no --context: the schema's defaults, said on stderr
    let note = common::stderr(&outs[1]);
    assert!(
        note.contains("context: Context {") && note.contains("built from its defaults"),
        "{note}"
    );
    assert!(
        note.contains("SYSTEM_PROMPT from langgraph.json env"),
        "{note}"
    );
    let defaults = common::stdout(&outs[1]);
    assert!(defaults.contains("10 results for 'python'"), "{defaults}");
    // recursion_limit 2 from --config: the template's is_last_step answer
    let config = common::stdout(&outs[2]);
    assert!(
        config.contains("Sorry, I could not find an answer"),
        "{config}"
    );
}

/// A context that does not fit the schema: exit 2 naming the field, before anything runs (no
/// file is created).
#[test]
#[ignore = "needs Python with LangGraph: .ci/run runs it (SUPERSTEP_TEST_PYTHON)"]
fn a_context_that_does_not_fit_the_schema_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.sqlite");
    let cfg = here().join("apps/langgraph.json").display().to_string();
    let d = db.display().to_string();
    for (context, want) in [
        (
            r#"{"modle": "fake/tools"}"#,
            "context_schema Context: unknown field 'modle'",
        ),
        ("[1]", "--context: expected a JSON object"),
    ] {
        let out = superstep_in(
            &here(),
            &[
                "run",
                &cfg,
                "react",
                "--db",
                &d,
                "-t",
                "t",
                "--input",
                "{}",
                "--context",
                context,
            ],
        );
        assert_eq!(out.status.code(), Some(2), "{}", common::stderr(&out));
        assert!(
            common::stderr(&out).contains(want),
            "{}",
            common::stderr(&out)
        );
        assert!(!db.exists(), "a refused command created the file");
    }
}

/// Fix: `package.module:graph` imports from the working directory (as `python -m`, uvicorn and
/// `langgraph dev` have it); a langgraph.json's `module:attr` graph from the file's directory,
/// wherever superstep is started. Before: "No module named 'react_agent'".
#[test]
#[ignore = "needs Python with LangGraph: .ci/run runs it (SUPERSTEP_TEST_PYTHON)"]
fn a_package_module_reference_imports_from_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let input = r#"{"messages": [{"role": "user", "content": "rust"}]}"#;
    let apps = here().join("apps");
    let cfg = apps.join("langgraph.json").display().to_string();
    for (i, (cwd, graph)) in [
        (apps.clone(), vec!["react_agent.graph:graph"]),
        (dir.path().to_path_buf(), vec![cfg.as_str(), "react_module"]),
    ]
    .into_iter()
    .enumerate()
    {
        let db = dir
            .path()
            .join(format!("m{i}.sqlite"))
            .display()
            .to_string();
        let mut args = vec!["run"];
        args.extend(graph.iter().copied());
        args.extend(["--db", &db, "-t", "t", "--input", input]);
        let out = superstep_in(&cwd, &args);
        assert!(
            out.status.success(),
            "{graph:?} from {}: {}",
            cwd.display(),
            common::stderr(&out)
        );
        assert!(
            common::stdout(&out).contains("10 results for 'rust'"),
            "{}",
            common::stdout(&out)
        );
    }
}

/// The memory-agent template's shape: `runtime.store.asearch` / `aput` in async nodes, the user
/// id from the context. Every op is a separate superstep process: what t1 asked to remember is in
/// LangGraph's store on the same file when t2 runs, for the same user only — as in Python.
#[test]
#[ignore = "needs Python with LangGraph: .ci/run runs it (SUPERSTEP_TEST_PYTHON)"]
fn the_memory_agent_template_remembers_between_runs() {
    let outs = cli_equals_straight("memory_agent");
    let t2 = common::stdout(&outs[1]);
    assert!(t2.contains("memories: remember I like tea"), "{t2}");
    let t3 = common::stdout(&outs[2]);
    assert!(t3.contains("memories: none"), "{t3}");
}

/// The memory-agent template's langgraph.json asks for a vector index (`store.index`) and names
/// a `.env` a fresh clone does not have. The missing .env sets nothing (as langgraph dev; it was
/// exit 2, "env: ./.env: No such file"). SqliteStore's index loads sqlite-vec into the connection:
/// with an interpreter that can, memory is searched by similarity between runs; with one that
/// cannot (pyenv's Python: no `enable_load_extension`), the run is refused before anything is
/// written, naming why (it was an AttributeError inside the first node, the file left behind).
#[test]
#[ignore = "needs Python with LangGraph: .ci/run runs it (SUPERSTEP_TEST_PYTHON)"]
fn a_store_index_runs_or_is_refused_before_anything_is_written() {
    let can = Command::new(python())
        .args([
            "-c",
            "import sqlite3, sqlite_vec; assert hasattr(sqlite3.Connection, 'enable_load_extension')",
        ])
        .output()
        .unwrap()
        .status
        .success();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("mem.sqlite");
    let cfg = here().join("apps/indexed/langgraph.json");
    let run = |thread: &str, text: &str| {
        let input = json!({"messages": [{"role": "user", "content": text}]}).to_string();
        superstep_in(
            dir.path(),
            &[
                "run",
                cfg.to_str().unwrap(),
                "memory",
                "--db",
                db.to_str().unwrap(),
                "-t",
                thread,
                "--context",
                r#"{"user_id": "u1"}"#,
                "--input",
                &input,
            ],
        )
    };
    let first = run("t1", "remember I like tea");
    if can {
        assert_eq!(first.status.code(), Some(0), "{}", common::stderr(&first));
        let second = run("t2", "what do I like?");
        let out = common::stdout(&second);
        assert!(out.contains("memories: remember I like tea"), "{out}");
    } else {
        assert_eq!(first.status.code(), Some(2), "{}", common::stdout(&first));
        let e = common::stderr(&first);
        assert!(
            e.contains("store.index needs SQLite's vector extension (sqlite-vec)")
                && e.contains("cannot load extensions"),
            "{e}"
        );
        assert!(!db.exists(), "a refused run left {}", db.display());
    }
}

/// An older-style memory graph: sync nodes, `store: BaseStore` injected, the user id from
/// `--config`'s configurable, and an InMemoryStore compiled in (replaced, with a warning).
#[test]
#[ignore = "needs Python with LangGraph: .ci/run runs it (SUPERSTEP_TEST_PYTHON)"]
fn a_graph_compiled_with_its_own_store_gets_the_persistent_one() {
    let outs = cli_equals_straight("memory_config");
    let w = common::stderr(&outs[0]);
    assert!(
        w.contains("compiled with its own store (InMemoryStore)")
            && w.contains("SqliteStore on the chosen file"),
        "{w}"
    );
    let b = common::stdout(&outs[1]);
    assert!(b.contains("u1 has 2 notes: tea, rust"), "{b}");
}

/// The TUI shows the context in use (status line; `:context` opens it) and edits it
/// (`:context {…}`, checked against the schema, used by every later run). A schema the defaults
/// cannot build (a TypedDict with a required key) refuses runs inline until one is given.
#[test]
#[ignore = "needs Python with LangGraph: .ci/run runs it (SUPERSTEP_TEST_PYTHON)"]
fn the_tui_shows_and_edits_the_context() {
    let apps = here().join("apps");
    let typed = apps.join("context_kinds.py:typed").display().to_string();
    let react = format!("{}", apps.join("langgraph.json").display());
    let new = r#"N <C-u>{"greeting":<Space>""}<Enter>"#;
    let cases = [
        (
            "bridge_apps_tui_context_missing",
            typed.clone(),
            new.to_string(),
        ),
        (
            "bridge_apps_tui_context_set",
            typed.clone(),
            format!(r#":context<Space>{{"user_id":<Space>"ada"}}<Enter> {new} c"#),
        ),
        (
            "bridge_apps_tui_context_rejected",
            typed,
            r#":context<Space>{"userid":<Space>"ada"}<Enter>"#.to_string(),
        ),
        (
            "bridge_apps_tui_context_shown",
            format!("{react}:react"),
            ":context<Enter>".to_string(),
        ),
    ];
    for (name, graph, keys) in cases {
        let dir = tempfile::tempdir().unwrap();
        // a langgraph.json graph id as one argument, the way --graph takes it
        let (r, id) = match graph.split_once(".json:") {
            Some((f, id)) => (format!("{f}.json"), Some(id.to_string())),
            None => (graph.clone(), None),
        };
        let text = match id {
            None => crate::bridge_tui::frame_of(&r, &keys, dir.path()),
            Some(id) => {
                let o = superstep_in(
                    dir.path(),
                    &[
                        &r,
                        &id,
                        "--db",
                        "tui.sqlite",
                        "--print",
                        "--size",
                        "110x34",
                        "--keys",
                        &keys,
                    ],
                );
                assert!(o.status.success(), "{}", common::stderr(&o));
                crate::common::mask_ids(&common::stdout(&o))
            }
        };
        common::snapshot_settings().bind(|| insta::assert_snapshot!(name, text));
    }
}

/// Fix: threads LangGraph 0.2 wrote are continued through the bridge (LangGraph 1.2 migrates
/// their checkpoints as it reads them; the refusal is the spec engine's only): 'before' and
/// 'cond_join_before' continued, 0.2.76's 'paused' resumed — the rows equal LangGraph 1.2 doing
/// the same to a copy of the file (tests/bridge/continue_v02.py). Before: "thread … was written in
/// the LangGraph 0.2 checkpoint format: the engine writes LangGraph 1.2's format …", exit 2.
#[test]
#[ignore = "needs Python with LangGraph: .ci/run runs it (SUPERSTEP_TEST_PYTHON)"]
fn threads_langgraph_0_2_wrote_are_continued_through_the_bridge() {
    let apps = here().join("apps");
    for version in ["20", "76"] {
        let dir = tempfile::tempdir().unwrap();
        let fixture = common::fixture(&format!("v0_2_{version}.sqlite"));
        let (s_db, c_db) = (
            dir.path().join("straight.sqlite"),
            dir.path().join("cli.sqlite"),
        );
        std::fs::copy(&fixture, &s_db).unwrap();
        std::fs::copy(&fixture, &c_db).unwrap();
        let st = Command::new(python())
            .arg(here().join("continue_v02.py"))
            .arg(&s_db)
            .arg(version)
            .output()
            .unwrap();
        assert!(
            st.status.success(),
            "{}",
            String::from_utf8_lossy(&st.stderr)
        );
        let db = c_db.display().to_string();
        let mut ops = vec![
            ("b", "before", vec!["continue"]),
            ("c_before", "cond_join_before", vec!["continue"]),
        ];
        if version == "76" {
            ops.push(("a", "paused", vec!["resume", "--value", "true"]));
        }
        for (graph, thread, cmd) in &ops {
            let r = format!("{}:{graph}", apps.join("v02_graphs.py").display());
            let mut args = vec![cmd[0], &r, "--db", &db, "-t", thread];
            args.extend(&cmd[1..]);
            let out = superstep_in(dir.path(), &args);
            assert!(out.status.success(), "{args:?}: {}", common::stderr(&out));
            // compare this thread's rows, normalised with its graph's topology
            let GraphRef::Python(pr) = GraphRef::parse(&r, None).unwrap() else {
                panic!()
            };
            let src = superstep::bridge::PythonSource::open(
                pr,
                superstep::bridge::Interpreter {
                    path: python(),
                    why: "SUPERSTEP_TEST_PYTHON",
                },
                None,
            )
            .unwrap();
            let norm = Normalizer::from_topology(&src.info.topology);
            let only = [thread.to_string()];
            let a = norm.normalize_threads(&s_db, Some(&only));
            let b = norm.normalize_threads(&c_db, Some(&only));
            assert!(
                a.to_string().contains("\"C3\""),
                "v0_2_{version} {thread}: not continued"
            );
            if let Some(d) = first_diff(&b, &a, "") {
                panic!("v0_2_{version} {thread}: rows differ (superstep = the CLI, langgraph = LangGraph 1.2 on a copy)\n{d}");
            }
        }
    }
}

/// Fix: with `--graph app.py:graph`, what the rows alone cannot tell is LangGraph's own reading:
/// a DeltaChannel with the app's reducer (tests/fixtures/delta.sqlite's `custom`, merge_unique)
/// rebuilt exactly at every checkpoint, and `next` of 0.2 checkpoints as LangGraph 1.2 shows it —
/// the file opened read-only, byte-identical after, no -wal/-shm beside it. Before: `custom` right
/// at 8 of 30 checkpoints, 'before' of v0_2_76 with an empty next (LangGraph: execute).
#[test]
#[ignore = "needs Python with LangGraph: .ci/run runs it (SUPERSTEP_TEST_PYTHON)"]
fn a_python_graph_makes_inspection_exact() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("delta.sqlite");
    std::fs::copy(common::fixture("delta.sqlite"), &db).unwrap();
    let before = common::dir_state(dir.path());
    let expected: Json =
        serde_json::from_str(&std::fs::read_to_string(common::fixture("delta.json")).unwrap())
            .unwrap();
    let graph = here()
        .join("apps/delta_graph.py:graph")
        .display()
        .to_string();
    let d = db.display().to_string();
    let mut right = 0;
    let mut total = 0;
    for t in ["loop", "paused", "forked"] {
        let out = superstep_in(
            dir.path(),
            &["history", "--db", &d, "-t", t, "--json", "--graph", &graph],
        );
        assert!(out.status.success(), "{}", common::stderr(&out));
        let got: Json = serde_json::from_str(&common::stdout(&out)).unwrap();
        let want = expected["threads"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["thread_id"] == t)
            .unwrap()["history"]
            .clone();
        let (got, want) = (got.as_array().unwrap(), want.as_array().unwrap());
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            total += 1;
            if g["values"]["custom"] == w["values"]["custom"]
                && g["values"]["log"] == w["values"]["log"]
                && g["next"] == w["next"]
            {
                right += 1;
            }
        }
        // show (the live view) too
        let out = superstep_in(
            dir.path(),
            &["show", "--db", &d, "-t", t, "--json", "--graph", &graph],
        );
        let got: Json = serde_json::from_str(&common::stdout(&out)).unwrap();
        assert_eq!(got["values"]["custom"], want[0]["values"]["custom"], "{t}");
    }
    assert_eq!(
        (right, total),
        (30, 30),
        "checkpoints read as LangGraph reads them"
    );
    assert_eq!(
        before,
        common::dir_state(dir.path()),
        "inspection changed the directory"
    );

    // 0.2's checkpoints: next as LangGraph 1.2 shows it, the file untouched (its old writes
    // table is not migrated)
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("v02.sqlite");
    std::fs::copy(common::fixture("v0_2_76.sqlite"), &db).unwrap();
    let before = common::dir_state(dir.path());
    let graph = here().join("apps/v02_graphs.py:b").display().to_string();
    let out = superstep_in(
        dir.path(),
        &[
            "history",
            "--db",
            &db.display().to_string(),
            "-t",
            "before",
            "--json",
            "--graph",
            &graph,
        ],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let got: Json = serde_json::from_str(&common::stdout(&out)).unwrap();
    let next: Vec<Json> = got
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["next"].clone())
        .collect();
    assert_eq!(
        next,
        vec![
            json!(["execute"]),
            json!(["write_draft"]),
            json!(["__start__"])
        ]
    );
    assert_eq!(before, common::dir_state(dir.path()));
}

/// The functional API: an `@entrypoint` calling `@task`s, paused on `interrupt()`, resumed,
/// `previous` carried into the next run, the store written — through the CLI, rows and store
/// equal to the straight run. One superstep is the whole entrypoint: the `@task` calls are its
/// push tasks, their results pending writes of the checkpoint the interrupt leaves.
#[test]
#[ignore = "needs Python with LangGraph: .ci/run runs it (SUPERSTEP_TEST_PYTHON)"]
fn a_functional_api_graph_runs_pauses_resumes_and_is_inspected() {
    let outs = cli_equals_straight("functional");
    let paused = common::stdout(&outs[0]);
    assert!(
        paused.contains("step   0  workflow  interrupted"),
        "{paused}"
    );
    assert!(paused.contains("Approve this essay?"), "{paused}");
    let second = common::stdout(&outs[3]);
    assert!(second.contains("\"runs\":2"), "{second}");
}

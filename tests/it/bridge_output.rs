//! What a node writes is captured like a terminal would show it (issue 21 items 5 and 6):
//! `sys.stdout.buffer`, `fileno()`, raw writes to fds 1 and 2 (`os.write`, a subprocess,
//! faulthandler) all work and are attributed to the node; carriage returns overwrite as in a
//! terminal, and a progress bar costs time in proportion to what it writes.

use crate::common::bridge::{graph, run};
use serde_json::Value as Json;

/// `run hostile.py:<attr> --json` on a fresh file: the exit code and the captured output as
/// (node, stream, text).
fn outputs(attr: &str, input: &str) -> (Option<i32>, String, Vec<(String, String, String)>) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("o.sqlite");
    let g = graph("hostile.py", attr);
    let o = run(&db, &["run", &g, "-t", "t", "--input", input, "--json"]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let j: Json = serde_json::from_slice(&o.stdout).unwrap_or(Json::Null);
    let out = j["output"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            let s = |k: &str| o[k].as_str().unwrap_or_default().to_string();
            (s("node"), s("stream"), s("text"))
        })
        .collect();
    (o.status.code(), err, out)
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn buffer_fileno_raw_fds_subprocesses_and_faulthandler_are_captured() {
    let (code, err, out) = outputs("raw_output", r#"{"n": 0}"#);
    assert_eq!(code, Some(0), "{err}");
    let text = |stream: &str| -> String {
        out.iter()
            .filter(|(n, s, _)| n == "raw" && s == stream)
            .map(|o| o.2.as_str())
            .collect()
    };
    let stdout = text("stdout");
    let stderr = text("stderr");
    for want in [
        "via buffer\n",
        "via fd 1\n",
        "from a subprocess\n",
        "100% done\n",
        "xycdef\n",
        "no newline at the end",
    ] {
        assert!(stdout.contains(want), "{want:?} in {stdout:?}");
    }
    for want in [
        "via fd 2\n",
        "subprocess stderr\n",
        "Stack (most recent call first):",
    ] {
        assert!(stderr.contains(want), "{want:?} in {stderr:?}");
    }
    // what a terminal shows, not the updates: no carriage return reaches superstep
    assert!(!stdout.contains('\r'), "{stdout:?}");
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn a_progress_bar_arrives_as_the_one_line_a_terminal_shows() {
    let (code, err, out) = outputs("progress_bar", r#"{"n": 0, "updates": 20000}"#);
    assert_eq!(code, Some(0), "{err}");
    let bar: Vec<_> = out.iter().filter(|o| o.0 == "progress").collect();
    let head = |t: &str| t.chars().take(120).collect::<String>();
    assert_eq!(bar.len(), 1, "{} chunks", bar.len());
    assert_eq!(bar[0].1, "stderr");
    assert!(
        bar[0].2 == "20000/20000 |####################|\n",
        "{} bytes: {:?}…",
        bar[0].2.len(),
        head(&bar[0].2)
    );
}

/// A functional-API graph: what an `@task` prints is reported under that task, in `--json` and in
/// the human output (it used to appear in `--json` only, under a task no step named).
#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn task_calls_of_the_functional_api_are_reported_with_what_they_print() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.sqlite");
    let g = graph("hostile.py", "functional");
    let o = run(
        &db,
        &[
            "run",
            &g,
            "-t",
            "j",
            "--input",
            r#"{"word": "hi"}"#,
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: Json = serde_json::from_slice(&o.stdout).unwrap();
    let shout = j["steps"][0]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "shout")
        .unwrap_or_else(|| panic!("no shout task in {}", j["steps"]));
    let printed = j["output"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["text"] == "task shouts hi\n")
        .unwrap();
    assert_eq!(printed["task_id"], shout["id"]);
    let o = run(&db, &["run", &g, "-t", "h", "--input", r#"{"word": "hi"}"#]);
    let human = String::from_utf8_lossy(&o.stdout);
    let at = human.find("shout  done").expect("the task's line");
    assert!(human[at..].contains("| task shouts hi"), "{human}");
}

/// What the module printed while it was imported shows in the human output too (it was in
/// `--json` only), before the first step.
#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn import_time_prints_show_in_the_human_output() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("i.sqlite");
    let g = graph("linear.py", "graph");
    let o = run(
        &db,
        &[
            "run",
            &g,
            "-t",
            "t",
            "--input",
            r#"{"topic": "a b", "log": []}"#,
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let human = String::from_utf8_lossy(&o.stdout);
    assert!(
        human.starts_with("outside a task\n           | linear.py imported\nstep   0"),
        "{human}"
    );
}

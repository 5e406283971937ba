//! Recorded replay in the TUI (issue 23): the status line counts the last run's calls served
//! from the recording and made live; a task's view lists its calls, the first divergence marked
//! with where the request differs. `--keys … --print` frames of `tests/replay/agent.py`.

use crate::common::bridge::python;
use crate::common::replay::{app, checkpoint_at, Scene};
use crate::common::{mask_ids, snapshot_settings as settings};

/// One frame after `keys`, ids and latencies masked (both differ run to run).
fn frame(s: &Scene, keys: &str) -> String {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_superstep"))
        .arg(&s.graph)
        .arg("--python")
        .arg(python())
        .arg("--db")
        .arg(&s.db)
        .args(["-t", "t1", "--print", "--size", "130x34", "--keys", keys])
        .env("NO_COLOR", "1")
        .env("REPLAY_COUNTS", &s.counts)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = mask_uuids(&mask_ids(&String::from_utf8_lossy(&o.stdout)));
    let ms = regex_free_ms(&text);
    ms.replace(&s.dir.path().display().to_string(), "[dir]")
}

/// A task id's middle groups (`xxxxxxxx-45df-9fee-7bca-xxxxxxxxxxxx`: too short for `mask_ids`)
/// masked too.
fn mask_uuids(s: &str) -> String {
    let mut out = s.to_string();
    while let Some(i) = out.find("xxxxxxxx-").filter(|&i| {
        out.get(i + 9..i + 36)
            .is_some_and(|r| r.ends_with("-xxxxxxxxxxxx") && !r.starts_with("xxxx-xxxx-xxxx"))
    }) {
        out.replace_range(i + 9..i + 23, "xxxx-xxxx-xxxx");
    }
    out
}

/// A latency (`   0.4 ms`, `  12.3 ms`: right-aligned in a fixed width) -> `   N.N ms` of that
/// same width.
fn regex_free_ms(s: &str) -> String {
    let mut out = String::new();
    for (i, part) in s.split(" ms").enumerate() {
        if i > 0 {
            out.push_str(" ms");
        }
        let number = part
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .count();
        let blanks = part
            .chars()
            .rev()
            .skip(number)
            .take_while(|c| *c == ' ')
            .count();
        let field = number + blanks;
        if number > 2 && part.chars().rev().take(number).any(|c| c == '.') {
            let keep: String = part.chars().take(part.chars().count() - field).collect();
            out.push_str(&keep);
            out.push_str(&format!("{:>field$}", "N.N"));
        } else {
            out.push_str(part);
        }
    }
    out
}

fn run_to_end() -> Scene {
    let s = Scene::new(app("agent.py", "graph"));
    s.ok(
        "run",
        &[
            "-t",
            "t1",
            "--input",
            r#"{"messages":[{"role":"user","content":"hi"}]}"#,
        ],
    );
    s
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn time_travel_then_continue_counts_recorded_calls_in_the_status_line() {
    let s = run_to_end();
    // History: newest first; step 2 is the ninth row (steps 10..2)
    let screen = frame(&s, "8j t y c");
    assert_eq!(s.counted(), (5, 5), "no model call, no tool effect");
    settings().bind(|| insta::assert_snapshot!("replay_tui_01_time_travel_recorded", screen));
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn a_diverged_task_shows_its_calls_and_the_request_diff() {
    let s = run_to_end();
    let at0 = checkpoint_at(&s.db, "t1", 0);
    let out = crate::common::bridge::run(&s.db, &["show", "-t", "t1", "--json"]);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = j["values"]["messages"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let values = format!(r#"{{"messages":[{{"role":"user","content":"hello","id":"{id}"}}]}}"#);
    s.ok(
        "update",
        &["-t", "t1", "--checkpoint", &at0, "--values", &values],
    );
    // c runs the edited branch; its step-2 checkpoint (tenth row) holds the agent task
    let screen = frame(&s, "c 9j <Tab> <Tab> <Enter>");
    // the task view only (the panes under it show the first letters of ids)
    let view: Vec<String> = screen
        .lines()
        .skip(2)
        .take(31)
        .map(|l| l.chars().skip(4).take(122).collect())
        .collect();
    let screen = view.join("\n");
    settings().bind(|| insta::assert_snapshot!("replay_tui_02_divergence", screen));
}

//! The TUI on Python graphs (`--keys … --print`), as insta snapshots: a new thread, stepping,
//! the interrupt, the resume, captured node output, a compiled-in breakpoint shown fixed.
//!
//! They need Python with LangGraph: `#[ignore]`d; `.ci/run` runs them with `--ignored` and
//! `SUPERSTEP_TEST_PYTHON`. Checkpoint, task and interrupt ids are LangGraph's (time-based), so
//! every run of 8+ hex characters is masked before the frame is compared.

use crate::common::bridge::python;
use std::path::Path;
use std::process::Command;

use crate::common::mask_ids;
use crate::common::snapshot_settings as settings;

fn frame(graph: &str, keys: &str, dir: &Path) -> String {
    let r = format!("{}/tests/bridge/graphs/{graph}", env!("CARGO_MANIFEST_DIR"));
    frame_of(&r, keys, dir)
}

pub(crate) fn frame_of(r: &str, keys: &str, dir: &Path) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_superstep"))
        .current_dir(dir)
        .args([
            r,
            "--db",
            "tui.sqlite",
            "--print",
            "--size",
            "110x34",
            "--keys",
            keys,
        ])
        .arg("--python")
        .arg(python())
        .env("NO_COLOR", "1")
        .env("PYTHONHASHSEED", "0")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    mask_ids(&String::from_utf8_lossy(&o.stdout))
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn python_graph_new_thread_step_interrupt_resume_output() {
    let new = r#"N <C-u>{"request":"pay<Space>Bob"}<Enter>"#;
    let cases = [
        ("bridge_tui_01_new_thread", new.to_string()),
        ("bridge_tui_02_step", format!("{new} n n")),
        ("bridge_tui_03_interrupt", format!("{new} c")),
        ("bridge_tui_04_resumed", format!("{new} c r true<Enter>")),
        ("bridge_tui_05_output", format!("{new} c r true<Enter> o")),
    ];
    for (name, keys) in cases {
        let dir = tempfile::tempdir().unwrap();
        let screen = frame("interrupt.py:graph", &keys, dir.path());
        settings().bind(|| insta::assert_snapshot!(name, screen));
    }
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn compiled_in_breakpoints_are_fixed() {
    let dir = tempfile::tempdir().unwrap();
    // c stops before publish (compiled in: ■); b on publish says it cannot be switched off
    let keys = r#"N <C-u>{"text": "t"}<Enter> c <Tab> <Tab> <Tab> <Tab> <Tab> j j j j b"#;
    let screen = frame("breakpoints.py:graph", keys, dir.path());
    settings().bind(|| insta::assert_snapshot!("bridge_tui_06_fixed_breakpoint", screen));
}

/// Breakpoints and stepping inside subgraphs: the Graph pane lists a subgraph's nodes
/// (`inner|ask`) under its node; `:b inner|ask` then `c` stops before ask inside the subgraph
/// (set on the subgraph object); `S` steps into nested subgraphs, one of their supersteps at a time
/// (`mid`, then `mid|leaf`).
#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn breakpoints_and_stepping_inside_subgraphs() {
    let cases = [
        (
            "bridge_tui_10_inner_breakpoint",
            "subgraph.py:graph",
            r#"N <C-u>{"task":"report","notes":[]}<Enter> :b<Space>inner|ask<Enter> c"#,
        ),
        (
            "bridge_tui_11_step_into",
            "nested.py:graph",
            r#"N <C-u>{"notes":[]}<Enter> n n S S"#,
        ),
    ];
    for (name, graph, keys) in cases {
        let dir = tempfile::tempdir().unwrap();
        let screen = frame(graph, keys, dir.path());
        settings().bind(|| insta::assert_snapshot!(name, screen));
    }
}

/// `--ns` in the TUI on a Python graph: `s` on the interrupted subgraph task opens its namespace;
/// there `u` is LangGraph's update_state handed to the subgraph (its next checkpoint in that
/// namespace), and `t` on an older subgraph checkpoint replays from that checkpoint's config (the
/// fork is the root's, shown on return).
#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn update_and_time_travel_inside_a_subgraph_namespace() {
    let open = r#"N <C-u>{"task":"report","notes":[]}<Enter> c <Tab> <Tab> <Tab> s"#;
    let cases = [
        (
            "bridge_tui_12_ns_update",
            format!(r#"{open} u <C-u>{{"notes":["edited<Space>in<Space>sub"]}} <Enter>"#),
        ),
        (
            "bridge_tui_13_ns_time_travel",
            format!("{open} <Tab> <Tab> <Tab> j t y"),
        ),
    ];
    for (name, keys) in cases {
        let dir = tempfile::tempdir().unwrap();
        let screen = frame("subgraph.py:graph", &keys, dir.path());
        settings().bind(|| insta::assert_snapshot!(name, screen));
    }
}

/// The demo (examples/support, through its langgraph.json): a refund request runs to the human
/// approval interrupt, `r yes` approves it and the refund tool runs; `o` shows what the module
/// printed at import and what the tools printed and logged.
#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn the_support_demo_steps_to_the_approval_and_on() {
    let demo = format!(
        "{}/examples/support/langgraph.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let ask = "N <C-u>{\"messages\":\"My<Space>tent<Space>from<Space>order<Space>1042<Space>arrived<Space>torn,<Space>I<Space>want<Space>a<Space>refund\"}<Enter>";
    let cases = [
        ("bridge_tui_07_demo_approval", format!("{ask} c")),
        (
            "bridge_tui_08_demo_refunded",
            format!("{ask} c r yes<Enter>"),
        ),
        (
            "bridge_tui_09_demo_output",
            format!("{ask} c r yes<Enter> o"),
        ),
    ];
    for (name, keys) in cases {
        let dir = tempfile::tempdir().unwrap();
        let screen = frame_of(&demo, &keys, dir.path());
        settings().bind(|| insta::assert_snapshot!(name, screen));
    }
}

#[test]
fn ids_are_masked() {
    assert_eq!(
        mask_ids("1f1ef0d4…4bc64e1459e2 step 3 a0086f97 research deadbeef"),
        "xxxxxxxx…xxxxxxxxxxxx step 3 xxxxxxxx research deadbeef"
    );
}

//! The bridge dies with superstep (issue 21 item 3): however superstep ends — SIGTERM, SIGHUP,
//! SIGKILL — the bridge does not outlive it, even while a node holds the GIL in C code (a
//! catastrophic regex), where no Python-level watchdog can run.

use crate::common::bridge::{alive, command, graph, wait_for};
use std::process::Stdio;

/// superstep runs `hostile.py:regex` (its `hog` node writes its pid, then spins in C); `signal`
/// goes to superstep; the bridge must be gone afterwards.
fn bridge_dies_with_superstep(signal: &str) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let mark = dir.path().join("hog.pid");
    let input = serde_json::json!({"n": 0, "mark": mark.to_str().unwrap()}).to_string();
    let g = graph("hostile.py", "regex");
    let mut child = command(&db, &["run", &g, "-t", "t", "--input", &input])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the hog node starts", || {
        std::fs::read_to_string(&mark).is_ok_and(|s| !s.is_empty())
    });
    let bridge: u32 = std::fs::read_to_string(&mark).unwrap().parse().unwrap();
    assert!(alive(bridge));
    let ok = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    let pid = child.id();
    let status = child.wait().unwrap();
    assert!(!status.success(), "{status}");
    // a hang guard, not a clock: PR_SET_PDEATHSIG kills it as superstep's thread exits
    let t = std::time::Instant::now();
    while alive(bridge) && t.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let orphan = alive(bridge);
    if orphan {
        let _ = std::process::Command::new("kill")
            .args(["-9", &bridge.to_string()])
            .status();
    }
    assert!(
        !orphan,
        "kill {signal} superstep: the bridge {bridge} outlived it by 60 s"
    );
    // and its private directory (program, socket) went as soon as it had connected
    let prefix = format!("superstep-bridge-{pid}-");
    let left: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn sigterm_to_superstep_takes_the_bridge_along_while_a_node_holds_the_gil() {
    bridge_dies_with_superstep("-TERM");
}

#[test]
#[ignore = "needs Python with LangGraph (.ci/run)"]
fn sighup_and_sigkill_to_superstep_take_the_bridge_along() {
    bridge_dies_with_superstep("-HUP");
    bridge_dies_with_superstep("-KILL");
}

/// A signal while the interpreter starts (before the bridge says hello): superstep leaves nothing
/// in its temp directory and the interpreter goes with it. The interpreter here is a stand-in
/// that writes its pid and sleeps, so the window is held open (no Python needed).
fn a_signal_during_the_start(signal: &str) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mark = dir.path().join("py.pid");
    let fake = dir.path().join("python");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\necho $$ > '{}'\nexec sleep 600\n",
            mark.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let db = dir.path().join("s.sqlite");
    let g = graph("hostile.py", "counter");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_superstep"))
        .args([
            "--python",
            fake.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ])
        .args(["run", &g, "-t", "t", "--input", r#"{"n": 0}"#])
        .env("TMPDIR", tmp.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the interpreter starts", || {
        std::fs::read_to_string(&mark).is_ok_and(|s| s.ends_with('\n'))
    });
    let py: u32 = std::fs::read_to_string(&mark)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let ok = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    assert!(!child.wait().unwrap().success());
    wait_for("the interpreter goes with superstep", || !alive(py));
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        left.is_empty(),
        "kill {signal} superstep: left behind {left:?}"
    );
}

#[test]
fn a_signal_while_the_bridge_starts_leaves_no_temp_directory() {
    for signal in ["-TERM", "-HUP", "-INT", "-KILL"] {
        a_signal_during_the_start(signal);
    }
}

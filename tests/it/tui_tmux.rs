//! A real terminal: the TUI under tmux. Start on the approval graph, step, hit the interrupt,
//! resume with a value, time-travel, quit; assert on captured panes, on the DB, and that the
//! terminal is restored (also after a panic). tmux is required (it fails loudly without it).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

pub(crate) struct Tmux {
    sock: PathBuf,
}

impl Tmux {
    pub(crate) fn cmd(&self, args: &[&str]) -> String {
        let o = Command::new("tmux")
            .arg("-S")
            .arg(&self.sock)
            .args(args)
            .output()
            .expect("tmux");
        String::from_utf8_lossy(&o.stdout).into_owned()
    }
    pub(crate) fn send(&self, keys: &[&str]) {
        let mut a = vec!["send-keys", "-t", "smoke"];
        a.extend_from_slice(keys);
        self.cmd(&a);
    }
    pub(crate) fn type_text(&self, text: &str) {
        self.cmd(&["send-keys", "-t", "smoke", "-l", text]);
    }
    pub(crate) fn capture(&self) -> String {
        self.cmd(&["capture-pane", "-p", "-t", "smoke"])
    }
    /// Wait until the pane shows `what` (60 s at most: a generous deadline, not a timing claim).
    pub(crate) fn wait_for(&self, what: &str) -> String {
        let start = Instant::now();
        loop {
            let pane = self.capture();
            if pane.contains(what) {
                return pane;
            }
            if start.elapsed() > Duration::from_secs(60) {
                panic!("pane never showed {what:?}; it shows:\n{pane}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Tmux {
    /// Wait until the TUI has left the screen (its footer is gone): keys typed before that would
    /// reach the TUI's input reader, not the shell.
    pub(crate) fn wait_for_exit(&self) {
        let start = Instant::now();
        loop {
            let pane = self.capture();
            if !pane.contains("q quit") {
                return;
            }
            if start.elapsed() > Duration::from_secs(60) {
                panic!("the TUI never exited; the pane shows:\n{pane}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.cmd(&["kill-server"]);
    }
}

pub(crate) fn tmux_available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

pub(crate) fn start(dir: &Path) -> Tmux {
    let t = Tmux {
        sock: dir.join("tmux.sock"),
    };
    t.cmd(&[
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        "smoke",
        "-x",
        "120",
        "-y",
        "40",
        "env -i PATH=/usr/bin:/bin TERM=xterm-256color PS1='$ ' bash --norc --noprofile",
    ]);
    t.wait_for("$");
    t
}

fn sources(db: &Path) -> Vec<String> {
    let store = superstep::store::Store::open(db, superstep::store::Mode::ReadOnly).unwrap();
    let mut rows = store.history("t1", "", None, 100).unwrap();
    rows.reverse();
    rows.iter()
        .map(|r| r.metadata["source"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn step_interrupt_resume_time_travel_quit_under_tmux() {
    assert!(
        tmux_available(),
        "tmux is required for the real-terminal test (apt-get install tmux)"
    );
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("smoke.sqlite");
    let t = start(dir.path());
    let cmd = format!(
        "{} {}/graphs/approval.json --db {}",
        env!("CARGO_BIN_EXE_superstep"),
        env!("CARGO_MANIFEST_DIR"),
        db.display()
    );
    t.type_text(&cmd);
    t.send(&["Enter"]);
    t.wait_for("ready: next __start__");
    t.send(&["n", "n", "n"]);
    let pane = t.wait_for("interrupt in approve");
    assert!(pane.contains("⏸ approve"), "{pane}");
    t.send(&["r"]);
    t.wait_for("Resume — 1 pending interrupt");
    t.type_text("tru");
    t.wait_for("invalid JSON");
    t.type_text("e");
    t.wait_for("✓ valid JSON");
    t.send(&["Enter"]);
    let pane = t.wait_for("resume: step 2 approve done");
    assert!(pane.contains("returned resume value true"), "{pane}");
    t.send(&["j", "j", "t"]);
    t.wait_for("Time travel?");
    t.send(&["y"]);
    let pane = t.wait_for("time travel: landed on");
    assert!(pane.contains("fork"), "{pane}");
    t.send(&["q"]);
    t.wait_for_exit();
    // back at the shell, terminal restored: canonical mode and echo are on again
    t.type_text("stty -a | tr ' ;' '\\n\\n' | grep -E -x -- '-?(icanon|echo)' | tr '\\n' ' '; echo STTY-$((40+2))");
    t.send(&["Enter"]);
    let pane = t.wait_for("STTY-42");
    let line = pane.lines().find(|l| l.contains("STTY-42")).unwrap_or("");
    assert!(
        line.contains("icanon echo") && !line.contains("-icanon"),
        "{pane}"
    );
    // the resume ran approve and execute (to the end, as invoke(Command(resume=True)) does)
    assert_eq!(
        sources(&db),
        ["input", "loop", "loop", "loop", "loop", "fork"]
    );
}

#[test]
fn a_panic_restores_the_terminal() {
    assert!(
        tmux_available(),
        "tmux is required for the real-terminal test (apt-get install tmux)"
    );
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("panic.sqlite");
    let t = start(dir.path());
    let cmd = format!(
        "SUPERSTEP_TEST_PANIC=1 {} {}/graphs/approval.json --db {}; stty -a | tr ' ;' '\\n\\n' | grep -E -x -- '-?(icanon|echo)' | tr '\\n' ' '; echo STTY-$((40+2))",
        env!("CARGO_BIN_EXE_superstep"),
        env!("CARGO_MANIFEST_DIR"),
        db.display()
    );
    t.type_text(&cmd);
    t.send(&["Enter"]);
    let pane = t.wait_for("STTY-42");
    assert!(pane.contains("panicking on purpose"), "{pane}");
    assert!(
        pane.contains("thread 'main'"),
        "the panic message is intact: {pane}"
    );
    let line = pane.lines().find(|l| l.contains("STTY-42")).unwrap_or("");
    assert!(
        line.contains("icanon echo") && !line.contains("-icanon"),
        "{pane}"
    );
    // the panic message is on the normal screen, not lost in the alternate one
    assert!(!pane.contains("Pending writes"), "{pane}");
}

/// Issue 15 item 5: an allocation failure aborts the process, skipping Drop and the panic hook;
/// the terminal used to stay in the alternate screen with the cursor hidden and raw mode on.
#[test]
fn an_allocation_failure_restores_the_terminal() {
    assert!(
        tmux_available(),
        "tmux is required for the real-terminal test (apt-get install tmux)"
    );
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("oom.sqlite");
    let t = start(dir.path());
    let cmd = format!(
        "SUPERSTEP_TEST_OOM=1 {} {}/graphs/approval.json --db {}; stty -a | tr ' ;' '\\n\\n' | grep -E -x -- '-?(icanon|echo)' | tr '\\n' ' '; echo OOM-$((40+2))",
        env!("CARGO_BIN_EXE_superstep"),
        env!("CARGO_MANIFEST_DIR"),
        db.display()
    );
    t.type_text(&cmd);
    t.send(&["Enter"]);
    let pane = t.wait_for("OOM-42");
    assert!(pane.contains("memory allocation of"), "{pane}");
    let line = pane.lines().find(|l| l.contains("OOM-42")).unwrap_or("");
    assert!(
        line.contains("icanon echo") && !line.contains("-icanon"),
        "{pane}"
    );
    // the message is on the normal screen, not lost in the alternate one
    assert!(!pane.contains("Pending writes"), "{pane}");
}

/// `stty` says canonical mode and echo are on (the shell's terminal is usable again).
fn assert_terminal_restored(t: &Tmux, marker: &str) -> String {
    t.wait_for_exit();
    t.type_text(&format!(
        "stty -a | tr ' ;' '\\n\\n' | grep -E -x -- '-?(icanon|echo)' | tr '\\n' ' '; echo {marker}-$((40+2))"
    ));
    t.send(&["Enter"]);
    let pane = t.wait_for(&format!("{marker}-42"));
    let line = pane
        .lines()
        .find(|l| l.contains(&format!("{marker}-42")))
        .unwrap_or("");
    assert!(
        line.contains("icanon echo") && !line.contains("-icanon"),
        "{pane}"
    );
    pane
}

#[test]
fn sigterm_and_sigint_restore_the_terminal() {
    assert!(
        tmux_available(),
        "tmux is required for the real-terminal test (apt-get install tmux)"
    );
    for (sig, code) in [("TERM", 143), ("INT", 130), ("HUP", 129)] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join(format!("sig{sig}.sqlite"));
        let t = start(dir.path());
        t.type_text(&format!(
            "{} {}/graphs/approval.json --db {}; echo EXIT-$?-END$((40+2))",
            env!("CARGO_BIN_EXE_superstep"),
            env!("CARGO_MANIFEST_DIR"),
            db.display()
        ));
        t.send(&["Enter"]);
        t.wait_for("ready: next __start__");
        let killed = Command::new("pkill")
            .args([&format!("-{sig}"), "-f", &db.display().to_string()])
            .status()
            .expect("pkill");
        assert!(killed.success(), "pkill found the TUI");
        // the echo's output, not the typed command line (which holds "END$((40+2))")
        let pane = t.wait_for("-END42");
        assert!(pane.contains(&format!("EXIT-{code}-END42")), "{pane}");
        assert!(pane.contains("stopped by signal"), "{pane}");
        // the alternate screen is gone: the panes are not on the normal screen
        assert!(!pane.contains("Pending writes"), "{pane}");
        assert_terminal_restored(&t, &format!("STTY{sig}"));
    }
}

#[test]
fn live_refresh_shows_another_process_writes() {
    assert!(
        tmux_available(),
        "tmux is required for the real-terminal test (apt-get install tmux)"
    );
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.sqlite");
    let bin = env!("CARGO_BIN_EXE_superstep");
    let graph = concat!(env!("CARGO_MANIFEST_DIR"), "/graphs/countdown.json");
    let run = |args: &[&str]| {
        let o = Command::new(bin)
            .args(args)
            .args(["--db", &db.display().to_string(), "--thread", "w"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    run(&["run", graph, "--steps", "1"]);
    let t = start(dir.path());
    // read-only inspect mode on the DB another process is writing
    t.type_text(&format!("{bin} {} --thread w", db.display()));
    t.send(&["Enter"]);
    let pane = t.wait_for("INSPECT");
    assert!(!pane.contains("live ↻"), "{pane}");
    run(&["run", graph, "--steps", "2"]);
    // following the newest checkpoint: the status line comes to show the writer's latest step
    let store = superstep::store::Store::open(&db, superstep::store::Mode::ReadOnly).unwrap();
    let newest = store.history("w", "", None, 1).unwrap().remove(0);
    let step = newest.metadata["step"].as_i64().unwrap();
    // the status line's own "│ step N │" (the State pane's title says "step N (loop)" and may be
    // captured before the status line is redrawn)
    let pane = t.wait_for(&format!("│ step {step} │"));
    assert!(pane.contains("live ↻"), "{pane}");
    assert!(pane.contains(&newest.checkpoint_id[24..]), "{pane}");
    t.send(&["q"]);
    assert_terminal_restored(&t, "LIVE");
}

#[test]
fn a_terminal_that_goes_away_ends_the_tui() {
    assert!(
        tmux_available(),
        "tmux is required for the real-terminal test (apt-get install tmux)"
    );
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hangup.sqlite");
    let t = start(dir.path());
    t.type_text(&format!(
        "exec {} {}/graphs/approval.json --db {}",
        env!("CARGO_BIN_EXE_superstep"),
        env!("CARGO_MANIFEST_DIR"),
        db.display()
    ));
    t.send(&["Enter"]);
    t.wait_for("ready: next __start__");
    let alive = || {
        Command::new("pgrep")
            .args(["-f", &db.display().to_string()])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    assert!(alive());
    // the terminal hangs up (SIGHUP): the process must end, not spin on a dead tty
    drop(t);
    let start = Instant::now();
    while alive() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "superstep outlived its terminal"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

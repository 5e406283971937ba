//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod bridge;
pub mod normalize;
pub mod replay;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A committed fixture made by real LangGraph (tests/oracle/gen_*.py).
pub fn fixture(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    assert!(p.exists(), "missing fixture {}", p.display());
    p
}

/// Copy a fixture DB into a fresh temp dir (so tests may modify it).
pub fn scratch(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let dst = dir.path().join(name);
    std::fs::copy(fixture(name), &dst).unwrap();
    (dir, dst)
}

/// insta's settings for every snapshot: the top-level `snapshots/`, named by the test, not the module.
pub fn snapshot_settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots"));
    s.set_prepend_module_to_snapshot(false);
    s
}

pub fn superstep(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_superstep"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run superstep")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Hash of every file in a directory (name -> content hash): "byte-identical afterwards".
pub fn dir_state(dir: &Path) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                xxhash_rust::xxh3::xxh3_64(&std::fs::read(e.path()).unwrap_or_default()),
            )
        })
        .collect();
    v.sort();
    v
}

/// Every run of 8 or more hex digits (ids) becomes `x`s of the same length.
pub fn mask_ids(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < chars.len() {
        let hex = |c: char| c.is_ascii_digit() || ('a'..='f').contains(&c);
        let mut j = i;
        while j < chars.len() && hex(chars[j]) {
            j += 1;
        }
        let run = &chars[i..j];
        if run.len() >= 8 && run.iter().any(|c| c.is_ascii_digit()) {
            out.extend(std::iter::repeat_n('x', run.len()));
            i = j;
        } else if j > i {
            out.extend(run);
            i = j;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

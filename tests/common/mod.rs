//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod normalize;

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

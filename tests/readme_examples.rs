//! Every `$ superstep …` example in README.md is a real run: each command is run as a shell runs
//! it (from a scratch directory that sees the repo's `graphs/`, `tests/` and `examples/`), and the
//! lines the README shows under it must be what it prints (stdout and stderr, as a terminal shows
//! them). A line `…` or `...` in the README stands for lines left out. When this fails, the message
//! has the real output: paste it into the README.
//!
//! Examples that need a service `cargo test` does not have (a Postgres server, a Python with
//! LangGraph) are named in `NOT_RUN_HERE` with the reason; any other example is run, so a new one
//! cannot be skipped without this file saying so.

use std::path::Path;
use std::process::Command;

/// Commands (a prefix of the example's first line) not run by `cargo test`, and why.
const NOT_RUN_HERE: &[(&str, &str)] = &[
    (
        "superstep run examples/support/langgraph.json",
        "a Python graph: needs a virtualenv with LangGraph (the bridge)",
    ),
    (
        "superstep resume examples/support/langgraph.json",
        "a Python graph: needs a virtualenv with LangGraph (the bridge)",
    ),
    (
        "export PGPASSWORD",
        "shell set-up for the Postgres examples",
    ),
    (
        "superstep threads --db postgresql://",
        "needs a Postgres server",
    ),
    (
        "superstep show --db postgresql://",
        "needs a Postgres server",
    ),
    ("superstep --db postgresql://", "needs a Postgres server"),
];

struct Example {
    line: usize,
    command: String,
    expected: Vec<String>,
}

/// `$ command` lines (with `\` continuations) and the lines under them, in fenced blocks.
fn examples(readme: &str) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    let mut fenced = false;
    let mut cont = false;
    // the example the lines belong to: only inside the block of its `$` line
    let mut open = false;
    for (i, l) in readme.lines().enumerate() {
        if l.starts_with("```") {
            fenced = !fenced;
            cont = false;
            open = false;
            continue;
        }
        if !fenced {
            continue;
        }
        if cont {
            let ex = out.last_mut().unwrap();
            ex.command.push(' ');
            ex.command.push_str(l.trim().trim_end_matches('\\').trim());
            cont = l.trim_end().ends_with('\\');
            continue;
        }
        if let Some(c) = l.strip_prefix("$ ") {
            open = true;
            cont = c.trim_end().ends_with('\\');
            out.push(Example {
                line: i + 1,
                command: c.trim().trim_end_matches('\\').trim().to_string(),
                expected: Vec::new(),
            });
            continue;
        }
        if open {
            out.last_mut().unwrap().expected.push(l.to_string());
        }
    }
    out
}

/// Whether `actual` shows `expected`: the chunks between `…` lines appear in order, the first at
/// the top and the last at the bottom (unless a `…` leaves those ends open).
fn shows(actual: &str, expected: &[String]) -> Result<(), String> {
    let actual: Vec<&str> = actual.lines().map(str::trim_end).collect();
    let gap = |l: &str| matches!(l.trim(), "…" | "...");
    let mut chunks: Vec<Vec<&str>> = vec![vec![]];
    for l in expected {
        if gap(l) {
            chunks.push(vec![]);
        } else {
            chunks.last_mut().unwrap().push(l.trim_end());
        }
    }
    let n = chunks.len();
    let mut at = 0usize;
    for (ci, chunk) in chunks.iter().enumerate() {
        if chunk.is_empty() {
            continue;
        }
        let anchored_start = ci == 0;
        let anchored_end = ci == n - 1;
        let found = (at..=actual.len().saturating_sub(chunk.len())).find(|&s| {
            actual.len() >= s + chunk.len()
                && actual[s..s + chunk.len()] == chunk[..]
                && (!anchored_start || s == 0)
                && (!anchored_end || s + chunk.len() == actual.len())
        });
        match found {
            Some(s) => at = s + chunk.len(),
            None => {
                return Err(format!(
                    "these README lines are not in the output (in order):\n{}",
                    chunk.join("\n")
                ))
            }
        }
    }
    Ok(())
}

#[test]
fn every_readme_example_is_what_superstep_prints() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(repo.join("README.md")).unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_superstep"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let all = examples(&readme);
    let (mut ran, mut not_run, mut failures) = (0, Vec::new(), Vec::new());
    for ex in &all {
        if let Some((_, why)) = NOT_RUN_HERE.iter().find(|(p, _)| ex.command.starts_with(p)) {
            not_run.push(format!("README.md:{} `{}`: {why}", ex.line, ex.command));
            continue;
        }
        // a scratch working directory: files the example writes land there
        let dir = tempfile::tempdir().unwrap();
        for d in ["graphs", "tests", "examples"] {
            std::os::unix::fs::symlink(repo.join(d), dir.path().join(d)).unwrap();
        }
        let o = Command::new("sh")
            .arg("-c")
            .arg(format!("{} 2>&1", ex.command))
            .current_dir(dir.path())
            .env("PATH", &path)
            .env("NO_COLOR", "1")
            .env("COLUMNS", "120")
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        if let Err(e) = shows(&out, &ex.expected) {
            failures.push(format!(
                "README.md:{} `$ {}` drifted: {e}\n--- it prints now:\n{out}",
                ex.line, ex.command
            ));
        }
        ran += 1;
    }
    eprintln!(
        "{ran} README examples run; not run here ({}):\n  {}",
        not_run.len(),
        not_run.join("\n  ")
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(
        ran >= 3,
        "{ran} examples run: the README lost its examples?"
    );
    // every exception is still used (a stale entry would hide nothing, but would mislead)
    for (p, _) in NOT_RUN_HERE {
        assert!(
            all.iter().any(|e| e.command.starts_with(p)),
            "NOT_RUN_HERE names `{p}`, which no README example starts with"
        );
    }
}

#[test]
fn the_matcher_fails_on_drift() {
    let exp = |s: &str| s.lines().map(String::from).collect::<Vec<_>>();
    assert!(shows("a\nb\nc\n", &exp("a\nb\nc")).is_ok());
    assert!(shows("a\nb\nc\n", &exp("a\n…\nc")).is_ok());
    assert!(shows("a\nb\nc\n", &exp("a\nc")).is_err());
    assert!(
        shows("a\nb\nc\n", &exp("a\nb")).is_err(),
        "the end is anchored"
    );
    assert!(shows("a\nb\nc\n", &exp("a\nb\n...")).is_ok());
    assert!(
        shows("a\nb\nc\n", &exp("b\nc")).is_err(),
        "the top is anchored"
    );
    assert!(shows("a\nX\nc\n", &exp("a\nb\nc")).is_err());
}

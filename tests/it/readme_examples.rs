//! Every `$ superstep …` example in README.md and docs/*.md is a real run: each command is run as a shell runs
//! it (from a scratch directory that sees the repo's `graphs/`, `tests/` and `examples/`), and the
//! lines the README shows under it must be what it prints (stdout and stderr, as a terminal shows
//! them). A line `…` or `...` in the README stands for lines left out. When this fails, the message
//! has the real output: paste it into the README.
//!
//! Examples that need a service `cargo test` does not have (a Postgres server, a Python with
//! LangGraph) are named in `NOT_RUN_HERE` with the reason; any other example is run, so a new one
//! cannot be skipped without this file saying so. `.ci/run` runs those too, where the services are:
//! the Python ones in its bridge stage (`SUPERSTEP_TEST_PYTHON`, the pinned venv), the Postgres ones
//! in tests/postgres/ci.sh against the fixtures PostgresSaver just wrote (`SUPERSTEP_README_PG`).
//! Their output is compared after normalising only what varies between runs: checkpoint ids
//! (`1f1ef024-8892-6863-8000-af2eb58c1b4f`), interrupt and task ids (32 hex digits), ISO timestamps,
//! and the Postgres server's port (the README's `127.0.0.1:55432`, the stage's own free port).

use std::path::Path;
use std::process::Command;

/// What an example needs that `cargo test` does not have.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Needs {
    /// A Python with LangGraph (the bridge): `SUPERSTEP_TEST_PYTHON`.
    Python,
    /// A Postgres server holding the PostgresSaver oracle fixtures: `SUPERSTEP_README_PG`.
    Postgres,
}

/// Commands (a prefix of the example's first line) not run by `cargo test`, and why.
const NOT_RUN_HERE: &[(&str, Needs, &str)] = &[
    (
        "superstep run examples/support/langgraph.json",
        Needs::Python,
        "a Python graph: needs a virtualenv with LangGraph (the bridge)",
    ),
    (
        "superstep resume examples/support/langgraph.json",
        Needs::Python,
        "a Python graph: needs a virtualenv with LangGraph (the bridge)",
    ),
    (
        "superstep run tests/bridge/graphs/",
        Needs::Python,
        "a Python graph: needs a virtualenv with LangGraph (the bridge)",
    ),
    (
        "superstep continue tests/bridge/graphs/",
        Needs::Python,
        "a Python graph: needs a virtualenv with LangGraph (the bridge)",
    ),
    (
        "superstep update tests/bridge/graphs/",
        Needs::Python,
        "a Python graph: needs a virtualenv with LangGraph (the bridge)",
    ),
    (
        "superstep resume tests/bridge/apps/",
        Needs::Python,
        "a Python graph: needs a virtualenv with LangGraph (the bridge)",
    ),
    (
        "superstep show --db tests/fixtures/delta.sqlite -t loop --graph",
        Needs::Python,
        "LangGraph reads the file with the Python graph (the bridge)",
    ),
    (
        "superstep store ls --db mem.sqlite",
        Needs::Python,
        "the store a Python graph's run filled just before (the bridge)",
    ),
    (
        "superstep run tests/bridge/apps/",
        Needs::Python,
        "a Python graph: needs a virtualenv with LangGraph (the bridge)",
    ),
    (
        "superstep check --db tests/fixtures/doctor.sqlite --graph tests/doctor/graphs/",
        Needs::Python,
        "a Python graph: needs a virtualenv with LangGraph (the bridge)",
    ),
    (
        "superstep replay examples/support/langgraph.json",
        Needs::Python,
        "a Python graph: needs a virtualenv with LangGraph (the bridge)",
    ),
    (
        "superstep update examples/support/langgraph.json",
        Needs::Python,
        "a Python graph: needs a virtualenv with LangGraph (the bridge)",
    ),
    (
        "superstep continue examples/support/langgraph.json",
        Needs::Python,
        "a Python graph: needs a virtualenv with LangGraph (the bridge)",
    ),
    (
        "superstep calls --db replay.sqlite",
        Needs::Python,
        "the calls the Python examples before it recorded (docs/replay.md)",
    ),
    (
        "export PGPASSWORD",
        Needs::Postgres,
        "shell set-up for the Postgres examples",
    ),
    (
        "superstep threads --db postgresql://",
        Needs::Postgres,
        "needs a Postgres server",
    ),
    (
        "superstep show --db postgresql://",
        Needs::Postgres,
        "needs a Postgres server",
    ),
    (
        "superstep --db postgresql://",
        Needs::Postgres,
        "needs a Postgres server",
    ),
];

fn needs(command: &str) -> Option<(Needs, &'static str)> {
    NOT_RUN_HERE
        .iter()
        .find(|(p, _, _)| command.starts_with(p))
        .map(|(_, n, why)| (*n, *why))
}

struct Example {
    /// The page (`README.md`, `docs/python.md`) and line of its `$` line.
    file: String,
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
                file: String::new(),
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

/// A scratch working directory that sees the repo's `graphs/`, `tests/` and `examples/`: files
/// an example writes land there.
fn scratch() -> tempfile::TempDir {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    for d in ["graphs", "tests", "examples"] {
        std::os::unix::fs::symlink(repo.join(d), dir.path().join(d)).unwrap();
    }
    dir
}

/// Run `command` as a shell does in `dir`, stdout and stderr together; `env` added.
fn run(command: &str, dir: &Path, env: &[(&str, String)]) -> String {
    let bin = Path::new(env!("CARGO_BIN_EXE_superstep"));
    let mut path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    if let Some((_, p)) = env.iter().find(|(k, _)| *k == "PATH") {
        path = format!("{p}:{path}");
    }
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(format!("{command} 2>&1"))
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("COLUMNS", "120");
    for (k, v) in env.iter().filter(|(k, _)| *k != "PATH") {
        c.env(k, v);
    }
    let o = c.env("PATH", &path).output().unwrap();
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The pages whose examples are run: README.md, then every `docs/*.md` by name.
fn pages() -> Vec<String> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut docs: Vec<String> = std::fs::read_dir(repo.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    let mut all = vec!["README.md".to_string()];
    all.extend(docs);
    all
}

/// Every example of every page, in page order.
fn all_examples() -> Vec<Example> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(repo.join(&page)).unwrap();
        for mut ex in examples(&text) {
            ex.file = page.clone();
            all.push(ex);
        }
    }
    all
}

#[test]
fn every_readme_example_is_what_superstep_prints() {
    let all = all_examples();
    let (mut ran, mut not_run, mut failures) = (0, Vec::new(), Vec::new());
    for ex in &all {
        if let Some((_, why)) = needs(&ex.command) {
            not_run.push(format!("{}:{} `{}`: {why}", ex.file, ex.line, ex.command));
            continue;
        }
        let dir = scratch();
        let out = run(&ex.command, dir.path(), &[]);
        if let Err(e) = shows(&out, &ex.expected) {
            failures.push(format!(
                "{}:{} `$ {}` drifted: {e}\n--- it prints now:\n{out}",
                ex.file, ex.line, ex.command
            ));
        }
        ran += 1;
    }
    eprintln!(
        "{ran} README/docs examples run; not run here ({}):\n  {}",
        not_run.len(),
        not_run.join("\n  ")
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(
        ran >= 3,
        "{ran} examples run: the README lost its examples?"
    );
    // every exception is still used (a stale entry would hide nothing, but would mislead)
    for (p, _, _) in NOT_RUN_HERE {
        assert!(
            all.iter().any(|e| e.command.starts_with(p)),
            "NOT_RUN_HERE names `{p}`, which no README example starts with"
        );
    }
}

/// What varies from run to run, made one token: checkpoint ids (8-4-4-4-12 hex), interrupt and
/// task ids (32 hex digits), ISO timestamps (`2026-12-03T17:44:11.780753+00:00`).
fn normalise(s: &str) -> String {
    let c: Vec<char> = s.chars().collect();
    let hex = |i: usize| c.get(i).is_some_and(|x| x.is_ascii_hexdigit());
    let word = |i: Option<usize>| {
        i.and_then(|i| c.get(i))
            .is_some_and(|x| x.is_alphanumeric())
    };
    let hex_run = |from: usize, n: usize| (from..from + n).all(hex);
    let mut out = String::new();
    let mut i = 0;
    while i < c.len() {
        if !word(i.checked_sub(1)) {
            // 8-4-4-4-12
            let mut at = i;
            let mut uuid = true;
            for (k, n) in [8usize, 4, 4, 4, 12].iter().enumerate() {
                if !hex_run(at, *n) {
                    uuid = false;
                    break;
                }
                at += n;
                if k < 4 {
                    if c.get(at) != Some(&'-') {
                        uuid = false;
                        break;
                    }
                    at += 1;
                }
            }
            if uuid && !word(Some(at)) {
                out.push_str("<ID>");
                i = at;
                continue;
            }
            if hex_run(i, 32) && !word(Some(i + 32)) {
                out.push_str("<ID32>");
                i += 32;
                continue;
            }
            // 2026-12-03T17:44:11…, up to the next space, quote or bracket
            let digits = |from: usize, n: usize| {
                (from..from + n).all(|j| c.get(j).is_some_and(|x| x.is_ascii_digit()))
            };
            if digits(i, 4)
                && c.get(i + 4) == Some(&'-')
                && digits(i + 5, 2)
                && c.get(i + 7) == Some(&'-')
                && digits(i + 8, 2)
                && c.get(i + 10) == Some(&'T')
            {
                let mut j = i + 11;
                while c
                    .get(j)
                    .is_some_and(|x| !x.is_whitespace() && !"\"',)]}".contains(*x))
                {
                    j += 1;
                }
                out.push_str("<TIME>");
                i = j;
                continue;
            }
            // a call's latency (`   0.4 ms`, `  1.2 s`: right-aligned, so the blanks go too)
            let mut j = i;
            while c.get(j).is_some_and(|x| x.is_ascii_digit()) {
                j += 1;
            }
            if j > i
                && c.get(j) == Some(&'.')
                && digits(j + 1, 1)
                && (c.get(j + 2..j + 5) == Some(&[' ', 'm', 's'][..])
                    || (c.get(j + 2..j + 4) == Some(&[' ', 's'][..]) && !word(Some(j + 4))))
            {
                while out.ends_with(' ') {
                    out.pop();
                }
                out.push_str(" <LATENCY>");
                i = if c[j + 3] == 'm' { j + 5 } else { j + 4 };
                continue;
            }
        }
        out.push(c[i]);
        i += 1;
    }
    out
}

/// Run the README examples that need `what`, in README order in one scratch directory (a later
/// example may read what an earlier one wrote, as in a shell), each command rewritten by `cmd`
/// and its output by `out`; fail unless every one of them ran and shows what the README shows.
fn run_needing(
    what: Needs,
    env: &[(&str, String)],
    cmd: impl Fn(&str) -> String,
    out: impl Fn(&str) -> String,
) {
    let dir = scratch();
    let (mut ran, mut failures) = (0, Vec::new());
    for ex in all_examples() {
        if needs(&ex.command).map(|n| n.0) != Some(what) {
            continue;
        }
        let printed = normalise(&out(&run(&cmd(&ex.command), dir.path(), env)));
        let expected: Vec<String> = ex.expected.iter().map(|l| normalise(l)).collect();
        if let Err(e) = shows(&printed, &expected) {
            failures.push(format!(
                "{}:{} `$ {}` drifted: {e}\n--- it prints now (normalised):\n{printed}",
                ex.file, ex.line, ex.command
            ));
        }
        eprintln!("{}:{} `$ {}`: ran", ex.file, ex.line, ex.command);
        ran += 1;
    }
    let listed = NOT_RUN_HERE.iter().filter(|(_, n, _)| *n == what).count();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(
        ran >= listed,
        "{ran} README examples needing {what:?} ran, NOT_RUN_HERE lists {listed}"
    );
}

/// The Python examples (examples/support through the bridge), with the pinned venv.
#[test]
#[ignore = "needs a Python with LangGraph: SUPERSTEP_TEST_PYTHON (.ci/run's bridge stage)"]
fn the_python_examples_are_what_superstep_prints() {
    let py = std::env::var("SUPERSTEP_TEST_PYTHON")
        .expect("SUPERSTEP_TEST_PYTHON: the Python (with LangGraph) to run the README's Python examples with");
    // as in the README: run from inside that virtualenv
    let bin = Path::new(&py).parent().unwrap().to_path_buf();
    let venv = bin.parent().unwrap().display().to_string();
    let env = [("VIRTUAL_ENV", venv), ("PATH", bin.display().to_string())];
    run_needing(Needs::Python, &env, |c| c.to_string(), |o| o.to_string());
}

/// The Postgres examples, on a server holding the PostgresSaver oracle fixtures
/// (`fx_multi_interrupt`, as tests/postgres/ci.sh writes them).
#[test]
#[ignore = "needs a Postgres server with the PostgresSaver fixtures: SUPERSTEP_README_PG (tests/postgres/ci.sh)"]
fn the_postgres_examples_are_what_superstep_prints() {
    let url = std::env::var("SUPERSTEP_README_PG").expect(
        "SUPERSTEP_README_PG: postgresql://superstep:PASSWORD@127.0.0.1:PORT/… of the server holding fx_multi_interrupt",
    );
    // postgresql://user:password@host:port/db
    let rest = url.split_once("://").expect("a postgresql:// URL").1;
    let (auth, hostpart) = rest.split_once('@').expect("user:password@ in the URL");
    let (user, password) = auth.split_once(':').expect("a password in the URL");
    let host = hostpart.split('/').next().unwrap().to_string();
    let readme_server = "superstep@127.0.0.1:55432";
    let server = format!("{user}@{host}");
    let env = [("PGPASSWORD", password.to_string())];
    run_needing(
        Needs::Postgres,
        &env,
        // `export PGPASSWORD=…` is the README's placeholder: the password is in the environment
        |c| {
            if c.starts_with("export PGPASSWORD") {
                "true".into()
            } else {
                c.replace(readme_server, &server)
            }
        },
        |o| o.replace(&server, readme_server),
    );
}

#[test]
fn call_latencies_are_normalised() {
    assert_eq!(
        normalise("bump  live     0.4 ms  bump(x)"),
        normalise("bump  live    12.3 ms  bump(x)")
    );
    assert_eq!(normalise("a  1.5 s b"), "a <LATENCY> b");
    assert_eq!(normalise("version 1.2 ms"), "version <LATENCY>");
    assert_eq!(normalise("langgraph 1.2.24"), "langgraph 1.2.24");
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

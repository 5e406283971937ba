//! Shipping (issue 16): `--version` and its one source of truth, shell completions, man pages.
//! The installed wheel is exercised by `.ci/run`'s wheel stage (it needs maturin and a venv).

use crate::common;
use common::*;
use std::path::{Path, PathBuf};

/// `name==version` pins read from the oracle's requirements file, independently of src/versions.rs.
fn oracle_pins() -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/requirements.txt");
    std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once("=="))
        .map(|(n, v)| (n.trim().to_lowercase(), v.trim().to_string()))
        .collect()
}

fn pin(name: &str) -> String {
    oracle_pins()
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("tests/oracle/requirements.txt does not pin {name}"))
        .1
}

const FORMAT_PACKAGES: [&str; 3] = [
    "langgraph",
    "langgraph-checkpoint",
    "langgraph-checkpoint-sqlite",
];

#[test]
fn version_names_superstep_and_the_pinned_langgraph_formats() {
    let o = superstep(&["--version"]);
    assert_eq!(o.status.code(), Some(0));
    let expected = format!(
        "superstep {}\nproved against {}\n",
        env!("CARGO_PKG_VERSION"),
        FORMAT_PACKAGES
            .iter()
            .map(|p| format!("{p} {}", pin(p)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    assert_eq!(stdout(&o), expected);
    // -V stays the one-line form scripts cut the version from
    let o = superstep(&["-V"]);
    assert_eq!(
        stdout(&o),
        format!("superstep {}\n", env!("CARGO_PKG_VERSION"))
    );
}

fn fixtures_dir() -> PathBuf {
    std::env::var_os("SUPERSTEP_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures"))
}

/// The fixtures record the versions that generated them: they must be the pinned ones, or the
/// "proved against" line would claim a proof made with another LangGraph.
#[test]
fn every_fixture_was_generated_by_the_pinned_versions() {
    let mut checked = 0;
    for entry in std::fs::read_dir(fixtures_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let Some(versions) = json.get("versions") else {
            continue;
        };
        // an older LangGraph on purpose (tests/oracle/v02: `"format": "langgraph 0.2.20"`): its own pins
        if let Some(old) = json
            .get("format")
            .and_then(|f| f.as_str())
            .and_then(|f| f.strip_prefix("langgraph "))
        {
            let req = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(format!("tests/oracle/v02/requirements-{old}.txt"));
            let pins =
                std::fs::read_to_string(&req).unwrap_or_else(|e| panic!("{}: {e}", req.display()));
            for name in [
                "langgraph",
                "langgraph-checkpoint",
                "langgraph-checkpoint-sqlite",
            ] {
                let pinned = pins
                    .lines()
                    .find_map(|l| l.strip_prefix(&format!("{name}==")));
                assert_eq!(
                    versions.get(name).and_then(|v| v.as_str()),
                    pinned,
                    "{}: versions.{name} (pinned in {})",
                    path.display(),
                    req.display()
                );
            }
            checked += 1;
            continue;
        }
        for (name, version) in superstep::versions::PROVED_AGAINST {
            assert_eq!(
                versions.get(name).and_then(|v| v.as_str()),
                Some(version),
                "{}: versions.{name}",
                path.display()
            );
        }
        checked += 1;
    }
    assert!(
        checked >= 10,
        "only {checked} fixtures record their versions"
    );
}

fn visible_subcommands() -> Vec<String> {
    use clap::CommandFactory;
    superstep::cli::Cli::command()
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_string())
        .collect()
}

#[test]
fn completion_scripts_register_superstep_and_know_every_subcommand() {
    let registers = [
        ("bash", "complete -F _superstep"),
        ("zsh", "#compdef superstep"),
        ("fish", "complete -c superstep"),
    ];
    let subs = visible_subcommands();
    assert!(subs.contains(&"completions".to_string()) && subs.contains(&"man".to_string()));
    for (shell, marker) in registers {
        let o = superstep(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}: {}", stderr(&o));
        let script = stdout(&o);
        assert!(script.contains(marker), "{shell}: no {marker:?}");
        for sub in &subs {
            assert!(
                script.contains(sub.as_str()),
                "{shell}: no subcommand {sub}"
            );
        }
        assert!(
            script.contains("topology"),
            "{shell}: subcommand flags missing"
        );
    }
    let o = superstep(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("[possible values: bash, zsh, fish]"));
}

#[test]
fn man_page_lists_every_subcommand_exit_codes_and_versions() {
    let o = superstep(&["man"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let page = stdout(&o);
    assert!(page.contains(".TH superstep 1"), "{page}");
    for sub in visible_subcommands() {
        assert!(
            page.contains(&format!("superstep\\-{sub}(1)")),
            "no {sub} in:\n{page}"
        );
    }
    assert!(page.contains(".SH \"EXIT STATUS\""));
    for p in FORMAT_PACKAGES {
        let line = format!("{} {}", p.replace('-', "\\-"), pin(p));
        assert!(page.contains(&line), "no {line:?} in:\n{page}");
    }
    let o = superstep(&["man", "history"]);
    let page = stdout(&o);
    assert!(
        page.contains(".TH superstep-history 1  \"superstep 0."),
        "{page}"
    );
    assert!(page.contains("\\-\\-limit"), "{page}");
}

#[test]
fn man_dir_writes_one_page_per_command_and_errors_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let o = superstep(&["man", "--dir", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut expected: Vec<String> = visible_subcommands()
        .iter()
        .map(|s| format!("superstep-{s}.1"))
        .chain(["superstep.1".to_string()])
        .collect();
    expected.sort();
    assert_eq!(names, expected);
    assert_eq!(stdout(&o).lines().count(), expected.len());
    // roff input is ASCII: groff -ww warns on UTF-8 ("invalid input character code 128"), which
    // the wheel stage of .ci/run treats as a failure (an em dash in --replay's help did it)
    for n in &names {
        let page = std::fs::read_to_string(dir.path().join(n)).unwrap();
        if let Some((i, line)) = page.lines().enumerate().find(|(_, l)| !l.is_ascii()) {
            panic!("{n}:{}: not ASCII: {line}", i + 1);
        }
    }

    // a missing directory is created (`superstep man --dir ~/.local/share/man/man1` on a new machine)
    let nested = dir.path().join("share/man/man1");
    let o = superstep(&["man", "--dir", nested.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(nested.join("superstep-show.1").is_file());

    let under_a_file = format!("{}/man1", dir.path().join("superstep.1").display());
    for (args, needle) in [
        (
            vec!["man", "nope"],
            "man: no subcommand \"nope\" (commands: threads, ".to_string(),
        ),
        (
            vec!["man", "--dir", &under_a_file],
            format!("{under_a_file}: "),
        ),
    ] {
        let o = superstep(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(stderr(&o).lines().count(), 1, "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(&needle), "{args:?}: {}", stderr(&o));
        assert!(stdout(&o).is_empty());
    }
}

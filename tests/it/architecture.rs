//! The direction of imports (ARCHITECTURE.md, issue 22): the graph-source interface owns its
//! types, so the bridge needs nothing from the spec engine; `spec/` is data the engine runs, not
//! the other way round; the TUI's drawing reads the app model, not the store. Read from the
//! sources as text: a `crate::…` path in code (comments skipped), a `use crate::{…}` group too.

use std::path::{Path, PathBuf};

/// `(folder under src/, the rooms it must not name, why)`.
const RULES: &[(&str, &[&str], &str)] = &[
    (
        "bridge",
        &["engine", "spec"],
        "the bridge speaks the graph-source interface's types (source/types.rs)",
    ),
    (
        "source",
        &["engine", "spec", "bridge", "store"],
        "the interface owns its types; its implementations import it, not the reverse",
    ),
    (
        "spec",
        &["engine"],
        "a spec is data: the engine loads and runs it (engine/loaded.rs, engine/starlark.rs)",
    ),
    (
        "ui",
        &["store", "engine", "bridge"],
        "the drawing reads the app model (keys: crate::keys)",
    ),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The rooms a line of code names through `crate::` (its comment cut off).
fn named_rooms(line: &str) -> Vec<String> {
    let code = match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    };
    let mut rooms = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // use crate::{engine::X, spec}: every top-level name of the group
            let mut depth = 0;
            let mut name = String::new();
            let mut at_top = true;
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        at_top = true;
                        name.clear();
                        continue;
                    }
                    _ => {}
                }
                if depth == 0 && at_top {
                    if c.is_alphanumeric() || c == '_' {
                        name.push(c);
                    } else if !name.is_empty() {
                        rooms.push(std::mem::take(&mut name));
                        at_top = false;
                    }
                }
            }
            if at_top && !name.is_empty() {
                rooms.push(name);
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            rooms.push(name);
        }
    }
    rooms
}

#[test]
fn the_checker_sees_paths_and_groups_and_skips_comments() {
    assert_eq!(named_rooms("use crate::engine::Input;"), ["engine"]);
    assert_eq!(
        named_rooms("use crate::{engine::{Input, Resume}, spec};"),
        ["engine", "spec"]
    );
    assert_eq!(
        named_rooms("    let x = crate::store::key_label(t); // crate::spec"),
        ["store"]
    );
    assert!(named_rooms("//! see crate::engine").is_empty());
}

#[test]
fn imports_go_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut broken = Vec::new();
    for (room, forbidden, why) in RULES {
        let mut files = Vec::new();
        rust_files(&src.join(room), &mut files);
        assert!(!files.is_empty(), "src/{room} has no Rust files");
        files.sort();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for (n, line) in text.lines().enumerate() {
                for named in named_rooms(line) {
                    if forbidden.contains(&named.as_str()) {
                        broken.push(format!(
                            "{}:{}: src/{room} names crate::{named} ({why})",
                            f.strip_prefix(&src).unwrap().display(),
                            n + 1
                        ));
                    }
                }
            }
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

//! The LangGraph versions whose formats superstep was proved against.
//!
//! One source of truth: the exact pins of the oracle venv, `tests/oracle/requirements.txt`, which
//! every fixture and differential run is generated with. They are read at compile time, so
//! `--version` (and anything else that names them) cannot drift from the venv the tests use; a
//! missing pin is a compile error. tests/cli_ship.rs checks that the committed fixtures were made by
//! these versions, and `.ci/run` that the live oracle venv has them installed.

/// The oracle venv's requirements file, exact pins (`name==version`), one a line.
pub const ORACLE_REQUIREMENTS: &str = include_str!("../tests/oracle/requirements.txt");

/// langgraph: the Pregel loop, ids, the write and interrupt protocol.
pub const LANGGRAPH: &str = pin("langgraph");
/// langgraph-checkpoint: the serializer (msgpack + ext types) and checkpoint shape.
pub const LANGGRAPH_CHECKPOINT: &str = pin("langgraph-checkpoint");
/// langgraph-checkpoint-sqlite: SqliteSaver's schema and queries.
pub const LANGGRAPH_CHECKPOINT_SQLITE: &str = pin("langgraph-checkpoint-sqlite");

/// The format packages in the order `--version` names them: (PyPI name, exact version).
pub const PROVED_AGAINST: [(&str, &str); 3] = [
    ("langgraph", LANGGRAPH),
    ("langgraph-checkpoint", LANGGRAPH_CHECKPOINT),
    ("langgraph-checkpoint-sqlite", LANGGRAPH_CHECKPOINT_SQLITE),
];

/// superstep's own version (Cargo.toml; the wheel takes it from there too).
pub const SUPERSTEP: &str = env!("CARGO_PKG_VERSION");

/// What `superstep --version` prints after "superstep ".
pub fn long_version() -> &'static str {
    static TEXT: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        let pins: Vec<String> = PROVED_AGAINST
            .iter()
            .map(|(name, version)| format!("{name} {version}"))
            .collect();
        format!("{SUPERSTEP}\nproved against {}", pins.join(", "))
    });
    &TEXT
}

/// The version pinned as `name==version` on a line of its own in the requirements file.
const fn pin(name: &str) -> &'static str {
    let text = ORACLE_REQUIREMENTS.as_bytes();
    let name = name.as_bytes();
    let mut start = 0;
    while start < text.len() {
        let mut end = start;
        while end < text.len() && text[end] != b'\n' {
            end += 1;
        }
        if line_pins(text, start, end, name) {
            let mut stop = end;
            while stop > start && (text[stop - 1] == b'\r' || text[stop - 1] == b' ') {
                stop -= 1;
            }
            let (_, rest) = text.split_at(start + name.len() + 2);
            let (version, _) = rest.split_at(stop - start - name.len() - 2);
            match std::str::from_utf8(version) {
                Ok(v) if !v.is_empty() => return v,
                _ => panic!("tests/oracle/requirements.txt: an empty or non-UTF-8 version"),
            }
        }
        start = end + 1;
    }
    panic!("tests/oracle/requirements.txt: a format package has no exact `name==version` pin")
}

/// Whether `text[start..end]` begins with `name==`.
const fn line_pins(text: &[u8], start: usize, end: usize, name: &[u8]) -> bool {
    if end - start < name.len() + 2 {
        return false;
    }
    let mut i = 0;
    while i < name.len() {
        if text[start + i] != name[i] {
            return false;
        }
        i += 1;
    }
    text[start + name.len()] == b'=' && text[start + name.len() + 1] == b'='
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_are_read_exactly_and_prefixes_do_not_match() {
        // "langgraph" must not pick up "langgraph-checkpoint==…" or "langgraph-prebuilt==…"
        for (name, version) in PROVED_AGAINST {
            let line = format!("{name}=={version}");
            assert!(
                ORACLE_REQUIREMENTS.lines().any(|l| l.trim_end() == line),
                "{line} is not a line of the requirements file"
            );
        }
        assert_ne!(LANGGRAPH, LANGGRAPH_CHECKPOINT);
        assert!(long_version().starts_with(SUPERSTEP));
        assert!(long_version().contains(&format!(
            "langgraph-checkpoint-sqlite {LANGGRAPH_CHECKPOINT_SQLITE}"
        )));
    }
}

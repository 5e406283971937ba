//! Which Python runs the user's graph: `--python PATH`, else `$VIRTUAL_ENV`, else `./.venv`
//! (or a `.venv` next to the langgraph.json), else — when superstep itself was installed into a
//! virtualenv (`pip install`: the binary sits in the venv's `bin/`) — that venv's python, else
//! `python3` on the PATH.

use std::path::{Path, PathBuf};

/// The interpreter and why it was chosen (for messages: "the interpreter used").
#[derive(Debug, Clone, PartialEq)]
pub struct Interpreter {
    pub path: PathBuf,
    pub why: &'static str,
}

fn venv_python(venv: &Path) -> Option<PathBuf> {
    ["bin/python", "bin/python3", "Scripts/python.exe"]
        .iter()
        .map(|p| venv.join(p))
        .find(|p| p.is_file())
}

/// Choose the interpreter. `near` is a directory that may hold a `.venv` too (the
/// langgraph.json's).
pub fn choose(explicit: Option<&Path>, near: Option<&Path>) -> Interpreter {
    choose_with(
        explicit,
        std::env::var_os("VIRTUAL_ENV").map(PathBuf::from),
        std::env::current_dir().ok(),
        near,
        std::env::current_exe().ok(),
    )
}

pub fn choose_with(
    explicit: Option<&Path>,
    virtual_env: Option<PathBuf>,
    cwd: Option<PathBuf>,
    near: Option<&Path>,
    exe: Option<PathBuf>,
) -> Interpreter {
    if let Some(p) = explicit {
        return Interpreter {
            path: p.to_path_buf(),
            why: "--python",
        };
    }
    if let Some(py) = virtual_env.as_deref().and_then(venv_python) {
        return Interpreter {
            path: py,
            why: "$VIRTUAL_ENV",
        };
    }
    for dir in cwd.iter().map(PathBuf::as_path).chain(near) {
        if let Some(py) = venv_python(&dir.join(".venv")) {
            return Interpreter {
                path: py,
                why: "./.venv",
            };
        }
    }
    // superstep pip-installed into a venv: <venv>/bin/superstep next to <venv>/bin/python
    if let Some(bin) = exe.as_deref().and_then(Path::parent) {
        let venv = bin.parent();
        if let (Some(venv), Some(py)) = (venv, venv.and_then(venv_python)) {
            if venv.join("pyvenv.cfg").is_file() {
                return Interpreter {
                    path: py,
                    why: "superstep's own virtualenv",
                };
            }
        }
    }
    Interpreter {
        path: PathBuf::from("python3"),
        why: "python3 on the PATH",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_of_choice() {
        let root = std::env::temp_dir().join(format!("superstep-py-{}", std::process::id()));
        let venv = root.join("venv");
        let proj = root.join("proj");
        std::fs::create_dir_all(venv.join("bin")).unwrap();
        std::fs::create_dir_all(proj.join(".venv/bin")).unwrap();
        std::fs::write(venv.join("bin/python"), "").unwrap();
        std::fs::write(venv.join("pyvenv.cfg"), "").unwrap();
        std::fs::write(proj.join(".venv/bin/python"), "").unwrap();
        let exe = Some(venv.join("bin/superstep"));
        let c = |e: Option<&Path>, v: Option<PathBuf>, cwd: Option<PathBuf>| {
            choose_with(e, v, cwd, None, exe.clone())
        };
        assert_eq!(c(Some(Path::new("/x/py")), None, None).why, "--python");
        assert_eq!(
            c(None, Some(venv.clone()), Some(proj.clone())).path,
            venv.join("bin/python")
        );
        assert_eq!(
            c(None, None, Some(proj.clone())).path,
            proj.join(".venv/bin/python")
        );
        let own = c(None, None, Some(root.clone()));
        assert_eq!(own.why, "superstep's own virtualenv");
        assert_eq!(
            choose_with(None, None, None, None, None).path,
            PathBuf::from("python3")
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}

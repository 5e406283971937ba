//! A spec loaded with its code, every reference checked, and compiled for the engine
//! (subgraph specs loaded with it).

use super::graph::Graph;
use super::starlark::{Callable, StarlarkCode};
use crate::spec::model::{GraphSpec, ReducerSpec, SpecError};
use std::path::{Path, PathBuf};

/// A spec with its code loaded and its graph compiled.
pub struct LoadedGraph {
    pub path: PathBuf,
    /// Loaded specs of subgraph nodes, by node name.
    pub children: std::collections::HashMap<String, LoadedGraph>,
    /// The node code's file name (for messages) and source.
    pub code_file: String,
    pub code_source: String,
    pub spec: GraphSpec,
    pub graph: Graph,
    pub code: StarlarkCode,
}

impl LoadedGraph {
    /// The graph whose checkpoints live in namespace `ns` (`""`: this one; `a:<id>|b:<id>`:
    /// child `a`'s child `b`), as LangGraph finds it with `recast_checkpoint_ns` (task ids and
    /// numeric parts dropped).
    pub fn for_namespace(&self, ns: &str) -> Option<&LoadedGraph> {
        let mut g = self;
        for part in ns.split('|').filter(|p| !p.is_empty()) {
            let name = part.split(':').next().unwrap_or(part);
            if name.chars().all(|c| c.is_ascii_digit()) {
                continue;
            }
            g = g.children.get(name)?;
        }
        Some(g)
    }
}

/// Load `graphs/NAME.json` (and its `.star` module), validating names, edges and functions.
pub fn load(path: &Path) -> Result<LoadedGraph, SpecError> {
    load_nested(path, 0)
}

fn load_nested(path: &Path, depth: usize) -> Result<LoadedGraph, SpecError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| SpecError {
        file: shown.clone(),
        path: "$".into(),
        message: format!("cannot read: {e}"),
    })?;
    load_text(path, &text, None, depth)
}

/// Load a spec from its JSON text (and, for `code` files, the given Starlark source instead of
/// reading the file): the in-memory entry point the fuzz target drives. Subgraph specs are still
/// read from files next to `path`.
pub fn load_from_str(path: &Path, json: &str, star: &str) -> Result<LoadedGraph, SpecError> {
    load_text(path, json, Some(star), 0)
}

fn load_text(
    path: &Path,
    text: &str,
    star: Option<&str>,
    depth: usize,
) -> Result<LoadedGraph, SpecError> {
    let shown = path.display().to_string();
    let spec = GraphSpec::parse(&shown, text)?;
    let (code_file, source) = match (&spec.code_file, &spec.code_inline) {
        (Some(f), _) => {
            let p = path.parent().unwrap_or(Path::new(".")).join(f);
            let src = match star {
                Some(given) => Ok(given.to_string()),
                None => std::fs::read_to_string(&p),
            }
            .map_err(|e| SpecError {
                file: shown.clone(),
                path: "code".into(),
                message: format!("cannot read {}: {e}", p.display()),
            })?;
            (p.display().to_string(), src)
        }
        (None, Some(src)) => (format!("{shown}#code_inline"), src.clone()),
        (None, None) => (format!("{shown}#code"), String::new()),
    };
    let code = StarlarkCode::load(&code_file, &source).map_err(|e| SpecError {
        file: shown.clone(),
        path: "code".into(),
        message: e,
    })?;
    let need =
        |what: &str, key: String, func: &str, nargs: usize| -> Result<(), SpecError> {
            let err = |m: String| SpecError {
                file: shown.clone(),
                path: key.clone(),
                message: m,
            };
            match code.check(func, nargs) {
                Callable::Takes(true) => Ok(()),
                Callable::Missing => Err(err(format!(
                    "{what} function {func:?} is not defined in {code_file} (defined: {})",
                    code.names().join(", ")
                ))),
                Callable::NotAFunction => {
                    Err(err(format!("{func:?} in {code_file} is not a function")))
                }
                Callable::Takes(false) => Err(err(format!(
                "{what} function {func:?} must take {nargs} positional argument{} (def {func}({}))",
                if nargs == 1 { "" } else { "s" },
                if nargs == 1 { "state" } else { "current, update" }
            ))),
            }
        };
    for (i, n) in spec.nodes.iter().enumerate() {
        if n.subgraph.is_some() {
            continue;
        }
        need("node", format!("nodes[{i}].fn"), &n.func, 1)?;
    }
    for (i, b) in spec.branches.iter().enumerate() {
        need("path", format!("conditional_edges[{i}].path"), &b.path, 1)?;
    }
    for k in &spec.state {
        if let ReducerSpec::Code(f) = &k.reducer {
            need("reducer", format!("state.{}.reducer", k.name), f, 2)?;
        }
    }
    let mut children = std::collections::HashMap::new();
    for (i, n) in spec.nodes.iter().enumerate() {
        if let Some(sub) = &n.subgraph {
            if depth >= 8 {
                return Err(SpecError {
                    file: shown.clone(),
                    path: format!("nodes[{i}].subgraph"),
                    message: "subgraphs nested more than 8 deep (a spec that contains itself?)"
                        .into(),
                });
            }
            let p = path.parent().unwrap_or(Path::new(".")).join(sub);
            let child = load_nested(&p, depth + 1).map_err(|e| SpecError {
                file: shown.clone(),
                path: format!("nodes[{i}].subgraph"),
                message: format!("in {}: {}: {}", e.file, e.path, e.message),
            })?;
            children.insert(n.name.clone(), child);
        }
    }
    let graph = Graph::compile(&spec);
    Ok(LoadedGraph {
        path: path.to_path_buf(),
        children,
        code_file,
        code_source: source,
        spec,
        graph,
        code,
    })
}

//! Graph references: what the user names on the command line.
//!
//! * `graphs/approval.json` — a graph spec (stepped by superstep's engine);
//! * `path/to/app.py:graph` — a Python file and the attribute holding the graph;
//! * `package.module:graph` — an importable module and the attribute;
//! * `langgraph.json [GRAPH_ID]` — the LangGraph CLI's config file: `graphs` (id -> `"./path.py:obj"`,
//!   `"module:obj"` or `{"path": ..., "description": ...}`), `env` (a dict, or the path of a `.env`
//!   file, loaded before the import) and `dependencies` (local directories go on the import path).

use serde_json::Value as Json;
use std::path::{Path, PathBuf};

/// What a reference names.
// parsed once per command: boxing the Python reference would buy nothing
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum GraphRef {
    /// A graph spec (JSON + Starlark).
    Spec(PathBuf),
    Python(PythonRef),
}

/// A Python graph and how to import it.
#[derive(Debug, Clone, PartialEq)]
pub struct PythonRef {
    pub target: Target,
    /// The attribute (dotted) holding the graph, a compiled graph or a factory.
    pub attr: String,
    /// Directories put first on `sys.path` (langgraph.json `dependencies`, its own directory).
    pub paths: Vec<PathBuf>,
    /// Environment set before the import (langgraph.json `env`).
    pub env: Vec<(String, String)>,
    /// As the user wrote it (`app.py:graph`, `langgraph.json support`), for messages.
    pub label: String,
    /// The langgraph.json graph id, if any.
    pub graph_id: Option<String>,
    /// The langgraph.json file, if any (its directory is where `./.venv` is looked for too).
    pub config: Option<PathBuf>,
    /// langgraph.json's `store` (`index`, `ttl`, `path`), file paths made absolute.
    pub store: Option<Json>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    File(PathBuf),
    Module(String),
}

fn err(arg: &str, what: impl std::fmt::Display) -> String {
    format!("{arg}: {what}")
}

const EXPECTED: &str =
    "expected a graph spec (.json), a langgraph.json, path/to/app.py:graph or package.module:graph";

impl GraphRef {
    /// Parse a reference; `graph_id` picks a graph of a langgraph.json.
    pub fn parse(arg: &str, graph_id: Option<&str>) -> Result<GraphRef, String> {
        let path = Path::new(arg);
        let is_json = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
        if is_json {
            if let Some(cfg) = read_config(path)? {
                return from_config(arg, path, &cfg, graph_id).map(GraphRef::Python);
            }
            if let Some(id) = graph_id {
                return Err(err(
                    arg,
                    format!(
                        "a graph spec has no graph ids (got {id:?}); ids are for langgraph.json"
                    ),
                ));
            }
            return Ok(GraphRef::Spec(path.to_path_buf()));
        }
        if let Some(id) = graph_id {
            return Err(err(
                arg,
                format!("unexpected graph id {id:?}: only a langgraph.json has graph ids"),
            ));
        }
        let (target, attr) = split_target(arg, Path::new("."))?;
        // `package.module:graph` imports from the working directory, as `python -m`, uvicorn
        // and `langgraph dev` (its config's directory) have it on the import path
        let paths = match target {
            Target::Module(_) => vec![PathBuf::from(".")],
            Target::File(_) => Vec::new(),
        };
        Ok(GraphRef::Python(PythonRef {
            target,
            attr,
            paths,
            env: Vec::new(),
            label: arg.to_string(),
            graph_id: None,
            config: None,
            store: None,
        }))
    }
}

impl GraphRef {
    /// A reference given as one flag value (`--graph REF`): `langgraph.json:ID` names one graph
    /// of a langgraph.json.
    pub fn parse_flag(r: &str) -> Result<GraphRef, String> {
        match r.split_once(".json:") {
            Some((a, id)) => GraphRef::parse(&format!("{a}.json"), Some(id)),
            None => GraphRef::parse(r, None),
        }
    }
}

/// `x.py:attr` / `pkg.mod:attr` (a file path resolved against `base`).
fn split_target(arg: &str, base: &Path) -> Result<(Target, String), String> {
    let Some((left, attr)) = arg.rsplit_once(':') else {
        return Err(err(arg, EXPECTED));
    };
    if attr.is_empty() || !attr.split('.').all(is_identifier) {
        return Err(err(
            arg,
            format!("{attr:?} is not a Python attribute name ({EXPECTED})"),
        ));
    }
    if left.is_empty() {
        return Err(err(arg, EXPECTED));
    }
    let looks_like_file = left.ends_with(".py") || left.contains('/') || left.contains('\\');
    if looks_like_file {
        let p = base.join(left);
        if !p.is_file() {
            return Err(err(arg, format!("{}: no such file", p.display())));
        }
        return Ok((Target::File(p), attr.to_string()));
    }
    if !left.split('.').all(is_identifier) {
        return Err(err(
            arg,
            format!("{left:?} is neither a .py file nor a module name ({EXPECTED})"),
        ));
    }
    Ok((Target::Module(left.to_string()), attr.to_string()))
}

fn is_identifier(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(f) if f == '_' || f.is_alphabetic())
        && c.all(|x| x == '_' || x.is_alphanumeric())
}

/// The JSON of a langgraph.json-like file (one with a `graphs` object), or `None` for anything
/// else (a graph spec).
fn read_config(path: &Path) -> Result<Option<Json>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        // a missing file is reported by whoever reads it as a spec, as before
        Err(_) => return Ok(None),
    };
    let Ok(j) = serde_json::from_str::<Json>(&text) else {
        return Ok(None);
    };
    let named_like_config = path
        .file_name()
        .is_some_and(|n| n.eq_ignore_ascii_case("langgraph.json"));
    match j.get("graphs") {
        Some(g) if g.is_object() => Ok(Some(j)),
        Some(_) => Err(format!(
            "{}: graphs: expected an object of graph id -> \"./file.py:graph\"",
            path.display()
        )),
        None if named_like_config => Err(format!(
            "{}: no \"graphs\" object (a langgraph.json names its graphs: {{\"graphs\": {{\"agent\": \"./agent.py:graph\"}}}})",
            path.display()
        )),
        None => Ok(None),
    }
}

fn from_config(
    arg: &str,
    path: &Path,
    cfg: &Json,
    graph_id: Option<&str>,
) -> Result<PythonRef, String> {
    let where_ = path.display().to_string();
    let dir = path
        .parent()
        .map(|p| {
            if p.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                p.to_path_buf()
            }
        })
        .unwrap_or_else(|| PathBuf::from("."));
    let graphs = cfg["graphs"].as_object().expect("checked by read_config");
    let ids: Vec<&String> = graphs.keys().collect();
    let id = match graph_id {
        Some(id) => {
            if !graphs.contains_key(id) {
                return Err(format!(
                    "{where_}: no graph {id:?} (graphs: {})",
                    ids.iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            id.to_string()
        }
        None if ids.len() == 1 => ids[0].clone(),
        None if ids.is_empty() => return Err(format!("{where_}: graphs: no graph is defined")),
        None => {
            return Err(format!(
                "{where_}: {} graphs ({}): name one, e.g. superstep {arg} {}",
                ids.len(),
                ids.iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                ids[0]
            ))
        }
    };
    let spec = match &graphs[&id] {
        Json::String(s) => s.clone(),
        Json::Object(o) => match o.get("path").and_then(Json::as_str) {
            Some(s) => s.to_string(),
            None => {
                return Err(format!(
                    "{where_}: graphs.{id}: expected \"path\": \"./file.py:graph\""
                ))
            }
        },
        _ => {
            return Err(format!(
                "{where_}: graphs.{id}: expected \"./file.py:graph\" or {{\"path\": ...}}"
            ))
        }
    };
    let (target, attr) =
        split_target(&spec, &dir).map_err(|e| format!("{where_}: graphs.{id}: {e}"))?;
    let mut paths = vec![dir.clone()];
    match cfg.get("dependencies") {
        None | Some(Json::Null) => {}
        Some(Json::Array(deps)) => {
            for (i, d) in deps.iter().enumerate() {
                let Some(d) = d.as_str() else {
                    return Err(format!("{where_}: dependencies[{i}]: expected a string"));
                };
                // "." / "./src" are local packages; anything else is a pip requirement
                if d.starts_with('.') || d.starts_with('/') {
                    let p = dir.join(d);
                    if !p.is_dir() {
                        return Err(format!(
                            "{where_}: dependencies[{i}]: {}: no such directory",
                            p.display()
                        ));
                    }
                    if !paths.contains(&p) {
                        paths.push(p);
                    }
                }
            }
        }
        Some(_) => return Err(format!("{where_}: dependencies: expected a list")),
    }
    let env = match cfg.get("env") {
        None | Some(Json::Null) => Vec::new(),
        Some(Json::Object(m)) => {
            let mut out = Vec::new();
            for (k, v) in m {
                let v = match v {
                    Json::String(s) => s.clone(),
                    Json::Number(n) => n.to_string(),
                    Json::Bool(b) => b.to_string(),
                    _ => return Err(format!("{where_}: env.{k}: expected a string")),
                };
                out.push((k.clone(), v));
            }
            out
        }
        Some(Json::String(f)) => {
            let p = dir.join(f);
            match std::fs::read_to_string(&p) {
                Ok(text) => parse_dotenv(&text).map_err(|e| format!("{}: {e}", p.display()))?,
                // a fresh clone of a template has only .env.example: langgraph dev (python-dotenv)
                // sets no variables then and runs
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
                Err(e) => return Err(format!("{where_}: env: {}: {e}", p.display())),
            }
        }
        Some(_) => {
            return Err(format!(
                "{where_}: env: expected an object or the path of a .env file"
            ))
        }
    };
    Ok(PythonRef {
        target,
        attr,
        paths,
        env,
        label: match graph_id {
            Some(g) => format!("{arg} {g}"),
            None => format!("{arg} ({id})"),
        },
        graph_id: Some(id),
        config: Some(path.to_path_buf()),
        store: store_config(cfg.get("store"), &dir, &where_)?,
    })
}

/// langgraph.json's `store`: `{"index": {"embed": …, "dims": N, "fields": […]}, "ttl": {…},
/// "path": "./store.py:make_store"}` as `langgraph dev` reads it; `./file.py:attr` (the custom
/// store's factory, an `embed` function) made absolute against the file's directory.
fn store_config(j: Option<&Json>, dir: &Path, where_: &str) -> Result<Option<Json>, String> {
    let m = match j {
        None | Some(Json::Null) => return Ok(None),
        Some(Json::Object(m)) => m,
        Some(_) => {
            return Err(format!(
                "{where_}: store: expected an object (index, ttl, path)"
            ))
        }
    };
    let local = |s: &str| -> Result<String, String> {
        let Some((left, attr)) = s.rsplit_once(':') else {
            return Ok(s.to_string());
        };
        if !left.ends_with(".py") {
            return Ok(s.to_string());
        }
        let p = dir.join(left);
        if !p.is_file() {
            return Err(format!("{}: no such file", p.display()));
        }
        let abs = std::path::absolute(&p).unwrap_or(p);
        Ok(format!("{}:{attr}", abs.display()))
    };
    let mut out = serde_json::Map::new();
    for (k, v) in m {
        let v = match (k.as_str(), v) {
            ("path", Json::String(s)) => {
                Json::String(local(s).map_err(|e| format!("{where_}: store.path: {e}"))?)
            }
            ("index", Json::Object(ix)) => {
                let mut ix = ix.clone();
                if let Some(Json::String(e)) = ix.get("embed") {
                    let e = local(e).map_err(|e| format!("{where_}: store.index.embed: {e}"))?;
                    ix.insert("embed".into(), Json::String(e));
                }
                Json::Object(ix)
            }
            ("ttl", Json::Object(_)) => v.clone(),
            ("path" | "index" | "ttl", _) => {
                return Err(format!(
                    "{where_}: store.{k}: expected {}",
                    if k == "path" {
                        "\"./file.py:factory\""
                    } else {
                        "an object"
                    }
                ))
            }
            _ => {
                return Err(format!(
                "{where_}: store.{k}: unknown key (langgraph.json's store takes index, ttl, path)"
            ))
            }
        };
        out.insert(k.clone(), v);
    }
    Ok(Some(Json::Object(out)))
}

impl PythonRef {
    /// The `env` values the bridge sets before the import: those the shell has not exported
    /// (`is_set`). A variable exported in the shell wins over `.env`, as python-dotenv's
    /// `load_dotenv` (`override=False`) and `langgraph dev` leave it.
    pub fn env_to_set(&self, is_set: impl Fn(&str) -> bool) -> Vec<(String, String)> {
        self.env
            .iter()
            .filter(|(k, _)| !is_set(k))
            .cloned()
            .collect()
    }
}

/// `KEY=VALUE` lines (`export ` allowed, `#` comments, single or double quotes stripped), as
/// python-dotenv reads the simple cases.
pub fn parse_dotenv(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((k, v)) = line.split_once('=') else {
            return Err(format!("line {}: expected KEY=VALUE", n + 1));
        };
        let k = k.trim();
        if !is_identifier(k) {
            return Err(format!("line {}: {k:?} is not a variable name", n + 1));
        }
        let v = v.trim();
        let v = if v.len() >= 2
            && ((v.starts_with('"') && v.ends_with('"'))
                || (v.starts_with('\'') && v.ends_with('\'')))
        {
            v[1..v.len() - 1].to_string()
        } else {
            // an unquoted value ends at an inline comment
            match v.find(" #") {
                Some(i) => v[..i].trim_end().to_string(),
                None => v.to_string(),
            }
        };
        out.push((k.to_string(), v));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_and_file_references() {
        let r = GraphRef::parse("pkg.agent:graph", None).unwrap();
        let GraphRef::Python(p) = r else { panic!() };
        assert_eq!(p.target, Target::Module("pkg.agent".into()));
        assert_eq!(p.attr, "graph");
        // imported from the working directory (made absolute when the bridge is started)
        assert_eq!(p.paths, vec![PathBuf::from(".")]);
        assert!(GraphRef::parse("nothing", None)
            .unwrap_err()
            .contains("expected a graph spec"));
        assert!(GraphRef::parse("missing.py:graph", None)
            .unwrap_err()
            .contains("no such file"));
        assert!(GraphRef::parse("pkg.mod:1x", None)
            .unwrap_err()
            .contains("not a Python attribute name"));
        assert_eq!(
            GraphRef::parse("graphs/approval.json", None).unwrap(),
            GraphRef::Spec("graphs/approval.json".into())
        );
    }

    #[test]
    fn langgraph_json_ids_env_and_dependencies() {
        let dir = std::env::temp_dir().join(format!("superstep-ref-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("a.py"), "graph = None\n").unwrap();
        std::fs::write(
            dir.join(".env"),
            "# c\nexport A=1\nB=\"two words\"\nC=x # note\n",
        )
        .unwrap();
        let cfg = dir.join("langgraph.json");
        std::fs::write(
            &cfg,
            r#"{"graphs": {"one": "./a.py:graph", "two": {"path": "pkg.m:make", "description": "d"}},
                "env": ".env", "dependencies": [".", "./src", "langchain_openai"]}"#,
        )
        .unwrap();
        let c = cfg.to_str().unwrap();
        let e = GraphRef::parse(c, None).unwrap_err();
        assert!(e.contains("2 graphs (one, two)"), "{e}");
        let GraphRef::Python(p) = GraphRef::parse(c, Some("one")).unwrap() else {
            panic!()
        };
        assert_eq!(p.target, Target::File(dir.join("./a.py")));
        // "." is the config directory itself, already first
        assert_eq!(p.paths, vec![dir.clone(), dir.join("./src")]);
        assert_eq!(
            p.env,
            vec![
                ("A".into(), "1".into()),
                ("B".into(), "two words".into()),
                ("C".into(), "x".into())
            ]
        );
        // exported in the shell: the shell's value stays
        assert_eq!(
            p.env_to_set(|k| k == "B"),
            vec![("A".into(), "1".into()), ("C".into(), "x".into())]
        );
        let GraphRef::Python(p) = GraphRef::parse(c, Some("two")).unwrap() else {
            panic!()
        };
        assert_eq!(p.target, Target::Module("pkg.m".into()));
        assert!(GraphRef::parse(c, Some("three"))
            .unwrap_err()
            .contains("no graph \"three\" (graphs: one, two)"));
        // the .env langgraph.json names is not there (a fresh clone of a template): no variables
        std::fs::remove_file(dir.join(".env")).unwrap();
        let GraphRef::Python(p) = GraphRef::parse(c, Some("one")).unwrap() else {
            panic!()
        };
        assert!(p.env.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

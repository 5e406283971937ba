//! The one factory: a graph reference (a spec file, `app.py:graph`, `package.module:graph`,
//! `langgraph.json [GRAPH_ID]`) opened as a graph source, and the checkpoint file a graph uses
//! when none is given. The TUI (`tui.rs`) and the CLI (`commands/`) both open graphs here.

use crate::bridge::{interpreter, GraphRef, PythonRef, PythonSource};
use crate::engine::loaded::{load, LoadedGraph};
use crate::engine::source::SpecSource;
use crate::source::GraphSource;
use std::io::Write;
use std::path::{Path, PathBuf};

/// How to open a reference.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    /// `--python PATH` (default: the app's virtualenv, then `python3`).
    pub python: Option<PathBuf>,
    /// `superstep: importing app.py:graph… 3 s` on a terminal while the bridge imports.
    pub ticker: bool,
    /// The spec engine's seed (`--seed`).
    pub seed: u64,
}

/// Start the bridge on a Python graph; warnings (a LangGraph outside 1.2.x, a replaced
/// checkpointer) go to stderr. `db`: the checkpoint store runs will use (`None`: nothing will
/// be run).
pub fn open_python(
    r: PythonRef,
    o: &OpenOptions,
    db: Option<&Path>,
) -> Result<PythonSource, String> {
    let near = r.config.as_deref().and_then(Path::parent);
    let py = interpreter::choose(o.python.as_deref(), near);
    let ticker = if o.ticker {
        ImportTicker::start(&r.label)
    } else {
        None
    };
    let opened = PythonSource::open(r, py, db);
    drop(ticker);
    let src = opened?;
    for w in &src.warnings {
        eprintln!("superstep: warning: {w}");
    }
    Ok(src)
}

/// A reference as a graph source on `db` (`None`: nothing will be run, only its shape and
/// topology are read). A spec is loaded into `spec`, which the source borrows.
pub fn open_source<'g>(
    r: GraphRef,
    o: &OpenOptions,
    db: Option<&Path>,
    spec: &'g mut Option<LoadedGraph>,
) -> Result<Box<dyn GraphSource + 'g>, String> {
    Ok(match r {
        GraphRef::Spec(p) => {
            let lg = spec.insert(load(&p).map_err(|e| e.to_string())?);
            let mut src = SpecSource::new(lg, db.unwrap_or(Path::new("")));
            src.seed = o.seed;
            Box::new(src)
        }
        GraphRef::Python(r) => Box::new(open_python(r, o, db)?),
    })
}

/// The DB a graph spec uses when `--db` is not given: one per spec file, in the temp dir. The
/// demo graph (`approval`) starts from the embedded demo DB, whose threads real LangGraph wrote
/// for that graph (approved, rejected, time-travelled, ...).
pub fn default_graph_db(lg: &LoadedGraph) -> PathBuf {
    let path = default_graph_db_path(lg);
    if lg.spec.name == "approval" && !path.exists() {
        let _ = std::fs::write(&path, crate::commands::DEMO_DB);
    }
    path
}

/// Where [`default_graph_db`] keeps a spec's checkpoints, without creating anything.
pub fn default_graph_db_path(lg: &LoadedGraph) -> PathBuf {
    let canon = std::fs::canonicalize(&lg.path).unwrap_or_else(|_| lg.path.clone());
    let hash = xxhash_rust::xxh3::xxh3_64(canon.to_string_lossy().as_bytes());
    std::env::temp_dir().join(format!(
        "superstep-{}-{:08x}.sqlite",
        lg.spec.name, hash as u32
    ))
}

/// The DB a Python graph uses when `--db` is not given: one per reference, in the temp dir.
pub fn default_python_db(r: &PythonRef) -> PathBuf {
    let hash = xxhash_rust::xxh3::xxh3_64(r.label.as_bytes())
        ^ std::env::current_dir()
            .map(|d| xxhash_rust::xxh3::xxh3_64(d.to_string_lossy().as_bytes()))
            .unwrap_or(0);
    let name: String = r
        .graph_id
        .clone()
        .unwrap_or_else(|| r.attr.clone())
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    std::env::temp_dir().join(format!("superstep-py-{name}-{:08x}.sqlite", hash as u32))
}

/// `superstep: importing app.py:graph… 3 s` on stderr (a terminal only), once a second while the
/// bridge imports the graph — an import can take long (heavy dependencies, network) and the
/// terminal would stay blank; the line is cleared when it is done.
struct ImportTicker {
    stop: std::sync::mpsc::Sender<()>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ImportTicker {
    fn start(label: &str) -> Option<ImportTicker> {
        use std::io::IsTerminal;
        if !std::io::stderr().is_terminal() {
            return None;
        }
        let label = crate::text::escape(label).into_owned();
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let t = std::time::Instant::now();
            loop {
                let _ = write!(
                    std::io::stderr(),
                    "\r\x1b[Ksuperstep: importing {label}… {} s",
                    t.elapsed().as_secs()
                );
                match stopped.recv_timeout(std::time::Duration::from_secs(1)) {
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
                    _ => break,
                }
            }
            let _ = write!(std::io::stderr(), "\r\x1b[K");
        });
        Some(ImportTicker {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for ImportTicker {
    fn drop(&mut self) {
        let _ = self.stop.send(());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

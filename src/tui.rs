//! Starting the TUI: debug mode on a graph spec or read-only inspect mode on any DB, the
//! terminal guard, `--keys` replay and `--print` (one frame as plain text).

use crate::app::effects::Runtime;
use crate::app::App;
use crate::bridge::GraphRef;
use crate::engine::clock::{FixedIds, IdSource, SystemIds};
use crate::open::{
    default_graph_db, default_graph_db_path, default_python_db, open_python, open_source,
    OpenOptions,
};
use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use std::io::Write;
use std::path::{Path, PathBuf};

pub struct Options {
    pub graph: Option<PathBuf>,
    /// The graph id in a langgraph.json.
    pub graph_id: Option<String>,
    /// `--graph REF`: inspect read-only with this graph's topology.
    pub graph_ref: Option<String>,
    /// `--python PATH`.
    pub python: Option<PathBuf>,
    pub db: Option<PathBuf>,
    pub thread: Option<String>,
    pub keys: Vec<KeyEvent>,
    /// Render one frame to stdout and exit.
    pub print: bool,
    /// Reload the graph's code when one of its files changes.
    pub watch: bool,
    /// Frame size for `--print`.
    pub size: (u16, u16),
    /// Fixed clock (ns since the epoch) for reproducible checkpoint ids.
    pub clock: Option<u64>,
    pub seed: u64,
    /// `--config` / `--context`: what every run and update of the session is given.
    pub run: crate::source::RunSettings,
}

/// `WxH`, e.g. `120x40`.
pub fn parse_size(s: &str) -> Result<(u16, u16), String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("--size {s:?}: expected WIDTHxHEIGHT, e.g. 120x40"))?;
    let p = |v: &str| {
        v.trim()
            .parse::<u16>()
            .ok()
            .filter(|n| *n > 0 && *n <= 1000)
            .ok_or_else(|| format!("--size {s:?}: expected WIDTHxHEIGHT, e.g. 120x40"))
    };
    Ok((p(w)?, p(h)?))
}

/// The frame as plain text (trailing spaces trimmed).
pub fn buffer_text(buf: &Buffer) -> String {
    let a = buf.area;
    let mut out = String::new();
    for y in a.y..a.y + a.height {
        let mut line = String::new();
        for x in a.x..a.x + a.width {
            line.push_str(buf[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn open_options(o: &Options) -> OpenOptions {
    OpenOptions {
        python: o.python.clone(),
        ticker: !o.print,
        seed: o.seed,
    }
}

fn ids(o: &Options) -> Box<dyn IdSource> {
    match o.clock {
        Some(ns) => Box::new(FixedIds::new(ns as u128, o.seed)),
        None => Box::new(SystemIds::default()),
    }
}

/// Run the TUI (or print one frame). Errors are one line for the CLI (exit code 2).
pub fn run(
    o: Options,
    demo_db: impl FnOnce() -> Result<PathBuf, String>,
    out: &mut dyn Write,
) -> Result<(), String> {
    let graph = match &o.graph {
        Some(g) => Some(GraphRef::parse(
            &g.to_string_lossy(),
            o.graph_id.as_deref(),
        )?),
        None => None,
    };
    match graph {
        Some(GraphRef::Spec(g)) => {
            let lg = crate::engine::loaded::load(&g).map_err(|e| e.to_string())?;
            // `--print` with no keys shows the spec and writes nothing: a missing DB is not
            // created (the demo DB is shown from a scratch copy), an existing one gets no thread
            let read_only = o.print && o.keys.is_empty();
            let existed =
                o.db.clone()
                    .unwrap_or_else(|| default_graph_db_path(&lg))
                    .exists();
            let db = match &o.db {
                Some(d) => d.clone(),
                None if read_only => default_graph_db_path(&lg),
                None => default_graph_db(&lg),
            };
            let scratch = tempfile_dir(read_only && !existed)?;
            let opened = match &scratch {
                Some(d) => {
                    let p = d.join("scratch.sqlite");
                    if o.db.is_none() && lg.spec.name == "approval" {
                        std::fs::write(&p, crate::commands::DEMO_DB)
                            .map_err(|e| format!("{}: {e}", p.display()))?;
                    }
                    p
                }
                None => db.clone(),
            };
            let mut rt = Runtime::spec(&opened, &lg, ids(&o), o.seed)?;
            rt.configure(&o.run)?;
            let mut app = App::debug(rt);
            if scratch.is_some() {
                app.state.db_path = format!("{} (not created yet)", db.display());
                app.state.db_label = format!("{} (none yet)", name_of(&db));
            }
            let r = session(app, &o, out);
            drop(scratch);
            // the DB the spec's runs went to, when superstep chose it: said once, when made
            if o.db.is_none() && !existed && db.exists() {
                eprintln!(
                    "superstep: {}'s checkpoints are in {} (--db FILE to choose another)",
                    g.display(),
                    db.display()
                );
            }
            r
        }
        Some(GraphRef::Python(r)) => {
            let db = match &o.db {
                Some(d) => d.clone(),
                None => default_python_db(&r),
            };
            if db.exists() || crate::store::Store::is_server(&db) {
                // refuse a store that is not a checkpoint DB before LangGraph opens it for
                // writing (a Postgres database without the tables is fine: PostgresSaver's
                // setup() makes them)
                match crate::store::Store::open(&db, crate::store::Mode::ReadOnly) {
                    Ok(_) | Err(crate::store::StoreError::NoTables { .. }) => {}
                    Err(e) => return Err(e.to_string()),
                }
            }
            // LangGraph's saver opened now: LangGraph, not superstep, makes a new file's schema
            let mut src = open_python(r, &open_options(&o), Some(&db))?;
            src.open_db().map_err(|e| e.to_string())?;
            let mut rt = Runtime::with_source(&db, Box::new(src))?;
            rt.configure(&o.run)?;
            session(App::debug(rt), &o, out)
        }
        None => {
            let db = match &o.db {
                Some(d) => d.clone(),
                None => demo_db()?,
            };
            let mut spec = None;
            let mut rt = Runtime::inspect(&db)?;
            if let Some(r) = &o.graph_ref {
                let g = open_source(GraphRef::parse_flag(r)?, &open_options(&o), None, &mut spec)?;
                rt = rt.with_graph(g);
            }
            if let Some(t) = &o.thread {
                if !rt.thread_exists(t) {
                    let label = rt.store_label();
                    return Err(format!(
                        "{label}: no thread {t:?} (superstep threads --db {label} lists them)"
                    ));
                }
            }
            session(App::inspect(rt), &o, out)
        }
    }
}

/// A private temporary directory (removed when dropped), when `want`.
fn tempfile_dir(want: bool) -> Result<Option<ScratchDir>, String> {
    if !want {
        return Ok(None);
    }
    let d = std::env::temp_dir().join(format!(
        "superstep-print-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|t| t.as_nanos())
            .unwrap_or(0)
    ));
    std::fs::create_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
    Ok(Some(ScratchDir(d)))
}

/// A directory deleted with everything in it when dropped.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn join(&self, p: &str) -> PathBuf {
        self.0.join(p)
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn name_of(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

fn session(mut app: App, o: &Options, out: &mut dyn Write) -> Result<(), String> {
    app.watch = o.watch;
    if o.print && o.keys.is_empty() {
        app.start_without_writing(o.thread.clone());
    } else {
        app.start(o.thread.clone());
    }
    if o.print {
        app.dispatch(crate::app::action::Action::Resize(o.size.0, o.size.1));
        for k in &o.keys {
            if app.state.quit {
                break;
            }
            app.key(*k);
            app.settle();
        }
        let area = Rect::new(0, 0, o.size.0, o.size.1);
        let mut buf = Buffer::empty(area);
        crate::ui::draw(&app.state, &mut buf, area);
        out.write_all(buffer_text(&buf).as_bytes())
            .map_err(|e| e.to_string())?;
        return Ok(());
    }
    interactive(&mut app, &o.keys).map_err(|e| format!("terminal: {e}"))
}

/// Restores the terminal when dropped (ratatui's init also chains a panic hook that restores it
/// before the panic message is printed).
struct TerminalGuard;

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        TUI_ACTIVE.store(false, std::sync::atomic::Ordering::SeqCst);
        // when unwinding, the panic hook has restored the terminal already; leaving the
        // alternate screen twice would move the cursor back over the panic message
        if !std::thread::panicking() {
            ratatui::restore();
        }
    }
}

/// How often the loop wakes without a key: to notice a signal and another process's writes.
const TICK: std::time::Duration = std::time::Duration::from_millis(250);
/// ... and while a run is in progress (spinner, elapsed time, the result).
const RUNNING_TICK: std::time::Duration = std::time::Duration::from_millis(80);

/// SIGTERM, SIGINT (a `kill -INT`; Ctrl-C in the raw-mode terminal arrives as a key) and SIGHUP
/// (the terminal went away) are taken by a watchdog thread, which restores the terminal and exits
/// with 128 + the signal number, as if the signal had killed the process. A thread, not a flag the
/// loop checks: when the terminal hangs up, crossterm's read spins on end-of-file and the loop
/// never gets control back. A superstep cut short this way is an uncommitted SQLite transaction:
/// nothing of it is written.
fn interactive(app: &mut App, keys: &[KeyEvent]) -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP])?;
    let handle = signals.handle();
    let watchdog = std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            restore_via_tty();
            let _ = writeln!(std::io::stderr(), "superstep: stopped by signal {sig}");
            std::process::exit(128 + sig);
        }
    });
    let r = event_loop(app, keys);
    handle.close();
    let _ = watchdog.join();
    r
}

/// `ratatui::restore` from another thread, without stdout: the main thread holds stdout's lock
/// for the whole session, so the escape sequences go to the controlling terminal directly.
fn restore_via_tty() {
    let _ = crossterm::terminal::disable_raw_mode();
    if let Ok(mut tty) = std::fs::OpenOptions::new().write(true).open("/dev/tty") {
        let _ = crossterm::execute!(
            tty,
            crossterm::terminal::LeaveAlternateScreen,
            crossterm::cursor::Show
        );
    }
}

/// The terminal's settings before the TUI took it, and whether it holds it now: what
/// [`emergency_restore`] puts back.
static SAVED_TERMIOS: std::sync::OnceLock<libc::termios> = std::sync::OnceLock::new();
static TUI_ACTIVE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Put the terminal back (cooked mode, normal screen, cursor shown) without allocating: called
/// by the binary's allocator when an allocation fails, just before the process aborts — an
/// abort skips Drop and the panic hook, and would leave the shell in the alternate screen with
/// the cursor hidden. Does nothing unless the TUI holds the terminal.
pub fn emergency_restore() {
    use std::sync::atomic::Ordering;
    if !TUI_ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    const SEQ: &[u8] = b"\x1b[?1049l\x1b[?25h\r\n";
    // SAFETY: plain syscalls on the process's own standard descriptors with valid buffers
    unsafe {
        if let Some(t) = SAVED_TERMIOS.get() {
            libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, t);
        }
        libc::write(libc::STDOUT_FILENO, SEQ.as_ptr().cast(), SEQ.len());
    }
}

fn event_loop(app: &mut App, keys: &[KeyEvent]) -> std::io::Result<()> {
    // SAFETY: tcgetattr fills a zeroed termios for the terminal on stdin
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(libc::STDIN_FILENO, &mut t) == 0 {
            let _ = SAVED_TERMIOS.set(t);
        }
    }
    let mut terminal = ratatui::try_init()?;
    TUI_ACTIVE.store(true, std::sync::atomic::Ordering::SeqCst);
    let _guard = TerminalGuard;
    let panic_for_test = std::env::var_os("SUPERSTEP_TEST_PANIC").is_some();
    let oom_for_test = std::env::var_os("SUPERSTEP_TEST_OOM").is_some();
    let size = terminal.size()?;
    app.dispatch(crate::app::action::Action::Resize(size.width, size.height));
    for k in keys {
        if app.state.quit {
            return Ok(());
        }
        app.key(*k);
        app.settle();
        send_clipboard(app)?;
    }
    let mut dirty = true;
    loop {
        if dirty {
            terminal.draw(|f| crate::ui::render(&app.state, f))?;
        }
        if app.state.quit {
            return Ok(());
        }
        if panic_for_test {
            panic!("SUPERSTEP_TEST_PANIC: panicking on purpose after the first frame");
        }
        if oom_for_test {
            // 64 TiB: no system grants it; the allocation fails and the process aborts
            let v: Vec<u8> = Vec::with_capacity(std::hint::black_box(1usize << 46));
            std::hint::black_box(v);
        }
        // while a step runs the spinner moves and the result is picked up promptly
        let wait = if app.rt.running() { RUNNING_TICK } else { TICK };
        dirty = if crossterm::event::poll(wait)? {
            app.event(crossterm::event::read()?);
            send_clipboard(app)?;
            true
        } else {
            app.tick()
        };
    }
}

/// `y` in the viewer: hand the text to the terminal's clipboard with OSC 52 (`ESC ] 52 ; c ;
/// base64 BEL`). Terminals that do not allow clipboard writes ignore it.
fn send_clipboard(app: &mut App) -> std::io::Result<()> {
    if let Some(text) = app.state.clipboard.take() {
        let mut out = std::io::stdout();
        write!(out, "\x1b]52;c;{}\x07", base64(text.as_bytes()))?;
        out.flush()?;
    }
    Ok(())
}

/// Standard base64 with padding (RFC 4648), for OSC 52.
pub fn base64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= c.len() {
                out.push(T[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Whether a path looks like a graph spec.
pub fn is_spec(p: &Path) -> bool {
    p.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_is_rfc_4648() {
        for (i, o) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(super::base64(i.as_bytes()), o);
        }
    }
}

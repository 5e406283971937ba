//! The bridge process: the Python program started with the user's interpreter, connected over one
//! end of a Unix socket pair it inherits as fd 3 (the child's stdout and stderr are user code's;
//! they are drained here and kept as a tail for error messages). Nothing is written to disk: the
//! program and its modules travel in the child's environment (popped before any user code runs),
//! so no exit path of superstep — a signal during the interpreter's start, SIGKILL — can leave a
//! temp directory behind.

use super::interpreter::Interpreter;
use super::protocol::{parse_event, Event, Hello, Request, PROTOCOL};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::io::AsRawFd;
use std::os::unix::net::UnixStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The Python program, shipped inside the binary.
pub const PROGRAM: &str = include_str!("bridge.py");
/// Modules the bridge imports: (module name, source).
pub const MODULES: &[(&str, &str)] = &[
    ("superstep_runtime", include_str!("runtime.py")),
    ("superstep_inspect", include_str!("inspect.py")),
    ("superstep_saves", include_str!("saves.py")),
    ("superstep_doctor", include_str!("doctor.py")),
    ("superstep_capture", include_str!("capture.py")),
    ("superstep_wire", include_str!("wire.py")),
    ("superstep_shape", include_str!("shape.py")),
    ("superstep_stepping", include_str!("stepping.py")),
    ("superstep_recordings", include_str!("recordings.py")),
    ("superstep_calldata", include_str!("calldata.py")),
    ("superstep_recorder", include_str!("recorder.py")),
];
/// What `python -c` runs: the bridge's modules from the environment (one variable each, popped
/// here), importable by name, their lines known to tracebacks; then the bridge as `__main__`.
const BOOT: &str = r#"import importlib.abc, importlib.util, linecache, os, sys
_srcs = {}
for _k in [k for k in os.environ if k.startswith("SUPERSTEP_BRIDGE_SRC_")]:
    _n = _k[len("SUPERSTEP_BRIDGE_SRC_"):]
    _srcs[_n] = (os.environ.pop(_k), "<superstep>/" + _n + ".py")
    linecache.cache[_srcs[_n][1]] = (len(_srcs[_n][0]), None, _srcs[_n][0].splitlines(True), _srcs[_n][1])
class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        return None
    def exec_module(self, m):
        src, fn = _srcs[m.__name__]
        m.__file__ = fn
        exec(compile(src, fn, "exec"), m.__dict__)
class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name in _srcs and name != "superstep_bridge":
            return importlib.util.spec_from_loader(name, _Loader())
        return None
sys.meta_path.insert(0, _Finder())
_src, _fn = _srcs["superstep_bridge"]
del _k, _n
__file__ = _fn
exec(compile(_src, _fn, "exec"))
"#;
/// The fd the bridge finds its end of the socket pair on.
const BRIDGE_FD: i32 = 3;

/// How long the interpreter may take to start and import langgraph.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// Bytes of the child's own stdout/stderr kept for messages.
const TAIL: usize = 16 * 1024;

/// What the reader thread hands over.
#[derive(Debug)]
// one message at a time: boxing the event would buy nothing
#[allow(clippy::large_enum_variant)]
pub enum Incoming {
    Event(Event),
    /// A line that is not a protocol message (a bug on one side).
    Garbled(String),
    /// The socket closed: the bridge exited (or was killed).
    Closed,
}

pub struct Process {
    child: Child,
    writer: UnixStream,
    events: Receiver<Incoming>,
    pub hello: Hello,
    pub interpreter: Interpreter,
    next_id: u64,
    tail: Arc<Mutex<Vec<u8>>>,
}

fn drain(mut r: impl Read + Send + 'static, tail: Arc<Mutex<Vec<u8>>>) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = r.read(&mut buf) {
            if n == 0 {
                break;
            }
            let mut t = tail.lock().unwrap();
            t.extend_from_slice(&buf[..n]);
            if t.len() > TAIL {
                let cut = t.len() - TAIL;
                t.drain(..cut);
            }
        }
    });
}

/// The bridge dies with superstep, however superstep ends (SIGTERM, SIGHUP, SIGKILL, a panic):
/// the kernel sends it SIGKILL when the thread that started it exits (`PR_SET_PDEATHSIG`), which
/// works while a node holds the GIL in C code, where no Python-level watchdog could run. The
/// bridge is started from the thread that drives it (the main thread in the CLI and the TUI).
/// Elsewhere the bridge's own socket watchdog (EOF on the socket: exit) is what there is.
#[cfg(target_os = "linux")]
fn die_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: between fork and exec only async-signal-safe calls (prctl, getppid, _exit)
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // superstep died between fork and prctl: nobody would ever send the signal
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_cmd: &mut Command) {}

/// The child finds `fd` (its end of the socket pair) as `BRIDGE_FD`, inherited across exec.
fn pass_fd(cmd: &mut Command, fd: i32) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec only async-signal-safe calls (dup2, fcntl)
    unsafe {
        cmd.pre_exec(move || {
            if fd == BRIDGE_FD {
                // dup2 onto itself keeps close-on-exec: clear it
                if libc::fcntl(fd, libc::F_SETFD, 0) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
            } else if libc::dup2(fd, BRIDGE_FD) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

impl Process {
    /// Start the bridge with `py` and wait for its hello. Errors name the interpreter and say
    /// how to choose another.
    pub fn spawn(py: &Interpreter) -> Result<Process, String> {
        let how = "choose another interpreter with --python PATH (or activate a virtualenv)";
        let (stream, theirs) =
            UnixStream::pair().map_err(|e| format!("bridge: socket pair: {e}"))?;
        let mut cmd = Command::new(&py.path);
        cmd.arg("-B")
            .arg("-c")
            .arg(BOOT)
            .env("SUPERSTEP_BRIDGE_FD", BRIDGE_FD.to_string())
            .env("SUPERSTEP_BRIDGE_SRC_superstep_bridge", PROGRAM)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (name, text) in MODULES {
            cmd.env(format!("SUPERSTEP_BRIDGE_SRC_{name}"), text);
        }
        pass_fd(&mut cmd, theirs.as_raw_fd());
        die_with_parent(&mut cmd);
        let mut child = cmd.spawn().map_err(|e| {
            format!(
                "{} ({}): cannot run it: {e}; {how}",
                py.path.display(),
                py.why
            )
        })?;
        // the child's end is the child's alone: its death is this end's end-of-file
        drop(theirs);
        let tail = Arc::new(Mutex::new(Vec::new()));
        drain(child.stdout.take().unwrap(), tail.clone());
        drain(child.stderr.take().unwrap(), tail.clone());
        let tail_text = |t: &Arc<Mutex<Vec<u8>>>| {
            let t = t.lock().unwrap();
            String::from_utf8_lossy(&t).trim().to_string()
        };
        let reader = stream.try_clone().map_err(|e| e.to_string())?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(reader);
            let mut line = String::new();
            loop {
                line.clear();
                match r.read_line(&mut line) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(Incoming::Closed);
                        return;
                    }
                    Ok(_) => {
                        let msg = match parse_event(line.trim_end()) {
                            Ok(e) => Incoming::Event(e),
                            Err(e) => Incoming::Garbled(e),
                        };
                        if tx.send(msg).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let hello = match rx.recv_timeout(START_TIMEOUT) {
            Ok(Incoming::Event(Event::Hello(h))) => h,
            Ok(Incoming::Closed) => {
                // the socket closed before the hello: the interpreter exited (or was killed)
                let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
                std::thread::sleep(Duration::from_millis(50));
                return Err(format!(
                    "{} ({}) exited before the bridge started ({status}): {}; {how}",
                    py.path.display(),
                    py.why,
                    last_line(&tail_text(&tail))
                ));
            }
            Ok(other) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{} ({}): unexpected first message from the bridge: {other:?}; {}",
                    py.path.display(),
                    py.why,
                    last_line(&tail_text(&tail))
                ));
            }
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{} ({}): no hello from the bridge: {}; {how}",
                    py.path.display(),
                    py.why,
                    last_line(&tail_text(&tail))
                ));
            }
        };
        let mut p = Process {
            child,
            writer: stream,
            events: rx,
            hello,
            interpreter: py.clone(),
            next_id: 1,
            tail,
        };
        if let Some(e) = &p.hello.error {
            let msg = format!(
                "{} ({}, Python {}) cannot import langgraph: {e}; {how}",
                py.path.display(),
                py.why,
                p.hello.python
            );
            p.kill();
            return Err(msg);
        }
        if p.hello.protocol != PROTOCOL {
            let msg = format!(
                "bridge protocol {} != superstep's {PROTOCOL} (a stale bridge program?)",
                p.hello.protocol
            );
            p.kill();
            return Err(msg);
        }
        Ok(p)
    }

    /// A fresh request id.
    pub fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    pub fn send(&mut self, r: &Request) -> Result<(), String> {
        let mut line = serde_json::to_vec(r).map_err(|e| e.to_string())?;
        line.push(b'\n');
        self.writer
            .write_all(&line)
            .map_err(|e| format!("the bridge is gone ({e})"))
    }

    /// The next message, waiting at most `timeout` (`None`: forever).
    pub fn recv(&self, timeout: Option<Duration>) -> Option<Incoming> {
        match timeout {
            None => Some(self.events.recv().unwrap_or(Incoming::Closed)),
            Some(t) => match self.events.recv_timeout(t) {
                Ok(m) => Some(m),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => Some(Incoming::Closed),
            },
        }
    }

    pub fn try_recv(&self) -> Option<Incoming> {
        match self.events.try_recv() {
            Ok(m) => Some(m),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Incoming::Closed),
        }
    }

    /// The child's own recent stdout/stderr (C-level output, a crash's traceback).
    pub fn tail(&self) -> String {
        String::from_utf8_lossy(&self.tail.lock().unwrap())
            .trim()
            .to_string()
    }

    /// Whether the child has exited, and how.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// The exit status once the child has exited, waiting at most `limit` for it (the socket
    /// closes a moment before the kernel reports the exit).
    pub fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(s) = self.exited() {
                return Some(s);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL and reap.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Ask the bridge to exit; kill it if it does not within a second.
    pub fn shutdown(&mut self) {
        let id = self.id();
        if self.send(&Request::Shutdown { id }).is_ok() {
            let deadline = Instant::now() + Duration::from_secs(1);
            while Instant::now() < deadline {
                if self.exited().is_some() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        self.kill();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if self.exited().is_none() {
            self.shutdown();
        }
    }
}

/// The last non-empty line of some output (a traceback's exception line).
pub fn last_line(s: &str) -> String {
    s.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("(no output)")
        .trim()
        .to_string()
}

/// `exit status 4`, `killed by signal 9 (SIGKILL)`; `still running` when it did not exit in time.
pub fn status_text(status: Option<std::process::ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        None => "its exit status is unknown: still running after the socket closed".into(),
        Some(s) => match (s.code(), s.signal()) {
            (Some(c), _) => format!("exit status {c}"),
            (None, Some(sig)) => format!("killed by signal {sig}{}", signal_name(sig)),
            _ => s.to_string(),
        },
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGKILL => " (SIGKILL)",
        libc::SIGTERM => " (SIGTERM)",
        libc::SIGSEGV => " (SIGSEGV)",
        libc::SIGABRT => " (SIGABRT)",
        libc::SIGINT => " (SIGINT)",
        libc::SIGHUP => " (SIGHUP)",
        _ => "",
    }
}

//! The bridge process: the Python program started with the user's interpreter, connected over a
//! Unix socket in a private temp directory (the child's stdout and stderr are user code's; they
//! are drained here and kept as a tail for error messages).

use super::interpreter::Interpreter;
use super::protocol::{parse_event, Event, Hello, Request, PROTOCOL};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The Python program, shipped inside the binary.
pub const PROGRAM: &str = include_str!("bridge.py");

/// How long the interpreter may take to start and import langgraph.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// Bytes of the child's own stdout/stderr kept for messages.
const TAIL: usize = 16 * 1024;

/// What the reader thread hands over.
#[derive(Debug)]
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
    dir: PathBuf,
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

fn private_dir() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let base = std::env::temp_dir();
    for i in 0..100u32 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let d = base.join(format!(
            "superstep-bridge-{}-{nanos:08x}{i}",
            std::process::id()
        ));
        match std::fs::DirBuilder::new().mode(0o700).create(&d) {
            Ok(()) => return Ok(d),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("no private temp directory"))
}

impl Process {
    /// Start the bridge with `py` and wait for its hello. Errors name the interpreter and say
    /// how to choose another.
    pub fn spawn(py: &Interpreter) -> Result<Process, String> {
        let how = "choose another interpreter with --python PATH (or activate a virtualenv)";
        let dir = private_dir().map_err(|e| format!("bridge: temp dir: {e}"))?;
        let cleanup = |e: String| {
            let _ = std::fs::remove_dir_all(&dir);
            e
        };
        let sock = dir.join("s");
        let script = dir.join("superstep_bridge.py");
        std::fs::write(&script, PROGRAM).map_err(|e| cleanup(format!("bridge: {e}")))?;
        let listener = UnixListener::bind(&sock).map_err(|e| cleanup(format!("bridge: {e}")))?;
        let mut child = Command::new(&py.path)
            .arg("-B")
            .arg(&script)
            .env("SUPERSTEP_BRIDGE_SOCKET", &sock)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                cleanup(format!(
                    "{} ({}): cannot run it: {e}; {how}",
                    py.path.display(),
                    py.why
                ))
            })?;
        let tail = Arc::new(Mutex::new(Vec::new()));
        drain(child.stdout.take().unwrap(), tail.clone());
        drain(child.stderr.take().unwrap(), tail.clone());
        let tail_text = |t: &Arc<Mutex<Vec<u8>>>| {
            let t = t.lock().unwrap();
            String::from_utf8_lossy(&t).trim().to_string()
        };
        listener
            .set_nonblocking(true)
            .map_err(|e| cleanup(e.to_string()))?;
        let started = Instant::now();
        let stream = loop {
            match listener.accept() {
                Ok((s, _)) => break s,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(cleanup(format!("bridge: {e}"))),
            }
            if let Ok(Some(status)) = child.try_wait() {
                std::thread::sleep(Duration::from_millis(50));
                return Err(cleanup(format!(
                    "{} ({}) exited before the bridge started ({status}): {}; {how}",
                    py.path.display(),
                    py.why,
                    last_line(&tail_text(&tail))
                )));
            }
            if started.elapsed() > START_TIMEOUT {
                let _ = child.kill();
                return Err(cleanup(format!(
                    "{} ({}): the bridge did not start within {}s; {how}",
                    py.path.display(),
                    py.why,
                    START_TIMEOUT.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        stream.set_nonblocking(false).map_err(|e| e.to_string())?;
        let _ = std::fs::remove_file(&sock);
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
            Ok(other) => {
                let _ = child.kill();
                return Err(cleanup(format!(
                    "{} ({}): unexpected first message from the bridge: {other:?}; {}",
                    py.path.display(),
                    py.why,
                    last_line(&tail_text(&tail))
                )));
            }
            Err(_) => {
                let _ = child.kill();
                return Err(cleanup(format!(
                    "{} ({}): no hello from the bridge: {}; {how}",
                    py.path.display(),
                    py.why,
                    last_line(&tail_text(&tail))
                )));
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
            dir,
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
        let _ = std::fs::remove_dir_all(&self.dir);
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

"""What user code prints, captured for superstep (shipped with the bridge as superstep_capture.py).

Two paths, one line model:

* Python-level writes — `print`, `sys.stdout.write`, `sys.stdout.buffer.write`, `logging` — go to
  `sys.stdout` / `sys.stderr`, replaced by `TextCapture` objects that behave like the real files
  (`buffer`, `fileno()`, `encoding`, `isatty()` ...). Each write is attributed to the task whose
  code made it (LangGraph's config in the writing context), so parallel tasks keep their own
  lines.
* Raw writes to file descriptors 1 and 2 — `os.write`, subprocesses, faulthandler, C extensions —
  land in two pipes put in place of fds 1 and 2 when the bridge starts (`FdCapture`). They are
  attributed to the task attempt running when they are read (every task attempt drains the pipes
  before it is over, so what it wrote is its own), or, with several tasks running at once or
  none, to no task. Everything read is also passed on to the bridge's original fds, which
  superstep keeps a tail of for its messages.

Lines: a `LineModel` per (task attempt, stream) keeps the current line as a terminal would —
`\\r` moves back to column 0 and what follows overwrites, `\\n` completes the line — so a progress
bar's ten thousand updates arrive as the one line a terminal ends up showing. Each write costs time
in proportion to its own length (plus the current line's for an overwrite), never the output so far.
"""

import codecs
import errno
import fcntl
import io
import os
import select
import threading

SEND = None  # set by install(): sends one protocol message
KEYS = {}  # run id -> (task_id, node, ns, attempt): the task attempts running now


def _send(key, stream, text):
    msg = {"type": "output", "stream": stream, "text": text}
    if key is not None:
        msg.update(task_id=key[0], node=key[1], ns=key[2], attempt=key[3])
    try:
        SEND(msg)
    except Exception:
        pass


# ------------------------------------------------------------------------------------------------
# The line model
# ------------------------------------------------------------------------------------------------

class LineModel:
    """The line being written on one stream of one task attempt, as a terminal shows it."""

    __slots__ = ("line", "tail", "col", "size")

    def __init__(self):
        self.line = ""  # materialised part
        self.tail = []  # appended pieces not yet joined onto `line`
        self.col = 0  # cursor column
        self.size = 0  # len(line) + len of the pieces in tail

    def _materialise(self):
        if self.tail:
            self.line = self.line + "".join(self.tail)
            self.tail = []

    def _put(self, seg):
        """Write `seg` (no \\r or \\n) at the cursor."""
        n = len(seg)
        if not n:
            return
        col = self.col
        if col == 0 and n >= self.size:
            # overwrites the whole line (a progress bar's next update)
            self.line, self.tail, self.col, self.size = seg, [], n, n
            return
        if col == self.size:
            self.tail.append(seg)
            self.col = self.size = col + n
            return
        self._materialise()
        end = col + n
        self.line = self.line[:col] + seg + self.line[end:]
        self.col = end
        self.size = len(self.line)

    def text(self):
        self._materialise()
        return self.line

    def feed(self, s):
        """Take `s`; the lines it completed (each with its "\\n"), or None."""
        if "\n" not in s:
            r = s.rfind("\r")
            if r < 0:
                self._put(s)
                return None
            if r == 0:
                n = len(s) - 1
                if n >= self.size:
                    # a progress bar's next update: the whole line anew
                    self.line, self.tail, self.col, self.size = s[1:], [], n, n
                else:
                    self.col = 0
                    self._put(s[1:])
                return None
        out = []
        self._lines(s, out)
        return "".join(out) if out else None

    def _lines(self, s, out):
        start = 0
        n = len(s)
        while start < n:
            r = s.find("\r", start)
            nl = s.find("\n", start)
            if r < 0 and nl < 0:
                self._put(s[start:])
                return
            if nl < 0 or (0 <= r < nl):
                if r + 1 < n and s[r + 1] == "\n":
                    # \r\n: a line end (a Windows-style newline)
                    self._put(s[start:r])
                    self._newline(out)
                    start = r + 2
                    continue
                self._put(s[start:r])
                self.col = 0
                start = r + 1
            else:
                self._put(s[start:nl])
                self._newline(out)
                start = nl + 1

    def _newline(self, out):
        out.append(self.text() + "\n")
        self.line, self.tail, self.col, self.size = "", [], 0, 0

    def take_partial(self):
        """The unfinished line, if any (sent when a step ends), and a fresh line after it."""
        t = self.text() if self.size else ""
        self.line, self.tail, self.col, self.size = "", [], 0, 0
        return t


class Lines:
    """Every (task attempt, stream)'s line model; completed lines are sent at once."""

    def __init__(self):
        self.lock = threading.Lock()
        self.models = {}  # (key, stream) -> LineModel
        self.gen = 0  # bumped when models are dropped: a writer's cached model is then stale

    def model(self, key, stream):
        m = self.models.get((key, stream))
        if m is None:
            m = self.models[(key, stream)] = LineModel()
        return m

    def feed(self, key, stream, text):
        with self.lock:
            done = self.model(key, stream).feed(text)
        if done:
            _send(key, stream, done)

    def flush(self, only=None):
        """Send every unfinished line (those of task attempt `only`, when given)."""
        with self.lock:
            items = [(k, m) for k, m in self.models.items() if only is None or k[0] == only]
            for k, _ in items:
                del self.models[k]
            if items:
                self.gen += 1
        for (key, stream), m in items:
            t = m.take_partial()
            if t:
                _send(key, stream, t)


LINES = Lines()


# ------------------------------------------------------------------------------------------------
# Which task is writing
# ------------------------------------------------------------------------------------------------

_LAST = (None, None)  # (config dict, key): the last lookup, reused while the config is the same
_CONFIG_VAR = []  # LangChain's context variable holding the running task's config


def current_task():
    """(task_id, node, graph ns, attempt) of the node running in this context, or None."""
    global _LAST
    if not _CONFIG_VAR:
        try:
            from langchain_core.runnables.config import var_child_runnable_config

            _CONFIG_VAR.append(var_child_runnable_config)
        except Exception:
            return None
    cfg = _CONFIG_VAR[0].get(None)
    if not cfg:
        return None
    last = _LAST
    if last[0] is cfg:
        return last[1]
    conf = cfg.get("configurable", {}) or {}
    task_id = conf.get("__pregel_task_id")
    if not task_id:
        return None
    ns = conf.get("checkpoint_ns", "") or ""
    graph_ns = ns.rsplit("|", 1)[0] if "|" in ns else ""
    attempt = 1
    rt = conf.get("__pregel_runtime")
    info = getattr(rt, "execution_info", None)
    if info is not None:
        attempt = getattr(info, "node_attempt", 1) or 1
    node = (cfg.get("metadata") or {}).get("langgraph_node") or ns.rsplit("|", 1)[-1].split(":")[0]
    key = (task_id, node, graph_ns, attempt)
    _LAST = (cfg, key)
    return key


def task_started(run_id, key):
    KEYS[run_id] = key


def task_ended(run_id):
    """A task attempt is over: what it wrote to fds 1/2 is read while it is still the one
    running, then its unfinished lines are sent."""
    if FDS is not None:
        FDS.drain()
    key = KEYS.pop(run_id, None)
    if key is not None:
        LINES.flush(only=key[0])


def raw_owner():
    """The task attempt raw fd output belongs to: the only one running, else None."""
    if len(KEYS) == 1:
        for k in KEYS.values():
            return k
    return None


# ------------------------------------------------------------------------------------------------
# sys.stdout / sys.stderr
# ------------------------------------------------------------------------------------------------

class BinaryCapture(io.RawIOBase):
    """`sys.stdout.buffer`: bytes, decoded as UTF-8 per task attempt (a character split across
    writes is kept until it is whole)."""

    def __init__(self, text):
        super().__init__()
        self._text = text
        self._decoders = {}
        self._lock = threading.Lock()

    def writable(self):
        return True

    def readable(self):
        return False

    def seekable(self):
        return False

    def isatty(self):
        return False

    def fileno(self):
        return self._text.fileno()

    @property
    def name(self):
        return self._text.name

    @property
    def mode(self):
        return "wb"

    def write(self, b):
        data = bytes(b)
        key = current_task()
        with self._lock:
            d = self._decoders.get(key)
            if d is None:
                d = self._decoders[key] = codecs.getincrementaldecoder("utf-8")("replace")
            s = d.decode(data)
        if s:
            LINES.feed(key, self._text.stream, s)
        return len(data)

    def flush(self):
        pass

    def close(self):
        pass  # like the real one under a running program: stays usable

    @property
    def raw(self):
        return self


class TextCapture(io.TextIOBase):
    """sys.stdout / sys.stderr while the bridge runs: a text file whose lines go to superstep,
    attributed to the task whose code wrote them (None: module import or the bridge itself)."""

    def __init__(self, stream, fd):
        super().__init__()
        self.stream = stream
        self._fd = fd
        self._buffer = BinaryCapture(self)
        self._last = (None, None, -1)  # (key, LineModel, LINES.gen) of the last write

    @property
    def buffer(self):
        return self._buffer

    @property
    def encoding(self):
        return "utf-8"

    @property
    def errors(self):
        return "strict" if self.stream == "stdout" else "backslashreplace"

    @property
    def newlines(self):
        return None

    @property
    def line_buffering(self):
        return True

    @property
    def write_through(self):
        return True

    @property
    def name(self):
        return f"<{self.stream}>"

    @property
    def mode(self):
        return "w"

    def fileno(self):
        """fd 1 / 2: the pipes superstep reads (a subprocess or faulthandler writes there)."""
        return self._fd

    def writable(self):
        return True

    def readable(self):
        return False

    def seekable(self):
        return False

    def isatty(self):
        return False

    def write(self, s):
        if type(s) is not str and not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        key = current_task()
        lines = LINES
        with lines.lock:
            last = self._last
            if last[0] is key and last[2] == lines.gen:
                m = last[1]
            else:
                m = lines.model(key, self.stream)
                self._last = (key, m, lines.gen)
            done = m.feed(s)
        if done:
            _send(key, self.stream, done)
        return len(s)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        pass

    def close(self):
        pass

    def reconfigure(self, **kw):
        pass  # encoding / line buffering are superstep's


# ------------------------------------------------------------------------------------------------
# File descriptors 1 and 2
# ------------------------------------------------------------------------------------------------

F_SETPIPE_SZ = 1031  # Linux: a 1 MiB pipe, so a writer holding the GIL rarely fills it


class FdCapture:
    """Pipes in place of fds 1 and 2. Reads happen under one lock, non-blocking until the pipe
    is empty — by a background thread when a pipe becomes readable, and by `drain()` — so after
    `drain()` returns everything written to the fds before it was called has been taken."""

    def __init__(self):
        self.lock = threading.Lock()
        self.ends = []  # (read fd, stream, original fd copy, decoder)
        for fd, stream in ((1, "stdout"), (2, "stderr")):
            orig = os.dup(fd)
            os.set_inheritable(orig, False)
            r, w = os.pipe()
            try:
                fcntl.fcntl(w, F_SETPIPE_SZ, 1 << 20)
            except OSError:
                pass
            os.dup2(w, fd)  # inheritable: subprocesses write there too
            os.close(w)
            os.set_blocking(r, False)
            self.ends.append((r, stream, orig, codecs.getincrementaldecoder("utf-8")("replace")))
        threading.Thread(target=self._watch, name="superstep-fd-capture", daemon=True).start()

    def _watch(self):
        fds = [e[0] for e in self.ends]
        while True:
            try:
                select.select(fds, [], [])
            except InterruptedError:
                continue
            except OSError:
                return
            self.drain()

    def drain(self):
        with self.lock:
            for r, stream, orig, dec in self.ends:
                while True:
                    try:
                        data = os.read(r, 1 << 16)
                    except BlockingIOError:
                        break
                    except OSError as e:
                        if e.errno == errno.EINTR:
                            continue
                        break
                    if not data:
                        break
                    try:
                        os.write(orig, data)  # superstep's tail of the bridge's own output
                    except OSError:
                        pass
                    s = dec.decode(data)
                    if s:
                        LINES.feed(raw_owner(), stream, s)


FDS = None
STDOUT = None
STDERR = None


def install(send):
    """Capture from now on: fds 1/2 become pipes, sys.stdout/sys.stderr the capturing files."""
    global SEND, FDS, STDOUT, STDERR
    import sys

    SEND = send
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    FDS = FdCapture()
    STDOUT = TextCapture("stdout", 1)
    STDERR = TextCapture("stderr", 2)
    sys.stdout = STDOUT
    sys.stderr = STDERR


def flush_output():
    """Everything written so far is sent: the fds drained, unfinished lines included."""
    if FDS is not None:
        FDS.drain()
    LINES.flush()

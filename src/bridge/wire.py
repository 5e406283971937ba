"""The bridge's wire and its words: the socket (JSON lines), errors as superstep shows them
(the app's own frame, the traceback without the bridge's frames), values in LangGraph's serializer.

Part of superstep's bridge (src/bridge/bridge.py is the program; shipped as superstep_wire.py)."""

import json
import os
import socket
import sys
import threading
import traceback

import superstep_capture as capture

# The bridge's own source files (the program and the modules split out of it): their frames are
# left out of what superstep shows of a traceback. Each of them adds itself.
OWN_FILES = [__file__]


class Conn:
    """One JSON object per line over the socket; sends from any thread."""

    def __init__(self, fd):
        self.sock = socket.socket(fileno=fd)
        # the app's own child processes (os.system, Popen(close_fds=False)) must not hold it:
        # superstep sees the bridge's death as the end of this socket
        self.sock.set_inheritable(False)
        self.rfile = self.sock.makefile("rb")
        self.lock = threading.Lock()

    def send(self, msg):
        data = (json.dumps(msg, default=repr, ensure_ascii=False) + "\n").encode("utf-8", "replace")
        with self.lock:
            self.sock.sendall(data)

    def recv(self):
        line = self.rfile.readline()
        if not line:
            return None
        return json.loads(line)


CONN = None


def send(msg):
    CONN.send(msg)


# ------------------------------------------------------------------------------------------------
# Output capture: superstep_capture (src/bridge/capture.py) — print(), logging, fds 1 and 2
# ------------------------------------------------------------------------------------------------

flush_output = capture.flush_output


# ------------------------------------------------------------------------------------------------
# Errors
# ------------------------------------------------------------------------------------------------

class BridgeError(Exception):
    """A user-facing error: message + hint (+ the traceback's last frame)."""

    def __init__(self, kind, message, hint="", frame=None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.hint = hint
        self.frame = frame


def is_postgres_url(db):
    """A `--db` that names a Postgres database (superstep's `Store::is_server`)."""
    return isinstance(db, str) and db.startswith(("postgresql://", "postgres://"))


def redact_url(url):
    """A Postgres URL for messages: no password (in the user info or a `password=` parameter)."""
    scheme, _, rest = url.partition("://")
    auth, slash, tail = rest.partition("/")
    if "@" in auth:
        userinfo, _, hostport = auth.rpartition("@")
        auth = userinfo.split(":", 1)[0] + "@" + hostport
    path, q, query = tail.partition("?")
    if q:
        query = "&".join(kv for kv in query.split("&") if not kv.startswith("password="))
    return f"{scheme}://{auth}{slash}{path}" + (f"?{query}" if q and query else "")


def exc_line(e):
    """`ClassName: message`, as Python prints the last line of a traceback."""
    msg = str(e)
    name = type(e).__name__
    return f"{name}: {msg}" if msg else name


def last_frame(e, skip_bridge=True):
    """`file:line in func` of the innermost frame (user code, not this file, when there is one)."""
    tb = traceback.extract_tb(e.__traceback__)
    me = {os.path.abspath(p) for p in OWN_FILES}
    frames = [f for f in tb if os.path.abspath(f.filename) not in me] if skip_bridge else list(tb)
    if not frames:
        frames = list(tb)
    if not frames:
        return None
    f = frames[-1]
    return f"{f.filename}:{f.lineno} in {f.name}"


_NOT_USER = None


def is_user_file(path):
    """Whether a source file is the app's own: not this bridge, not the standard library, not an
    installed package (site-packages / dist-packages), not a frozen module."""
    global _NOT_USER
    if _NOT_USER is None:
        import site
        import sysconfig

        dirs = set()
        for key in ("stdlib", "platstdlib", "purelib", "platlib"):
            try:
                dirs.add(os.path.realpath(sysconfig.get_paths()[key]))
            except Exception:
                pass
        try:
            dirs.update(os.path.realpath(d) for d in site.getsitepackages())
            dirs.add(os.path.realpath(site.getusersitepackages()))
        except Exception:
            pass
        _NOT_USER = tuple(d + os.sep for d in dirs if d)
    if not path or path.startswith("<"):
        return False
    real = os.path.realpath(path)
    if real in {os.path.realpath(p) for p in OWN_FILES}:
        return False
    parts = real.split(os.sep)
    if "site-packages" in parts or "dist-packages" in parts:
        return False
    return not real.startswith(_NOT_USER)


def error_report(e):
    """What superstep shows of an exception: `at` (file:line in func of the innermost frame of
    the app's own code — the innermost frame at all when none is the app's) and the traceback
    as Python prints it, this bridge's own frames left out."""
    tb = [f for f in traceback.extract_tb(e.__traceback__) if os.path.realpath(f.filename) not in {os.path.realpath(p) for p in OWN_FILES}]
    user = [f for f in tb if is_user_file(f.filename)]
    at = user[-1] if user else (tb[-1] if tb else None)
    lines = ["Traceback (most recent call last):\n"] if tb else []
    lines += traceback.format_list(tb)
    lines += traceback.format_exception_only(type(e), e)
    cause = e.__cause__ or (None if e.__suppress_context__ else e.__context__)
    if cause is not None and cause is not e:
        lines.append("(caused by " + exc_line(cause) + ")\n")
    return {
        "at": f"{at.filename}:{at.lineno} in {at.name}" if at else None,
        "traceback": "".join(lines).rstrip("\n"),
    }


def user_files():
    """The source files of the app's own modules imported so far (superstep's --watch)."""
    out = set()
    for m in list(sys.modules.values()):
        f = getattr(m, "__file__", None)
        if isinstance(f, str) and f.endswith(".py") and is_user_file(f):
            out.add(os.path.abspath(f))
    return sorted(out)


def path_json(path):
    """A task's path as JSON, like the snapshot's `tasks[].path` (tuples as lists)."""
    out = []
    for p in path:
        if isinstance(p, (str, bool, int)):
            out.append(p)
        elif isinstance(p, tuple):
            out.append(path_json(p))
        else:
            out.append(type(p).__name__)
    return out


# ------------------------------------------------------------------------------------------------
# Values to superstep: LangGraph's own serializer, decoded on the Rust side like a DB row.
# ------------------------------------------------------------------------------------------------

_SERDE = None


def typed(value):
    global _SERDE
    if _SERDE is None:
        from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

        _SERDE = JsonPlusSerializer()
    try:
        t, data = _SERDE.dumps_typed(value)
    except Exception as e:  # unserializable: show its repr
        t, data = _SERDE.dumps_typed(f"<{type(value).__qualname__}, which msgpack cannot encode: {repr(value)[:300]}>")
    return {"type": t, "hex": bytes(data).hex()}


def plain_json(value):
    """The value if it is plain JSON, else None."""
    try:
        json.dumps(value, allow_nan=False)
        return value
    except Exception:
        return None

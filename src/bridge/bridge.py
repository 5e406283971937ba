"""superstep's bridge: runs the user's LangGraph graph for superstep, one superstep at a time.

Shipped inside the superstep binary and run with the user's own interpreter. It speaks JSON lines
(protocol version below) over a Unix socket whose path is in $SUPERSTEP_BRIDGE_SOCKET — never over
stdout/stderr, which user code owns (modules print at import time, nodes print and log). What a node
prints or logs is captured per task and attempt and sent as `output` events.

Every row in the checkpoint file is written by LangGraph itself: the graph runs with a real
SqliteSaver (AsyncSqliteSaver for async graphs) on the chosen file — or PostgresSaver
(AsyncPostgresSaver) when the db is a postgresql:// URL — in place of whatever checkpointer the app
compiled with (`graph.copy(update=...)`, as `langgraph dev` does).

Stepping: a run is `graph.stream(input, config, stream_mode=["checkpoints", "tasks"])`, and the
bridge simply stops pulling from the generator at a superstep boundary. LangGraph's runner yields
to the caller once per superstep before any task of that superstep starts (`PregelRunner.tick`'s
first `yield`), and the "checkpoints" event of the superstep's checkpoint is queued then — so a
suspended generator is a run paused between supersteps, and the rows are those of one straight
`invoke`. (Runtime breakpoints or `RunControl.request_drain()` would also stop there, but resuming
after them with `invoke(None)` records `versions_seen["__interrupt__"]` in every later checkpoint:
the rows would differ from a straight run.)

Breakpoints inside subgraphs: runtime `interrupt_before/after` given to `stream` do not reach a
subgraph in LangGraph 1.2.x. A `run` request's `inner` ({"inner": {"before": [..], "after": "*"},
"inner|child": ...}, keyed like `get_subgraphs(recurse=True)`) sets them on the compiled subgraph
objects themselves (`interrupt_before_nodes` / `interrupt_after_nodes`, the compiled-in ones kept),
for the length of the request, then puts the compiled-in values back. A breakpoint set this way
behaves exactly like one compiled into the subgraph: the subgraph saves its checkpoint and raises,
the parent's stream ends inside the subgraph task, `invoke(None)` resumes it there.

Messages (every one has "type"; requests have "id", answers and events have "re"):
  superstep -> bridge: load, run, update_state, get_state, reset, cancel, shutdown
  bridge -> superstep: hello, loaded, task, output, step, done, updated, state, error
"""

import asyncio
import concurrent.futures
import contextlib
import importlib
import importlib.util
import inspect
import io
import json
import os
import queue
import signal
import socket
import sys
import threading
import traceback

PROTOCOL = 2  # 2: `run` takes `inner` (breakpoints inside subgraphs)

_REAL_STDOUT = sys.stdout
_REAL_STDERR = sys.stderr


class Conn:
    """One JSON object per line over the socket; sends from any thread."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
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
# Output capture: print() and logging inside a node go to the node's task and attempt.
# ------------------------------------------------------------------------------------------------

def current_task():
    """(task_id, node, graph ns, attempt) of the node running in this context, or None."""
    try:
        from langgraph.config import get_config

        cfg = get_config()
    except Exception:
        return None
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
    return (task_id, node, graph_ns, attempt)


class Capture(io.TextIOBase):
    """sys.stdout / sys.stderr while the bridge runs: whole lines are sent as `output` events,
    attributed to the task whose code wrote them (None: module import or the bridge itself)."""

    def __init__(self, name):
        super().__init__()
        self.name = name
        self.lock = threading.Lock()
        self.buffers = {}

    @property
    def encoding(self):
        return "utf-8"

    def writable(self):
        return True

    def isatty(self):
        return False

    def write(self, s):
        if not isinstance(s, str):
            s = str(s)
        key = current_task()
        with self.lock:
            buf = self.buffers.get(key, "") + s
            if "\n" in buf:
                head, _, rest = buf.rpartition("\n")
                self.buffers[key] = rest
                self._send(key, head + "\n")
            else:
                self.buffers[key] = buf
        return len(s)

    def _send(self, key, text):
        msg = {"type": "output", "stream": self.name, "text": text}
        if key is not None:
            msg.update(task_id=key[0], node=key[1], ns=key[2], attempt=key[3])
        try:
            send(msg)
        except Exception:
            pass

    def flush(self):
        pass

    def flush_all(self):
        with self.lock:
            items, self.buffers = list(self.buffers.items()), {}
        for key, text in items:
            if text:
                self._send(key, text)


STDOUT = Capture("stdout")
STDERR = Capture("stderr")


def flush_output():
    STDOUT.flush_all()
    STDERR.flush_all()


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
    me = os.path.abspath(__file__)
    frames = [f for f in tb if os.path.abspath(f.filename) != me] if skip_bridge else list(tb)
    if not frames:
        frames = list(tb)
    if not frames:
        return None
    f = frames[-1]
    return f"{f.filename}:{f.lineno} in {f.name}"


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
        t, data = _SERDE.dumps_typed(f"<unserializable {type(value).__name__}: {e}>")
    return {"type": t, "hex": bytes(data).hex()}


def plain_json(value):
    """The value if it is plain JSON, else None."""
    try:
        json.dumps(value, allow_nan=False)
        return value
    except Exception:
        return None


# ------------------------------------------------------------------------------------------------
# Loading the graph
# ------------------------------------------------------------------------------------------------

def import_target(ref):
    """The object a reference names: {"file": path} or {"module": name}, plus "attr"."""
    attr = ref["attr"]
    if ref.get("file"):
        path = os.path.abspath(ref["file"])
        if not os.path.exists(path):
            raise BridgeError("reference", f"{ref['file']}: no such file")
        d = os.path.dirname(path)
        if d not in sys.path:
            sys.path.insert(0, d)
        name = os.path.splitext(os.path.basename(path))[0]
        if name in sys.modules and getattr(sys.modules[name], "__file__", None) == path:
            module = sys.modules[name]
        else:
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:
                raise BridgeError("reference", f"{ref['file']}: not a Python file")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            try:
                spec.loader.exec_module(module)
            except BaseException as e:
                sys.modules.pop(name, None)
                raise BridgeError(
                    "import", f"importing {ref['file']} failed: {exc_line(e)}", frame=last_frame(e)
                )
        where = ref["file"]
    else:
        try:
            module = importlib.import_module(ref["module"])
        except BaseException as e:
            raise BridgeError(
                "import", f"importing module {ref['module']} failed: {exc_line(e)}", frame=last_frame(e)
            )
        where = f"module {ref['module']}"
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            names = sorted(n for n in dir(module) if not n.startswith("_"))
            raise BridgeError(
                "attribute",
                f"{where} has no attribute {attr!r} (it defines: {', '.join(names[:20])}{', …' if len(names) > 20 else ''})",
            )
        obj = getattr(obj, part)
    return obj


def is_async_graph(graph, seen=None):
    """Whether some node (or a subgraph's node) has only an async implementation: such a graph
    must run with astream / AsyncSqliteSaver."""
    from langgraph._internal._runnable import RunnableCallable

    seen = seen if seen is not None else set()
    if id(graph) in seen:
        return False
    seen.add(id(graph))
    for node in getattr(graph, "nodes", {}).values():
        bound = getattr(node, "bound", None)
        for r in _runnables(bound):
            if isinstance(r, RunnableCallable) and r.func is None and r.afunc is not None:
                return True
        for sub in getattr(node, "subgraphs", None) or []:
            if is_async_graph(sub, seen):
                return True
    return False


def _runnables(r):
    if r is None:
        return []
    out = [r]
    for attr in ("steps", "first", "middle", "last", "bound"):
        v = getattr(r, attr, None)
        if isinstance(v, (list, tuple)):
            for x in v:
                out.extend(_runnables(x))
        elif v is not None and attr != "steps" and v is not r and hasattr(v, "invoke"):
            out.extend(_runnables(v))
    return out


# ------------------------------------------------------------------------------------------------
# Topology: the graph's shape as superstep's inspector reads it (tests/oracle/common.py format,
# extended with edges, breakpoints and subgraphs).
# ------------------------------------------------------------------------------------------------

def _qualname(f):
    mod = getattr(f, "__module__", None)
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None)
    if name is None:
        return None
    return f"{mod}.{name}" if mod else name


def topology(graph):
    from langgraph._internal._typing import MISSING
    from langgraph.channels.binop import BinaryOperatorAggregate

    state_keys = graph.stream_channels_asis
    state_keys = [state_keys] if isinstance(state_keys, str) else list(state_keys)
    channels = {}
    for name, ch in graph.channels.items():
        op = getattr(ch, "operator", None)
        default = None
        if isinstance(ch, BinaryOperatorAggregate):
            try:
                v = ch.copy().value
                default = None if v is MISSING else plain_json(v)
            except Exception:
                default = None
        channels[name] = {
            "kind": type(ch).__name__,
            "reducer": getattr(op, "__name__", None) if op is not None else None,
            "reducer_qualname": _qualname(op) if op is not None else None,
            "default": default,
        }
    edges = []
    try:
        drawn = graph.get_graph()
        for e in drawn.edges:
            edges.append(
                {
                    "source": e.source,
                    "target": e.target,
                    "conditional": bool(e.conditional),
                    "label": e.data if isinstance(e.data, str) else None,
                }
            )
    except Exception:
        pass
    subs = {}
    for name, node in graph.nodes.items():
        for sub in getattr(node, "subgraphs", None) or []:
            try:
                subs[name] = topology(sub)
            except Exception:
                pass
            break

    def bp(v):
        if v == "*" or v is None:
            return v
        return list(v)

    return {
        "name": graph.get_name() if hasattr(graph, "get_name") else getattr(graph, "name", None),
        "nodes": [{"name": n, "triggers": list(node.triggers)} for n, node in graph.nodes.items()],
        "state_keys": state_keys,
        "channels": channels,
        "subgraphs": [n for n, node in graph.nodes.items() if node.subgraphs],
        "edges": edges,
        "interrupt_before": bp(graph.interrupt_before_nodes) or [],
        "interrupt_after": bp(graph.interrupt_after_nodes) or [],
        "subgraph_topologies": subs,
    }


# ------------------------------------------------------------------------------------------------
# Attempts: one LangChain run per attempt of a task (a retry starts another).
# ------------------------------------------------------------------------------------------------

def make_attempt_counter():
    from langchain_core.callbacks import BaseCallbackHandler

    class Attempts(BaseCallbackHandler):
        run_inline = True
        raise_error = False

        def __init__(self):
            self.ns_of = {}
            self.counts = {}
            self.lock = threading.Lock()

        def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, metadata=None, **kw):
            ns = (metadata or {}).get("langgraph_checkpoint_ns")
            with self.lock:
                self.ns_of[run_id] = ns
                if ns and self.ns_of.get(parent_run_id) != ns:
                    task_id = ns.rsplit("|", 1)[-1].split(":", 1)[-1]
                    self.counts[task_id] = self.counts.get(task_id, 0) + 1

        def on_chain_end(self, outputs, *, run_id, **kw):
            with self.lock:
                self.ns_of.pop(run_id, None)

        def on_chain_error(self, error, *, run_id, **kw):
            with self.lock:
                self.ns_of.pop(run_id, None)

        def take(self, task_id):
            with self.lock:
                return self.counts.pop(task_id, 0)

    return Attempts()


# ------------------------------------------------------------------------------------------------
# A run, paused between supersteps
# ------------------------------------------------------------------------------------------------

class Ended(Exception):
    pass


def breaks_json(v):
    if v is None:
        return None
    if v == "*":
        return "*"
    return list(v)


def union_breaks(compiled, requested):
    """A subgraph's breakpoints: the compiled-in ones and the requested ones ("*" wins)."""
    if compiled == "*" or requested == "*":
        return "*"
    out = list(compiled or [])
    out.extend(n for n in (requested or []) if n not in out)
    return out


def matches(breaks, name):
    if not breaks:
        return False
    return breaks == "*" or name in breaks


class Run:
    """`graph.stream(...)` of one thread, suspended at a superstep boundary."""

    def __init__(self, session, thread, gen, is_async, before, after):
        self.s = session
        self.thread = thread
        self.gen = gen
        self.is_async = is_async
        self.before = before
        self.after = after
        self.loop = None  # LangGraph's PregelLoop, found in the generator's frame
        self.checkpoint = None  # the checkpoint of the boundary the run is paused at
        self.pending = {}  # task id -> {id, name, path, reused}: the tasks about to run
        self.results = {}  # task id -> the "tasks" result event
        self.order = []
        self.finished = False

    # -- the generator ----------------------------------------------------------------------------

    def _next(self):
        if self.is_async:
            return self.s.aloop.run_until_complete(self.gen.__anext__())
        return next(self.gen)

    def close(self):
        if self.finished:
            return
        self.finished = True
        try:
            if self.is_async:
                self.s.aloop.run_until_complete(self.gen.aclose())
            else:
                self.gen.close()
        except BaseException:
            pass

    def _find_loop(self):
        frame = self.gen.ag_frame if self.is_async else self.gen.gi_frame
        if frame is not None:
            lp = frame.f_locals.get("loop")
            if lp is not None and hasattr(lp, "checkpoint"):
                self.loop = lp

    def _settle(self):
        """Wait for the saves LangGraph made in the background (checkpoint, task writes): at a
        boundary no task has started yet, so every future the loop's executor holds is a save."""
        lp = self.loop
        if lp is None:
            return
        ex = getattr(getattr(lp, "submit", None), "__self__", None)
        futs = list(getattr(ex, "tasks", {}) or {})
        if not futs:
            return
        if self.is_async:

            async def wait():
                await asyncio.wait(futs)

            self.s.aloop.run_until_complete(wait())
        else:
            concurrent.futures.wait(futs)

    def _boundary(self):
        """At a boundary: note the tasks about to run."""
        self._find_loop()
        self._settle()
        self.pending = {}
        lp = self.loop
        if lp is not None:
            from langgraph.pregel._algo import task_path_str

            for t in lp.tasks.values():
                self.pending[t.id] = {
                    "id": t.id,
                    "name": t.name,
                    "path": task_path_str(t.path),
                    "reused": bool(t.writes),
                }

    def advance(self):
        """Pull chunks until the next boundary. Returns ("boundary", checkpoint_id) or
        ("end", None) when the generator finished; exceptions propagate."""
        while True:
            try:
                chunk = self._next()
            except (StopIteration, StopAsyncIteration):
                self.finished = True
                self._find_loop()
                return ("end", None)
            mode, payload = chunk
            if mode == "tasks":
                if "error" in payload or "interrupts" in payload or "result" in payload:
                    self.results[payload["id"]] = payload
                elif payload["id"] not in self.order:
                    self.order.append(payload["id"])
            elif mode == "checkpoints":
                cid = payload["config"]["configurable"]["checkpoint_id"]
                self.checkpoint = cid
                self._find_loop()
                status = getattr(self.loop, "status", "pending")
                self.last_next = list(payload.get("next") or [])
                if status == "pending":
                    self._boundary()
                    return ("boundary", cid)
                # done / interrupt_after / interrupt_before / out_of_steps: the generator ends next

    # -- one superstep ------------------------------------------------------------------------------

    def step(self):
        """Run the superstep the run is paused before. Returns the step report."""
        lp = self.loop
        step_no = getattr(lp, "step", None)
        tasks = dict(self.pending)
        self.results = {}
        self.order = []
        written = None
        error = None
        try:
            kind, cid = self.advance()
            if kind == "boundary" or (self.checkpoint and self.checkpoint != self._start_cp):
                written = self.checkpoint
        except BaseException as e:
            error = e
            self.finished = True
            if isinstance(e, KeyboardInterrupt):
                raise
        flush_output()
        status = getattr(self.loop, "status", None)
        report_tasks = []
        for tid, t in tasks.items():
            res = self.results.get(tid)
            outcome = "reused" if t["reused"] else "done"
            if res is not None:
                if res.get("interrupts"):
                    i = res["interrupts"][0]
                    outcome = {"interrupt": {"id": i.get("id"), "value": typed(i.get("value"))}}
                elif res.get("error") is not None:
                    outcome = {"error": repr(res["error"])}
            attempts = self.s.attempts.take(tid)
            report_tasks.append(
                {
                    "id": tid,
                    "name": t["name"],
                    "path": t["path"],
                    "outcome": outcome,
                    "attempts": attempts if attempts else (0 if t["reused"] else 1),
                }
            )
        pause = None
        if error is not None:
            from langgraph.errors import GraphRecursionError

            if isinstance(error, GraphRecursionError):
                pause = {"kind": "recursion_limit", "limit": self.s.recursion_limit}
            else:
                failed = [t for t in report_tasks if isinstance(t["outcome"], dict) and "error" in t["outcome"]]
                if failed:
                    pause = {"kind": "error", "node": failed[0]["name"], "error": failed[0]["outcome"]["error"]}
                else:
                    raise error
        elif self.finished:
            pause = self._end_pause(report_tasks, status)
        elif written is not None and status == "pending":
            pause = None
        return {
            "step": step_no,
            "tasks": report_tasks,
            "checkpoint": written,
            "pause": pause,
        }

    def _inside(self, names):
        """The breakpoint inside a subgraph task that stopped the run: {"kind": "before" |
        "after", "nodes": ["node (in task)", ...]} from the subgraph's own state."""
        g = self.s.graph
        cfg = {"configurable": {"thread_id": self.thread}}
        try:
            st = self.s.aloop.run_until_complete(g.aget_state(cfg, subgraphs=True)) if self.is_async else g.get_state(cfg, subgraphs=True)
            subs = dict(g.get_subgraphs(recurse=True))
        except Exception:
            return None
        found, kind = [], "after"

        def saved(state):
            # a subgraph task's own state, once it has saved a checkpoint (not yet started: an
            # empty snapshot without created_at)
            return hasattr(state, "next") and getattr(state, "created_at", None) is not None

        def ran_before(sub):
            pc = getattr(sub, "parent_config", None)
            if not pc:
                return []
            conf = {k: v for k, v in (pc.get("configurable") or {}).items() if not k.startswith("__pregel")}
            try:
                c = {"configurable": {"thread_id": self.thread, **conf}}
                prev = self.s.aloop.run_until_complete(g.aget_state(c)) if self.is_async else g.get_state(c)
                return list(prev.next)
            except Exception:
                return []

        def walk(snap, path):
            nonlocal kind
            for t in snap.tasks:
                sub = t.state if saved(t.state) else None
                if sub is None or not (path or t.name in names):
                    continue
                here = path + [t.name]
                # the deepest subgraph with a state of its own is where the run stopped (its
                # next may be empty: a break-after on its last node)
                if not any(saved(x.state) for x in sub.tasks):
                    graph = subs.get("|".join(here)) or subs.get(t.name)
                    bb = getattr(graph, "interrupt_before_nodes", None) or []
                    if any(bb == "*" or n in bb for n in sub.next):
                        kind = "before"
                        shown = list(sub.next)
                    else:
                        # after: the nodes of the subgraph's superstep that just ran (the next
                        # of the checkpoint before this one)
                        shown = ran_before(sub) or list(sub.next)
                    found.extend(f"{n} (in {'/'.join(here)})" for n in shown)
                walk(sub, here)

        walk(st, [])
        return {"kind": kind, "nodes": found} if found else None

    def _end_pause(self, report_tasks, status):
        interrupts = []
        for t in report_tasks:
            o = t["outcome"]
            if isinstance(o, dict) and "interrupt" in o:
                interrupts.append({"node": t["name"], **o["interrupt"]})
        if interrupts:
            return {"kind": "interrupt", "interrupts": interrupts}
        # a task that started and never finished, in a run that ended without error: a
        # breakpoint inside its subgraph stopped it (LangGraph ends the parent's stream there)
        stopped = [t["name"] for t in report_tasks if t["id"] in self.order and t["id"] not in self.results and t["outcome"] == "done"]
        if stopped:
            inside = self._inside(set(stopped))
            if inside is not None:
                return inside
        if status == "interrupt_after":
            names = [t["name"] for t in report_tasks if matches(self.effective_after, t["name"])]
            return {"kind": "after", "nodes": names}
        if status == "interrupt_before":
            names = [t.name for t in self.loop.tasks.values() if matches(self.effective_before, t.name)]
            return {"kind": "before", "nodes": names}
        return {"kind": "done"}


# ------------------------------------------------------------------------------------------------
# The session: one graph, its saver, the run in progress
# ------------------------------------------------------------------------------------------------

class Session:
    def __init__(self):
        self.commands = queue.Queue()
        self.graph = None
        self.base = None
        self.db = None
        self.is_async = False
        self.saver = None
        self.aloop = None
        self.run = None
        self.attempts = None
        self.recursion_limit = 25
        self.exit_stack = contextlib.ExitStack()
        self.subs = None
        self.compiled_breaks = {}
        self.inner_set = False

    # -- plumbing ---------------------------------------------------------------------------------

    def reader(self):
        while True:
            try:
                msg = CONN.recv()
            except Exception:
                msg = None
            if msg is None:
                # superstep went away: nothing to finish (SQLite rolls back what is uncommitted)
                os._exit(0)
            if msg.get("type") == "cancel":
                # a real SIGINT to the main thread: it interrupts a blocked sleep/read too
                signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
                continue
            self.commands.put(msg)

    def serve(self):
        while True:
            msg = self.commands.get()
            rid = msg.get("id")
            try:
                handler = getattr(self, "do_" + msg.get("type", ""), None)
                if handler is None:
                    raise BridgeError("protocol", f"unknown request {msg.get('type')!r}")
                handler(msg)
            except KeyboardInterrupt:
                flush_output()
                send({"type": "error", "re": rid, "kind": "cancelled", "message": "cancelled: the step was interrupted (Esc / Ctrl-C)", "hint": "the file keeps the last committed checkpoint"})
                # a run cut short can leave LangGraph's executor threads behind: start afresh
                os._exit(3)
            except BridgeError as e:
                flush_output()
                send({"type": "error", "re": rid, "kind": e.kind, "message": e.message, "hint": e.hint, "frame": e.frame})
            except BaseException as e:
                flush_output()
                send({"type": "error", "re": rid, "kind": "exception", "message": exc_line(e), "hint": "", "frame": last_frame(e)})
            if msg.get("type") == "shutdown":
                return

    def call(self, coro_or_value):
        if inspect.isawaitable(coro_or_value):
            return self.aloop.run_until_complete(coro_or_value)
        return coro_or_value

    # -- requests ---------------------------------------------------------------------------------

    def do_shutdown(self, msg):
        self.close_run()
        try:
            self.exit_stack.close()
        except BaseException:
            pass
        if self.is_async and self.saver is not None:
            # aiosqlite's worker thread would keep the process alive
            try:
                self.aloop.run_until_complete(self.saver.conn.close())
            except BaseException:
                pass
        send({"type": "bye", "re": msg.get("id")})

    def do_load(self, msg):
        for k, v in (msg.get("env") or {}).items():
            os.environ[k] = v
        for p in reversed(msg.get("paths") or []):
            if p not in sys.path:
                sys.path.insert(0, p)
        self.aloop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.aloop)
        obj = import_target(msg["ref"])
        graph, factory_async = self.resolve(obj, msg["ref"].get("attr"))
        self.is_async = factory_async or is_async_graph(graph)
        if msg.get("force_async"):
            self.is_async = True
        self.db = msg.get("db")
        self.base = graph
        self.graph = graph
        self.attempts = make_attempt_counter()
        topo = topology(graph)
        try:
            topo["mermaid"] = graph.get_graph().draw_mermaid()
        except Exception:
            topo["mermaid"] = None
        cp = getattr(graph, "checkpointer", None)
        send(
            {
                "type": "loaded",
                "re": msg.get("id"),
                "name": topo.get("name"),
                "async": self.is_async,
                "kind": type(obj).__name__,
                "topology": topo,
                "had_checkpointer": type(cp).__name__ if cp not in (None, True, False) else None,
            }
        )

    def ensure_saver(self):
        """LangGraph's SqliteSaver on the file, in place of the app's own checkpointer (created on
        the first run, so a command rejected before it leaves the file alone)."""
        if self.saver is not None:
            return
        if not self.db:
            raise BridgeError("protocol", "no checkpoint file given")
        self.saver = self.open_saver(self.db)
        update = {"checkpointer": self.saver}
        if getattr(self.base, "stream_eager", False):
            update["stream_eager"] = False
        self.graph = self.base.copy(update=update)

    def do_open(self, msg):
        self.need_graph()
        self.ensure_saver()
        send({"type": "ok", "re": msg.get("id")})

    def resolve(self, obj, attr):
        """StateGraph -> compile(); compiled graph -> itself; factory -> called with a
        RunnableConfig (sync, async, or a context manager), then resolved again."""
        from langgraph.graph.state import StateGraph
        from langgraph.pregel import Pregel

        if isinstance(obj, StateGraph):
            return obj.compile(), False
        if isinstance(obj, Pregel):
            return obj, False
        if callable(obj):
            try:
                sig = inspect.signature(obj)
                nparams = len([p for p in sig.parameters.values() if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)])
            except (TypeError, ValueError):
                nparams = 1
            config = {"configurable": {}}
            try:
                made = obj(config) if nparams >= 1 else obj()
            except BaseException as e:
                raise BridgeError("factory", f"calling the factory {attr} failed: {exc_line(e)}", frame=last_frame(e))
            was_async = False
            if inspect.isawaitable(made):
                was_async = True
                made = self.aloop.run_until_complete(made)
            if hasattr(made, "__aenter__") and hasattr(made, "__aexit__") and not isinstance(made, Pregel):
                was_async = True
                cm = made
                made = self.aloop.run_until_complete(cm.__aenter__())
                self.exit_stack.callback(lambda: self.aloop.run_until_complete(cm.__aexit__(None, None, None)))
            elif hasattr(made, "__enter__") and hasattr(made, "__exit__") and not isinstance(made, Pregel):
                made = self.exit_stack.enter_context(made)
            if isinstance(made, StateGraph):
                return made.compile(), was_async
            if isinstance(made, Pregel):
                return made, was_async
            raise BridgeError("reference", f"the factory {attr} returned a {type(made).__name__}, not a StateGraph or a compiled graph")
        raise BridgeError(
            "reference",
            f"{attr} is a {type(obj).__name__}, not a StateGraph, a compiled graph or a factory taking a RunnableConfig",
        )

    def open_saver(self, db):
        if is_postgres_url(db):
            return self.open_postgres_saver(db)
        import sqlite3

        try:
            if self.is_async:
                import aiosqlite
                from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

                async def make():
                    conn = await aiosqlite.connect(db)
                    saver = AsyncSqliteSaver(conn)
                    await saver.setup()
                    return saver

                return self.aloop.run_until_complete(make())
            from langgraph.checkpoint.sqlite import SqliteSaver
        except ImportError as e:
            raise BridgeError(
                "dependency",
                f"{exc_line(e)}: the bridge needs langgraph-checkpoint-sqlite (and aiosqlite for async graphs) in this interpreter",
                hint="pip install langgraph-checkpoint-sqlite",
            )
        conn = sqlite3.connect(db, check_same_thread=False)
        saver = SqliteSaver(conn)
        saver.setup()
        return saver

    def open_postgres_saver(self, url):
        """LangGraph's PostgresSaver (AsyncPostgresSaver for an async graph) on the database `url`
        names, opened as `from_conn_string` opens it (psycopg reads the URL, PG* variables and
        ~/.pgpass as libpq does), its tables made by its own `setup()`."""
        try:
            if self.is_async:
                from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
            else:
                from langgraph.checkpoint.postgres import PostgresSaver
        except ImportError as e:
            raise BridgeError(
                "dependency",
                f"{exc_line(e)}: a Postgres --db needs langgraph-checkpoint-postgres and psycopg in this interpreter",
                hint='pip install langgraph-checkpoint-postgres "psycopg[binary]"',
            )
        try:
            if self.is_async:
                cm = AsyncPostgresSaver.from_conn_string(url)
                saver = self.aloop.run_until_complete(cm.__aenter__())
                self.exit_stack.callback(lambda: self.aloop.run_until_complete(cm.__aexit__(None, None, None)))
                self.aloop.run_until_complete(saver.setup())
            else:
                saver = self.exit_stack.enter_context(PostgresSaver.from_conn_string(url))
                saver.setup()
        except BridgeError:
            raise
        except Exception as e:
            raise BridgeError("checkpointer", f"{redact_url(url)}: {exc_line(e)}")
        return saver

    def need_graph(self):
        if self.graph is None:
            raise BridgeError("protocol", "no graph loaded")

    def close_run(self):
        if self.run is not None:
            self.run.close()
            self.run = None

    def do_reset(self, msg):
        self.close_run()
        send({"type": "ok", "re": msg.get("id")})

    def build_input(self, start):
        from langgraph.types import Command

        inp = start.get("input") or {"kind": "continue"}
        kind = inp["kind"]
        if kind == "value":
            return inp["value"]
        if kind == "continue":
            return None
        if kind == "command":
            kw = {}
            if inp.get("update") is not None:
                kw["update"] = inp["update"]
            if inp.get("goto"):
                g = inp["goto"]
                kw["goto"] = g[0] if len(g) == 1 else g
            r = inp.get("resume")
            if r is not None:
                kw["resume"] = r["value"] if "value" in r else dict(r["map"])
            return Command(**kw)
        raise BridgeError("protocol", f"unknown input kind {kind!r}")

    # -- breakpoints inside subgraphs -------------------------------------------------------------

    def subgraph_objects(self):
        """{path: compiled subgraph}, named as `get_subgraphs(recurse=True)` names them
        ("inner", "inner|child"), with the breakpoints each was compiled with."""
        if self.subs is None:
            subs = dict(self.base.get_subgraphs(recurse=True))
            self.compiled_breaks = {p: (g.interrupt_before_nodes, g.interrupt_after_nodes) for p, g in subs.items()}
            self.subs = subs
        return self.subs

    def apply_inner(self, inner):
        """Set the requested breakpoints on the subgraph objects (compiled-in ones kept)."""
        if not inner:
            return
        subs = self.subgraph_objects()
        for path, bk in inner.items():
            g = subs.get(path)
            if g is None:
                raise BridgeError("breakpoint", f"no subgraph {path!r} in this graph (subgraphs: {', '.join(subs) or 'none'})")
            for side in ("before", "after"):
                v = bk.get(side)
                if v and v != "*":
                    unknown = [n for n in v if n not in g.nodes]
                    if unknown:
                        raise BridgeError("breakpoint", f"subgraph {path!r} has no node {unknown[0]!r} (nodes: {', '.join(n for n in g.nodes if n != '__start__')})")
        self.inner_set = True
        for path, g in subs.items():
            cb, ca = self.compiled_breaks[path]
            bk = inner.get(path) or {}
            g.interrupt_before_nodes = union_breaks(cb, bk.get("before"))
            g.interrupt_after_nodes = union_breaks(ca, bk.get("after"))

    def restore_inner(self):
        if not self.inner_set:
            return
        self.inner_set = False
        for path, g in self.subgraph_objects().items():
            g.interrupt_before_nodes, g.interrupt_after_nodes = self.compiled_breaks[path]

    def do_run(self, msg):
        try:
            self.apply_inner(msg.get("inner"))
            return self.run_request(msg)
        finally:
            self.restore_inner()

    def run_request(self, msg):
        self.need_graph()
        self.ensure_saver()
        rid = msg.get("id")
        thread = msg["thread"]
        start = msg["start"]
        steps = msg.get("steps")
        before = msg.get("before")
        after = msg.get("after")
        self.recursion_limit = msg.get("recursion_limit") or 25
        reports = []
        run = self.run
        if start["kind"] == "continue" and run is not None and run.thread == thread and not run.finished:
            early = self.set_breaks(run, before, after)
            if early is not None:
                self.close_run()
                reports.append(early)
                return self.finish(rid, reports, None)
        else:
            self.close_run()
            inp = self.build_input(start)
            cfg = {
                "configurable": self.configurable(thread, start.get("ns") or "", start.get("checkpoint")),
                "callbacks": [self.attempts],
                "recursion_limit": self.recursion_limit,
            }
            kw = dict(stream_mode=["checkpoints", "tasks"], interrupt_before=before or None, interrupt_after=after or None)
            gen = self.graph.astream(inp, cfg, **kw) if self.is_async else self.graph.stream(inp, cfg, **kw)
            run = Run(self, thread, gen, self.is_async, before, after)
            run.effective_before = before or self.graph.interrupt_before_nodes
            run.effective_after = after or self.graph.interrupt_after_nodes
            run._start_cp = None
            try:
                kind, cid = run.advance()
            except BaseException as e:
                run.finished = True
                flush_output()
                if isinstance(e, KeyboardInterrupt):
                    raise
                return self.finish(rid, reports, e)
            flush_output()
            if kind == "end":
                # the run stopped before any superstep ran (a breakpoint, nothing to do)
                reports.append({"step": getattr(run.loop, "step", None), "tasks": [], "checkpoint": None, "pause": run._end_pause([], getattr(run.loop, "status", None))})
                return self.finish(rid, reports, None, checkpoint=run.checkpoint)
            self.run = run
        n = 0
        limit = steps if steps is not None else float("inf")
        while n < limit:
            run._start_cp = run.checkpoint
            try:
                rep = run.step()
            except BaseException as e:
                self.run = None
                if isinstance(e, KeyboardInterrupt):
                    raise
                return self.finish(rid, reports, e)
            n += 1
            reports.append(rep)
            send({"type": "step", "re": rid, "report": rep})
            if rep["pause"] is not None or run.finished:
                self.run = None
                if not run.finished:
                    run.close()
                break
        return self.finish(rid, reports, None, checkpoint=run.checkpoint, sent=True)

    def configurable(self, thread, ns, checkpoint):
        """The config's `configurable` for a checkpoint: the root's ({thread_id, checkpoint_id}),
        or in subgraph namespace `ns` the config LangGraph's own snapshot of that checkpoint
        carries (checkpoint_ns, checkpoint_id, checkpoint_map of its parents) without the
        `__pregel_*` objects it lends the subgraph (passed back, `__pregel_checkpointer` turns
        update_state onto the root graph). `ns` without a checkpoint: {thread_id, checkpoint_ns},
        which update_state hands to that subgraph (a run needs the checkpoint: LangGraph ignores
        a bare namespace there)."""
        conf = {"thread_id": thread}
        if not ns:
            if checkpoint:
                conf["checkpoint_id"] = checkpoint
            return conf
        conf["checkpoint_ns"] = ns
        if not checkpoint:
            return conf
        conf["checkpoint_id"] = checkpoint
        c = {"configurable": dict(conf)}
        st = self.aloop.run_until_complete(self.graph.aget_state(c)) if self.is_async else self.graph.get_state(c)
        if st.created_at is None or st.config is None:
            raise BridgeError("checkpoint", f"no checkpoint {checkpoint} in namespace {ns} of thread {thread}")
        return {k: v for k, v in st.config["configurable"].items() if not k.startswith("__pregel")}

    def set_breaks(self, run, before, after):
        """New breakpoints for a run in progress: set on LangGraph's loop. A break-before that
        now matches a task about to run stops here (LangGraph checked before-breakpoints when it
        prepared them): the run ends as a before-breakpoint ends it, having written nothing."""
        lp = run.loop
        eff_before = before or self.graph.interrupt_before_nodes
        eff_after = after or self.graph.interrupt_after_nodes
        newly = [t["name"] for t in run.pending.values() if matches(eff_before, t["name"]) and not matches(run.effective_before, t["name"]) and not t["reused"]]
        run.effective_before, run.effective_after = eff_before, eff_after
        if lp is not None:
            lp.interrupt_before = eff_before
            lp.interrupt_after = eff_after
        if newly:
            return {"step": getattr(lp, "step", None), "tasks": [], "checkpoint": None, "pause": {"kind": "before", "nodes": newly}}
        return None

    def finish(self, rid, reports, error, checkpoint=None, sent=False):
        if not sent:
            for rep in reports:
                send({"type": "step", "re": rid, "report": rep})
        err = None
        if error is not None:
            err = {"kind": type(error).__name__, "message": exc_line(error), "frame": last_frame(error)}
        send({"type": "done", "re": rid, "checkpoint": checkpoint, "error": err, "suspended": self.run is not None})

    def do_update_state(self, msg):
        self.need_graph()
        self.ensure_saver()
        from langgraph.constants import END

        self.close_run()
        cfg = {"configurable": self.configurable(msg["thread"], msg.get("ns") or "", msg.get("checkpoint"))}
        as_node = msg.get("as_node")
        if as_node in ("__end__", "END"):
            as_node = END
        values = msg.get("values")
        if self.is_async:
            new = self.aloop.run_until_complete(self.graph.aupdate_state(cfg, values, as_node=as_node))
        else:
            new = self.graph.update_state(cfg, values, as_node=as_node)
        flush_output()
        send({"type": "updated", "re": msg.get("id"), "checkpoint": new["configurable"]["checkpoint_id"]})

    def do_get_state(self, msg):
        """LangGraph's own get_state values (the live view with every reducer applied)."""
        self.need_graph()
        self.ensure_saver()
        cfg = {"configurable": {"thread_id": msg["thread"], "checkpoint_ns": msg.get("ns") or ""}}
        if msg.get("checkpoint"):
            cfg["configurable"]["checkpoint_id"] = msg["checkpoint"]
        st = self.aloop.run_until_complete(self.graph.aget_state(cfg)) if self.is_async else self.graph.get_state(cfg)
        values = st.values if isinstance(st.values, dict) else {"__root__": st.values}
        send({"type": "state", "re": msg.get("id"), "values": {k: typed(v) for k, v in values.items()}, "next": list(st.next)})


def hello():
    info = {"type": "hello", "protocol": PROTOCOL, "pid": os.getpid(), "python": sys.version.split()[0], "executable": sys.executable}
    try:
        import importlib.metadata as md

        import langgraph  # noqa: F401

        info["langgraph"] = md.version("langgraph")
        for dist in ("langgraph-checkpoint", "langgraph-checkpoint-sqlite", "langchain-core"):
            try:
                info[dist] = md.version(dist)
            except Exception:
                info[dist] = None
    except BaseException as e:
        info["error"] = exc_line(e)
    return info


def main():
    global CONN
    path = os.environ.pop("SUPERSTEP_BRIDGE_SOCKET", None)
    if not path:
        print("superstep bridge: run by superstep, not by hand", file=sys.stderr)
        sys.exit(2)
    CONN = Conn(path)
    # cancel is a SIGINT: Python leaves SIGINT ignored when it was started with it ignored (a
    # background job, nohup), and then no KeyboardInterrupt would stop a hung node
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.stdout = STDOUT
    sys.stderr = STDERR
    session = Session()
    CONN.send(hello())
    threading.Thread(target=session.reader, daemon=True).start()
    session.serve()
    flush_output()


if __name__ == "__main__":
    main()

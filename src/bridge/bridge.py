"""superstep's bridge: runs the user's LangGraph graph for superstep, one superstep at a time.

Shipped inside the superstep binary and run with the user's own interpreter. It speaks JSON lines
(protocol version below) over a Unix socket inherited as the fd in $SUPERSTEP_BRIDGE_FD — never over
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
  superstep -> bridge: load, run, update_state, get_state, check_context, states, revive, reset, cancel, shutdown
  bridge -> superstep: hello, loaded, task, output, step, done, updated, state, context, states, revived, error

What a run is given besides its input (context, config, store): superstep_runtime.py.
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

import superstep_inspect as insp
import superstep_runtime as rt
import superstep_capture as capture
import superstep_saves as saves  # shipped next to this file (src/bridge/saves.py)
import superstep_doctor as doctor  # shipped next to this file (src/bridge/doctor.py)
import superstep_recorder as recorder  # shipped beside this file (src/bridge/recorder.py)
import superstep_wire as wire  # the modules split out of this program: wire.py, shape.py, stepping.py
from superstep_wire import BridgeError, Conn, error_report, exc_line, flush_output, is_postgres_url, last_frame, redact_url, send, typed, user_files
from superstep_shape import import_target, input_fields, is_async_graph, topology
from superstep_stepping import Run, make_attempt_counter, matches, send_running, union_breaks
wire.OWN_FILES.append(__file__)

# 2: `run` takes `inner` (breakpoints inside subgraphs)
# 3: `run` takes `config` / `context` and no `recursion_limit` (the user's RunnableConfig fields,
#    only those set; the runtime context); `update_state` takes `config`; `check_context`;
#    `loaded` says the graph's `context_schema`
# 4: `load` takes `store` (langgraph.json's store key); every run gets LangGraph's own store on the
#    checkpoint database; `loaded` says `had_store`
# 5: `states`: LangGraph's get_state_history over a database opened read-only (superstep_inspect.py)
PROTOCOL = 5


class Session:
    def __init__(self):
        self.commands = queue.Queue()
        self.graph = None
        self.base = None
        self.db = None
        self.is_async = False
        self.saver = None
        self.store_cfg = None
        self.aloop = None
        self.run = None
        self.attempts = None
        self.exit_stack = contextlib.ExitStack()
        self.subs = None
        self.compiled_breaks = {}
        self.inner_set = False
        self.guard = None  # superstep_saves.Guard around the saver
        self.current = None  # the Run being stepped (names tasks for save errors)
        self.recorder = recorder.Recorder(None)  # model and tool calls, recorded beside the rows
        self.lost = None  # the checkpoint file went away: every later request says so

    # -- plumbing ---------------------------------------------------------------------------------

    def reader(self):
        while True:
            try:
                msg = wire.CONN.recv()
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
            except KeyboardInterrupt as e:
                flush_output()
                if not SIGINT_RECEIVED:
                    # the graph's own code raised it: an exception of the run, not a cancel
                    self.close_run()
                    send({"type": "error", "re": rid, "kind": "exception", "message": f"{exc_line(e)} — raised by the graph's own code, not a cancel (nobody pressed Esc / Ctrl-C)", "hint": "the file keeps the last committed checkpoint", "frame": last_frame(e)})
                    continue
                # the terminal's Ctrl-C and superstep's cancel may both arrive: answer once
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                send({"type": "error", "re": rid, "kind": "cancelled", "message": "cancelled: the step was interrupted (Esc / Ctrl-C)", "hint": "the file keeps the last committed checkpoint"})
                # a run cut short can leave LangGraph's executor threads behind: start afresh
                os._exit(3)
            except (BridgeError, saves.SaveFailed) as e:
                flush_output()
                send({"type": "error", "re": rid, "kind": e.kind, "message": e.message, "hint": e.hint, "frame": getattr(e, "frame", None)})
            except BaseException as e:
                flush_output()
                rep = error_report(e)
                send({"type": "error", "re": rid, "kind": "exception", "message": exc_line(e), "hint": "", "frame": rep["at"], "traceback": rep["traceback"]})
            if msg.get("type") == "shutdown":
                return

    def call(self, coro_or_value):
        if inspect.isawaitable(coro_or_value):
            return self.aloop.run_until_complete(coro_or_value)
        return coro_or_value

    # -- requests ---------------------------------------------------------------------------------

    def do_shutdown(self, msg):
        self.close_run()
        self.recorder.close()
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
        self.recordings = msg.get("recordings")
        self.store_cfg = msg.get("store")
        self.base = graph
        self.graph = graph
        self.attempts = make_attempt_counter()
        topo = topology(graph)
        try:
            topo["mermaid"] = graph.get_graph().draw_mermaid()
        except Exception:
            topo["mermaid"] = None
        topo["input_fields"] = input_fields(graph)
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
                "context_schema": rt.describe_context(graph),
                "files": user_files(),
                "had_store": type(graph.store).__name__ if getattr(graph, "store", None) is not None else None,
            }
        )

    def ensure_saver(self):
        """LangGraph's SqliteSaver on the file, in place of the app's own checkpointer (created on
        the first run, so a command rejected before it leaves the file alone)."""
        if self.saver is not None:
            return
        if not self.db:
            raise BridgeError("protocol", "no checkpoint file given")
        try:
            rt.check_store(self.store_cfg, self.db)
        except rt.StoreUnavailable as e:
            raise BridgeError("store", str(e))
        self.saver = self.open_saver(self.db)
        # the app's own serializer goes with its rows (JsonPlusSerializer(pickle_fallback=True)
        # reads and writes the pickled checkpoints it made; an EncryptedSerializer its envelopes)
        app_cp = getattr(self.base, "checkpointer", None)
        if getattr(app_cp, "serde", None) is not None:
            self.saver.serde = app_cp.serde
        self.guard = saves.guard(self.saver, self.db, is_postgres_url(self.db))
        self.guard.task_name = self.task_name
        update = {"checkpointer": self.saver, "store": self.open_store()}
        if getattr(self.base, "stream_eager", False):
            update["stream_eager"] = False
        self.graph = self.base.copy(update=update)
        self.recorder = recorder.install(self.recordings)

    # -- saves: one writer per thread, every save checked ----------------------------------------

    def task_name(self, task_id):
        run = self.current
        if run is None:
            return None
        t = run.pending.get(task_id)
        if t is not None:
            return t["name"]
        task = getattr(run.loop, "tasks", {}).get(task_id) if run.loop is not None else None
        return getattr(task, "name", None)

    def head(self, thread):
        return saves.current_head(self.guard, self.aloop if self.is_async else None, thread)

    def watch(self, thread):
        """From now on every save on `thread` checks that its newest checkpoint is the one read
        here (or one this process saved since)."""
        self.check_store()
        self.guard.watch(thread, self.head(thread))

    def check_store(self):
        if self.lost is None:
            self.lost = self.guard.store_lost()
        if self.lost is not None:
            raise self.lost

    def check_head(self, paused):
        self.check_store()
        found = self.head(self.guard.thread)
        if found != self.guard.expected:
            raise saves.SaveFailed("thread_moved", saves.moved_message(self.guard.thread, self.guard.expected, found, paused))

    def check_saves(self, run, written):
        """After LangGraph's saves settled: raise the first that failed, or when the file went
        away, or when the checkpoint `written` cannot be read back by id."""
        failure = self.guard.take_failure()
        if failure is not None:
            run.finished = True
            raise failure
        self.check_store()
        if written is not None:
            saves.verify(self.guard, self.aloop, run.thread, written)

    def open_store(self):
        """LangGraph's own store on the same database (superstep_runtime.open_store), in place of
        the app's own, as langgraph dev gives every graph its store."""
        try:
            return rt.open_store(self, self.store_cfg)
        except ImportError as e:
            raise BridgeError(
                "dependency",
                f"{exc_line(e)}: the store needs langgraph-checkpoint-sqlite (aiosqlite for async graphs; langgraph-checkpoint-postgres on Postgres) in this interpreter",
            )
        except BridgeError:
            raise
        except Exception as e:
            raise BridgeError("store", f"opening the store failed: {exc_line(e)}", frame=last_frame(e))

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
        self.current = None
        if self.guard is not None:
            self.guard.unwatch()

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
        reports = []
        run = self.run
        if self.lost is not None:
            self.close_run()
            raise self.lost
        if start["kind"] == "continue" and run is not None and run.thread == thread and not run.finished:
            early = self.set_breaks(run, before, after)
            if early is not None:
                self.close_run()
                reports.append(early)
                return self.finish(rid, reports, None)
        else:
            self.close_run()
            self.watch(thread)
            inp = self.build_input(start)
            self.recorder.begin_run(thread, msg.get("replay"), msg.get("record"))
            conf = self.configurable(thread, start.get("ns") or "", start.get("checkpoint"))
            cfg = rt.run_config(msg.get("config"), conf, callbacks=[self.attempts])
            kw = dict(stream_mode=["checkpoints", "tasks"], interrupt_before=before or None, interrupt_after=after or None)
            if "context" in msg:
                kw["context"] = msg["context"]
            gen = self.graph.astream(inp, cfg, **kw) if self.is_async else self.graph.stream(inp, cfg, **kw)
            run = Run(self, thread, gen, self.is_async, before, after)
            run.user_config = msg.get("config")
            run.effective_before = before or self.graph.interrupt_before_nodes
            run.effective_after = after or self.graph.interrupt_after_nodes
            run._start_cp = None
            self.current = run
            try:
                kind, cid = run.advance()
            except BaseException as e:
                run.finished = True
                flush_output()
                if isinstance(e, KeyboardInterrupt):
                    raise
                return self.finish(rid, reports, self.guard.take_failure() or e)
            flush_output()
            self.check_saves(run, run.checkpoint if kind == "boundary" else None)
            if kind == "end":
                # the run stopped before any superstep ran (a breakpoint, nothing to do)
                reports.append({"step": getattr(run.loop, "step", None), "tasks": [], "checkpoint": None, "pause": run._end_pause([], getattr(run.loop, "status", None))})
                return self.finish(rid, reports, None, checkpoint=run.checkpoint)
            self.run = run
        n = 0
        limit = steps if steps is not None else float("inf")
        while n < limit:
            run._start_cp = run.checkpoint
            send_running(rid, run)
            try:
                # another writer moved the thread on while the run was paused: noticed now,
                # before any node runs
                self.check_head(paused=True)
                rep = run.step()
            except BaseException as e:
                self.run = None
                if isinstance(e, KeyboardInterrupt):
                    raise
                run.close()
                # the supersteps before it were sent as they committed
                return self.finish(rid, reports, e, checkpoint=run.checkpoint, sent=True)
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
                # the checkpoint's own config, as get_state_history hands it out (the time-travel
                # guide passes that): SqliteSaver.put reads checkpoint_ns from it (KeyError
                # 'checkpoint_ns' when an update forks a checkpoint named by id alone)
                conf["checkpoint_ns"] = ""
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
        if isinstance(error, saves.SaveFailed):
            self.close_run()
            err = {"kind": error.kind, "message": error.message, "hint": error.hint, "frame": None}
        elif error is not None:
            rep = error_report(error)
            err = {"kind": type(error).__name__, "message": exc_line(error), "frame": rep["at"], "traceback": rep["traceback"]}
        send({"type": "done", "re": rid, "checkpoint": checkpoint, "error": err, "suspended": self.run is not None})

    def do_update_state(self, msg):
        self.need_graph()
        self.ensure_saver()
        from langgraph.constants import END

        self.close_run()
        self.watch(msg["thread"])
        cfg = rt.run_config(msg.get("config"), self.configurable(msg["thread"], msg.get("ns") or "", msg.get("checkpoint")))
        as_node = msg.get("as_node")
        if as_node in ("__end__", "END"):
            as_node = END
        values = msg.get("values")
        try:
            if self.is_async:
                new = self.aloop.run_until_complete(self.graph.aupdate_state(cfg, values, as_node=as_node))
            else:
                new = self.graph.update_state(cfg, values, as_node=as_node)
        except BaseException as e:
            raise self.guard.take_failure() or e
        finally:
            self.guard.unwatch()
        flush_output()
        self.check_store()
        if not msg.get("ns"):
            saves.verify(self.guard, self.aloop, msg["thread"], new["configurable"]["checkpoint_id"])
        send({"type": "updated", "re": msg.get("id"), "checkpoint": new["configurable"]["checkpoint_id"]})

    def do_states(self, msg):
        """LangGraph's own reading of a thread's checkpoints (inspection with --graph): the
        database opened read-only, never this session's saver."""
        self.need_graph()
        try:
            entries = insp.states(self.base, msg["db"], msg["thread"], msg.get("ns") or "", msg.get("limit"), typed)
        except FileNotFoundError as e:
            raise BridgeError("checkpoint", str(e))
        send({"type": "states", "re": msg.get("id"), "entries": entries})

    def do_check_context(self, msg):
        """The context runs will get (`context` given, or none: the schema's defaults, as
        langgraph dev builds it), checked before any node runs."""
        self.need_graph()
        try:
            _, view, built = rt.check_context(self.graph, msg.get("context"))
        except rt.ContextError as e:
            raise BridgeError("context", str(e))
        schema = rt.describe_context(self.graph)
        send({"type": "context", "re": msg.get("id"), "value": view, "built": built, "schema": schema["name"] if schema else None})

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

    def do_revive(self, msg):
        self.need_graph()
        problems = doctor.revive(self.base, [(c["code"], bytes.fromhex(c["hex"])) for c in msg.get("classes") or []])
        send({"type": "revived", "re": msg.get("id"), "problems": problems})


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


SIGINT_RECEIVED = False  # a real SIGINT (a cancel, a terminal's Ctrl-C) arrived


def on_sigint(signum, frame):
    """Python's default SIGINT handler, remembering that the interrupt came from outside: a
    KeyboardInterrupt without it was raised by the graph's own code."""
    global SIGINT_RECEIVED
    SIGINT_RECEIVED = True
    raise KeyboardInterrupt


def main():
    fd = os.environ.pop("SUPERSTEP_BRIDGE_FD", None)
    if not fd:
        print("superstep bridge: run by superstep, not by hand", file=sys.stderr)
        sys.exit(2)
    wire.CONN = Conn(int(fd))
    # cancel is a SIGINT: Python leaves SIGINT ignored when it was started with it ignored (a
    # background job, nohup), and then no KeyboardInterrupt would stop a hung node
    signal.signal(signal.SIGINT, on_sigint)
    capture.install(wire.CONN.send)
    session = Session()
    wire.CONN.send(hello())
    threading.Thread(target=session.reader, daemon=True).start()
    session.serve()
    flush_output()


if __name__ == "__main__":
    main()

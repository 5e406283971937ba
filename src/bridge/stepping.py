"""A run of the user's graph paused between supersteps (`graph.stream` suspended at a superstep
boundary), the attempt counter and the breakpoint rules.

Part of superstep's bridge (src/bridge/bridge.py is the program; shipped as superstep_stepping.py)."""

import asyncio
import concurrent.futures
import contextlib
import io
import json
import os
import queue
import sys
import threading
import traceback

import superstep_capture as capture
import superstep_runtime as rt
import superstep_wire as wire
from superstep_wire import error_report, flush_output, path_json, send, typed

wire.OWN_FILES.append(__file__)

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
                    # a task attempt starts: raw fd output is its own while it runs alone
                    node = (metadata or {}).get("langgraph_node") or ns.rsplit("|", 1)[-1].split(":")[0]
                    graph_ns = ns.rsplit("|", 1)[0] if "|" in ns else ""
                    capture.task_started(run_id, (task_id, node, graph_ns, self.counts[task_id]))

        def on_chain_end(self, outputs, *, run_id, **kw):
            with self.lock:
                self.ns_of.pop(run_id, None)
            capture.task_ended(run_id)

        def on_chain_error(self, error, *, run_id, **kw):
            with self.lock:
                self.ns_of.pop(run_id, None)
            capture.task_ended(run_id)

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


def task_path_of(path):
    if path is None:
        return ""
    from langgraph.pregel._algo import task_path_str

    return task_path_str(path)


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
        self.names = {}  # task id -> name, of every task that started (an @task call too)
        self.finished = False
        self.user_config = None  # the RunnableConfig fields the user set

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
            for t in lp.tasks.values():
                self.pending[t.id] = {
                    "id": t.id,
                    "name": t.name,
                    "path": path_json(t.path),
                    "reused": bool(t.writes),
                }
            self.s.recorder.boundary(lp, {t.id: (t.name, t.path) for t in lp.tasks.values() if not t.writes})

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
                    self.names[payload["id"]] = payload.get("name")
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
        # the step is done only once what it saved is in the store, read back by id
        self.s.check_saves(self, written)
        calls = self.s.recorder.step_end(written)
        status = getattr(self.loop, "status", None)
        report_tasks = []
        # tasks the step's nodes started while they ran (functional API `@task` calls): reported
        # with the step, so what they printed shows under their own name
        for tid in self.order:
            if tid not in tasks and self.names.get(tid):
                task = getattr(lp, "tasks", {}).get(tid) if lp is not None else None
                path = getattr(task, "path", None)
                tasks[tid] = {"id": tid, "name": self.names[tid], "path": task_path_of(path), "reused": False}
        for tid, t in tasks.items():
            res = self.results.get(tid)
            outcome = "reused" if t["reused"] else "done"
            if res is not None:
                if res.get("interrupts"):
                    i = res["interrupts"][0]
                    outcome = {"interrupt": {"id": i.get("id"), "value": typed(i.get("value"))}}
                elif res.get("error") is not None:
                    outcome = {"error": repr(res["error"]), **error_report(res["error"])}
            attempts = self.s.attempts.take(tid)
            report_tasks.append(
                {
                    "id": tid,
                    "name": t["name"],
                    "path": t["path"],
                    "outcome": outcome,
                    "attempts": attempts if attempts else (0 if t["reused"] else 1),
                    "calls": calls.get(tid, []),
                }
            )
        pause = None
        if error is not None:
            from langgraph.errors import GraphRecursionError

            if isinstance(error, GraphRecursionError):
                pause = {"kind": "recursion_limit", "limit": rt.recursion_limit_of(self.loop, self.user_config)}
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

def send_running(rid, run):
    """The nodes of the superstep about to run (the spinner names them)."""
    names = []
    for t in run.pending.values():
        if not t["reused"] and t["name"] not in names:
            names.append(t["name"])
    if names:
        send({"type": "running", "re": rid, "nodes": names})

"""DBs written by LangGraph 0.2.x (issue 15 item 2), with that version's own get_state / get_state_history.

Run under a venv made from requirements-0.2.20.txt (langgraph 0.2.20 + langgraph-checkpoint-sqlite 1.0.3) or
requirements-0.2.76.txt (0.2.76 + 2.0.6); `generate.sh` builds both and runs this once with each. Writes
`<out>/v<version>.sqlite/.json` (SqliteSaver) and `<out>/v<version>_async.sqlite/.json` (AsyncSqliteSaver: the
same graphs and threads written through aiosqlite; dumped by a SqliteSaver on the finished file, which reads
the same rows).

0.2's format differs from 1.x: checkpoint `v: 1` with `pending_sends` (Send packets) inside the checkpoint;
every node writes a channel named after itself (an EphemeralValue holding its name) that its plain edges'
targets are triggered by; `start:<node>` for edges from START, `branch:<source>:<path>:<node>` for
conditional edges, `join:<a>+<b>:<node>` for waiting edges; task ids are a SHA-1 over the checkpoint id
(`_uuid5_str`), hashing only the triggers that fired; interrupts have no id (0.2.20 has no `interrupt()`:
NodeInterrupt instead). The writes table of checkpoint-sqlite 1.0.3 has no task_path column.

Graphs (state: request, draft, decision: last value; log: Annotated[list, add]):
  A  START -> write_draft -> approve -> execute -> END; approve calls interrupt({"question", "draft"}) (0.2.76)
     or raises NodeInterrupt({...}) (0.2.20)
       'paused'   : invoke -> paused in approve
       'resumed'  : (0.2.76) ... then Command(resume=True) -> done
       'updated'  : invoke -> paused; update_state({"decision": "edited"}, as_node="write_draft") (a fork from the pause)
  E  START -> ok -> boom -> END; boom raises ValueError('boom')     'error'
  B  START -> write_draft -> execute -> END, interrupt_before=["execute"] 'before' (paused), 'before_done' (then invoke(None))
  C  START -> fan; fan -(route: ["left", "right"])-> left, right; [left, right] -> joined (waiting edge) -> END
       'cond_join' : done;  'cond_join_before': interrupt_before=["joined"], paused with the join half-filled? no:
                     both branches ran, paused before joined
  S  START -> split; split -(Send("worker", {"item": i}) for i in 0..3)-> worker -> END; worker 2 raises
       'send_error': the Send packets are pending_sends of the checkpoint, one ERROR write
       'send'      : no worker fails -> done
"""
import argparse
import asyncio
import operator
import os
import sys
from typing import Annotated, TypedDict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/oracle: common.py

import langgraph.version  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402

from common import dump_thread, finalize_db, fresh_db_at, write_expected  # noqa: E402

try:
    from langgraph.types import Send
except ImportError:
    from langgraph.constants import Send  # noqa: F401

try:
    from langgraph.types import Command, interrupt
except ImportError:  # 0.2.20
    Command = interrupt = None
from langgraph.errors import NodeInterrupt  # noqa: E402

VERSION = langgraph.version.__version__ if hasattr(langgraph.version, "__version__") else None
if VERSION is None:
    import importlib.metadata
    VERSION = importlib.metadata.version("langgraph")


class State(TypedDict):
    request: str
    draft: str
    decision: str
    log: Annotated[list, operator.add]


class SendState(TypedDict):
    items: list
    log: Annotated[list, operator.add]
    fail: bool


def draft(state):
    return {"draft": f"Plan: {state['request']}", "log": ["draft"]}


def approve(state):
    q = {"question": "Approve this action?", "draft": state["draft"]}
    if interrupt is not None:
        answer = interrupt(q)
    else:
        raise NodeInterrupt(q)
    return {"decision": "approved" if answer else "rejected", "log": ["approve"]}


def execute(state):
    return {"log": ["execute"]}


def ok(state):
    return {"log": ["ok"]}


def boom(state):
    raise ValueError("boom")


def fan(state):
    return {"log": ["fan"]}


def left(state):
    return {"log": ["left"]}


def right(state):
    return {"log": ["right"]}


def joined(state):
    return {"log": ["joined"]}


def split(state):
    return {"log": ["split"]}


def route_sends(state):
    return [Send("worker", {"item": i, "fail": state.get("fail", False), "items": [], "log": []}) for i in range(3)]


def worker(state):
    if state.get("fail") and state["item"] == 2:
        raise ValueError("worker 2 failed")
    return {"log": [f"worker {state['item']}"]}


def build(schema, nodes, edges, conditional=()):
    """A StateGraph (0.2.20's builder methods return None: no chaining)."""
    b = StateGraph(schema)
    for name, fn in nodes:
        b.add_node(name, fn)
    for src, dst in edges:
        b.add_edge(src, dst)
    for src, path, ends in conditional:
        b.add_conditional_edges(src, path, ends)
    return b


def graphs(saver):
    a = build(State, [("write_draft", draft), ("approve", approve), ("execute", execute)],
              [(START, "write_draft"), ("write_draft", "approve"), ("approve", "execute"), ("execute", END)])
    e = build(State, [("ok", ok), ("boom", boom)], [(START, "ok"), ("ok", "boom"), ("boom", END)])
    b = build(State, [("write_draft", draft), ("execute", execute)],
              [(START, "write_draft"), ("write_draft", "execute"), ("execute", END)])
    c = build(State, [("fan", fan), ("left", left), ("right", right), ("joined", joined)],
              [(START, "fan"), (["left", "right"], "joined"), ("joined", END)],
              [("fan", lambda s: ["left", "right"], ["left", "right"])])
    s = build(SendState, [("split", split), ("worker", worker)], [(START, "split"), ("worker", END)],
              [("split", route_sends, ["worker"])])
    return {"A": a.compile(checkpointer=saver), "E": e.compile(checkpointer=saver),
            "B": b.compile(checkpointer=saver, interrupt_before=["execute"]),
            "C": c.compile(checkpointer=saver), "C_before": c.compile(checkpointer=saver, interrupt_before=["joined"]),
            "S": s.compile(checkpointer=saver)}


def cfg(t):
    return {"configurable": {"thread_id": t}}


REQ = {"request": "transfer 100 EUR to Bob", "log": []}

# (thread, graph key) of every thread, in the order they are dumped
THREADS = [("paused", "A"), ("updated", "A"), ("error", "E"), ("before", "B"), ("before_done", "B"),
           ("cond_join", "C"), ("cond_join_before", "C_before"), ("send", "S"), ("send_error", "S")]
if Command is not None:
    THREADS.insert(1, ("resumed", "A"))


def run_sync(g, events):
    def attempt(label, fn, *a):
        try:
            fn(*a)
        except Exception as ex:  # noqa: BLE001 - recorded: what LangGraph raised
            events.append(f"{label}: {type(ex).__name__}: {ex}")
    attempt("paused", g["A"].invoke, REQ, cfg("paused"))
    if Command is not None:
        attempt("resumed", g["A"].invoke, REQ, cfg("resumed"))
        attempt("resumed: resume", g["A"].invoke, Command(resume=True), cfg("resumed"))
    attempt("updated", g["A"].invoke, REQ, cfg("updated"))
    g["A"].update_state(cfg("updated"), {"decision": "edited"}, as_node="write_draft")
    attempt("error", g["E"].invoke, REQ, cfg("error"))
    attempt("before", g["B"].invoke, REQ, cfg("before"))
    attempt("before_done", g["B"].invoke, REQ, cfg("before_done"))
    attempt("before_done: continue", g["B"].invoke, None, cfg("before_done"))
    attempt("cond_join", g["C"].invoke, REQ, cfg("cond_join"))
    attempt("cond_join_before", g["C_before"].invoke, REQ, cfg("cond_join_before"))
    attempt("send", g["S"].invoke, {"items": [], "log": [], "fail": False}, cfg("send"))
    attempt("send_error", g["S"].invoke, {"items": [], "log": [], "fail": True}, cfg("send_error"))


async def run_async(g, events):
    async def attempt(label, fn, *a):
        try:
            await fn(*a)
        except Exception as ex:  # noqa: BLE001
            events.append(f"{label}: {type(ex).__name__}: {ex}")
    await attempt("paused", g["A"].ainvoke, REQ, cfg("paused"))
    if Command is not None:
        await attempt("resumed", g["A"].ainvoke, REQ, cfg("resumed"))
        await attempt("resumed: resume", g["A"].ainvoke, Command(resume=True), cfg("resumed"))
    await attempt("updated", g["A"].ainvoke, REQ, cfg("updated"))
    await g["A"].aupdate_state(cfg("updated"), {"decision": "edited"}, as_node="write_draft")
    await attempt("error", g["E"].ainvoke, REQ, cfg("error"))
    await attempt("before", g["B"].ainvoke, REQ, cfg("before"))
    await attempt("before_done", g["B"].ainvoke, REQ, cfg("before_done"))
    await attempt("before_done: continue", g["B"].ainvoke, None, cfg("before_done"))
    await attempt("cond_join", g["C"].ainvoke, REQ, cfg("cond_join"))
    await attempt("cond_join_before", g["C_before"].ainvoke, REQ, cfg("cond_join_before"))
    await attempt("send", g["S"].ainvoke, {"items": [], "log": [], "fail": False}, cfg("send"))
    await attempt("send_error", g["S"].ainvoke, {"items": [], "log": [], "fail": True}, cfg("send_error"))


def dump_all(path, name, conn, saver, events, writer):
    g = graphs(saver)
    threads = [dump_thread(g[k], saver, t) for t, k in THREADS]
    in_db = {r[0] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")}
    missing = in_db - {t for t, _ in THREADS}
    if missing:
        raise RuntimeError(f"{name}: threads not dumped: {sorted(missing)}")
    write_expected(os.path.dirname(path), name, threads,
                   {"format": f"langgraph {VERSION}", "writer": writer}, events)
    finalize_db(path, conn)
    print(f"{name}: {len(threads)} threads ({writer}), {len(events)} events")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    out = os.path.abspath(ap.parse_args().out)
    os.makedirs(out, exist_ok=True)
    tag = "v" + VERSION.replace(".", "_")

    path = os.path.join(out, f"{tag}.sqlite")
    conn, saver = fresh_db_at(path)
    events = []
    run_sync(graphs(saver), events)
    dump_all(path, tag, conn, saver, events, "SqliteSaver")

    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    path = os.path.join(out, f"{tag}_async.sqlite")
    conn, _ = fresh_db_at(path)  # a fresh file with the tables; the async saver writes the rows
    conn.close()
    events = []

    async def go():
        async with aiosqlite.connect(path) as aconn:
            asaver = AsyncSqliteSaver(aconn)
            await asaver.setup()
            await run_async(graphs(asaver), events)
    asyncio.run(go())
    conn, saver = fresh_db_reopen(path)
    dump_all(path, f"{tag}_async", conn, saver, events, "AsyncSqliteSaver")


def fresh_db_reopen(path):
    import sqlite3
    from langgraph.checkpoint.sqlite import SqliteSaver
    conn = sqlite3.connect(path, check_same_thread=False)
    return conn, SqliteSaver(conn)


if __name__ == "__main__":
    main()

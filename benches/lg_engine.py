"""LangGraph side of the engine benchmark: the loop graph (graphs/loop.json semantics) for N supersteps
with SqliteSaver at a given SQLite setting. Prints one JSON line.

    python benches/lg_engine.py --n 1000 --mode full|normal|memory --db /tmp/x.sqlite [--delta]
"""
import argparse, json, operator, os, sqlite3, sys, time
from typing import Annotated, Any, TypedDict

from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    n: Any
    limit: Any
    note: Any
    log: Annotated[list, operator.add]


class DeltaState(TypedDict):
    n: Any
    limit: Any
    note: Any
    # DeltaChannel hands its reducer the step's writes as one batch: operator.add(state, [w]) appends
    # each write as one item, so the delta form writes "step n" where the add form writes ["step n"]
    # (the same final list; benches/loop_delta.json is superstep's spec of this graph)
    log: Annotated[list, DeltaChannel(operator.add, snapshot_frequency=100)]


def count(state):
    n = state["n"] + 1
    return {"n": n, "note": "at " + str(n), "log": ["step " + str(n)]}


def count_delta(state):
    n = state["n"] + 1
    return {"n": n, "note": "at " + str(n), "log": "step " + str(n)}


def route(state):
    return "again" if state["n"] < state["limit"] else "stop"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--mode", choices=["full", "normal", "memory"], required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--delta", action="store_true", help="log as DeltaChannel(operator.add, snapshot_frequency=100)")
    a = ap.parse_args()
    if a.mode == "memory":
        conn = sqlite3.connect(":memory:", check_same_thread=False)
    else:
        for s in ("", "-wal", "-shm"):
            if os.path.exists(a.db + s):
                os.remove(a.db + s)
        conn = sqlite3.connect(a.db, check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()  # journal_mode=WAL (SqliteSaver's default); synchronous stays FULL unless asked
    if a.mode == "normal":
        conn.execute("PRAGMA synchronous=NORMAL")
    txns = {"n": 0}
    put, put_writes = saver.put, saver.put_writes

    def counted_put(*args, **kw):
        txns["n"] += 1
        return put(*args, **kw)

    def counted_put_writes(*args, **kw):
        txns["n"] += 1
        return put_writes(*args, **kw)

    saver.put, saver.put_writes = counted_put, counted_put_writes
    g = (StateGraph(DeltaState if a.delta else State).add_node("count", count_delta if a.delta else count).add_edge(START, "count")
         .add_conditional_edges("count", route, {"again": "count", "stop": END}).compile(checkpointer=saver))
    cfg = {"configurable": {"thread_id": "bench"}, "recursion_limit": a.n + 10}
    t0 = time.perf_counter()
    g.invoke({"n": 0, "limit": a.n}, cfg, durability="sync")
    dt = time.perf_counter() - t0
    steps = a.n + 1  # START step + N count steps
    size = 0
    if a.mode != "memory":
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = os.path.getsize(a.db)
    print(json.dumps({"steps": steps, "seconds": dt, "txns": txns["n"], "db_bytes": size}))


if __name__ == "__main__":
    main()

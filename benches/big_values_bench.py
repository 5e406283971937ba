#!/usr/bin/env python3
"""Big values: superstep vs LangGraph's own SqliteSaver, side by side in one run (issue 15 item 6).

Three DBs, each written by real LangGraph (a StateGraph a -> b paused before b, on the pinned
venv's SqliteSaver):
  dense  node a returns a list of 15,000,000 None (15 MB: under superstep's 16 MiB preview
         threshold, but 15 M values)
  map    node a returns a dict of 2,000,000 small entries (~28 MB: over the threshold)
  writes the paused checkpoint gets 1,000,000 pending writes of task b (SqliteSaver.put_writes)

Per DB and command: wall time and peak RSS of superstep (`show --json`, `show`) and of LangGraph
(`SqliteSaver.get_tuple`, which loads and deserializes the checkpoint and its writes), each a separate
process launched through benches/rss_exec.c, so the figures are the command's own.

    PY=$(bash tests/oracle/setup_venv.sh | tail -n 1)
    cargo build --release
    python3 benches/big_values_bench.py --superstep target/release/superstep --python "$PY" [--repeat 3]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from inspect_bench import Runner, build_launcher  # noqa: E402

GEN = r'''
import operator, sqlite3, sys
from typing import Annotated, TypedDict
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import StateGraph, START, END
kind, path = sys.argv[1], sys.argv[2]

class S(TypedDict, total=False):
    l: list
    m: dict
    log: Annotated[list, operator.add]

def a(s):
    if kind == "dense":
        return {"l": [None] * 15_000_000}
    if kind == "map":
        return {"m": {f"k{i:07d}": i for i in range(2_000_000)}}
    return {"log": ["a"]}

def b(s):
    return {"log": ["b"]}

g = StateGraph(S)
g.add_node("a", a)
g.add_node("b", b)
g.add_edge(START, "a")
g.add_edge("a", "b")
g.add_edge("b", END)
conn = sqlite3.connect(path, check_same_thread=False)
saver = SqliteSaver(conn)
app = g.compile(checkpointer=saver, interrupt_before=["b"])
cfg = {"configurable": {"thread_id": "big"}}
app.invoke({"log": []}, cfg)
if kind == "writes":
    # task b's writes, as if it had written 1 M items before the process died (real put_writes)
    st = app.get_state(cfg)
    saver.put_writes(st.config, [("log", f"w{i}") for i in range(1_000_000)], st.tasks[0].id)
conn.commit()
conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
conn.execute("PRAGMA journal_mode=DELETE")
conn.close()
'''

LG = r'''
import sqlite3, sys, time
t0 = time.perf_counter()
from langgraph.checkpoint.sqlite import SqliteSaver
conn = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True, check_same_thread=False)
saver = SqliteSaver(conn)
saver.is_setup = True
t = saver.get_tuple({"configurable": {"thread_id": "big", "checkpoint_ns": ""}})
n = sum(1 for _ in t.pending_writes)
print(f"get_tuple ok, {n} pending writes, {time.perf_counter() - t0:.2f} s", file=sys.stderr)
'''


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--superstep", required=True)
    ap.add_argument("--python", required=True, help="the pinned LangGraph venv's python")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", choices=["dense", "map", "writes"], action="append")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="bigvals-")
    try:
        launcher = build_launcher(tmp)
        if not launcher:
            print("big_values_bench: needs a C compiler for benches/rss_exec.c", file=sys.stderr)
            return 1
        runner = Runner(tmp, launcher)
        lg = os.path.join(tmp, "lg.py")
        with open(lg, "w") as f:
            f.write(LG)
        print("| DB | command | median wall s (min) | peak RSS MiB | vs LangGraph get_tuple |")
        print("|---|---|---|---|---|")
        for kind in a.only or ["dense", "map", "writes"]:
            db = os.path.join(tmp, f"{kind}.sqlite")
            subprocess.run([a.python, "-c", GEN, kind, db], check=True)
            size = os.path.getsize(db) / 2**20
            cmds = [
                ("LangGraph get_tuple", [a.python, lg, db]),
                ("superstep show --json", [a.superstep, "show", "--db", db, "-t", "big", "--json"]),
                ("superstep show", [a.superstep, "show", "--db", db, "-t", "big"]),
            ]
            anchor = None
            for name, argv in cmds:
                runs = []
                for _ in range(a.repeat):
                    r = runner.run(argv, os.path.join(tmp, "out"), os.path.join(tmp, "err"))
                    if r["exit"] != 0:
                        with open(os.path.join(tmp, "err")) as f:
                            print(f"big_values_bench: FAILED: {name} on {kind}: exit {r['exit']}: {f.read()[-2000:]}", file=sys.stderr)
                        return 1
                    runs.append(r)
                wall = statistics.median(r["wall_ms"] for r in runs) / 1000
                rss = max(r["maxrss_kib"] for r in runs) / 1024
                if anchor is None:
                    anchor = wall
                ratio = f"{wall / anchor:.2f}x" if name != cmds[0][0] else "1x"
                print(f"| {kind} ({size:.0f} MiB file) | {name} | {wall:.2f} ({min(r['wall_ms'] for r in runs) / 1000:.2f}) | {rss:.0f} | {ratio} |", flush=True)
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

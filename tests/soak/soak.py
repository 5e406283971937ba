"""Concurrent writers: a real LangGraph app writes to a WAL SqliteSaver DB while superstep reads it.

For --seconds S (60 by default):
  * writer: a Python LangGraph app (StateGraph + SqliteSaver from the pinned venv) loops a counter graph
    on thread "soak" (an interrupt every 10th step, answered with Command(resume=...)) and starts a
    new short thread every second;
  * readers: `superstep threads/history/show --json` run back to back on the same file; every run
    must exit 0 with JSON, and the newest checkpoint of "soak" must never go backwards;
  * the TUI: `superstep DB --thread soak` in a real terminal (tmux), never restarted; its status line
    is captured every 0.5 s and must show new steps as they land (live refresh), never an error.
After the writer stops, the TUI must converge to the DB's final checkpoint within 5 s.
Prints one summary line and exits non-zero on any failure.

    python tests/soak/soak.py --python .venv-oracle/bin/python --superstep target/debug/superstep [--seconds 60]
"""
import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time

WRITER = r'''
import operator, sqlite3, sys, time
from typing import Annotated, TypedDict
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

class S(TypedDict):
    n: int
    note: str
    answers: Annotated[list, operator.add]

def tick(s):
    return {"n": s["n"] + 1, "note": "tick %d" % (s["n"] + 1)}

def route(s):
    return "ask" if s["n"] % 10 == 0 else "tick"

def ask(s):
    v = interrupt({"at": s["n"]})
    return {"answers": [v]}

g = StateGraph(S)
g.add_node("tick", tick)
g.add_node("ask", ask)
g.add_edge(START, "tick")
g.add_conditional_edges("tick", route, ["tick", "ask"])
g.add_edge("ask", "tick")
db, seconds = sys.argv[1], float(sys.argv[2])
conn = sqlite3.connect(db, check_same_thread=False)
saver = SqliteSaver(conn)
app = g.compile(checkpointer=saver)
end = time.time() + seconds
cfg = {"configurable": {"thread_id": "soak"}, "recursion_limit": 100}
app.invoke({"n": 0, "note": "", "answers": []}, cfg)
rounds, extra, last_extra = 0, 0, time.time()
while time.time() < end:
    rounds += 1
    app.invoke(Command(resume=rounds), cfg)
    if time.time() - last_extra > 1.0:
        extra += 1
        last_extra = time.time()
        app.invoke({"n": 0, "note": "", "answers": []}, {"configurable": {"thread_id": "extra-%d" % extra}})
    time.sleep(0.01)
print(rounds, extra)
'''


def tmux(sock, *args):
    return subprocess.run(["tmux", "-S", sock, *args], capture_output=True, text=True).stdout


def newest(db, thread):
    c = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        row = c.execute(
            "SELECT checkpoint_id, json_extract(metadata, '$.step') FROM checkpoints "
            "WHERE thread_id=? AND checkpoint_ns='' ORDER BY checkpoint_id DESC LIMIT 1",
            (thread,),
        ).fetchone()
        total = c.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0]
        return row, total
    finally:
        c.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", required=True)
    ap.add_argument("--superstep", required=True)
    ap.add_argument("--seconds", type=float, default=60)
    a = ap.parse_args()
    bin_ = os.path.abspath(a.superstep)
    work = tempfile.mkdtemp(prefix="superstep-soak-")
    db = os.path.join(work, "soak.sqlite")
    failures = []

    writer = subprocess.Popen([a.python, "-c", WRITER, db, str(a.seconds)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # wait for the thread to exist before opening the TUI on it
    t0 = time.time()
    while True:
        try:
            if newest(db, "soak")[0]:
                break
        except sqlite3.Error:
            pass
        if time.time() - t0 > 30 or writer.poll() is not None:
            print("soak: the writer never wrote:", writer.communicate()[1][-2000:])
            sys.exit(1)
        time.sleep(0.05)

    sock = os.path.join(work, "tmux.sock")
    tmux(sock, "-f", "/dev/null", "new-session", "-d", "-s", "soak", "-x", "120", "-y", "40",
         f"env -i PATH=/usr/bin:/bin TERM=xterm-256color {bin_} {db} --thread soak")
    reader_runs, reader_errors, regressions = 0, 0, 0
    steps_seen, captures = set(), 0
    last_id = ""
    next_capture = time.time()
    step_re = re.compile(r"│ step (-?\d+)")
    while writer.poll() is None:
        for args in (["threads", "--json"], ["history", "-t", "soak", "--limit", "3", "--json"],
                     ["show", "-t", "soak", "--json"]):
            r = subprocess.run([bin_, *args, "--db", db], capture_output=True, text=True)
            reader_runs += 1
            try:
                if r.returncode != 0:
                    raise ValueError(r.stderr.strip())
                out = json.loads(r.stdout)
            except ValueError as e:
                reader_errors += 1
                failures.append(f"{args[0]}: {e}")
                continue
            if args[0] == "show":
                cid = out["config"]["configurable"]["checkpoint_id"]
                if cid < last_id:
                    regressions += 1
                    failures.append(f"show went backwards: {cid} < {last_id}")
                last_id = cid
        if time.time() >= next_capture:
            next_capture += 0.5
            pane = tmux(sock, "capture-pane", "-p", "-t", "soak")
            captures += 1
            m = step_re.search(pane)
            if m:
                steps_seen.add(int(m.group(1)))
            for bad in ("malformed", "database is locked", "panicked", "corrupt"):
                if bad in pane:
                    failures.append(f"TUI shows {bad!r}:\n{pane}")
            if "superstep:" in pane and "INSPECT" not in pane:
                failures.append(f"TUI exited:\n{pane}")
                break
    wout, werr = writer.communicate()
    if writer.returncode != 0:
        failures.append("writer failed: " + werr[-2000:])
    (final_id, final_step), total = newest(db, "soak")
    # convergence: the TUI shows the final checkpoint without a restart
    t1 = time.time()
    converged = None
    while time.time() - t1 < 5:
        pane = tmux(sock, "capture-pane", "-p", "-t", "soak")
        if final_id[24:] in pane and f"step {final_step} " in pane:
            converged = time.time() - t1
            break
        time.sleep(0.1)
    m = re.search(r"live ↻(\d+)", pane)
    refreshes = int(m.group(1)) if m else 0
    if converged is None:
        failures.append(f"TUI did not converge to {final_id} step {final_step}:\n{pane}")
    tmux(sock, "send-keys", "-t", "soak", "q")
    time.sleep(0.3)
    tmux(sock, "kill-server")
    if len(steps_seen) < max(3, int(a.seconds / 4)):
        failures.append(f"live refresh showed only {len(steps_seen)} distinct steps")
    ok = sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone()[0]
    if ok != "ok":
        failures.append("integrity_check: " + ok)
    print(f"soak: {a.seconds:.0f} s, writer {wout.strip()} (rounds, extra threads), {total} checkpoints; "
          f"readers {reader_runs} runs, {reader_errors} errors, {regressions} regressions; "
          f"TUI {captures} captures, {len(steps_seen)} distinct steps shown, {refreshes} live refreshes, "
          f"converged in {converged if converged is None else round(converged, 2)} s; "
          f"{len(failures)} failures")
    for f in failures[:5]:
        print("  -", f[:3000])
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

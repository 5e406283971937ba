#!/usr/bin/env python3
"""Issue 21's stress checks of the bridge, against real LangGraph.

writers: two superstep processes and one plain LangGraph process step one thread at once, round
after round (`--rounds`). Each superstep process is `superstep continue hostile.py:counter -t t
--steps 1`, tagged through `--config {"metadata": {"writer": ...}}` (LangGraph copies a run's
metadata into every checkpoint it writes); the LangGraph process is a loop of
`graph.invoke(None, config, interrupt_after="*")` on SqliteSaver, started at a random moment of the
round. Checked at the end, from the file's rows:
  * every superstep process either said it stepped and its checkpoint is in the file (exactly one
    checkpoint with its tag, the child of the head it read), or exited 2 naming the writer that
    moved the thread on — never "done" without a row;
  * no silent fork by superstep: wherever two checkpoints share a parent, every one inserted after
    the first (SQLite's rowid order: the order of the commits, not of the time-ordered ids, which
    are made before the save) is plain LangGraph's — it takes no lock, so a fork is LangGraph's own
    behaviour when another writer moved the thread on under it; superstep checks the head under the
    store's write lock and refuses.

orphans: `--kills` runs of `superstep run` on a looping graph, each sent SIGTERM at a random moment
(interpreter start, import, stepping, shutdown); within 3 s of superstep's exit no process it
started is alive (found by a marker in the environment superstep's children inherit), and
superstep's temp directory (TMPDIR) is empty.

    python tests/stress/writers.py --superstep BIN --python PY --rounds 100 --kills 50

Prints one line per check and exits 1 on the first violation.
"""
import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
GRAPHS = os.path.abspath(os.path.join(HERE, "..", "bridge", "graphs"))
COUNTER = os.path.join(GRAPHS, "hostile.py") + ":counter"

LANGGRAPH_LOOP = r"""
import random, sqlite3, sys, time
sys.path.insert(0, sys.argv[2])
import hostile
from langgraph.checkpoint.sqlite import SqliteSaver
conn = sqlite3.connect(sys.argv[1], check_same_thread=False, timeout=30)
graph = hostile.counter.copy(update={"checkpointer": SqliteSaver(conn)})
for line in sys.stdin:
    rnd, delay = line.split()
    time.sleep(float(delay))
    cfg = {"configurable": {"thread_id": "t"}, "metadata": {"writer": f"lg-r{rnd}"}}
    try:
        graph.invoke(None, cfg, interrupt_after="*")
        print("ok", flush=True)
    except Exception as e:  # a locked file: LangGraph's own error, reported, not a failure here
        print("error", type(e).__name__, e, flush=True)
"""


def fail(msg):
    print(f"stress: FAIL: {msg}", flush=True)
    sys.exit(1)


def superstep(a, db, *args):
    return [a.superstep, "--python", a.python, "--db", db, *args]


def rows(db):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        out = con.execute(
            "SELECT checkpoint_id, parent_checkpoint_id, metadata FROM checkpoints "
            "WHERE thread_id = 't' AND checkpoint_ns = '' ORDER BY rowid"
        ).fetchall()
    finally:
        con.close()
    return [(cid, parent, json.loads(md).get("writer", "")) for cid, parent, md in out]


def writers(a, work):
    db = os.path.join(work, "w.sqlite")
    tag = lambda w: json.dumps({"metadata": {"writer": w}})
    first = subprocess.run(
        superstep(a, db, "run", COUNTER, "-t", "t", "--input", '{"n": 0, "stop": 1000000}',
                  "--steps", "1", "--config", tag("setup")),
        capture_output=True, text=True, timeout=120,
    )
    if first.returncode != 0:
        fail(f"setup run: exit {first.returncode}: {first.stderr}")
    lg = subprocess.Popen(
        [a.python, "-c", LANGGRAPH_LOOP, db, GRAPHS],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    stepped, refused, lg_ok, lg_err, reasons = [], 0, 0, 0, set()
    rng = random.Random(a.seed)
    try:
        for r in range(a.rounds):
            procs = {}
            for w in ("ss1", "ss2"):
                procs[f"{w}-r{r}"] = subprocess.Popen(
                    superstep(a, db, "continue", COUNTER, "-t", "t", "--steps", "1",
                              "--config", tag(f"{w}-r{r}")),
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                )
            # the LangGraph step lands somewhere in the superstep processes' start and step
            lg.stdin.write(f"{r} {rng.uniform(0, a.spread):.3f}\n")
            lg.stdin.flush()
            for w, p in procs.items():
                try:
                    out, err = p.communicate(timeout=120)
                except subprocess.TimeoutExpired:
                    p.kill()
                    fail(f"round {r}: {w} still running after 120 s")
                if p.returncode == 0:
                    stepped.append(w)
                elif p.returncode == 2 and ("moved on while" in err or "lock" in err):
                    refused += 1
                    reasons.add("moved on" if "moved on while" in err else "locked")
                else:
                    fail(f"round {r}: {w} exit {p.returncode}: {err.strip()[-400:]}")
            line = lg.stdout.readline()
            if not line:
                fail(f"round {r}: the LangGraph process died: {lg.stderr.read()[-400:]}")
            if line.startswith("ok"):
                lg_ok += 1
            else:
                lg_err += 1
    finally:
        lg.stdin.close()
        lg.wait(timeout=30)
    cps = rows(db)
    written = {}
    for cid, parent, w in cps:
        written.setdefault(w, []).append((cid, parent))
    for w in stepped:
        mine = written.get(w, [])
        if len(mine) != 1:
            fail(f"{w} said it stepped; the file holds {len(mine)} checkpoints tagged {w}")
    for w, mine in written.items():
        if w.startswith("ss") and w not in stepped:
            fail(f"{w} was refused, yet the file holds {len(mine)} checkpoints tagged {w}")
    children = {}
    for cid, parent, w in cps:
        children.setdefault(parent, []).append((cid, w))
    forks, forks_lg = 0, 0
    for parent, kids in children.items():
        if parent is None or len(kids) < 2:
            continue
        forks += 1
        forks_lg += all(w.startswith("lg") for _, w in kids[1:])
        for cid, w in kids[1:]:
            if not w.startswith("lg"):
                fail(f"silent fork by {w}: {cid} was saved as another child of {parent} after {kids[0]}")
    print(
        f"stress writers: {a.rounds} rounds, {len(cps)} checkpoints; superstep {len(stepped)} steps "
        f"saved and read back, {refused} refused ({', '.join(sorted(reasons)) or '-'}), 0 unsaved; LangGraph {lg_ok} steps, "
        f"{lg_err} errors; {forks} forks, all by plain LangGraph (it takes no lock), none by superstep",
        flush=True,
    )


def alive_with(marker):
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


def orphans(a, work):
    rng = random.Random(a.seed + 1)
    tmp = os.path.join(work, "tmp")
    os.makedirs(tmp)
    worst = 0.0
    for i in range(a.kills):
        db = os.path.join(work, f"k{i}.sqlite")
        marker = f"SUPERSTEP_STRESS_MARK={uuid.uuid4().hex}"
        env = dict(os.environ, TMPDIR=tmp, SUPERSTEP_STRESS_MARK=marker.split("=", 1)[1])
        p = subprocess.Popen(
            superstep(a, db, "run", COUNTER, "-t", "t", "--input", '{"n": 0, "stop": 300}'),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
        )
        time.sleep(rng.uniform(0, a.kill_window))
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            fail(f"kill {i}: superstep did not exit within 30 s of SIGTERM")
        gone = time.monotonic()
        while alive_with(marker):
            if time.monotonic() - gone > 3.0:
                fail(f"kill {i}: processes outlived superstep by 3 s: {alive_with(marker)}")
            time.sleep(0.05)
        worst = max(worst, time.monotonic() - gone)
        left = os.listdir(tmp)
        if left:
            fail(f"kill {i}: left in TMPDIR: {left}")
    print(
        f"stress orphans: {a.kills} runs sent SIGTERM at a random moment (0-{a.kill_window:g} s): "
        f"no process outlived superstep (longest wait {worst:.2f} s, limit 3 s), TMPDIR empty",
        flush=True,
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--superstep", required=True)
    ap.add_argument("--python", required=True)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--kills", type=int, default=50)
    ap.add_argument("--spread", type=float, default=2.5, help="the LangGraph step's delay, s (random up to)")
    ap.add_argument("--kill-window", type=float, default=4.0)
    ap.add_argument("--seed", type=int, default=21)
    a = ap.parse_args()
    a.superstep = os.path.abspath(a.superstep)
    with tempfile.TemporaryDirectory() as work:
        if a.rounds:
            writers(a, work)
        if a.kills:
            orphans(a, work)


if __name__ == "__main__":
    main()

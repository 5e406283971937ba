"""superstep on a production-size PostgresSaver store, side by side with PostgresSaver itself.

    python tests/postgres/scale.py --superstep target/release/superstep --url postgresql://… \
        [--threads 10000] [--admin-url postgresql://postgres@/postgres?host=DIR&port=P --log DIR/server.log]

1. Real LangGraph (StateGraph + PostgresSaver) writes one thread of 25 checkpoints (a counter and
   a growing list, so every step stores blobs and writes). Its rows are copied in SQL to THREADS
   threads (`thread-00001` …): the rows of real LangGraph, at scale. ANALYZE, as autovacuum would.
2. One run, each timed as the median of 3: `superstep threads --json` (every thread, paged),
   `superstep history --json` of one thread, and from Python `PostgresSaver.list(config)` for the
   same thread plus the set of thread ids from `PostgresSaver.list(None)` (PostgresSaver has no
   thread listing: listing every checkpoint is how Python finds threads).
3. With --admin-url/--log: superstep runs once more with auto_explain logging the plan of every
   statement it runs (a superuser session option), and the plans are searched for a sequential scan
   of checkpoint_blobs (or checkpoints / checkpoint_writes): there must be none.
Prints a table and one JSON line; exits 1 if a full scan is found or a count is wrong.
"""
import argparse
import json
import operator
import os
import statistics
import subprocess
import sys
import time
from typing import Annotated, TypedDict

import psycopg
from psycopg.rows import dict_row
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.graph import END, START, StateGraph

STEPS = 25


class State(TypedDict):
    n: int
    log: Annotated[list[str], operator.add]


def step(s):
    return {"n": s["n"] + 1, "log": [f"step {s['n']}"]}


def graph(saver):
    return (StateGraph(State).add_node("step", step).add_edge(START, "step")
            .add_conditional_edges("step", lambda s: "step" if s["n"] < STEPS - 2 else END, ["step", END])
            .compile(checkpointer=saver))


def median_time(fn, n=3):
    ts, out = [], None
    for _ in range(n):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), out


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd[:3])} failed: {r.stderr}")
    return r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--superstep", required=True)
    ap.add_argument("--url", required=True, help="a database to fill (its checkpoint tables are replaced)")
    ap.add_argument("--threads", type=int, default=10000)
    ap.add_argument("--admin-url", help="a superuser URL on the same database (for auto_explain)")
    ap.add_argument("--log", help="the server's log file (auto_explain writes there)")
    a = ap.parse_args()

    with psycopg.Connection.connect(a.url, autocommit=True, prepare_threshold=0, row_factory=dict_row) as conn:
        conn.execute("DROP TABLE IF EXISTS checkpoints, checkpoint_blobs, checkpoint_writes, checkpoint_migrations")
        saver = PostgresSaver(conn)
        saver.setup()
        t0 = time.perf_counter()
        graph(saver).invoke({"n": 0, "log": []}, {"configurable": {"thread_id": "template"}}, durability="sync")
        per = conn.execute("SELECT count(*) AS n FROM checkpoints WHERE thread_id = 'template'").fetchone()["n"]
        if per != STEPS:
            sys.exit(f"the template thread has {per} checkpoints, expected {STEPS}")
        for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
            cols = [r["column_name"] for r in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = %s ORDER BY ordinal_position",
                (table,)).fetchall()]
            rest = ", ".join(c for c in cols if c != "thread_id")
            conn.execute(
                f"INSERT INTO {table} (thread_id, {rest}) SELECT 'thread-' || lpad(g::text, 5, '0'), {rest} "
                f"FROM {table}, generate_series(1, %s) g WHERE thread_id = 'template'", (a.threads - 1,))
        conn.execute("ANALYZE checkpoints, checkpoint_blobs, checkpoint_writes")
        fill = time.perf_counter() - t0
        counts = {t: conn.execute(f"SELECT count(*) AS n FROM {t}").fetchone()["n"]
                  for t in ("checkpoints", "checkpoint_blobs", "checkpoint_writes")}
        target = "thread-%05d" % (a.threads // 2)
        cfg = {"configurable": {"thread_id": target}}

        t_threads, out = median_time(lambda: run([a.superstep, "threads", "--db", a.url, "--json"]))
        n_threads = len(json.loads(out))
        t_history, out = median_time(lambda: run([a.superstep, "history", "--db", a.url, "-t", target, "--json"]))
        n_history = len(json.loads(out))
        t_show, _ = median_time(lambda: run([a.superstep, "show", "--db", a.url, "-t", target, "--json"]))
        t_py_list, tuples = median_time(lambda: list(saver.list(cfg)))
        t_py_all, ids = median_time(lambda: {c.config["configurable"]["thread_id"] for c in saver.list(None)}, n=1)
        t_py_get, _ = median_time(lambda: saver.get_tuple(cfg))

    ok = n_threads == a.threads and n_history == STEPS == len(tuples) and len(ids) == a.threads
    scans = None
    if a.admin_url and a.log:
        start = os.path.getsize(a.log)
        env = dict(os.environ, PGOPTIONS="-c session_preload_libraries=auto_explain "
                   "-c auto_explain.log_min_duration=0 -c auto_explain.log_nested_statements=on")
        for cmd in (["threads", "--json"], ["history", "-t", target, "--json"], ["show", "-t", target, "--json"]):
            run([a.superstep, cmd[0], "--db", a.admin_url, *cmd[1:]], env=env)
        with open(a.log, encoding="utf-8", errors="replace") as f:
            f.seek(start)
            plans = f.read()
        n_plans = plans.count("duration:")
        scans = sorted({line.strip() for line in plans.splitlines()
                        if "Seq Scan on checkpoint" in line})
        if n_plans == 0:
            sys.exit("auto_explain logged no plan: is session_preload_libraries allowed for this role?")
        ok = ok and not scans

    rows = [
        ("superstep threads --json (all threads, paged)", t_threads, f"{n_threads} threads"),
        ("Python: {thread ids of PostgresSaver.list(None)}", t_py_all, f"{len(ids)} threads"),
        ("superstep history --json (one thread)", t_history, f"{n_history} checkpoints"),
        ("Python: list(PostgresSaver.list(config))", t_py_list, f"{len(tuples)} checkpoints"),
        ("superstep show --json (one thread)", t_show, "1 snapshot"),
        ("Python: PostgresSaver.get_tuple(config)", t_py_get, "1 tuple"),
    ]
    print(f"store: {counts['checkpoints']:,} checkpoints, {counts['checkpoint_blobs']:,} blobs, "
          f"{counts['checkpoint_writes']:,} writes in {a.threads:,} threads (filled in {fill:.1f} s)")
    print("| what | seconds | rows |\n|---|---:|---|")
    for what, t, n in rows:
        print(f"| {what} | {t:.3f} | {n} |")
    if scans is not None:
        print(f"auto_explain: {n_plans} plans logged; sequential scans of checkpoint tables: {scans or 'none'}")
    print(json.dumps({"threads": a.threads, "counts": counts, "ok": ok, "full_scans": scans,
                      "seconds": {w: round(t, 4) for w, t, _ in rows}}))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

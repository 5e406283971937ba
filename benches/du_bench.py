#!/usr/bin/env python3
"""`superstep du` side by side with the straightforward Python way, on one store, in one run.

    PY=$(bash tests/oracle/setup_venv.sh | tail -n 1)          # or the -pg venv for Postgres
    # a SqliteSaver file of a few GB, written by real LangGraph (12 threads x 500 agent steps)
    $PY benches/du_bench.py gen-sqlite --out /tmp/du.sqlite [--threads 12 --steps 500 --size 2048]
    # a PostgresSaver database with many threads: one thread written by real LangGraph, its rows
    # copied in SQL to --threads threads (as tests/postgres/scale.py does)
    $PY benches/du_bench.py gen-pg --url postgresql://.../du [--threads 100000 --steps 3]
    cargo build --release
    $PY benches/du_bench.py run --db /tmp/du.sqlite --superstep target/release/superstep

`run` times (wall, peak RSS via /usr/bin/time) `superstep du --db DB --json` and the Python way:
iterate `checkpointer.list(None)` and measure every channel value and pending write with the
saver's serializer (`len(serde.dumps_typed(v)[1])`), adding up by thread and channel — what users
do by hand today. The page cache is warmed first (the file read once) so both read from memory.
Both sides must agree on the counts (checkpoints, writes) and, on SQLite, on every channel's
stored bytes. Prints a markdown table and one JSON line.
"""
import argparse
import json
import os
import subprocess
import sys
import time
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def gen_sqlite(a):
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    from du_graph import build

    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(a.out + suffix):
            os.remove(a.out + suffix)
    conn = sqlite3.connect(a.out, check_same_thread=False)
    conn.execute("PRAGMA synchronous=OFF")
    saver = SqliteSaver(conn)
    saver.setup()
    g = build(saver)
    t0 = time.time()
    for i in range(a.threads):
        g.invoke({"n": 0, "steps": a.steps, "size": a.size},
                 {"configurable": {"thread_id": f"agent-{i:03d}"}, "recursion_limit": a.steps + 10},
                 durability="sync")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    print(f"{a.out}: {a.threads} threads x {a.steps} steps of {a.size} B messages, "
          f"{os.path.getsize(a.out) / 2**30:.2f} GiB, written in {time.time() - t0:.0f} s")


def gen_pg(a):
    import psycopg

    from langgraph.checkpoint.postgres import PostgresSaver

    from du_graph import build

    with psycopg.connect(a.url, autocommit=True) as c:
        for t in ("checkpoint_writes", "checkpoint_blobs", "checkpoints"):
            c.execute(f"DROP TABLE IF EXISTS {t}")
        c.execute("DROP TABLE IF EXISTS checkpoint_migrations")
    t0 = time.time()
    with PostgresSaver.from_conn_string(a.url) as saver:
        saver.setup()
        build(saver).invoke({"n": 0, "steps": a.steps, "size": a.size},
                            {"configurable": {"thread_id": "seed"}}, durability="sync")
    with psycopg.connect(a.url, autocommit=True) as c:
        series = f"generate_series(1, {a.threads}) i"
        name = "'thread-' || lpad(i::text, 6, '0')"
        c.execute(f"INSERT INTO checkpoints SELECT {name}, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints, {series} WHERE thread_id = 'seed'")
        c.execute(f"INSERT INTO checkpoint_blobs SELECT {name}, checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs, {series} WHERE thread_id = 'seed'")
        c.execute(f"INSERT INTO checkpoint_writes SELECT {name}, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path FROM checkpoint_writes, {series} WHERE thread_id = 'seed'")
        for t in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
            c.execute(f"DELETE FROM {t} WHERE thread_id = 'seed'")
            c.execute(f"VACUUM ANALYZE {t}")
        n = c.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0]
        size = c.execute("SELECT pg_database_size(current_database())").fetchone()[0]
    print(f"{a.threads} threads, {n} checkpoints, {size / 2**20:.0f} MiB, made in {time.time() - t0:.0f} s")


def baseline(a):
    """The Python way: list() every checkpoint, measure values and writes with the serializer."""
    if a.db.startswith("postgres"):
        from langgraph.checkpoint.postgres import PostgresSaver
        cm = PostgresSaver.from_conn_string(a.db)
        saver = cm.__enter__()
    else:
        import sqlite3

        from langgraph.checkpoint.sqlite import SqliteSaver
        saver = SqliteSaver(sqlite3.connect(a.db, check_same_thread=False))
    by_thread, by_channel, writes_by_channel = defaultdict(int), defaultdict(int), defaultdict(int)
    checkpoints = writes = 0
    for tup in saver.list(None):
        checkpoints += 1
        tid = tup.config["configurable"]["thread_id"]
        for k, v in tup.checkpoint["channel_values"].items():
            n = len(saver.serde.dumps_typed(v)[1])
            by_channel[k] += n
            by_thread[tid] += n
        for _task, ch, v in tup.pending_writes or []:
            writes += 1
            n = len(saver.serde.dumps_typed(v)[1])
            writes_by_channel[ch] += n
            by_thread[tid] += n
    print(json.dumps({"checkpoints": checkpoints, "writes": writes, "channels": by_channel,
                      "write_channels": writes_by_channel, "threads": len(by_thread),
                      "top": sorted(by_thread.items(), key=lambda kv: -kv[1])[:3]}))


def timed(cmd):
    """(stdout, wall s, peak RSS MiB) of a command, measured by /usr/bin/time."""
    t = subprocess.run(["/usr/bin/time", "-f", "%e %M", *cmd], capture_output=True, text=True)
    if t.returncode != 0:
        sys.exit(f"{cmd[0]} failed: {t.stderr[-2000:]}")
    wall, rss = t.stderr.strip().splitlines()[-1].split()
    return t.stdout, float(wall), int(rss) / 1024


def run(a):
    if not a.db.startswith("postgres"):
        with open(a.db, "rb") as f:  # warm the page cache: both sides read from memory
            while f.read(1 << 24):
                pass
        size = f"{os.path.getsize(a.db) / 2**30:.2f} GiB file"
    else:
        size = "Postgres"
    ours, ss_wall, ss_rss = timed([a.superstep, "du", "--db", a.db, "--json"])
    theirs, py_wall, py_rss = timed([sys.executable, __file__, "baseline", "--db", a.db])
    du, py = json.loads(ours), json.loads(theirs.strip().splitlines()[-1])
    checks = {
        "checkpoints": (du["totals"]["checkpoints"], py["checkpoints"]),
        "writes": (du["totals"]["writes"], py["writes"]),
        "threads": (du["totals"]["threads"], py["threads"]),
    }
    if not a.db.startswith("postgres"):
        for c in du["channels"]:
            if c["stored_bytes"]:
                checks[f"channel {c['channel']} bytes"] = (c["stored_bytes"], py["channels"].get(c["channel"], 0))
    bad = {k: v for k, v in checks.items() if v[0] != v[1]}
    print(f"| {size}, {du['totals']['threads']} threads, {du['totals']['checkpoints']} checkpoints | wall | peak RSS |")
    print("|---|---|---|")
    print(f"| superstep du --json | {ss_wall:.2f} s | {ss_rss:.0f} MiB |")
    print(f"| Python: list() + serde.dumps_typed sizes | {py_wall:.2f} s | {py_rss:.0f} MiB |")
    print(f"| ratio | {py_wall / max(ss_wall, 0.01):.1f}x | {py_rss / max(ss_rss, 1):.1f}x |")
    print(json.dumps({"db": size, "superstep": {"wall_s": ss_wall, "rss_mib": round(ss_rss)},
                      "python": {"wall_s": py_wall, "rss_mib": round(py_rss)},
                      "agree": not bad, "checks": checks}))
    if bad:
        sys.exit(f"du_bench: FAILED: the two sides disagree: {bad}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen-sqlite")
    g.add_argument("--out", required=True)
    g.add_argument("--threads", type=int, default=12)
    g.add_argument("--steps", type=int, default=500)
    g.add_argument("--size", type=int, default=2048)
    p = sub.add_parser("gen-pg")
    p.add_argument("--url", required=True)
    p.add_argument("--threads", type=int, default=100_000)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--size", type=int, default=200)
    b = sub.add_parser("baseline")
    b.add_argument("--db", required=True)
    r = sub.add_parser("run")
    r.add_argument("--db", required=True)
    r.add_argument("--superstep", required=True)
    a = ap.parse_args()
    {"gen-sqlite": gen_sqlite, "gen-pg": gen_pg, "baseline": baseline, "run": run}[a.cmd](a)


if __name__ == "__main__":
    main()

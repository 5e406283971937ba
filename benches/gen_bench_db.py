#!/usr/bin/env python3
"""Build a benchmark checkpoint DB in real LangGraph SqliteSaver layout by running real LangGraph.

    <venv python> benches/gen_bench_db.py --out /tmp/bench.sqlite [--threads 1000] [--steps 25]

Every thread runs the looping counter graph of bench_graph.py once (durability="sync", so the DB
contents are deterministic apart from ids/timestamps) and ends up with at least --steps checkpoints
(input checkpoint + START checkpoint + one per loop iteration). The file is created fresh (old file and
-wal/-shm/-journal removed) and the WAL is folded back at the end, so FILE is self-contained.
Needs the venv made by tests/oracle/setup_venv.sh (langgraph, langgraph-checkpoint-sqlite).
"""
from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402

from bench_graph import build_graph, thread_id  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="DB file to (re)create")
    ap.add_argument("--threads", type=int, default=1000, help="number of threads (default 1000)")
    ap.add_argument("--steps", type=int, default=25,
                    help="minimum checkpoints per thread (default 25; must be >= 3)")
    args = ap.parse_args()
    if args.threads < 1 or args.steps < 3:
        ap.error("--threads must be >= 1 and --steps >= 3")

    # loops + 2 checkpoints per thread (input @ -1, START @ 0, one per loop); one extra loop so the
    # count is comfortably above --steps (default: 24 loops -> 26 checkpoints).
    loops = args.steps - 1
    expected_per_thread = loops + 2

    out = os.path.abspath(args.out)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(out + suffix):
            os.remove(out + suffix)

    conn = sqlite3.connect(out, check_same_thread=False)
    # No fsync per commit: this is a scratch file being built, and it is folded and closed cleanly at the
    # end. synchronous is a connection setting, not stored in the file, so the layout is unchanged.
    conn.execute("PRAGMA synchronous=OFF")
    saver = SqliteSaver(conn)
    saver.setup()
    graph = build_graph(saver, loops=loops)

    t0 = time.perf_counter()
    report_every = max(1, args.threads // 10)
    for i in range(args.threads):
        tid = thread_id(i, args.threads)
        config = {"configurable": {"thread_id": tid}, "recursion_limit": loops + 10}
        graph.invoke({"n": 0, "log": [], "note": f"thread {tid}"}, config, durability="sync")
        if (i + 1) % report_every == 0:
            el = time.perf_counter() - t0
            print(f"  {i + 1}/{args.threads} threads, {el:.1f} s", file=sys.stderr, flush=True)
    gen_s = time.perf_counter() - t0

    # Fold the WAL into the main file and leave a single self-contained file (rollback journal mode).
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    mode = conn.execute("PRAGMA journal_mode=DELETE").fetchone()[0]
    if mode.lower() != "delete":
        raise SystemExit(f"{out}: could not switch journal_mode to DELETE (got {mode})")

    n_threads, n_ckpts = conn.execute(
        "SELECT COUNT(DISTINCT thread_id), COUNT(*) FROM checkpoints").fetchone()
    n_writes = conn.execute("SELECT COUNT(*) FROM writes").fetchone()[0]
    per_thread = conn.execute(
        "SELECT MIN(c), MAX(c) FROM (SELECT COUNT(*) AS c FROM checkpoints GROUP BY thread_id)").fetchone()
    conn.close()
    for suffix in ("-wal", "-shm"):
        if os.path.exists(out + suffix):
            os.remove(out + suffix)

    size = os.path.getsize(out)
    print(f"db:          {out}")
    print(f"threads:     {n_threads}")
    print(f"checkpoints: {n_ckpts} (per thread: min {per_thread[0]}, max {per_thread[1]})")
    print(f"writes:      {n_writes}")
    print(f"size:        {size} bytes ({size / 2**20:.1f} MiB)")
    print(f"generation:  {gen_s:.1f} s ({n_ckpts / gen_s:.0f} checkpoints/s)")
    if n_threads != args.threads or per_thread[0] < args.steps or per_thread[0] != expected_per_thread:
        print(f"error: expected {args.threads} threads with {expected_per_thread} (>= {args.steps}) "
              f"checkpoints each", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""LangGraph side of the inspector benchmark: what `superstep threads|history|show --json` does,
done with LangGraph's own Python API.

    <venv python> benches/lg_inspect.py MODE DB [THREAD]

MODE:
  noop     Python start-up + `import langgraph...` + the graph module, then exit (the fixed cost).
  threads  Distinct thread ids (with checkpoint count and latest checkpoint id) from
           `SqliteSaver.list(None)`. LangGraph has no list-threads API; listing every checkpoint and
           grouping by thread id is the only way through the public API (it loads every checkpoint).
  history  `list(graph.get_state_history(config))` (newest first).
  show     `graph.get_state(config)` (latest checkpoint, live view).

history / show use the same graph definition that wrote the DB (bench_graph.py), compiled with a
SqliteSaver. The DB is opened read-only (`mode=ro`); SqliteSaver.setup() would switch the file to WAL
mode (a write), so it is skipped (`saver.is_setup = True`): the tables already exist.

stdout: the result as indented JSON (json.dumps(..., indent=2, default=str)) so the output work is
comparable with superstep's --json. stderr (one line): `import_ms=... compile_ms=... api_ms=...
dump_ms=... items=N`, where api_ms is the in-process time of just the LangGraph API call(s).
"""
import time

_T0 = time.perf_counter()

import json  # noqa: E402
import os  # noqa: E402
import sqlite3  # noqa: E402
import sys  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402

from bench_graph import build_graph  # noqa: E402  (imports langgraph.graph)

IMPORT_MS = (time.perf_counter() - _T0) * 1000.0


def snapshot_view(s):
    """A JSON-able dict of a StateSnapshot, field for field like superstep's --json."""
    return {
        "config": s.config,
        "parent_config": s.parent_config,
        "created_at": s.created_at,
        "metadata": s.metadata,
        "values": s.values,
        "next": list(s.next),
        "tasks": [
            {"id": t.id, "name": t.name, "path": list(t.path), "error": t.error,
             "interrupts": [{"value": i.value, "id": i.id} for i in t.interrupts],
             "state": t.state, "result": t.result}
            for t in s.tasks
        ],
        "interrupts": [{"value": i.value, "id": i.id} for i in s.interrupts],
    }


def main(argv) -> int:
    if len(argv) < 2 or argv[0] not in ("noop", "threads", "history", "show"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, db = argv[0], argv[1]
    thread = argv[2] if len(argv) > 2 else None
    if mode == "noop":
        print(f"import_ms={IMPORT_MS:.2f} compile_ms=0 api_ms=0 dump_ms=0 items=0", file=sys.stderr)
        return 0
    if mode in ("history", "show") and not thread:
        print(f"lg_inspect: {mode} needs THREAD", file=sys.stderr)
        return 2
    if not os.path.exists(db):
        print(f"lg_inspect: no such file {db}", file=sys.stderr)
        return 2

    t = time.perf_counter()
    conn = sqlite3.connect(f"file:{os.path.abspath(db)}?mode=ro", uri=True, check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.is_setup = True  # read-only: the tables exist; setup() would set journal_mode=WAL (a write)
    graph = build_graph(saver) if mode != "threads" else None
    compile_ms = (time.perf_counter() - t) * 1000.0

    config = {"configurable": {"thread_id": thread}}
    t = time.perf_counter()
    if mode == "threads":
        threads = {}
        for ct in saver.list(None):  # newest first: the first tuple seen per thread is its latest
            c = ct.config["configurable"]
            if c.get("checkpoint_ns", ""):
                continue
            e = threads.get(c["thread_id"])
            if e is None:
                threads[c["thread_id"]] = {"thread_id": c["thread_id"], "checkpoints": 1,
                                           "latest_checkpoint_id": c["checkpoint_id"]}
            else:
                e["checkpoints"] += 1
        result = sorted(threads.values(), key=lambda e: e["thread_id"])
    elif mode == "history":
        result = list(graph.get_state_history(config))
    else:
        result = graph.get_state(config)
    api_ms = (time.perf_counter() - t) * 1000.0

    t = time.perf_counter()
    if mode == "history":
        out = [snapshot_view(s) for s in result]
    elif mode == "show":
        out = snapshot_view(result)
    else:
        out = result
    sys.stdout.write(json.dumps(out, indent=2, default=str))
    sys.stdout.write("\n")
    sys.stdout.flush()
    dump_ms = (time.perf_counter() - t) * 1000.0
    items = len(out) if isinstance(out, list) else 1
    conn.close()
    print(f"import_ms={IMPORT_MS:.2f} compile_ms={compile_ms:.2f} api_ms={api_ms:.2f} "
          f"dump_ms={dump_ms:.2f} items={items}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

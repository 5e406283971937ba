"""After `superstep prune`, real LangGraph reads the pruned store as it read the store before.

    python verify_pruned.py --before STORE --after PRUNED --expected doctor.json [--out result.json]

STORE is gen_store.py's store, PRUNED a pruned copy of it (SqliteSaver files or PostgresSaver URLs),
doctor.json what gen_store.py recorded from STORE. With graphs/v1 on PRUNED, for every thread and
namespace still there:
  * get_state == the state recorded before (values, next, tasks, interrupts, metadata, config,
    parent_config, pending writes: tests/oracle/common.py's snapshot_json);
  * get_state_history == the history recorded before, less the checkpoints pruned, in order;
and every parked checkpoint still there (gen_store.py's `parked`: a thread's newest, or a fork tip)
is resumed on fresh copies of STORE and of PRUNED (Command(resume="yes"), or invoke(None) past a
breakpoint): the outcomes (values, next, interrupts; or the exception) must be equal. Prints a
summary; exits 1 on any difference.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "oracle"))
sys.path.insert(0, os.path.join(HERE, "graphs"))

import logging  # noqa: E402

from common import pg_saver, snapshot_json, view  # noqa: E402
from check_oracle import copy_store  # noqa: E402
from langgraph.types import Command  # noqa: E402
from shape import build  # noqa: E402

logging.getLogger("langgraph.checkpoint.serde.jsonplus").setLevel(logging.ERROR)


def open_saver(db):
    if db.startswith("postgres"):
        return pg_saver(db, setup=False)
    import sqlite3
    from langgraph.checkpoint.sqlite import SqliteSaver
    conn = sqlite3.connect(db, check_same_thread=False)
    return conn, SqliteSaver(conn)


def rows(conn, q, params):
    if hasattr(conn, "cursor") and not hasattr(conn, "execute") or "psycopg" in type(conn).__module__:
        from psycopg.rows import tuple_row
        return conn.cursor(row_factory=tuple_row).execute(q.replace("?", "%s"), params).fetchall()
    return conn.execute(q, params).fetchall()


def resume(db, p, tag):
    conn, saver = open_saver(copy_store(db, tag))
    g = build(checkpointer=saver)
    cfg = {"configurable": {"thread_id": p["thread_id"]}}
    if p["checkpoint_id"]:
        cfg["configurable"]["checkpoint_id"] = p["checkpoint_id"]
    try:
        g.invoke(Command(resume="yes") if p["resume"] == "answer" else None, cfg, durability="sync")
        st = g.get_state({"configurable": {"thread_id": p["thread_id"]}})
        out = {"values": view(st.values), "next": list(st.next),
               "interrupts": [view(i.value) for i in st.interrupts]}
    except Exception as e:  # noqa: BLE001 - the outcome is what LangGraph does
        out = {"error": f"{type(e).__name__}: {e}"}
    conn.close()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--expected", required=True)
    ap.add_argument("--out")
    a = ap.parse_args()
    exp = json.load(open(a.expected))
    conn, saver = open_saver(a.after)
    g = build(checkpointer=saver)
    problems, counts = [], {"namespaces": 0, "states": 0, "history": 0, "gone": 0, "resumed": 0}
    kept_ids = {}
    for t in exp["threads"]:
        tid, ns = t["thread_id"], t["checkpoint_ns"]
        kept = [r[0] for r in rows(conn, "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?",
                                   (tid, ns))]
        kept_ids[(tid, ns)] = set(kept)
        if not kept:
            counts["gone"] += 1
            continue
        counts["namespaces"] += 1
        cfg = {"configurable": {"thread_id": tid, "checkpoint_ns": ns}}
        state = snapshot_json(g.get_state(cfg), saver)
        if state != t["state"]:
            problems.append(f"{tid} {ns!r}: get_state differs")
        counts["states"] += 1
        history = [snapshot_json(s, saver) for s in g.get_state_history(cfg)]
        want = [h for h in t["history"] if h["config"]["configurable"]["checkpoint_id"] in kept_ids[(tid, ns)]]
        if history != want:
            problems.append(f"{tid} {ns!r}: get_state_history differs ({len(history)} vs {len(want)} kept)")
        counts["history"] += len(history)
    conn.close()
    for p in exp["parked"]:
        ids = kept_ids.get((p["thread_id"], ""), set())
        if not ids or (p["checkpoint_id"] and p["checkpoint_id"] not in ids):
            problems.append(f"{p['thread_id']}: its parked checkpoint {p['checkpoint_id'] or '(newest)'} was pruned")
            continue
        tag = f"{p['thread_id']}_{counts['resumed']}"
        before, after = resume(a.before, p, f"b{tag}"), resume(a.after, p, f"a{tag}")
        if before != after:
            problems.append(f"{p['thread_id']}: resumed differently: {json.dumps(before)[:300]} vs {json.dumps(after)[:300]}")
        if "error" in after:
            problems.append(f"{p['thread_id']}: resuming failed: {after['error']}")
        counts["resumed"] += 1
    result = {"counts": counts, "problems": problems}
    if a.out:
        with open(a.out, "w") as f:
            json.dump(result, f, indent=1)
    print(f"verified: {counts['namespaces']} namespaces read ({counts['history']} kept checkpoints in their histories),"
          f" {counts['gone']} pruned away, {counts['resumed']} parked checkpoints resumed; {len(problems)} differences")
    for p in problems:
        print("  " + p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()

"""Which threads each changed graph breaks, decided by real LangGraph (the oracle `check` is held to).

    python check_oracle.py --db STORE --expected doctor.json --out check.json

STORE is a SqliteSaver file or a PostgresSaver URL written by gen_store.py. For every version in
graphs/ (v1 is the graph that wrote the store), in a process of its own (a version's `models`
module must not leak into the next), the graph is imported the way superstep's bridge imports
`graphs/<version>/graph.py:graph` (its directory first on sys.path) and, on a fresh copy of the
store, for each thread:
  * get_state(subgraphs=True) of the newest checkpoint, as JSON (values, next, tasks with their
    interrupts and subgraph states) — an exception is recorded as it is;
  * a parked thread is then resumed as its user would (Command(resume="yes") for an interrupt,
    invoke(None) past a breakpoint) and the outcome recorded the same way.
A thread is broken by a version when anything recorded differs from what v1 records. The
result: {version: {"broken": [...], "parked_broken": [...], "why": {thread: "..."}}}.
"""
import argparse
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
VERSIONS = ["v1", "renamed", "removed_key", "no_class", "delta_switch", "flat_work"]


def copy_store(db, tag):
    """A scratch copy of the store: a file copy, or a Postgres database made from it as a template."""
    if db.startswith("postgres"):
        import psycopg
        base, name = db.rsplit("/", 1)
        name = name.split("?")[0]
        new = f"{name}_chk_{tag}"
        with psycopg.connect(db.replace(f"/{name}", "/postgres", 1), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{new}" WITH (FORCE)')
            admin.execute(f'CREATE DATABASE "{new}" TEMPLATE "{name}"')
        return db.replace(f"/{name}", f"/{new}", 1)
    d = tempfile.mkdtemp(prefix="doctor-check-")
    atexit.register(shutil.rmtree, d, True)
    path = os.path.join(d, "store.sqlite")
    shutil.copyfile(db, path)
    return path


def one(version, db, expected):
    import logging
    import importlib.util
    sys.path.insert(0, os.path.join(HERE, "..", "oracle"))
    from common import view, pg_saver  # noqa: E402
    from langgraph.types import Command
    logging.getLogger("langgraph.checkpoint.serde.jsonplus").setLevel(logging.ERROR)

    path = os.path.join(HERE, "graphs", version, "graph.py")
    sys.path.insert(0, os.path.dirname(path))
    spec = importlib.util.spec_from_file_location("graph", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    exp = json.load(open(expected))
    parked = {p["thread_id"]: p for p in exp["parked"] if not p["checkpoint_id"]}
    threads = sorted({t["thread_id"] for t in exp["threads"]})

    copy = copy_store(db, version)
    if copy.startswith("postgres"):
        conn, saver = pg_saver(copy)
    else:
        import sqlite3
        from langgraph.checkpoint.sqlite import SqliteSaver
        conn = sqlite3.connect(copy, check_same_thread=False)
        saver = SqliteSaver(conn)
    g = mod.graph.copy(update={"checkpointer": saver})

    def state_json(st):
        return {
            "values": view(st.values),
            "next": list(st.next),
            "tasks": [{"name": t.name, "interrupts": [view(i.value) for i in t.interrupts],
                       "state": state_json(t.state) if hasattr(t.state, "values") else None}
                      for t in st.tasks],
        }

    def record(f):
        try:
            return state_json(f())
        except Exception as e:  # noqa: BLE001 - what LangGraph raises is the record
            return {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}

    out = {}
    for t in threads:
        cfg = {"configurable": {"thread_id": t}}
        rec = {"state": record(lambda: g.get_state(cfg, subgraphs=True))}
        if t in parked:
            how = parked[t]["resume"]
            inp = Command(resume="yes") if how == "answer" else None

            def resume():
                g.invoke(inp, cfg, durability="sync")
                return g.get_state(cfg, subgraphs=True)
            rec["resumed"] = record(resume)
        out[t] = rec
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--expected", required=True)
    ap.add_argument("--out")
    ap.add_argument("--one")
    a = ap.parse_args()
    if a.one:
        one(a.one, a.db, a.expected)
        return
    runs = {}
    for v in VERSIONS:
        p = subprocess.run([sys.executable, __file__, "--one", v, "--db", a.db, "--expected", a.expected],
                           capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"{v}: {p.stderr}")
        runs[v] = json.loads(p.stdout.strip().splitlines()[-1])
    parked = {p["thread_id"] for p in json.load(open(a.expected))["parked"] if not p["checkpoint_id"]}
    result = {}
    for v in VERSIONS[1:]:
        why = {}
        for t, rec in runs[v].items():
            base = runs["v1"][t]
            diff = [k for k in rec if rec[k] != base[k]]
            if diff:
                why[t] = "; ".join(f"{k}: {json.dumps(base[k])[:200]} -> {json.dumps(rec[k])[:200]}" for k in diff)
        result[v] = {"broken": sorted(why), "parked_broken": sorted(t for t in why if t in parked), "why": why}
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")
    for v, r in result.items():
        print(f"{v}: broken {r['broken']}")


if __name__ == "__main__":
    main()

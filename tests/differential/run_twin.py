"""Play a differential scenario on real LangGraph (the twin of a superstep graph spec).

    python tests/differential/run_twin.py GRAPH_NAME --out DIR [--python-repo REPO]

Reads REPO/graphs/GRAPH_NAME.json and REPO/tests/differential/scenarios/GRAPH_NAME.json, plays every
thread's ops (durability "sync", recursion_limit 25) against a fresh SqliteSaver file
DIR/GRAPH_NAME.sqlite and writes DIR/GRAPH_NAME.events.json (and DIR/GRAPH_NAME.topology.json, the
compiled graph's `common.topology()`):

    [{"thread": "t1", "op": 0, "outcome": "ok"},
     {"thread": "t1", "op": 1, "error": "RuntimeError", "message": "..."}, ...]

Ops are read as tests/differential.rs reads them: `checkpoint` (any op) addresses the N-th checkpoint
of the thread; `value` on resume/command is a plain resume and wins over `ids`; `ids` are looked up at
the thread's latest checkpoint and a node with no pending interrupt is left out of the map;
`break_before`/`break_after` ["*"] means every node; replay without a checkpoint is a continue.

An op that raises (a node error, a plain resume with several interrupts pending, ...) is recorded and
the scenario goes on; a malformed scenario (unknown op or key, checkpoint index out of range) stops
the run with exit code 1.

With `--pg URL` (a Postgres role that may create databases) the saver is a real PostgresSaver on a
fresh database `diff_GRAPH_NAME` of that server instead, and DIR/GRAPH_NAME.pgurl holds its URL.
"""
from __future__ import annotations

import argparse
import copy
import json
import logging
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from langgraph.graph import END  # noqa: E402
from langgraph.types import Command  # noqa: E402

from twin import build_graph, spec_file  # noqa: E402

# one definition of "a fresh SqliteSaver file" and "fold it into one file", shared with the oracle
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "oracle"))
from common import finalize_db  # noqa: E402,F401  (re-exported to handoff.py)
from common import fresh_db_at as fresh_db  # noqa: E402
from common import fresh_pg  # noqa: E402
from common import recast_ns, topology  # noqa: E402

logging.getLogger("langgraph.checkpoint.serde.jsonplus").setLevel(logging.ERROR)

RECURSION_LIMIT = 25
INVOKE_OPS = ("run", "resume", "command", "continue", "replay")
OP_KEYS = {
    "run": {"input", "break_before", "break_after", "checkpoint", "ns"},
    "resume": {"value", "ids", "update", "goto", "break_before", "break_after", "checkpoint", "ns"},
    "command": {"value", "ids", "update", "goto", "break_before", "break_after", "checkpoint", "ns"},
    "continue": {"break_before", "break_after", "checkpoint", "ns"},
    "replay": {"checkpoint", "break_before", "break_after", "ns"},
    "update": {"values", "as_node", "checkpoint", "ns"},
}


class ScenarioError(Exception):
    """The scenario itself is wrong (not an outcome of the op)."""


def is_pg(conn) -> bool:
    """A psycopg connection (PostgresSaver's tables) rather than sqlite3 (SqliteSaver's)."""
    return type(conn).__module__.startswith("psycopg")


def sql(conn, query: str, params=()) -> list:
    """Rows (tuples) of `query` written for SqliteSaver's tables (`?` placeholders, table `writes`
    with column `value`); on Postgres the same query on PostgresSaver's tables."""
    if not is_pg(conn):
        return conn.execute(query, params).fetchall()
    from psycopg.rows import tuple_row

    query = (query.replace("?", "%s").replace(" writes ", " checkpoint_writes ")
             .replace(" value FROM", " blob FROM"))
    return conn.cursor(row_factory=tuple_row).execute(query, params).fetchall()


def namespace(conn, thread: str, name: str) -> str:
    """A subgraph namespace of the thread by its node path: "interview" (the first one created),
    "interview#1" (the second), "mid|leaf" (nested)."""
    path, _, k = name.partition("#")
    k = int(k or 0)
    rows = sql(
        conn,
        "SELECT checkpoint_ns FROM checkpoints WHERE thread_id=? AND checkpoint_ns!='' "
        "GROUP BY checkpoint_ns ORDER BY MIN(checkpoint_id)",
        (thread,),
    )
    found = [r[0] for r in rows if recast_ns(r[0]) == path]
    if k >= len(found):
        raise ScenarioError(f"no namespace {name!r} (the thread has {[r[0] for r in rows]})")
    return found[k]


def checkpoint_id(conn, thread: str, n: int, ns: str = "") -> str:
    rows = sql(
        conn,
        "SELECT checkpoint_id FROM checkpoints WHERE thread_id=? AND checkpoint_ns=? "
        "ORDER BY checkpoint_id",
        (thread, ns),
    )
    if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n < len(rows):
        raise ScenarioError(f"checkpoint {n!r} out of range (the thread has {len(rows)} checkpoints)")
    return rows[n][0]


CONTROL_CHANNELS = ("__error__", "__error_source_node__", "__interrupt__", "__resume__")


def pending_interrupt_id(saver, conn, thread: str, node: str):
    """Id of `node`'s pending interrupt at the thread's LATEST checkpoint, read from its writes like
    tests/differential.rs does: the task whose task_path is "~__pregel_pull, <node>"; None when that
    task has finished (a write to a non-control channel) or has no interrupt; else the last interrupt
    of its last __interrupt__ write."""
    rows = sql(
        conn,
        "SELECT checkpoint_id FROM checkpoints WHERE thread_id=? AND checkpoint_ns='' "
        "ORDER BY checkpoint_id DESC LIMIT 1",
        (thread,),
    )
    if not rows:
        return None
    writes = sql(
        conn,
        "SELECT task_id, task_path, channel, type, value FROM writes WHERE thread_id=? AND checkpoint_ns='' "
        "AND checkpoint_id=? ORDER BY task_id, idx",
        (thread, rows[0][0]),
    )
    if node.startswith("*"):
        # "*k": the k-th unfinished task with an interrupt, in (task_path, task_id) order
        order = sorted({(w[1], w[0]) for w in writes if w[2] == "__interrupt__"})
        order = [t for p, t in order if not any(x[0] == t and x[2] not in CONTROL_CHANNELS for x in writes)]
        k = int(node[1:])
        tid = order[k] if k < len(order) else None
    else:
        path = f"~__pregel_pull, {node}"
        tid = next((w[0] for w in writes if w[1] == path), None)
    if tid is None:
        return None
    mine = [w for w in writes if w[0] == tid]
    if any(w[2] not in CONTROL_CHANNELS for w in mine):
        return None
    last = None
    for _, _, channel, typ, value in mine:
        if channel == "__interrupt__":
            items = saver.serde.loads_typed((typ, value))
            for it in items if isinstance(items, (list, tuple)) else [items]:
                if getattr(it, "id", None) is not None:
                    last = it.id
    return last


def breakpoints(v):
    """An op's break list: ["*"] (or "*") means every node."""
    if v == "*" or v == ["*"]:
        return "*"
    return list(v)


def play_op(graph, conn, thread: str, op: dict):
    # every op gets values of its own, as superstep parses them afresh from JSON: a node that
    # changes its state in place (LangGraph hands it the channels' objects, which start as the
    # input's) must not change the scenario, the spec's input or another thread's run
    op = copy.deepcopy(op)
    kind = op.get("op")
    if kind not in OP_KEYS:
        raise ScenarioError(f"unknown op {kind!r}")
    extra = set(op) - OP_KEYS[kind] - {"op"}
    if extra:
        raise ScenarioError(f"op {kind!r}: unknown keys {sorted(extra)}")

    config = {"configurable": {"thread_id": thread}, "recursion_limit": RECURSION_LIMIT}
    # a scenario's "max_concurrency": LangGraph's RunnableConfig key; 1 makes the loop's background
    # executor one FIFO thread, so every put_writes of a step has finished when durability="sync"
    # waits for the step's checkpoint (see README.md: races)
    if getattr(graph, "twin_max_concurrency", None):
        config["max_concurrency"] = graph.twin_max_concurrency
    if op.get("ns") is not None:
        # a subgraph's checkpoint, addressed with the config LangGraph gives it (get_state in
        # that namespace: checkpoint_ns, checkpoint_id and the checkpoint_map of its parents)
        ns = namespace(conn, thread, op["ns"])
        config["configurable"]["checkpoint_ns"] = ns
        if op.get("checkpoint") is not None:
            sub = {"configurable": {"thread_id": thread, "checkpoint_ns": ns,
                                    "checkpoint_id": checkpoint_id(conn, thread, op["checkpoint"], ns)}}
            # (LangGraph's snapshot config also carries the `__pregel_checkpointer` object it lent
            # the subgraph; passed back, it would turn update_state away from the subgraph — a
            # config that went through JSON, as superstep's does, has no such key)
            config["configurable"] = {
                k: v for k, v in graph.get_state(sub).config["configurable"].items()
                if not k.startswith("__pregel")
            }
    elif op.get("checkpoint") is not None:
        # the shape of a StateSnapshot.config (SqliteSaver.put needs checkpoint_ns)
        config["configurable"]["checkpoint_ns"] = ""
        config["configurable"]["checkpoint_id"] = checkpoint_id(conn, thread, op["checkpoint"])

    if kind == "update":
        as_node = op.get("as_node")
        if as_node in ("__end__", "END"):
            as_node = END
        graph.update_state(config, op.get("values"), as_node=as_node)
        return

    kw = {"durability": "sync"}
    if "break_before" in op:
        kw["interrupt_before"] = breakpoints(op["break_before"])
    if "break_after" in op:
        kw["interrupt_after"] = breakpoints(op["break_after"])

    if kind == "run":
        inp = op["input"] if "input" in op else copy.deepcopy(graph.twin_spec.get("input"))
    elif kind in ("resume", "command"):
        cmd = {}
        if "value" in op:
            cmd["resume"] = op["value"]
        elif "ids" in op:
            # nodes without a pending interrupt are left out of the map
            ids = {}
            for node, answer in op["ids"].items():
                iid = pending_interrupt_id(graph.checkpointer, conn, thread, node)
                if iid is not None:
                    ids[iid] = answer
            cmd["resume"] = ids
        if "update" in op:
            cmd["update"] = op["update"]
        if "goto" in op:
            cmd["goto"] = op["goto"]
        inp = Command(**cmd)
    else:  # continue, replay (replay = continue from `checkpoint`)
        inp = None
    graph.invoke(inp, config, **kw)


def run(graph_name: str, out_dir: str, repo: str, pg: str | None = None) -> list[dict]:
    spec_path = spec_file(repo, graph_name)
    scen_path = os.path.join(repo, "tests", "differential", "scenarios", f"{graph_name}.json")
    with open(scen_path, encoding="utf-8") as f:
        scenario = json.load(f)
    if scenario.get("graph", graph_name) != graph_name:
        raise ScenarioError(f"{scen_path}: graph is {scenario.get('graph')!r}, expected {graph_name!r}")

    os.makedirs(out_dir, exist_ok=True)
    if pg:
        db_path = None
        url, conn, saver = fresh_pg(graph_name, prefix="diff_", base=pg)
        with open(os.path.join(out_dir, f"{graph_name}.pgurl"), "w", encoding="utf-8") as f:
            f.write(url + "\n")
    else:
        db_path = os.path.join(out_dir, f"{graph_name}.sqlite")
        conn, saver = fresh_db(db_path)
    graph = build_graph(spec_path, saver, seed=scenario.get("seed", 0))
    graph.twin_max_concurrency = scenario.get("max_concurrency")

    events: list[dict] = []
    try:
        for th in scenario["threads"]:
            thread = th["thread"]
            for i, op in enumerate(th["ops"]):
                try:
                    play_op(graph, conn, thread, op)
                except ScenarioError as e:
                    raise ScenarioError(f"{scen_path}: thread {thread!r} op {i}: {e}") from None
                except Exception as exc:  # an op that raises is an outcome, not a crash
                    events.append({"thread": thread, "op": i, "error": type(exc).__name__,
                                   "message": str(exc)})
                else:
                    events.append({"thread": thread, "op": i, "outcome": "ok"})
        if scenario.get("dump_values"):
            # LangGraph's own get_state_history of every thread (values and next per checkpoint,
            # newest first): what the inspector must show for them (tests/delta_channel.rs)
            dump = {
                th["thread"]: [
                    {"checkpoint_id": s.config["configurable"]["checkpoint_id"],
                     "values": s.values, "next": list(s.next)}
                    for s in graph.get_state_history({"configurable": {"thread_id": th["thread"]}})
                ]
                for th in scenario["threads"]
            }
            with open(os.path.join(out_dir, f"{graph_name}.values.json"), "w", encoding="utf-8") as f:
                json.dump(dump, f, indent=1, ensure_ascii=False)
                f.write("\n")
    finally:
        if pg:
            conn.close()
        else:
            finalize_db(db_path, conn)

    with open(os.path.join(out_dir, f"{graph_name}.events.json"), "w", encoding="utf-8") as f:
        json.dump(events, f, indent=1, ensure_ascii=False)
        f.write("\n")
    # the compiled graph's shape as LangGraph reports it: tests/differential.rs checks that the
    # spec's own topology (channel kinds, reducers, defaults, triggers) says the same
    with open(os.path.join(out_dir, f"{graph_name}.topology.json"), "w", encoding="utf-8") as f:
        json.dump(topology(graph), f, indent=1, ensure_ascii=False)
        f.write("\n")
    return events


def main() -> int:
    if os.environ.get("PYTHONHASHSEED") != "0":
        # set iteration orders (edge writers, set payloads) must repeat between runs
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"})
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("graph")
    ap.add_argument("--out", required=True)
    ap.add_argument("--python-repo", default=os.path.dirname(os.path.dirname(HERE)),
                    help="repository root holding graphs/ and tests/differential/scenarios/")
    ap.add_argument("--pg", default=None, metavar="URL",
                    help="play on PostgresSaver: a fresh database diff_GRAPH on this server")
    args = ap.parse_args()
    try:
        events = run(args.graph, os.path.abspath(args.out), os.path.abspath(args.python_repo), args.pg)
    except ScenarioError as e:
        print(f"run_twin: {e}", file=sys.stderr)
        return 1
    errors = sum(1 for e in events if "error" in e)
    print(f"{args.graph}: {len(events)} ops, {errors} raised")
    return 0


if __name__ == "__main__":
    sys.exit(main())

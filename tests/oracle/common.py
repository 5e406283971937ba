"""Shared helpers for the LangGraph oracle generators (tests/oracle/gen_*.py).

Real LangGraph is the oracle. Each generator runs real graphs against a SqliteSaver file and writes
`<out>/<name>.sqlite` plus `<out>/<name>.json`, where the JSON holds LangGraph's own `get_state` /
`get_state_history` output for every thread, converted to the canonical "JSON view" (see `view`).
The Rust tests open the .sqlite with superstep and compare its output with the .json.

The JSON view of a Python value is derived from LangGraph's own serializer: the value is re-encoded with
`JsonPlusSerializer().dumps_typed` and the resulting envelope / msgpack bytes are converted by fixed
rules (documented in `view` and in README.md). So the type mapping is LangGraph's, not ours.
"""
from __future__ import annotations

import argparse
import importlib.metadata
import json
import logging
import math
import os
import sqlite3
import sys
import uuid

try:
    import ormsgpack
except ImportError:  # langgraph 0.2.20's serializer uses msgpack (tests/oracle/v02)
    ormsgpack = None
    import msgpack
try:
    from langgraph._internal._typing import MISSING
except ImportError:  # langgraph 0.2.x
    MISSING = object()
from langgraph.channels.binop import BinaryOperatorAggregate
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_OUT = os.path.join(REPO, "tests", "fixtures")
NULL_TASK_ID = "00000000-0000-0000-0000-000000000000"

# The saver switch: with SUPERSTEP_ORACLE_PG set to a Postgres server URL (a role that may create
# databases), every fixture runs on a real PostgresSaver instead, in a fresh database `fx_<name>`
# on that server; `<out>/<name>.pgurl` holds that database's URL next to `<name>.json`.
ORACLE_PG = os.environ.get("SUPERSTEP_ORACLE_PG") or None

_SERDE = JsonPlusSerializer()

# Reviving classes defined in the generator scripts (module "__main__") makes LangGraph log a warning
# ("Deserializing unregistered type ...") once per type; harmless here, it would only clutter the output.
logging.getLogger("langgraph.checkpoint.serde.jsonplus").setLevel(logging.ERROR)


# ----------------------------------------------------------------------------------------------------
# DB files
# ----------------------------------------------------------------------------------------------------

def fresh_db(out_dir: str, name: str):
    """(path, conn, SqliteSaver) for a brand-new `<out_dir>/<name>.sqlite` (old file, -wal, -shm removed)."""
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{name}.sqlite")
    return (path, *fresh_db_at(path))


def fresh_db_at(path: str):
    """(conn, SqliteSaver) for a brand-new SqliteSaver file at `path` (old file, -wal, -shm removed)."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    return conn, saver


def _pg_url(base: str, dbname: str) -> str:
    """`base` (a postgresql:// URL) with its database replaced by `dbname`."""
    head, _, query = base.partition("?")
    scheme, _, rest = head.partition("://")
    authority = rest.split("/", 1)[0]
    return f"{scheme}://{authority}/{dbname}" + (f"?{query}" if query else "")


def fresh_pg_database(db: str, base: str | None = None) -> str:
    """The URL of a brand-new, empty database `db` on the `base` server (default ORACLE_PG; a role
    that may create databases): dropped first if it exists."""
    import psycopg

    base = base or ORACLE_PG
    with psycopg.connect(base, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{db}"')
    return _pg_url(base, db)


def pg_saver(url: str, setup: bool = True):
    """(conn, PostgresSaver) on `url`, the connection opened as PostgresSaver.from_conn_string
    opens it (autocommit, dict rows, no prepared statements)."""
    import psycopg
    from psycopg.rows import dict_row
    from langgraph.checkpoint.postgres import PostgresSaver

    conn = psycopg.Connection.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row)
    saver = PostgresSaver(conn)
    if setup:
        saver.setup()
    return conn, saver


def fresh_pg(name: str, prefix: str = "fx_", base: str | None = None):
    """(url, conn, PostgresSaver) for a brand-new database `<prefix><name>` on the `base` server
    (default ORACLE_PG)."""
    url = fresh_pg_database(f"{prefix}{name}", base)
    return (url, *pg_saver(url))


def finalize_db(path: str, conn: sqlite3.Connection) -> None:
    """Make the committed .sqlite a single self-contained file.

    SqliteSaver.setup() switches the DB to WAL mode, so after a run part of the data may still live in
    `<name>.sqlite-wal`. We fold the WAL back into the main file (`PRAGMA wal_checkpoint(TRUNCATE)`),
    switch the file back to the rollback journal (`PRAGMA journal_mode=DELETE`, which also clears the
    WAL flag in the file header), close the connection and delete any leftover -wal / -shm files.
    The content (rows, blobs) is not changed by this.
    """
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    mode = conn.execute("PRAGMA journal_mode=DELETE").fetchone()[0]
    if mode.lower() != "delete":
        raise RuntimeError(f"{path}: could not switch journal_mode to DELETE (got {mode})")
    conn.close()
    for suffix in ("-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)


# ----------------------------------------------------------------------------------------------------
# JSON view
# ----------------------------------------------------------------------------------------------------

class _RawExt:
    """A msgpack extension kept undecoded (code + raw ext data)."""
    __slots__ = ("code", "data")

    def __init__(self, code: int, data: bytes):
        self.code, self.data = code, bytes(data)


def _ext_hook(code, data):
    return _RawExt(code, data)


def _unpack(data: bytes):
    if ormsgpack is None:
        return msgpack.unpackb(data, ext_hook=_ext_hook, strict_map_key=False, raw=False)
    return ormsgpack.unpackb(data, ext_hook=_ext_hook, option=ormsgpack.OPT_NON_STR_KEYS)


def view(obj):
    """The canonical JSON view of a Python value, via LangGraph's own serializer.

    `typ, data = JsonPlusSerializer().dumps_typed(obj)`, then `view_typed(typ, data)`.
    """
    typ, data = _SERDE.dumps_typed(obj)
    return view_typed(typ, data)


def view_typed(typ: str, data: bytes):
    """JSON view of a serialized (type, bytes) envelope, e.g. a `writes.type/value` pair.

    envelope: null -> None; bytes -> {"__type__":"bytes","hex"}; bytearray -> {"__type__":"bytearray","hex"};
    json -> json.loads then the plain rules; msgpack -> decoded with ext codes kept raw, then the rules of
    `_plain` / `_ext`.
    """
    if typ == "null":
        return None
    if typ == "bytes":
        return {"__type__": "bytes", "hex": bytes(data).hex()}
    if typ == "bytearray":
        return {"__type__": "bytearray", "hex": bytes(data).hex()}
    if typ == "json":
        return _plain(json.loads(data))
    if typ == "msgpack":
        return _plain(_unpack(data))
    raise ValueError(f"unknown serialization type {typ!r}")


def _float(f: float):
    if math.isfinite(f):
        return f
    if math.isnan(f):
        return {"__type__": "float", "value": "nan"}
    return {"__type__": "float", "value": "inf" if f > 0 else "-inf"}


def _plain(v):
    """Rules for decoded msgpack / JSON values."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return _float(v)
    if isinstance(v, (bytes, bytearray, memoryview)):  # msgpack bin (nested bytes)
        return {"__type__": "bytes", "hex": bytes(v).hex()}
    if isinstance(v, (list, tuple)):  # msgpack array (tuples appear as decoded map keys)
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        if all(isinstance(k, str) for k in v):
            return {k: _plain(x) for k, x in v.items()}
        return {"__type__": "map", "entries": [[_plain(k), _plain(x)] for k, x in v.items()]}
    if isinstance(v, _RawExt):
        return _ext(v)
    raise TypeError(f"unexpected decoded value {type(v).__name__}: {v!r}")


def _is_str_list(xs, n):
    return isinstance(xs, list) and len(xs) == n and isinstance(xs[0], str) and isinstance(xs[1], str)


def _str_keys(d):
    return isinstance(d, dict) and all(isinstance(k, str) for k in d)


def _ext(e: _RawExt):
    raw = {"__type__": "ext", "code": e.code, "hex": e.data.hex()}
    try:
        p = _unpack(e.data)
    except Exception:
        return raw
    code = e.code
    if code == 0 and _is_str_list(p, 3):
        mod, name, arg = p
        if (mod, name) == ("uuid", "UUID"):
            if isinstance(arg, str):
                try:
                    return {"__type__": "uuid.UUID", "value": str(uuid.UUID(hex=arg))}
                except ValueError:
                    pass
            return raw
        if (mod, name) in (("builtins", "set"), ("builtins", "frozenset"), ("collections", "deque")):
            if isinstance(arg, list):
                return {"__type__": f"{mod}.{name}", "items": [_plain(x) for x in arg]}
            return raw
        return {"__type__": f"{mod}.{name}", "value": _plain(arg)}
    if code == 1 and _is_str_list(p, 3) and isinstance(p[2], list):
        mod, name, args = p
        if (mod, name) == ("langgraph.types", "Send"):
            if len(args) in (2, 3) and isinstance(args[0], str):
                out = {"__type__": "langgraph.types.Send", "node": args[0], "arg": _plain(args[1])}
                if len(args) == 3:
                    out["timeout"] = _plain(args[2])
                return out
            return raw
        return {"__type__": f"{mod}.{name}", "args": [_plain(a) for a in args]}
    if code in (2, 4) and _is_str_list(p, 3) and _str_keys(p[2]):
        mod, name, kwargs = p
        return {"__type__": f"{mod}.{name}", **{k: _plain(x) for k, x in kwargs.items()}}
    if code == 3 and _is_str_list(p, 4) and isinstance(p[3], str):
        mod, name, arg, method = p
        if (mod, name, method) == ("datetime", "datetime", "fromisoformat") and isinstance(arg, str):
            # tagged like the other one-value types (uuid.UUID, decimal.Decimal): a bare ISO string
            # would read as text
            return {"__type__": "datetime.datetime", "value": arg}
        return {"__type__": f"{mod}.{name}", "value": _plain(arg), "method": method}
    if code == 5 and _is_str_list(p, 4) and _str_keys(p[2]):
        mod, name, kwargs, _method = p
        return {"__type__": f"{mod}.{name}", **{k: _plain(x) for k, x in kwargs.items()}}
    if code == 6 and isinstance(p, list) and len(p) == 4 and isinstance(p[0], str) \
            and isinstance(p[1], list) and isinstance(p[2], str) and isinstance(p[3], (bytes, bytearray)):
        dtype, shape, order, buf = p
        return {"__type__": "numpy.ndarray", "dtype": dtype, "shape": [_plain(s) for s in shape],
                "order": order, "hex": bytes(buf).hex()}
    if code == 7:
        return {"__type__": "langgraph.DeltaSnapshot", "value": _plain(p)}
    return raw


# ----------------------------------------------------------------------------------------------------
# StateSnapshot -> JSON
# ----------------------------------------------------------------------------------------------------

def _json_plain(x):
    """Plain JSON for configs / metadata / paths: tuples become lists; anything non-JSON is an error."""
    if x is None or isinstance(x, (bool, int, str)):
        return x
    if isinstance(x, float):
        if not math.isfinite(x):
            raise ValueError(f"non-finite float in plain JSON: {x}")
        return x
    if isinstance(x, (list, tuple)):
        return [_json_plain(i) for i in x]
    if isinstance(x, dict):
        out = {}
        for k, v in x.items():
            if not isinstance(k, str):
                raise TypeError(f"non-str key {k!r} in plain JSON")
            out[k] = _json_plain(v)
        return out
    raise TypeError(f"not plain JSON: {type(x).__name__}: {x!r}")


def _values_json(values):
    if isinstance(values, dict):
        return {k: view(v) for k, v in values.items()}
    return view(values)  # a non-dict state (root schema), not used by our graphs


def _interrupt_json(i):
    # langgraph 0.2.x: Interrupt(value, resumable, ns, when) has no id
    return {"value": view(i.value), "id": getattr(i, "id", None)}


def _task_json(t):
    res = getattr(t, "result", None)  # PregelTask.result: langgraph >= 0.2.6x
    if res is None:
        result = None
    elif isinstance(res, dict):
        result = {k: view(v) for k, v in res.items()}
    else:
        result = view(res)
    return {
        "id": t.id,
        "name": t.name,
        "path": _json_plain(t.path),
        # SqliteSaver hands back the stored repr string; a live exception object is shown as str(exc).
        "error": str(t.error) if isinstance(t.error, BaseException) else t.error,
        "interrupts": [_interrupt_json(i) for i in t.interrupts],
        "result": result,
        "state": _json_plain(t.state) if isinstance(t.state, dict) else None,
    }


def snapshot_json(s, saver) -> dict:
    """A StateSnapshot as JSON, plus the raw pending writes of its checkpoint (LangGraph's sorted order)."""
    pending = []
    conf = (s.config or {}).get("configurable", {})
    if conf.get("checkpoint_id"):
        tup = saver.get_tuple(s.config)
        if tup is not None:
            pending = [{"task_id": tid, "channel": ch, "value": view(v)}
                       for tid, ch, v in (tup.pending_writes or [])]
    return {
        "config": _json_plain(s.config),
        "parent_config": _json_plain(s.parent_config) if s.parent_config else None,
        "created_at": s.created_at,
        "metadata": _json_plain(s.metadata),
        "values": _values_json(s.values),
        "next": list(s.next),
        "tasks": [_task_json(t) for t in s.tasks],
        # StateSnapshot.interrupts: langgraph >= 0.3; before, the tasks' interrupts in task order
        "interrupts": [_interrupt_json(i) for i in (
            s.interrupts if hasattr(s, "interrupts") else [i for t in s.tasks for i in t.interrupts])],
        "pending_writes": pending,
    }


# ----------------------------------------------------------------------------------------------------
# Graph topology
# ----------------------------------------------------------------------------------------------------

def reducer_qualname(f) -> str | None:
    """A reducer's identity: `module.qualname`, with LangGraph's wrapped `add_messages` and the
    `_operator` module of `operator.add` spelled the way users import them."""
    if f is None:
        return None
    import operator

    from langgraph.graph.message import add_messages

    if f is operator.add:
        return "operator.add"
    if f is add_messages:
        return "langgraph.graph.message.add_messages"
    mod = getattr(f, "__module__", None)
    qn = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or type(f).__name__
    return f"{mod}.{qn}" if mod else qn


def channel_kind(ch) -> dict:
    """One entry of topology()["channels"]: the channel class, its reducer (short `__name__` and
    qualified name), its initial value, and the class's own parameters."""
    try:
        from langgraph.channels.delta import DeltaChannel
    except ImportError:  # langgraph before 1.2
        DeltaChannel = ()
    op = getattr(ch, "operator", None)
    if isinstance(ch, DeltaChannel):
        op = ch.reducer
    default = None
    if isinstance(ch, BinaryOperatorAggregate):
        # the channel's initial value: typ() when constructible, else MISSING (shown as None)
        # copy(): langgraph >= 0.3; before, the graph's channel object holds the initial value
        v = ch.copy().value if hasattr(ch, "copy") else getattr(ch, "value", MISSING)
        default = None if v is MISSING else view(v)
    elif DeltaChannel and isinstance(ch, DeltaChannel):
        # a delta channel restored from "no blob" starts at typ() (DeltaChannel.from_checkpoint)
        default = view(ch.from_checkpoint(MISSING).value)
    out = {
        "kind": type(ch).__name__,
        "reducer": getattr(op, "__name__", None) if op is not None else None,
        "default": default,
    }
    if op is not None:
        out["reducer_qualname"] = reducer_qualname(op)
    if DeltaChannel and isinstance(ch, DeltaChannel):
        out["snapshot_frequency"] = ch.snapshot_frequency
    if type(ch).__name__ == "Topic":
        out["accumulate"] = bool(getattr(ch, "accumulate", False))
    if type(ch).__name__ in ("EphemeralValue", "UntrackedValue"):
        out["guard"] = bool(getattr(ch, "guard", True))
    return out


def topology(graph) -> dict:
    """Node triggers, state keys, channel kinds/reducers/defaults and subgraph node names of a compiled graph.

    The interchange format for a graph's shape (read by superstep's `Topology::from_oracle_json`).
    `reducer_qualname`, `snapshot_frequency`, `accumulate` and `guard` were added later; readers
    must accept entries without them.
    """
    state_keys = graph.stream_channels_asis
    state_keys = [state_keys] if isinstance(state_keys, str) else list(state_keys)
    channels = {name: channel_kind(ch) for name, ch in graph.channels.items()}
    return {
        "nodes": [{"name": n, "triggers": list(node.triggers)} for n, node in graph.nodes.items()],
        "state_keys": state_keys,
        "channels": channels,
        "subgraphs": [n for n, node in graph.nodes.items() if getattr(node, "subgraphs", None)],
    }


def recast_ns(ns: str) -> str:
    """Checkpoint ns without task ids ("sub:abc|inner:def" -> "sub|inner"), as LangGraph's recast_checkpoint_ns."""
    return "|".join(part.split(":")[0] for part in ns.split("|") if not part.isdigit())


def subgraph_for_ns(graph, ns: str):
    """The compiled subgraph that owns checkpoint namespace `ns` (found the way LangGraph finds it)."""
    for _, sub in graph.get_subgraphs(namespace=recast_ns(ns), recurse=True):
        return sub
    raise KeyError(f"no subgraph for namespace {ns!r}")


# ----------------------------------------------------------------------------------------------------
# Thread dumps and the expected JSON file
# ----------------------------------------------------------------------------------------------------

def dump_thread(graph, saver, thread_id: str, ns: str = "") -> dict:
    """get_state (live) + get_state_history (newest first) of one (thread, checkpoint_ns).

    Subgraph namespaces (ns != ""): in langgraph 1.2.24, `Pregel.get_state` / `get_state_history` called on
    the ROOT graph with `configurable.checkpoint_ns = "<node>:<task_id>[|<node>:<task_id>...]"` find the
    subgraph through `get_subgraphs(namespace=recast_checkpoint_ns(ns), recurse=True)` and delegate to it,
    lending it the root's checkpointer (`_subgraph_for_namespace`). The subgraph then reads the checkpoints
    stored under that exact ns. So we call the root graph with the nested ns, and report the SUBGRAPH's
    topology (its nodes / channels are the ones that produced those checkpoints).
    """
    cfg = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns}}
    topo_graph = subgraph_for_ns(graph, ns) if ns else graph
    state = graph.get_state(cfg)
    history = list(graph.get_state_history(cfg))
    return {
        "thread_id": thread_id,
        "checkpoint_ns": ns,
        "topology": topology(topo_graph),
        "state": snapshot_json(state, saver),
        "history": [snapshot_json(s, saver) for s in history],
    }


def _versions() -> dict:
    pkgs = ["langgraph", "langgraph-checkpoint", "langgraph-checkpoint-sqlite", "ormsgpack"]
    if ORACLE_PG:
        pkgs += ["langgraph-checkpoint-postgres", "psycopg"]
    out = {}
    for p in pkgs + ["msgpack"]:
        try:
            out[p] = importlib.metadata.version(p)
        except importlib.metadata.PackageNotFoundError:
            if p not in ("ormsgpack", "msgpack"):
                raise
    return out


def _script_name() -> str:
    main = sys.modules.get("__main__")
    f = getattr(main, "__file__", None) or sys.argv[0]
    return os.path.basename(f)


def write_expected(out_dir: str, name: str, threads: list, extra: dict | None = None,
                   events: list | None = None) -> str:
    """Write `<out_dir>/<name>.json` and return its path."""
    doc = {
        "generator": f"tests/oracle/{_script_name()}",
        "versions": _versions(),
        "threads": threads,
        "events": list(events or []),
    }
    if extra:
        doc.update(extra)
    path = os.path.join(out_dir, f"{name}.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1, sort_keys=False, allow_nan=False)
        f.write("\n")
    return path


def orphan_writes(conn) -> list:
    """Writes rows whose (thread, ns, checkpoint_id) has no checkpoint row, in rowid order."""
    rows = conn.execute(
        "SELECT w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.task_path, w.idx, w.channel, "
        "w.type, w.value FROM writes w LEFT JOIN checkpoints c ON c.thread_id = w.thread_id "
        "AND c.checkpoint_ns = w.checkpoint_ns AND c.checkpoint_id = w.checkpoint_id "
        "WHERE c.checkpoint_id IS NULL ORDER BY w.rowid").fetchall()
    return [{"thread_id": t, "checkpoint_ns": ns, "checkpoint_id": cid, "task_id": tid, "task_path": tp,
             "idx": idx, "channel": ch, "value": view_typed(ty, val if val is not None else b"")}
            for t, ns, cid, tid, tp, idx, ch, ty, val in rows]


def orphan_writes_pg(conn) -> list:
    """`orphan_writes` for PostgresSaver's tables (insertion order is not kept: by key). Checkpoints
    are matched by the id inside the JSONB, which ShallowPostgresSaver's table (no checkpoint_id
    column) has too."""
    cur = conn.cursor(row_factory=psycopg_tuple_row())
    rows = cur.execute(
        "SELECT w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.task_path, w.idx, w.channel, "
        "w.type, w.blob FROM checkpoint_writes w LEFT JOIN checkpoints c ON c.thread_id = w.thread_id "
        "AND c.checkpoint_ns = w.checkpoint_ns AND c.checkpoint ->> 'id' = w.checkpoint_id "
        "WHERE c.thread_id IS NULL ORDER BY w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.idx"
    ).fetchall()
    return [{"thread_id": t, "checkpoint_ns": ns, "checkpoint_id": cid, "task_id": tid, "task_path": tp,
             "idx": idx, "channel": ch, "value": view_typed(ty, bytes(val) if val is not None else b"")}
            for t, ns, cid, tid, tp, idx, ch, ty, val in rows]


def psycopg_tuple_row():
    from psycopg.rows import tuple_row
    return tuple_row


def parse_args(argv=None):
    doc = getattr(sys.modules.get("__main__"), "__doc__", None) or __doc__
    ap = argparse.ArgumentParser(description=doc.strip().splitlines()[0])
    ap.add_argument("--out", default=DEFAULT_OUT, help="output directory (default: tests/fixtures)")
    return ap.parse_args(argv)


class Fixture:
    """One generator run: a fresh DB, collected thread dumps and events, and the final files.

    fx = Fixture("linear")             # parses --out
    ... run graphs with fx.saver ...
    fx.dump(graph, "t1")               # every thread (all of its namespaces with all_ns=True)
    fx.finish()                        # checks every DB thread was dumped, writes JSON, finalizes the DB
    """

    def __init__(self, name: str, argv=None):
        args = parse_args(argv)
        self.name = name
        self.out_dir = os.path.abspath(args.out)
        os.makedirs(self.out_dir, exist_ok=True)
        self.pg = ORACLE_PG is not None
        if self.pg:
            self.path = None
            self.pg_url, self.conn, self.saver = fresh_pg(name)
        else:
            self.path, self.conn, self.saver = fresh_db(self.out_dir, name)
        self.threads: list = []
        self.events: list = []
        self.extra: dict = {}
        # what the JSON says wrote the rows (a Postgres generator may swap in ShallowPostgresSaver)
        self.saver_name = "PostgresSaver" if self.pg else "SqliteSaver"

    def event(self, msg: str) -> None:
        self.events.append(msg)

    def attempt(self, label: str, fn, *args, **kwargs):
        """Call fn; on an exception record `<label>: <Type>: <message>` as an event and return None."""
        try:
            return fn(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - the point is to record what LangGraph raises
            self.event(f"{label}: {type(e).__name__}: {e}")
            return None

    def returned(self, label: str, result) -> None:
        """Record what an invoke returned; interrupts are shown by value only (their ids vary per run)."""
        if isinstance(result, dict) and "__interrupt__" in result:
            result = {**result, "__interrupt__": [f"Interrupt(value={i.value!r})" for i in result["__interrupt__"]]}
        self.event(f"{label}: returned {result!r}")

    def sql(self, query: str, params=()) -> list:
        """Rows (tuples) of a query on the fixture's DB; `?` placeholders, for either saver."""
        if self.pg:
            cur = self.conn.cursor(row_factory=psycopg_tuple_row())
            return cur.execute(query.replace("?", "%s"), params).fetchall()
        return self.conn.execute(query, params).fetchall()

    def namespaces(self, thread_id: str) -> list:
        rows = self.sql("SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_ns",
                        (thread_id,))
        return sorted(r[0] for r in rows)

    def dump(self, graph, thread_id: str, ns: str = "", all_ns: bool = False) -> None:
        nss = self.namespaces(thread_id) if all_ns else [ns]
        if all_ns and "" not in nss:
            nss = [""] + nss
        dumps = []
        for n in nss:
            try:
                dumps.append(dump_thread(graph, self.saver, thread_id, n))
            except Exception as e:  # noqa: BLE001
                if not self.pg:
                    raise
                # PostgresSaver cannot read some rows it wrote back (its SELECT casts channel names
                # to bytea: a backslash breaks it). No oracle for that thread: recorded, dropped.
                self.event(f"{thread_id!r}: PostgresSaver cannot read it back: {type(e).__name__}: "
                           f"{str(e).splitlines()[0]}")
                self.saver.delete_thread(thread_id)
                return
        self.threads.extend(dumps)

    def finish(self, extra: dict | None = None) -> None:
        dumped = {(t["thread_id"], t["checkpoint_ns"]) for t in self.threads}
        in_db = set(tuple(r) for r in self.sql("SELECT DISTINCT thread_id, checkpoint_ns FROM checkpoints"))
        missing = sorted(in_db - dumped)
        if missing:
            raise RuntimeError(f"{self.name}: threads with checkpoints that were not dumped: {missing}")
        orphans = orphan_writes_pg(self.conn) if self.pg else orphan_writes(self.conn)
        for o in orphans:
            self.event(f"orphan write: thread {o['thread_id']!r} ns {o['checkpoint_ns']!r} checkpoint "
                       f"{o['checkpoint_id']} (no checkpoint row) task {o['task_id']} idx {o['idx']} "
                       f"channel {o['channel']}")
        doc_extra = {"orphan_writes": orphans}
        doc_extra.update(self.extra)
        doc_extra.update(extra or {})
        if self.pg:
            doc_extra["saver"] = self.saver_name
        write_expected(self.out_dir, self.name, self.threads, doc_extra, self.events)
        if self.pg:
            self.conn.close()
            with open(os.path.join(self.out_dir, f"{self.name}.pgurl"), "w") as f:
                f.write(self.pg_url + "\n")
            where = self.pg_url.rsplit("/", 1)[-1]
        else:
            finalize_db(self.path, self.conn)
            where = os.path.basename(self.path)
        n_hist = sum(len(t["history"]) for t in self.threads)
        print(f"{self.name}: {len(self.threads)} thread dumps, {n_hist} history entries, "
              f"{len(self.events)} events -> {where}")


def D(**kw):
    """invoke kwargs with durability='sync' (deterministic DB contents) unless overridden."""
    return {"durability": "sync", **kw}

"""JsonPlusSerializer reference vectors and typed values inside checkpoints (spec §12).

Writes, besides serde.sqlite / serde.json:
  serde_vectors.json : a JSON list (one vector per line) of {"name", "type", "hex", "view", "plain"} where
                       (type, hex) = JsonPlusSerializer().dumps_typed(value), view = common.view(value), and
                       plain = True iff the value is built only from None/bool/int/finite float/str/list/
                       dict-with-str-keys/bytes, i.e. a JSON-view -> msgpack encoder can reproduce the bytes
                       exactly (this script checks that claim by re-encoding every plain view).
The DB holds the same vectors in a table `serde(name TEXT, type TEXT, value BLOB)` next to normal
SqliteSaver threads:
  'rich'   : a graph whose state holds LangChain messages (add_messages), datetime, uuid, Decimal, set,
             frozenset, bytes, a pydantic model, a NaN float, a tuple and a dict with int keys
  'jt'     : a HAND-INSERTED checkpoint row with type='json' plus a type='json' write (as ex11 does):
             SqliteSaver/LangGraph accept both
  'jt_lc'  : a type='json' checkpoint whose write values use the LangChain `lc: 2` constructor form:
             ["uuid","UUID"] is a safe type and is revived (view: uuid.UUID), ["collections","OrderedDict"]
             is not and stays a plain dict
"""
import collections
import dataclasses
import datetime
import decimal
import enum
import ipaddress
import json
import math
import operator
import os
import pathlib
import re
import uuid
from collections import deque, namedtuple
from typing import Annotated, NamedTuple, TypedDict
from zoneinfo import ZoneInfo

import ormsgpack
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.serde.types import _DeltaSnapshot
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, Interrupt, Overwrite, Send
from pydantic import BaseModel, SecretStr

from common import D, Fixture, view

try:
    import pydantic.v1 as pydantic_v1
except Exception:  # pragma: no cover - not available on every Python
    pydantic_v1 = None

SERDE = JsonPlusSerializer()


class Color(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class Mode(enum.StrEnum):
    FAST = "fast"


class Model(BaseModel):
    a: int
    b: str = "x"


class Outer(BaseModel):
    inner: Model
    items: list[int] = []


if pydantic_v1 is not None:
    class ModelV1(pydantic_v1.BaseModel):
        a: int
        b: str = "x"


@dataclasses.dataclass
class DC:
    x: int
    y: list


class NT(NamedTuple):
    p: int
    q: str


Pair = namedtuple("Pair", ["left", "right"])


def seq(n):
    return [i % 128 for i in range(n)]


def cases():
    c = [("None", None), ("True", True), ("False", False)]
    for v in (0, 1, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1,
              -1, -32, -33, -128, -129, -32768, -32769, -2**31, -2**31 - 1, -2**63):
        c.append((f"int {v}", v))
    for name, v in (("0.0", 0.0), ("-0.0", -0.0), ("1.0", 1.0), ("1.5", 1.5), ("1e300", 1e300),
                    ("5e-324", 5e-324), ("0.1", 0.1), ("nan", math.nan), ("inf", math.inf),
                    ("-inf", -math.inf)):
        c.append((f"float {name}", v))
    c += [
        ("str empty", ""), ("str 31 bytes", "s" * 31), ("str 32 bytes", "s" * 32),
        ("str 255 bytes", "s" * 255), ("str 256 bytes", "s" * 256),
        ("str 65535 bytes", "s" * 65535), ("str 65536 bytes", "s" * 65536),
        ("str unicode", "héllo"), ("str emoji", "\U0001F600 ok"), ("str with NUL", "a\x00b"),
        ("str 31 bytes unicode", "é" * 15 + "e"), ("str 32 bytes unicode", "é" * 16),
        ("bytes", b"\x00\x01"), ("bytes empty", b""), ("bytes 255", bytes(range(255))),
        ("bytes 256", bytes(range(256))), ("bytes nested", {"b": b"\x00\xff"}), ("bytes nested empty", [b""]),
        ("bytes nested 255", [b"\x07" * 255]), ("bytes nested 256", [b"\x07" * 256]),
        ("bytes nested 65536", [b"\x07" * 65536]),
        ("bytearray", bytearray(b"ab")), ("bytearray empty", bytearray()), ("bytearray nested", [bytearray(b"ab")]),
        ("list 0", []), ("list 15", seq(15)), ("list 16", seq(16)), ("list 65535", seq(65535)),
        ("list 65536", seq(65536)), ("list mixed", [1, "a", None, True, 1.5, [], {}]),
        ("dict 0", {}), ("dict 15", {f"k{i}": i for i in range(15)}), ("dict 16", {f"k{i}": i for i in range(16)}),
        ("dict nested", {"a": {"b": [1, {"c": None}]}, "d": [[], {}], "e": {"f": {"g": {"h": "deep"}}}}),
        ("dict order", {"z": 1, "a": 2, "m": 3}),
        ("dict int keys", {1: "a", 2: "b"}), ("dict tuple keys", {(1, 2): "x", (3, "y"): "z"}),
        ("dict mixed keys", {"a": 1, 2: "b"}), ("dict None key", {None: 1}), ("dict bool key", {True: 1}),
        ("dict float key", {1.5: "x"}), ("dict bytes key", {b"k": 1}),
        ("OrderedDict", collections.OrderedDict([("b", 1), ("a", 2)])),
        ("defaultdict", collections.defaultdict(list, {"k": [1]})),
        ("tuple", (1, 2)), ("tuple empty", ()), ("tuple nested", [(1, "a"), ((2,),)]),
        ("set", {1, 2, 3}), ("set empty", set()), ("frozenset", frozenset(["z"])), ("deque", deque([1, 2])),
        ("set of tuples", {(1, 2)}),
        ("uuid", uuid.UUID("12345678-1234-5678-1234-567812345678")),
        ("uuid nil", uuid.UUID(int=0)),
        ("Decimal", decimal.Decimal("1.10")), ("Decimal exp", decimal.Decimal("-5E+3")),
        ("Decimal nan", decimal.Decimal("NaN")),
        ("datetime naive", datetime.datetime(2024, 5, 4, 6, 32, 42, 235444)),
        ("datetime utc", datetime.datetime(2024, 5, 4, 6, 32, 42, tzinfo=datetime.timezone.utc)),
        ("datetime +02:00", datetime.datetime(2024, 5, 4, 6, 32, 42, 1,
                                              tzinfo=datetime.timezone(datetime.timedelta(hours=2)))),
        ("datetime Europe/Paris", datetime.datetime(2024, 1, 4, 6, 32, tzinfo=ZoneInfo("Europe/Paris"))),
        ("date", datetime.date(2024, 5, 4)),
        ("time", datetime.time(6, 32, 42, 5)),
        ("time tz", datetime.time(6, 32, tzinfo=datetime.timezone.utc)),
        ("timedelta", datetime.timedelta(days=1, seconds=2, microseconds=3)),
        ("timedelta negative", datetime.timedelta(seconds=-1)),
        ("timezone utc", datetime.timezone.utc),
        ("timezone +02:00", datetime.timezone(datetime.timedelta(hours=2))),
        ("timezone named", datetime.timezone(datetime.timedelta(hours=-5), "EST")),
        ("ZoneInfo", ZoneInfo("Europe/Paris")),
        ("Enum", Color.RED), ("IntEnum", Level.HIGH), ("StrEnum", Mode.FAST),
        ("Path", pathlib.Path("/srv/x")), ("Path relative", pathlib.Path("a/b.txt")),
        ("re", re.compile("a+", re.I)),
        ("IPv4Address", ipaddress.IPv4Address("192.168.0.1")),
        ("IPv4Network", ipaddress.IPv4Network("10.0.0.0/8")),
        ("IPv6Address", ipaddress.IPv6Address("::1")),
        ("pydantic v2", Model(a=1)), ("pydantic v2 nested", Outer(inner=Model(a=2, b="y"), items=[1, 2])),
    ]
    if pydantic_v1 is not None:
        c.append(("pydantic v1", ModelV1(a=1)))
    c += [
        ("namedtuple typing", NT(1, "q")), ("namedtuple collections", Pair(1, [2])),
        ("dataclass", DC(1, [2])),
        ("Send", Send("node", {"i": 1})), ("Send timeout", Send("node", 7, timeout=2.5)),
        ("Interrupt", Interrupt(value="v", id="abc")),
        ("Interrupt schema", Interrupt(value={"q": 1}, id="def", response_schema={"type": "string"})),
        ("Interrupt list", [Interrupt(value="q1", id="89dff3e2fdb4eca8aa374a1752471de2")]),
        ("Command resume", Command(resume="r")),
        ("Command goto update", Command(goto="n", update={"k": 1})),
        ("Command goto Send", Command(goto=[Send("w", {"i": 0})])),
        ("Overwrite", Overwrite(value=[1])),
        ("HumanMessage", HumanMessage(content="hi", id="m1")),
        ("AIMessage tool_calls", AIMessage(content="", id="m2",
                                           tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "call_1"}])),
        ("ToolMessage", ToolMessage(content="result", tool_call_id="call_1", id="m3")),
        ("messages list", [HumanMessage(content="a", id="h1"), AIMessage(content="b", id="a1")]),
        ("exception", ValueError("bad")), ("exception KeyError", KeyError("k")),
        ("SecretStr", SecretStr("s3cret")),
        ("ext6 numpy-shaped (hand-made)", ormsgpack.Ext(6, ormsgpack.packb(["<i8", [2], "C", b"\x01" + b"\x00" * 7
                                                                           + b"\x02" + b"\x00" * 7]))),
        ("ext7 DeltaSnapshot", _DeltaSnapshot([1, 2])),
        ("ext unknown code 42", ormsgpack.Ext(42, b"\x01")),
        ("ext0 malformed payload", ormsgpack.Ext(0, ormsgpack.packb([1, 2]))),
        ("ext0 undecodable payload", ormsgpack.Ext(0, b"\xc1")),
    ]
    return c


def is_plain(v, top=True) -> bool:
    if v is None:
        return True
    if isinstance(v, (bool, str, int)):
        return type(v) in (bool, str, int)  # not StrEnum / IntEnum / other subclasses
    if isinstance(v, float):
        return type(v) is float and math.isfinite(v)
    if isinstance(v, bytes):
        return type(v) is bytes
    if isinstance(v, list):
        return type(v) is list and all(is_plain(x, False) for x in v)
    if isinstance(v, dict):
        return type(v) is dict and all(isinstance(k, str) and is_plain(x, False) for k, x in v.items())
    return False


def from_view(v):
    """Rebuild the Python value of a plain view (the inverse a JSON-view encoder implements)."""
    if isinstance(v, dict):
        if set(v) == {"__type__", "hex"} and v["__type__"] == "bytes":
            return bytes.fromhex(v["hex"])
        return {k: from_view(x) for k, x in v.items()}
    if isinstance(v, list):
        return [from_view(x) for x in v]
    return v


def rich_graph(saver, ratio=math.nan):
    class Rich(TypedDict):
        msgs: Annotated[list, add_messages]
        nums: Annotated[list, operator.add]
        when: datetime.datetime
        ids: set
        tags: frozenset
        blob: bytes
        uid: uuid.UUID
        amount: decimal.Decimal
        model: Model
        ratio: float
        pair: tuple
        by_int: dict

    def tool(state):
        return {
            "msgs": [AIMessage(content="", id="a1",
                               tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "call_1"}]),
                     ToolMessage(content="found", tool_call_id="call_1", id="t1")],
            "nums": [2],
            "when": datetime.datetime(2024, 5, 4, 6, 32, 42, tzinfo=datetime.timezone.utc),
            "ids": {3, 1, 2},
            "tags": frozenset([7]),
            "blob": b"\x00\xff",
            "uid": uuid.UUID("12345678-1234-5678-1234-567812345678"),
            "amount": decimal.Decimal("9.99"),
            "model": Model(a=5),
            "ratio": ratio,
            "pair": (1, "two"),
            "by_int": {1: "one", 2: "two"},
        }

    return (StateGraph(Rich).add_node("tool", tool).add_edge(START, "tool").add_edge("tool", END)
            .compile(checkpointer=saver))


def json_graph(saver):
    class JState(TypedDict):
        x: int

    return (StateGraph(JState).add_node("n", lambda s: {"x": s["x"] + 1}).add_edge(START, "n")
            .add_edge("n", END).compile(checkpointer=saver))


def insert_json_thread(conn, thread_id, checkpoint_id, writes):
    cp = {"v": 4, "id": checkpoint_id, "ts": "2024-05-04T06:32:42.235444+00:00",
          "channel_values": {"x": 1}, "channel_versions": {"x": "00000000000000000000000000000001.0.5"},
          "versions_seen": {}, "updated_channels": None}
    conn.execute("INSERT INTO checkpoints VALUES (?,?,?,?,?,?,?)",
                 (thread_id, "", cp["id"], None, "json", json.dumps(cp).encode(),
                  b'{"source": "input", "step": -1, "parents": {}}'))
    for idx, (task_id, channel, value_json) in enumerate(writes):
        conn.execute("INSERT INTO writes VALUES (?,?,?,?,?,?,?,?,?)",
                     (thread_id, "", cp["id"], task_id, "", idx, channel, "json", value_json.encode()))
    conn.commit()


def main():
    fx = Fixture("serde")
    vectors = []
    # the value vectors are the serializer's, not a saver's: made in the SQLite run only
    if not fx.pg:
        fx.conn.execute("CREATE TABLE serde (name TEXT, type TEXT, value BLOB)")
    for name, value in cases():
        typ, data = SERDE.dumps_typed(value)
        vec = {"name": name, "type": typ, "hex": data.hex(), "view": view(value), "plain": is_plain(value)}
        if vec["plain"]:
            # the JSON view of a plain value must round-trip to the exact same bytes
            back = from_view(json.loads(json.dumps(vec["view"], ensure_ascii=False)))
            t2, d2 = SERDE.dumps_typed(back)
            if (t2, d2) != (typ, data):
                raise AssertionError(f"plain vector {name!r} does not round-trip through its view")
        vectors.append(vec)
        if not fx.pg:
            fx.conn.execute("INSERT INTO serde VALUES (?,?,?)", (name, typ, data))
    if not fx.pg:
        fx.conn.commit()
    for v in (2**64, -(2**63) - 1):
        fx.attempt(f"dumps_typed({v})", SERDE.dumps_typed, v)
    fx.attempt("loads_typed(('pickle', b''))", SERDE.loads_typed, ("pickle", b""))

    path = os.path.join(fx.out_dir, "serde_vectors.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write("[\n")
        for i, vec in enumerate(vectors):
            f.write(json.dumps(vec, ensure_ascii=False, allow_nan=False))
            f.write(",\n" if i + 1 < len(vectors) else "\n")
        f.write("]\n")

    rich_input = {"msgs": [HumanMessage(content="hi", id="h1")], "nums": [1]}
    if fx.pg:
        # PostgresSaver keeps a float channel value inline in JSONB, which has no NaN: the loop
        # checkpoint's put fails (recorded), the rest of the thread stays as it was left
        g = rich_graph(fx.saver)
        fx.attempt("rich_nan: invoke (ratio=NaN)", g.invoke, rich_input,
                   {"configurable": {"thread_id": "rich_nan"}}, **D())
        # what the failed run left (a checkpoint with the node's writes pending) is dropped: its
        # live view needs add_messages, which the snapshot layer does not model
        fx.saver.delete_thread("rich_nan")
        g = rich_graph(fx.saver, ratio=0.25)
    else:
        g = rich_graph(fx.saver)
    g.invoke(rich_input, {"configurable": {"thread_id": "rich"}}, **D())
    fx.dump(g, "rich")

    if fx.pg:
        # hand-made `type='json'` checkpoints are a SqliteSaver matter (PostgresSaver's checkpoint is JSONB)
        fx.extra["vectors_file"] = "serde_vectors.json"
        fx.extra["vector_count"] = len(vectors)
        fx.finish()
        return
    jg = json_graph(fx.saver)
    insert_json_thread(fx.conn, "jt", "1ef4f797-8335-6428-8001-8a1503f9b875", [("t1", "x", "5")])
    insert_json_thread(fx.conn, "jt_lc", "1ef4f797-8335-6428-8001-8a1503f9b876", [
        ("t1", "x", json.dumps({"lc": 2, "type": "constructor", "id": ["uuid", "UUID"],
                                "args": ["12345678123456781234567812345678"]})),
        ("t1", "y", json.dumps({"lc": 2, "type": "constructor", "id": ["collections", "OrderedDict"],
                                "args": [[["a", 1]]]})),
        ("t1", "z", json.dumps({"a": [1, 2, {"b": None}], "f": 1.5})),
    ])
    fx.dump(jg, "jt")
    fx.dump(jg, "jt_lc")
    fx.extra["vectors_file"] = "serde_vectors.json"
    fx.extra["vector_count"] = len(vectors)
    fx.finish()


if __name__ == "__main__":
    main()

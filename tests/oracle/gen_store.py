"""LangGraph's key-value store kept in the checkpoint file (issue 20): what `superstep store ls|get`
reads. SqliteStore on the same file as the SqliteSaver (PostgresStore on the same database with
SUPERSTEP_ORACLE_PG), as superstep gives a Python graph its store.

thread 'mem' : START -> remember -> END; `remember` puts items through the store the graph was
               compiled with (runtime.store): two users' memories, a nested namespace, a namespace
               whose labels hold LIKE wildcards ("u_1", "100%"), hostile strings (terminal escapes,
               bidi, newline) in keys and values, a non-ASCII label, an updated item, a deleted one.

The JSON's "store": LangGraph's own answers — list_namespaces(), and search(ns) of every namespace
(Item.dict(): namespace, key, value, created_at, updated_at).
"""
import sqlite3
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from common import D, Fixture

HOSTILE = {
    "clear": "\x1b[2J\x1b[H",
    "osc52": "\x1b]52;c;cHduZWQ=\x07",
    "bidi": "abc\u202edcba",
    "newline": "two\nlines",
    "c1": "\u009b31m",
}


class State(TypedDict):
    n: int


def remember(state: State, runtime: Runtime):
    s = runtime.store
    s.put(("memories", "u1"), "tea", {"content": "likes tea", "context": "said so"})
    s.put(("memories", "u1"), "rust", {"content": "writes rust"})
    s.put(("memories", "u1"), "rust", {"content": "writes rust daily"})  # updated
    s.put(("memories", "u10"), "zig", {"content": "tries zig"})
    s.put(("memories", "u_1"), "wild", {"content": "an underscore label"})
    s.put(("stats", "100%"), "pct", {"n": 100})
    s.put(("users", "u1", "profile"), "me", {"name": "Ada", "tags": ["a", "b"], "nested": {"k": [1, 2.5, None, True]}})
    s.put(("users", "ünïcode"), "k", {"v": "ok"})
    s.put(("hostile",), "gone", {"v": 1})
    s.delete(("hostile",), "gone")
    for name, payload in HOSTILE.items():
        s.put(("hostile",), f"{name}{payload}", {"text": f"x{payload}y", name: payload})
    return {"n": state["n"] + 1}


def main():
    fx = Fixture("store")
    if fx.pg:
        from langgraph.store.postgres import PostgresStore

        cm = PostgresStore.from_conn_string(fx.pg_url)
        store = cm.__enter__()
        store.setup()
    else:
        from langgraph.store.sqlite import SqliteStore

        store_conn = sqlite3.connect(fx.path, check_same_thread=False, isolation_level=None)
        store = SqliteStore(store_conn)
    g = (StateGraph(State).add_node("remember", remember)
         .add_edge(START, "remember").add_edge("remember", END)
         .compile(checkpointer=fx.saver, store=store))
    g.invoke({"n": 0}, {"configurable": {"thread_id": "mem"}}, **D())
    fx.dump(g, "mem")
    namespaces = sorted(list(ns) for ns in store.list_namespaces(limit=1000))
    items = []
    for ns in namespaces:
        items.extend(i.dict() for i in store.search(tuple(ns), limit=1000) if list(i.namespace) == ns)
    fx.extra["store"] = {"namespaces": namespaces, "items": items}
    if fx.pg:
        cm.__exit__(None, None, None)
    else:
        store_conn.close()
    fx.finish()


if __name__ == "__main__":
    main()

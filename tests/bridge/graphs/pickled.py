"""pickled: a graph whose checkpointer pickles what msgpack cannot encode —
`JsonPlusSerializer(pickle_fallback=True)` — so its checkpoints and writes are `pickle`-typed rows.

`write(db)` runs it with LangGraph's own SqliteSaver on `db` (thread "p", paused before `more`):
the fixture the tests read is written by LangGraph, never by superstep."""
import sqlite3
from typing import NotRequired, TypedDict

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph


class Opaque:
    """A value msgpack cannot encode (a plain class)."""

    def __init__(self, v):
        self.v = v

    def __repr__(self):
        return f"Opaque({self.v!r})"


class State(TypedDict):
    n: int
    blob: NotRequired[object]


def make(state: State):
    return {"n": state["n"] + 1, "blob": Opaque(state["n"])}


def more(state: State):
    return {"n": state["n"] + 10}


serde = JsonPlusSerializer(pickle_fallback=True)
b = StateGraph(State)
b.add_node("make", make)
b.add_node("more", more)
b.add_edge(START, "make")
b.add_edge("make", "more")
b.add_edge("more", END)
# the app's own checkpointer: superstep replaces it with LangGraph's saver on --db, keeping its serde
graph = b.compile(checkpointer=SqliteSaver(sqlite3.connect(":memory:", check_same_thread=False), serde=serde), interrupt_before=["more"])


def write(db):
    g = b.compile(checkpointer=SqliteSaver(sqlite3.connect(db, check_same_thread=False), serde=serde), interrupt_before=["more"])
    g.invoke({"n": 0}, {"configurable": {"thread_id": "p"}})

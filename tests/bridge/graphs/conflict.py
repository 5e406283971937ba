"""conflict: `prepare` commits, then `a` and `b` both write `winner` (a plain LastValue key) in
one superstep: LangGraph raises InvalidUpdateError after the superstep that committed `prepare`."""
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    log: Annotated[list, operator.add]
    winner: str


def prepare(state: State):
    return {"log": ["prepared"]}


def a(state: State):
    return {"winner": "a"}


def b(state: State):
    return {"winner": "b"}


builder = StateGraph(State)
builder.add_node("prepare", prepare)
builder.add_node("a", a)
builder.add_node("b", b)
builder.add_edge(START, "prepare")
builder.add_edge("prepare", "a")
builder.add_edge("prepare", "b")
builder.add_edge("a", END)
builder.add_edge("b", END)
graph = builder.compile()

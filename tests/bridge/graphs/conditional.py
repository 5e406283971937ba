"""conditional: a counter loops through a conditional edge with a path map, fans out to two
reviewers (edge order from a Python set) and joins."""
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    n: int
    limit: int
    log: Annotated[list, operator.add]


def count(state: State):
    return {"n": state["n"] + 1, "log": [f"count {state['n'] + 1}"]}


def route(state: State):
    return "again" if state["n"] < state["limit"] else "done"


def check_a(state: State):
    return {"log": ["a ok"]}


def check_b(state: State):
    return {"log": ["b ok"]}


def finish(state: State):
    return {"log": ["finish"]}


builder = StateGraph(State)
builder.add_node("count", count)
builder.add_node("check_a", check_a)
builder.add_node("check_b", check_b)
builder.add_node("finish", finish)
builder.add_edge(START, "count")
builder.add_conditional_edges("count", route, {"again": "count", "done": "split"})
builder.add_node("split", lambda s: {"log": ["split"]})
builder.add_edge("split", "check_a")
builder.add_edge("split", "check_b")
builder.add_edge(["check_a", "check_b"], "finish")
builder.add_edge("finish", END)
graph = builder.compile()

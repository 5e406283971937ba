"""parallel: two branches interrupt in the same superstep; answers go by interrupt id."""
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt


class State(TypedDict):
    vals: Annotated[list, operator.add]


def a(state: State):
    return {"vals": ["a:" + str(interrupt("question_a"))]}


def b(state: State):
    return {"vals": ["b:" + str(interrupt("question_b"))]}


def join(state: State):
    return {"vals": ["joined"]}


builder = StateGraph(State)
builder.add_node("a", a)
builder.add_node("b", b)
builder.add_node("join", join)
builder.add_edge(START, "a")
builder.add_edge(START, "b")
builder.add_edge(["a", "b"], "join")
builder.add_edge("join", END)
graph = builder.compile()

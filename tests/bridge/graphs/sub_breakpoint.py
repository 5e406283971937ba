"""sub_breakpoint: a subgraph compiled with its own breakpoint (interrupt_before=["ask"]) used
as a node; the parent's stream ends inside it, invoke(None) goes on, ask() then interrupts."""
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt


class State(TypedDict):
    task: str
    notes: Annotated[list, operator.add]


def prepare(state: State):
    return {"notes": ["sub prepared " + state["task"]]}


def ask(state: State):
    answer = interrupt({"need": "detail for " + state["task"]})
    return {"notes": [f"sub got {answer}"]}


sub = StateGraph(State)
sub.add_node("prepare", prepare)
sub.add_node("ask", ask)
sub.add_edge(START, "prepare")
sub.add_edge("prepare", "ask")
sub.add_edge("ask", END)
inner = sub.compile(interrupt_before=["ask"])


def start(state: State):
    return {"notes": ["parent start"]}


def wrap_up(state: State):
    return {"notes": ["parent done"]}


builder = StateGraph(State)
builder.add_node("start", start)
builder.add_node("inner", inner)
builder.add_node("wrap_up", wrap_up)
builder.add_edge(START, "start")
builder.add_edge("start", "inner")
builder.add_edge("inner", "wrap_up")
builder.add_edge("wrap_up", END)
graph = builder.compile()

"""send: map-reduce with Send; each mapped task gets its own input."""
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send


class State(TypedDict):
    items: list
    results: Annotated[list, operator.add]
    total: int


def plan(state: State):
    return {"results": []}


def fan_out(state: State):
    return [Send("work", {"item": i}) for i in state["items"]]


def work(arg: dict):
    print("working on", arg["item"])
    return {"results": [arg["item"] * 2]}


def reduce(state: State):
    return {"total": sum(state["results"])}


builder = StateGraph(State)
builder.add_node("plan", plan)
builder.add_node("work", work)
builder.add_node("reduce", reduce)
builder.add_edge(START, "plan")
builder.add_conditional_edges("plan", fan_out, ["work"])
builder.add_edge("work", "reduce")
builder.add_edge("reduce", END)
graph = builder.compile()

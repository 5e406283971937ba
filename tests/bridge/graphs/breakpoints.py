"""breakpoints: a compiled-in interrupt_before on `publish` (fixed), runtime ones from the ops."""
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    text: str
    log: Annotated[list, operator.add]


def write(state: State):
    return {"text": state["text"] + " written", "log": ["write"]}


def edit(state: State):
    return {"text": state["text"] + " edited", "log": ["edit"]}


def review(state: State):
    return {"log": ["review"]}


def publish(state: State):
    return {"log": ["publish"]}


builder = StateGraph(State)
for name, fn in [("write", write), ("edit", edit), ("review", review), ("publish", publish)]:
    builder.add_node(name, fn)
builder.add_edge(START, "write")
builder.add_edge("write", "edit")
builder.add_edge("edit", "review")
builder.add_edge("review", "publish")
builder.add_edge("publish", END)
graph = builder.compile(interrupt_before=["publish"])

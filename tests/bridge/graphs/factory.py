"""factory: `make_graph(config)` builds the graph (as langgraph dev accepts); `make_cm` is a
context-manager factory."""
import contextlib
import operator
from typing import Annotated, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def double(state: State):
    return {"x": state["x"] * 2, "log": ["double"]}


def inc(state: State):
    return {"x": state["x"] + 1, "log": ["inc"]}


def _builder():
    b = StateGraph(State)
    b.add_node("double", double)
    b.add_node("inc", inc)
    b.add_edge(START, "double")
    b.add_edge("double", "inc")
    b.add_edge("inc", END)
    return b


def make_graph(config: RunnableConfig):
    return _builder().compile()


@contextlib.contextmanager
def make_cm(config: RunnableConfig):
    yield _builder().compile()

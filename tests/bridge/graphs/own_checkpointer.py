"""own_checkpointer: the app compiles with its own InMemorySaver; superstep replaces it with
LangGraph's SqliteSaver on the chosen file, as langgraph dev does."""
import operator
from typing import Annotated, TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt


class State(TypedDict):
    log: Annotated[list, operator.add]


def one(state: State):
    return {"log": ["one"]}


def two(state: State):
    return {"log": ["two:" + str(interrupt("go on?"))]}


builder = StateGraph(State)
builder.add_node("one", one)
builder.add_node("two", two)
builder.add_edge(START, "one")
builder.add_edge("one", "two")
builder.add_edge("two", END)
graph = builder.compile(checkpointer=InMemorySaver())

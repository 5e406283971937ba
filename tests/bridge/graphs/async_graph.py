"""async_graph: async nodes only (superstep runs it with astream + AsyncSqliteSaver)."""
import asyncio
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt


class State(TypedDict):
    q: str
    log: Annotated[list, operator.add]


async def fetch(state: State):
    await asyncio.sleep(0)
    print("fetched", state["q"])
    return {"log": ["fetched"]}


async def confirm(state: State):
    ok = interrupt("confirm " + state["q"])
    return {"log": [f"confirmed {ok}"]}


async def store(state: State):
    await asyncio.sleep(0)
    return {"log": ["stored"]}


builder = StateGraph(State)
builder.add_node("fetch", fetch)
builder.add_node("confirm", confirm)
builder.add_node("store", store)
builder.add_edge(START, "fetch")
builder.add_edge("fetch", "confirm")
builder.add_edge("confirm", "store")
builder.add_edge("store", END)
graph = builder.compile()

"""envapp: puts two environment variables into the state (langgraph.json's `.env` vs the shell)."""
import os
from typing import TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict, total=False):
    model: str
    region: str


def read_env(state: State):
    return {"model": os.environ.get("APP_MODEL", ""), "region": os.environ.get("APP_REGION", "")}


builder = StateGraph(State)
builder.add_node("read_env", read_env)
builder.add_edge(START, "read_env")
builder.add_edge("read_env", END)
graph = builder.compile()

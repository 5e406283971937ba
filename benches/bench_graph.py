"""The graph used by the inspector benchmark (shared by gen_bench_db.py and lg_inspect.py).

A single `step` node loops on itself through a conditional edge:

    START -> step -> route(state) -> step | END

State: `n: int` (last value), `log: Annotated[list, operator.add]` (one short string appended per step),
`note: str` (last value). Each run of `step` is one superstep, so one invoke with `loops` iterations
writes `loops + 2` checkpoints (input checkpoint at step -1, the START checkpoint at step 0, then one
per `step` run).

`loops` only matters when the graph runs (the route function reads it); inspection (`get_state`,
`get_state_history`) never calls `route`, so lg_inspect.py compiles the same definition with the default.
"""
from __future__ import annotations

import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    n: int
    log: Annotated[list, operator.add]
    note: str


def build_graph(checkpointer, loops: int = 24):
    def step(state: State):
        n = state["n"] + 1
        return {"n": n, "log": [f"step {n}"], "note": f"at {n}"}

    def route(state: State):
        return "step" if state["n"] < loops else END

    return (
        StateGraph(State)
        .add_node("step", step)
        .add_edge(START, "step")
        .add_conditional_edges("step", route, ["step", END])
        .compile(checkpointer=checkpointer)
    )


def thread_id(i: int, total: int) -> str:
    """Thread ids t0000, t0001, ... (at least 4 digits, wider if needed)."""
    return f"t{i:0{max(4, len(str(total - 1)))}d}"

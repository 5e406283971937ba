"""The bridge benchmark's graph (benches/bridge.rs): one node that counts, looping on itself until
`i == n` — N supersteps, each a trivial node, so what is measured is the per-superstep machinery.

    python benches/bridge_graph.py DB N [invoke|stream]
        the plain side: N supersteps straight through with SqliteSaver on DB, as one `invoke`, or
        as `stream(stream_mode=["checkpoints", "tasks"])` (what the bridge pulls); prints seconds
"""

import json
import sys
import time
from typing import TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    i: int
    n: int


def tick(state: State) -> dict:
    return {"i": state["i"] + 1}


def more(state: State) -> str:
    return "tick" if state["i"] < state["n"] else END


builder = StateGraph(State)
builder.add_node("tick", tick)
builder.add_edge(START, "tick")
builder.add_conditional_edges("tick", more, ["tick", END])
graph = builder.compile()


if __name__ == "__main__":
    from langgraph.checkpoint.sqlite import SqliteSaver

    db, n = sys.argv[1], int(sys.argv[2])
    how = sys.argv[3] if len(sys.argv) > 3 else "invoke"
    with SqliteSaver.from_conn_string(db) as saver:
        g = graph.copy(update={"checkpointer": saver})
        cfg = {"configurable": {"thread_id": "bench"}, "recursion_limit": n + 10}
        # a warm-up thread first: the bridge side has loaded and run its imports before timing too
        g.invoke({"i": 0, "n": 50}, {"configurable": {"thread_id": "warm"}, "recursion_limit": 60})
        t0 = time.perf_counter()
        if how == "invoke":
            out = g.invoke({"i": 0, "n": n}, cfg)
        else:
            for _ in g.stream({"i": 0, "n": n}, cfg, stream_mode=["checkpoints", "tasks"]):
                pass
        secs = time.perf_counter() - t0
        assert g.get_state(cfg).values["i"] == n
        steps = sum(1 for _ in saver.list(cfg))
    print(json.dumps({"secs": secs, "checkpoints": steps}))

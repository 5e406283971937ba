"""The agent-shaped graph the `du` benchmark store is written with (benches/du_bench.py): each step
appends one AIMessage of --message-bytes to `messages` (add_messages) and a short line to `log`, so
SqliteSaver stores the whole, growing conversation in every checkpoint (the quadratic growth
behind the 135 GB / 19 GB stores users report)."""
import operator
from typing import Annotated, TypedDict

from langchain_core.messages import AIMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages


class State(TypedDict):
    n: int
    steps: int
    size: int
    messages: Annotated[list, add_messages]
    log: Annotated[list, operator.add]


def agent(s):
    n = s.get("n", 0) + 1
    text = (f"step {n}: " + "lorem ipsum dolor sit amet " * (s["size"] // 27 + 1))[: s["size"]]
    return {"n": n, "messages": [AIMessage(content=text, id=f"m{n}")], "log": [f"step {n}"]}


def build(saver):
    return (StateGraph(State).add_node("agent", agent).add_edge(START, "agent")
            .add_conditional_edges("agent", lambda s: "agent" if s["n"] < s["steps"] else END, ["agent", END])
            .compile(checkpointer=saver))

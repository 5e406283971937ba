"""The graph of tests/oracle/gen_delta.py (which wrote tests/fixtures/delta.sqlite), importable:
three DeltaChannel keys — `log` (operator.add), `messages` (LangGraph's message delta reducer),
`custom` (merge_unique, the app's own batch reducer: superstep cannot run it, LangGraph can)."""
import operator
from typing import Annotated, TypedDict

from langchain_core.messages import AIMessage, RemoveMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import _messages_delta_reducer


def merge_unique(state, writes):
    """A user batch reducer: items not seen yet, in order."""
    out = list(state)
    for w in writes:
        for x in w:
            if x not in out:
                out.append(x)
    return out


class S(TypedDict):
    n: int
    log: Annotated[list, DeltaChannel(operator.add, snapshot_frequency=3)]
    messages: Annotated[list, DeltaChannel(_messages_delta_reducer, snapshot_frequency=2)]
    custom: Annotated[list, DeltaChannel(merge_unique, snapshot_frequency=4)]


def tick(state):
    n = state.get("n", 0) + 1
    msgs = [AIMessage(content=f"tick {n}", id=f"m-{n}")]
    if n == 4:
        msgs.append(AIMessage(content="tick 1, edited", id="m-1"))
    if n == 5:
        msgs.append(RemoveMessage(id="m-2"))
    return {"n": n, "log": f"t{n}", "messages": msgs, "custom": [n % 3, f"x{n % 2}"]}


def again(state):
    return "tick" if state["n"] < 7 else END


graph = StateGraph(S).add_node("tick", tick).add_edge(START, "tick").add_conditional_edges("tick", again, ["tick", END]).compile()

"""DeltaChannel state keys (LangGraph 1.2 beta; issue 12 item 8): what the inspector must rebuild.

A DeltaChannel stores nothing in a checkpoint's channel values except a `_DeltaSnapshot` blob (msgpack
ext 7) every `snapshot_frequency` updates; in between, LangGraph rebuilds the value from the nearest
ancestor holding one plus the ancestors' writes, through the batch reducer
(`get_delta_channel_history`). Metadata carries `counters_since_delta_snapshot`.

thread 'loop'     : START -> tick -> (tick while n < 7) -> END. Every tick appends to three delta keys:
                    `log` (DeltaChannel(operator.add, snapshot_frequency=3): the writes become items),
                    `messages` (DeltaChannel(_messages_delta_reducer, snapshot_frequency=2): one
                    AIMessage per tick; the tick at n == 4 replaces message m-1 by id and the one at
                    n == 5 removes m-2 with RemoveMessage), `custom` (DeltaChannel(merge_unique,
                    snapshot_frequency=4): a user function, unknown to superstep), and sets `n`.
thread 'paused'   : the same graph with interrupt_before=["tick"] after three ticks: the live view
                    (values rebuilt at a checkpoint with no snapshot) and an update_state on a delta key.
thread 'forked'   : 'loop' to the end, then a replay from the checkpoint after the second tick with new
                    writes: the walk follows the parent chain, not the newest rows.
"""
import operator
from typing import Annotated, TypedDict

from langchain_core.messages import AIMessage, RemoveMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import _messages_delta_reducer

from common import D, Fixture


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


def build(saver):
    return (StateGraph(S).add_node("tick", tick)
            .add_edge(START, "tick").add_conditional_edges("tick", again, ["tick", END])
            .compile(checkpointer=saver))


def main():
    fx = Fixture("delta")
    g = build(fx.saver)
    start = {"n": 0, "log": ["start"], "messages": [], "custom": []}

    cfg = {"configurable": {"thread_id": "loop"}}
    fx.returned("loop run", g.invoke(start, cfg, **D()))
    fx.dump(g, "loop")

    cfg = {"configurable": {"thread_id": "paused"}}
    for _ in range(4):
        fx.returned("paused run", g.invoke(start if _ == 0 else None, cfg, interrupt_before=["tick"], **D()))
    g.update_state(cfg, {"log": "edited", "messages": [AIMessage(content="from update_state", id="u-1")]})
    fx.dump(g, "paused")

    cfg = {"configurable": {"thread_id": "forked"}}
    fx.returned("forked run", g.invoke(start, cfg, **D()))
    hist = list(g.get_state_history(cfg))
    after_two = next(s for s in hist if s.values.get("n") == 2 and s.next == ("tick",))
    fx.returned("forked replay", g.invoke(None, after_two.config, **D()))
    fx.dump(g, "forked")
    fx.finish()


if __name__ == "__main__":
    main()

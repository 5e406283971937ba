"""Parallel fan-out / fan-in (spec §6.2 joins, §6.6c-e, §13.2).

thread 'fan'      : START->a, START->b, a->c, b->c (plain edges: c runs once, via branch:to:c).
thread 'join_sync': START->a, START->b, b->b2, waiting edge [a, b2]->c (NamedBarrierValue 'join:a+b2:c'),
                    durability="sync": the step-1 checkpoint stores join = {"a"}.
thread 'join'     : the same graph with the DEFAULT async durability. This exposes the async serialisation
                    race of spec §13.2 (the step-1 checkpoint may be stored with {"a","b2"}, which makes its
                    history entry show a phantom `c` task). Whether the race hits depends on timing; the DB is
                    what it is and LangGraph's get_state is computed from it, so it is a valid fixture either
                    way. `extra.join_step1_barrier` records what was stored this time.
thread 'join_race': the same async run, but through a SqliteSaver subclass whose put() waits 0.3 s before
                    serialising (a slow disk). LangGraph's own loop then mutates the barrier set before the
                    step-1 checkpoint is encoded, so the race of §13.2 happens deterministically: step 1 is
                    stored with {"a","b2"} and its history entry lists next=['b2','c'].
thread 'send'     : START->fan; fan's conditional edge returns [Send('w', {'i': k}) for k in 0..2];
                    w->collect->END (PUSH tasks, __pregel_tasks).
"""
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

import time

from common import D, Fixture, view


def slow_put(saver_cls):
    """A subclass of the fixture's saver whose checkpoint puts are slow (the serialisation happens
    after the sleep)."""

    class SlowPutSaver(saver_cls):
        def put(self, config, checkpoint, metadata, new_versions):
            time.sleep(0.3)
            return super().put(config, checkpoint, metadata, new_versions)

    return SlowPutSaver


class State(TypedDict):
    log: Annotated[list[str], operator.add]


def mk(name):
    def f(state):
        return {"log": [name]}
    f.__name__ = name
    return f


class S3(TypedDict):
    log: Annotated[list, operator.add]


def fan(state):
    return {"log": ["fan"]}


def w(arg):
    return {"log": [f"w{arg['i']}"]}


def collect(state):
    return {"log": ["collect"]}


def main():
    fx = Fixture("parallel")
    g1 = (StateGraph(State).add_node("a", mk("a")).add_node("b", mk("b")).add_node("c", mk("c"))
          .add_edge(START, "a").add_edge(START, "b").add_edge("a", "c").add_edge("b", "c").add_edge("c", END)
          .compile(checkpointer=fx.saver))
    g1.invoke({"log": []}, {"configurable": {"thread_id": "fan"}}, **D())
    fx.dump(g1, "fan")

    def join_builder():
        return (StateGraph(State).add_node("a", mk("a")).add_node("b", mk("b")).add_node("b2", mk("b2"))
                .add_node("c", mk("c"))
                .add_edge(START, "a").add_edge(START, "b").add_edge("b", "b2").add_edge(["a", "b2"], "c")
                .add_edge("c", END))

    g2 = join_builder().compile(checkpointer=fx.saver)
    g2.invoke({"log": []}, {"configurable": {"thread_id": "join_sync"}}, **D())
    g2.invoke({"log": []}, {"configurable": {"thread_id": "join"}}, durability="async")
    slow = slow_put(type(fx.saver))(fx.conn)
    g2_slow = join_builder().compile(checkpointer=slow)
    g2_slow.invoke({"log": []}, {"configurable": {"thread_id": "join_race"}}, durability="async")
    fx.dump(g2, "join_sync")
    fx.dump(g2, "join")
    fx.dump(g2, "join_race")
    barrier = {}
    for tid in ("join_sync", "join", "join_race"):
        for s in g2.get_state_history({"configurable": {"thread_id": tid}}):
            if s.metadata["step"] == 1:
                tup = fx.saver.get_tuple(s.config)
                barrier[tid] = view(tup.checkpoint["channel_values"].get("join:a+b2:c"))
    fx.extra["join_step1_barrier"] = barrier

    g3 = (StateGraph(S3).add_node("fan", fan).add_node("w", w).add_node("collect", collect)
          .add_edge(START, "fan")
          .add_conditional_edges("fan", lambda s: [Send("w", {"i": i}) for i in range(3)], ["w"])
          .add_edge("w", "collect").add_edge("collect", END)
          .compile(checkpointer=fx.saver))
    g3.invoke({"log": []}, {"configurable": {"thread_id": "send"}}, **D())
    fx.dump(g3, "send")
    fx.finish()


if __name__ == "__main__":
    main()

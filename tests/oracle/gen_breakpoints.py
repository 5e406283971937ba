"""Static breakpoints (spec §8). Graph START -> a -> b -> c -> END, state {log: Annotated[list, add]}.
Breakpoints leave no rows in the DB; a paused thread looks like one whose next step has not run yet.

  'before_paused' : compile(interrupt_before=['b']); invoke -> paused before b (next=['b'], no interrupts)
  'before'        : ... then invoke(None) -> runs b, c; then invoke(None) again -> nothing happens
  'after_paused'  : compile(interrupt_after=['b']); invoke -> paused after b (next=['c'])
  'after'         : ... then invoke(None) -> runs c
  'star_paused'   : compile(interrupt_before='*'); invoke -> paused before a (__start__ is hidden, never pauses)
  'star'          : ... then invoke(None) until next is empty (one node per invoke)
  'newinput'      : interrupt_before=['b']; invoke {'log': ['x']}, then NEW input {'log': ['y']} while paused:
                    the pending b is discarded, a new input checkpoint is written, the run pauses before b again
  'head_fork'     : interrupt_before=['b']; invoke, then invoke(None, config WITH the head checkpoint_id):
                    time travel to the head itself still writes a 'fork' checkpoint, then b and c run
`extra.breakpoints` lists the compile-time breakpoints used for each thread.
"""
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph

from common import D, Fixture


class State(TypedDict):
    log: Annotated[list[str], operator.add]


def mk(name):
    def f(state):
        return {"log": [name]}
    f.__name__ = name
    return f


def builder():
    return (StateGraph(State).add_node("a", mk("a")).add_node("b", mk("b")).add_node("c", mk("c"))
            .add_edge(START, "a").add_edge("a", "b").add_edge("b", "c").add_edge("c", END))


def cfg(tid):
    return {"configurable": {"thread_id": tid}}


def main():
    fx = Fixture("breakpoints")
    gb = builder().compile(checkpointer=fx.saver, interrupt_before=["b"])
    ga = builder().compile(checkpointer=fx.saver, interrupt_after=["b"])
    gs = builder().compile(checkpointer=fx.saver, interrupt_before="*")
    bp = {}

    gb.invoke({"log": []}, cfg("before_paused"), **D())
    gb.invoke({"log": []}, cfg("before"), **D())
    gb.invoke(None, cfg("before"), **D())
    label = "before: invoke(None) on a finished thread"
    fx.returned(label, fx.attempt(label, gb.invoke, None, cfg("before"), **D()))

    ga.invoke({"log": []}, cfg("after_paused"), **D())
    ga.invoke({"log": []}, cfg("after"), **D())
    ga.invoke(None, cfg("after"), **D())

    gs.invoke({"log": []}, cfg("star_paused"), **D())
    gs.invoke({"log": []}, cfg("star"), **D())
    for _ in range(10):
        if not gs.get_state(cfg("star")).next:
            break
        gs.invoke(None, cfg("star"), **D())

    gb.invoke({"log": ["x"]}, cfg("newinput"), **D())
    gb.invoke({"log": ["y"]}, cfg("newinput"), **D())

    gb.invoke({"log": []}, cfg("head_fork"), **D())
    head = gb.get_state(cfg("head_fork")).config
    gb.invoke(None, head, **D())

    for tid, g, kind in (("before_paused", gb, "b"), ("before", gb, "b"), ("after_paused", ga, "a"),
                         ("after", ga, "a"), ("star_paused", gs, "s"), ("star", gs, "s"),
                         ("newinput", gb, "b"), ("head_fork", gb, "b")):
        fx.dump(g, tid)
        bp[tid] = {"interrupt_before": {"b": ["b"], "a": [], "s": "*"}[kind],
                   "interrupt_after": {"b": [], "a": ["b"], "s": []}[kind]}
    fx.extra["breakpoints"] = bp
    fx.finish()


if __name__ == "__main__":
    main()

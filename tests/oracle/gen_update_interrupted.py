"""update_state while a dynamic interrupt is pending (spec §10.3, ex15).
Graph START -> ask (interrupt('q')) -> tail -> END, state {log: Annotated[list, add]}.

  'ui_paused' : paused at ask's interrupt (reference: the state before any update)
  'ui_updated': paused, then update_state({'log': ['patched']}) with as_node inferred -> '__start__' (ask has
                not finished, so __start__ holds the highest version): the update re-triggers START's edge, the
                new checkpoint has a fresh ask task with a NEW id and no interrupt
  'ui'        : ... then Command(resume='R'): the NULL RESUME is stored on the update checkpoint; ask re-runs
                from scratch and its interrupt() consumes 'R' at once, so ask completes and tail runs
  'ui2_updated': paused, then update_state({'log': ['manual-ask']}, as_node='ask'): the pending task id of ask
                is reused, so the update looks like ask's result; next=['tail']
  'ui2'       : ... then invoke(None) runs tail
"""
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from common import D, Fixture


class State(TypedDict):
    log: Annotated[list[str], operator.add]


def ask(state):
    return {"log": [f"ask:{interrupt('q')}"]}


def tail(state):
    return {"log": ["tail"]}


def cfg(tid):
    return {"configurable": {"thread_id": tid}}


def main():
    fx = Fixture("update_interrupted")
    g = (StateGraph(State).add_node("ask", ask).add_node("tail", tail)
         .add_edge(START, "ask").add_edge("ask", "tail").add_edge("tail", END).compile(checkpointer=fx.saver))

    g.invoke({"log": []}, cfg("ui_paused"), **D())
    for tid in ("ui_updated", "ui"):
        g.invoke({"log": []}, cfg(tid), **D())
        r = fx.attempt(f"{tid}: update_state({{'log': ['patched']}}) inferred as_node", g.update_state,
                       cfg(tid), {"log": ["patched"]})
        if r is not None:
            s = g.get_state(r)
            fx.event(f"{tid}: update_state inferred: new checkpoint source={s.metadata['source']} "
                     f"step={s.metadata['step']} next={list(s.next)}")
    fx.returned("ui: Command(resume='R')", g.invoke(Command(resume="R"), cfg("ui"), **D()))

    for tid in ("ui2_updated", "ui2"):
        g.invoke({"log": []}, cfg(tid), **D())
        g.update_state(cfg(tid), {"log": ["manual-ask"]}, as_node="ask")
    fx.returned("ui2: invoke(None)", g.invoke(None, cfg("ui2"), **D()))

    for tid in ("ui_paused", "ui_updated", "ui", "ui2_updated", "ui2"):
        fx.dump(g, tid)
    fx.finish()


if __name__ == "__main__":
    main()

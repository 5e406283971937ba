"""update_state (spec §10.3, §10.4). Graph U: START -> a -> b -> END, state {log: Annotated[list, add], x: str};
a returns {log: ['a'], x: 'A'}, b returns {log: ['b'], x: 'B'}.

  'u1'        : run to completion; update_state({'log': ['u1']}) with inferred as_node (b); then
                update_state({'log': ['ua']}, as_node='a') -> next=['b']; then invoke(None) runs b
  'u2_paused' : interrupt_before=['b']: invoke (paused before b), update_state({'x': 'edited'}, as_node='a')
  'u2'        : ... then invoke(None) runs b (the breakpoint does not fire again)
  'u3'        : run to completion; update_state(<step-1 checkpoint>, {'x': 'forked'}) (a superseded checkpoint,
                as_node inferred); invoke(None) from the head; update_state(<step-1 checkpoint>, None,
                as_node='__copy__') (fork whose parent is the step-1 checkpoint's parent); then
                update_state(head, None, as_node=END)
  'u4'        : fresh thread, update_state({'log': ['seed'], 'x': 's'}, as_node='__input__') -> input checkpoint
  'u5'        : fresh thread, update_state({'x': 'fresh'}, as_node='a') -> update checkpoint at step 0, no rows
Graph P: START -> a, START -> b, both write the LastValue key x (and log):
  'u6'        : invoke raises InvalidUpdateError (two writes to x in one step; nothing checkpointed for that
                step); then update_state({'log': ['?']}) infers as_node='__start__'
Graph F: START -> a3, START -> b3 (both write only log), both -> END:
  'u7'        : run to completion; update_state with inferred as_node raises 'Ambiguous update' (a3 and b3
                have equal versions); as_node='nope' raises 'Node nope does not exist'; then
                update_state({'log': ['fixed']}, as_node='b3')
Errors and update_state return values are recorded in events (checkpoint ids replaced by their metadata).
"""
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph

from common import D, Fixture


class State(TypedDict):
    log: Annotated[list[str], operator.add]
    x: str


def a(state):
    return {"log": ["a"], "x": "A"}


def b(state):
    return {"log": ["b"], "x": "B"}


def a3(state):
    return {"log": ["a3"]}


def b3(state):
    return {"log": ["b3"]}


def builder():
    return (StateGraph(State).add_node("a", a).add_node("b", b)
            .add_edge(START, "a").add_edge("a", "b").add_edge("b", END))


def cfg(tid):
    return {"configurable": {"thread_id": tid}}


def main():
    fx = Fixture("update_state")
    g = builder().compile(checkpointer=fx.saver)

    def upd(label, graph, config, values, **kw):
        r = fx.attempt(label, graph.update_state, config, values, **kw)
        if r is not None:
            s = graph.get_state(r)
            fx.event(f"{label}: new checkpoint source={s.metadata['source']} step={s.metadata['step']} "
                     f"next={list(s.next)}")
        return r

    g.invoke({"log": [], "x": ""}, cfg("u1"), **D())
    upd("u1: update_state({'log': ['u1']}) inferred as_node", g, cfg("u1"), {"log": ["u1"]})
    upd("u1: update_state({'log': ['ua']}, as_node='a')", g, cfg("u1"), {"log": ["ua"]}, as_node="a")
    g.invoke(None, cfg("u1"), **D())

    gb = builder().compile(checkpointer=fx.saver, interrupt_before=["b"])
    for tid in ("u2_paused", "u2"):
        gb.invoke({"log": [], "x": ""}, cfg(tid), **D())
        upd(f"{tid}: update_state({{'x': 'edited'}}, as_node='a') while paused", gb, cfg(tid), {"x": "edited"},
            as_node="a")
    gb.invoke(None, cfg("u2"), **D())

    g.invoke({"log": [], "x": ""}, cfg("u3"), **D())
    old = [h for h in g.get_state_history(cfg("u3")) if h.metadata["step"] == 1][0]
    upd("u3: update_state(<step 1>, {'x': 'forked'})", g, old.config, {"x": "forked"})
    g.invoke(None, cfg("u3"), **D())
    upd("u3: update_state(<step 1>, None, as_node='__copy__')", g, old.config, None, as_node="__copy__")
    upd("u3: update_state(head, None, as_node=END)", g, cfg("u3"), None, as_node=END)

    upd("u4: update_state(fresh, as_node='__input__')", g, cfg("u4"), {"log": ["seed"], "x": "s"},
        as_node="__input__")
    upd("u5: update_state(fresh, as_node='a')", g, cfg("u5"), {"x": "fresh"}, as_node="a")
    for tid in ("u1", "u3", "u4", "u5"):
        fx.dump(g, tid)
    for tid in ("u2_paused", "u2"):
        fx.dump(gb, tid)

    g6 = (StateGraph(State).add_node("a", a).add_node("b", b).add_edge(START, "a").add_edge(START, "b")
          .compile(checkpointer=fx.saver))
    fx.attempt("u6: invoke", g6.invoke, {"log": [], "x": ""}, cfg("u6"), **D())
    upd("u6: update_state({'log': ['?']}) inferred as_node", g6, cfg("u6"), {"log": ["?"]})
    fx.dump(g6, "u6")

    g7 = (StateGraph(State).add_node("a3", a3).add_node("b3", b3).add_edge(START, "a3").add_edge(START, "b3")
          .add_edge("a3", END).add_edge("b3", END).compile(checkpointer=fx.saver))
    g7.invoke({"log": [], "x": ""}, cfg("u7"), **D())
    upd("u7: update_state inferred as_node", g7, cfg("u7"), {"log": ["?"]})
    upd("u7: update_state(as_node='nope')", g7, cfg("u7"), {"log": ["?"]}, as_node="nope")
    upd("u7: update_state({'log': ['fixed']}, as_node='b3')", g7, cfg("u7"), {"log": ["fixed"]}, as_node="b3")
    fx.dump(g7, "u7")
    fx.finish()


if __name__ == "__main__":
    main()

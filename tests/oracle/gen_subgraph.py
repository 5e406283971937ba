"""Subgraphs: nested checkpoint namespaces, metadata.parents, nested interrupts (spec §1.3, §5.4, §5.6).
All graphs share the state {log: Annotated[list, add]}. Every namespace of every thread is dumped; a nested
namespace is dumped through the ROOT graph with `configurable.checkpoint_ns` set (see common.dump_thread),
with the topology of the subgraph that owns it.

Graph S (one level): parent START -> sub -> END, sub = compiled StateGraph START -> inner -> END, inner calls
interrupt('deep'):
  's_paused' : invoke -> paused inside the subgraph. Root: one pending `sub` task with task.state =
               {"configurable": {"thread_id", "checkpoint_ns": "sub:<task id>"}} and the CHILD's interrupt
               (id = xxh3 of the full nested task ns). Namespace 'sub:<id>': its own checkpoint chain, first
               parent NULL, metadata.parents = {"": <root checkpoint id>}
  's'        : ... then Command(resume='Z') -> both levels complete
Graph N (two levels): parent START -> pre -> mid -> post -> END; mid = subgraph START -> m1 -> leaf -> END;
leaf = sub-subgraph START -> leaf_inner -> END, leaf_inner calls interrupt('deeper'):
  'deep_paused' : paused two levels down: namespaces 'mid:<id>' and 'mid:<id>|leaf:<id>', the innermost with
                  metadata.parents = {"": <root id>, "mid:<id>": <mid checkpoint id>}
  'deep'        : ... then Command(resume='Y') -> completes
Note: parent and subgraphs share the reducer key `log`, so each subgraph returns its WHOLE log and the parent's
operator.add appends it again (['pre', 'pre', 'm1', ...]). That is ordinary LangGraph behaviour, kept on purpose.
"""
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from common import D, Fixture


class State(TypedDict):
    log: Annotated[list[str], operator.add]


def inner(state):
    return {"log": [f"inner:{interrupt('deep')}"]}


def mk(name):
    def f(state):
        return {"log": [name]}
    f.__name__ = name
    return f


def leaf_inner(state):
    return {"log": [f"leaf:{interrupt('deeper')}"]}


def cfg(tid):
    return {"configurable": {"thread_id": tid}}


def main():
    fx = Fixture("subgraph")
    sub = StateGraph(State).add_node("inner", inner).add_edge(START, "inner").add_edge("inner", END).compile()
    g = (StateGraph(State).add_node("sub", sub).add_edge(START, "sub").add_edge("sub", END)
         .compile(checkpointer=fx.saver))
    g.invoke({"log": []}, cfg("s_paused"), **D())
    g.invoke({"log": []}, cfg("s"), **D())
    fx.returned("s: Command(resume='Z')", g.invoke(Command(resume="Z"), cfg("s"), **D()))
    fx.dump(g, "s_paused", all_ns=True)
    fx.dump(g, "s", all_ns=True)

    leaf = (StateGraph(State).add_node("leaf_inner", leaf_inner).add_edge(START, "leaf_inner")
            .add_edge("leaf_inner", END).compile())
    mid = (StateGraph(State).add_node("m1", mk("m1")).add_node("leaf", leaf)
           .add_edge(START, "m1").add_edge("m1", "leaf").add_edge("leaf", END).compile())
    gn = (StateGraph(State).add_node("pre", mk("pre")).add_node("mid", mid).add_node("post", mk("post"))
          .add_edge(START, "pre").add_edge("pre", "mid").add_edge("mid", "post").add_edge("post", END)
          .compile(checkpointer=fx.saver))
    gn.invoke({"log": []}, cfg("deep_paused"), **D())
    gn.invoke({"log": []}, cfg("deep"), **D())
    fx.returned("deep: Command(resume='Y')", gn.invoke(Command(resume="Y"), cfg("deep"), **D()))
    fx.dump(gn, "deep_paused", all_ns=True)
    fx.dump(gn, "deep", all_ns=True)
    fx.finish()


if __name__ == "__main__":
    main()

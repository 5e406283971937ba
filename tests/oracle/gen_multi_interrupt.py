"""Parallel interrupts (spec §7.5, §7.6). START->a, START->b, both call interrupt(); a->END, b->END.

  'paused'   : invoke -> two pending interrupts on the step-0 checkpoint
  'plain'    : invoke, then a plain Command(resume='plain') -> RuntimeError (exact text in events), nothing
               is written; the thread still looks like 'paused'
  'partial'  : invoke, then Command(resume={<id of a's interrupt>: 'ans_a'}) -> a completes, b re-interrupts,
               NO new checkpoint: live get_state shows a's result applied, next=['b'], only b's interrupt;
               the history entry of the same checkpoint shows next=['a','b'] and both interrupts
  'full'     : as 'partial', then Command(resume={<id of b's interrupt>: 'ans_b'}) -> step-1 checkpoint
  'full_map' : invoke, then one Command(resume={id_a: 'ans_a', id_b: 'ans_b'}) answering both at once
  'empty_map': invoke, then Command(resume={}) -> an empty map is accepted, resumes nothing
"""
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from common import D, Fixture


class State(TypedDict):
    vals: Annotated[list[str], operator.add]


def node_a(state):
    return {"vals": [f"a:{interrupt('question_a')}"]}


def node_b(state):
    return {"vals": [f"b:{interrupt('question_b')}"]}


def cfg(tid):
    return {"configurable": {"thread_id": tid}}


def main():
    fx = Fixture("multi_interrupt")
    g = (StateGraph(State).add_node("a", node_a).add_node("b", node_b)
         .add_edge(START, "a").add_edge(START, "b").add_edge("a", END).add_edge("b", END)
         .compile(checkpointer=fx.saver))

    def start(tid):
        r = g.invoke({"vals": []}, cfg(tid), **D())
        return {i.value: i.id for i in r["__interrupt__"]}

    start("paused")

    start("plain")
    fx.attempt("plain: Command(resume='plain') with 2 pending interrupts", g.invoke,
               Command(resume="plain"), cfg("plain"), **D())

    ids = start("partial")
    g.invoke(Command(resume={ids["question_a"]: "ans_a"}), cfg("partial"), **D())

    ids = start("full")
    g.invoke(Command(resume={ids["question_a"]: "ans_a"}), cfg("full"), **D())
    g.invoke(Command(resume={ids["question_b"]: "ans_b"}), cfg("full"), **D())

    ids = start("full_map")
    g.invoke(Command(resume={ids["question_a"]: "ans_a", ids["question_b"]: "ans_b"}), cfg("full_map"), **D())

    start("empty_map")
    label = "empty_map: Command(resume={})"
    fx.returned(label, fx.attempt(label, g.invoke, Command(resume={}), cfg("empty_map"), **D()))

    for tid in ("paused", "plain", "partial", "full", "full_map", "empty_map"):
        fx.dump(g, tid)
    fx.finish()


if __name__ == "__main__":
    main()

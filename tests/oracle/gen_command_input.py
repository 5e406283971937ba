"""Command as graph input: NULL_TASK_ID writes (spec §6.5, §7.5, ex13).
Graph START -> ask (interrupt('q')) -> b -> END, plus a node `extra` -> END reachable only by goto.

  'cu'    : pause at ask's interrupt, then Command(resume='R', update={'log': ['upd']}, goto='extra'):
            NULL_TASK_ID rows on the paused checkpoint: goto (branch:to:extra, idx 0), update (log, idx 1),
            RESUME (idx -4); ask resumes and extra runs in the same step
  'cg'    : run to completion (resume 'R'), then Command(goto='b') (b runs again), then
            Command(update={'log': ['only']}): nothing is triggered, so NO checkpoint is written; the update
            lives only as a NULL_TASK_ID pending write of the head, and live get_state applies it
  'empty' : run to completion, then Command() with no fields: LangGraph 1.2.24 raises UnboundLocalError
            (the intended error is EmptyInputError('Received empty Command input')); nothing is written
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


def b(state):
    return {"log": ["b"]}


def extra(state):
    return {"log": ["extra"]}


def cfg(tid):
    return {"configurable": {"thread_id": tid}}


def main():
    fx = Fixture("command_input")
    g = (StateGraph(State).add_node("ask", ask).add_node("b", b).add_node("extra", extra)
         .add_edge(START, "ask").add_edge("ask", "b").add_edge("b", END).add_edge("extra", END)
         .compile(checkpointer=fx.saver))

    g.invoke({"log": []}, cfg("cu"), **D())
    fx.returned("cu: Command(resume='R', update={'log': ['upd']}, goto='extra')",
                g.invoke(Command(resume="R", update={"log": ["upd"]}, goto="extra"), cfg("cu"), **D()))

    g.invoke({"log": []}, cfg("cg"), **D())
    g.invoke(Command(resume="R"), cfg("cg"), **D())
    fx.returned("cg: Command(goto='b')", g.invoke(Command(goto="b"), cfg("cg"), **D()))
    fx.returned("cg: Command(update={'log': ['only']})",
                g.invoke(Command(update={"log": ["only"]}), cfg("cg"), **D()))

    g.invoke({"log": []}, cfg("empty"), **D())
    g.invoke(Command(resume="R"), cfg("empty"), **D())
    fx.attempt("empty: Command()", g.invoke, Command(), cfg("empty"), **D())

    for tid in ("cu", "cg", "empty"):
        fx.dump(g, tid)
    fx.finish()


if __name__ == "__main__":
    main()

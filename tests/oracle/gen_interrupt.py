"""interrupt() and Command(resume=...) (spec §7.1-§7.5).

Graph G1: START -> ask (interrupt('q1')) -> after -> END
  'single_paused' : invoke -> paused at the interrupt (live state shows the pending interrupt)
  'single'        : invoke, Command(resume='A') -> completes
  'noint'         : run to completion, then Command(resume='stray') with nothing pending: accepted silently,
                    the NULL RESUME row stays on the head checkpoint, no new checkpoint
  'fresh'         : Command(resume='stray') on a brand-new thread: NOT a resume; the NULL RESUME row is
                    stored under the synthetic empty checkpoint id (an orphan write, see `orphan_writes`) and
                    the Command object itself becomes the __start__ value; the graph runs from START and
                    interrupts normally
Graph G2: START -> ask2 (two sequential interrupts 'first?', 'second?') -> END
  'double_mid'    : invoke, resume 'X' -> paused at the second interrupt (id = xxh3(ns|1))
  'double'        : invoke, resume 'X', resume 'Y' -> completes (stale task RESUME row ['X'] quirk)
Graph G3: START -> ask3 -> END; ask3 asks interrupt({'prompt': 'approve?'}, response_schema={'type': 'string'})
          then interrupt('decide', response_schema=Decision) (a pydantic model -> its JSON schema is stored)
  'schema_paused' : paused at the dict-schema interrupt
  'schema_mid'    : answered 'yes', paused at the pydantic-schema interrupt
  'schema'        : answered 'yes' then {'ok': True, 'note': 'n'} -> completes
  'schema_bad'    : answered 'yes' then {'ok': 'not-a-bool'} -> pydantic ValidationError raised inside the
                    node (recorded in events; LangGraph stores it as an ERROR write)
"""
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt
from pydantic import BaseModel

from common import D, Fixture


class State(TypedDict):
    log: Annotated[list, operator.add]


def ask(state):
    ans = interrupt("q1")
    return {"log": [f"ask:{ans}"]}


def after(state):
    return {"log": ["after"]}


def ask2(state):
    a1 = interrupt("first?")
    a2 = interrupt("second?")
    return {"log": [f"ask2:{a1},{a2}"]}


class Decision(BaseModel):
    ok: bool
    note: str = ""


def ask3(state):
    d = interrupt({"prompt": "approve?"}, response_schema={"type": "string"})
    e = interrupt("decide", response_schema=Decision)
    return {"log": [f"ask3:{d}:{e!r}"]}


def cfg(tid):
    return {"configurable": {"thread_id": tid}}


def main():
    fx = Fixture("interrupt")
    g1 = (StateGraph(State).add_node("ask", ask).add_node("after", after)
          .add_edge(START, "ask").add_edge("ask", "after").add_edge("after", END)
          .compile(checkpointer=fx.saver))
    g1.invoke({"log": []}, cfg("single_paused"), **D())

    g1.invoke({"log": []}, cfg("single"), **D())
    g1.invoke(Command(resume="A"), cfg("single"), **D())

    g1.invoke({"log": []}, cfg("noint"), **D())
    g1.invoke(Command(resume="A"), cfg("noint"), **D())
    label = "noint: Command(resume='stray') with nothing pending"
    fx.returned(label, fx.attempt(label, g1.invoke, Command(resume="stray"), cfg("noint"), **D()))

    label = "fresh: Command(resume='stray') on a new thread"
    fx.returned(label, fx.attempt(label, g1.invoke, Command(resume="stray"), cfg("fresh"), **D()))

    for tid in ("single_paused", "single", "noint", "fresh"):
        fx.dump(g1, tid)

    g2 = (StateGraph(State).add_node("ask2", ask2).add_edge(START, "ask2").add_edge("ask2", END)
          .compile(checkpointer=fx.saver))
    g2.invoke({"log": []}, cfg("double_mid"), **D())
    g2.invoke(Command(resume="X"), cfg("double_mid"), **D())
    g2.invoke({"log": []}, cfg("double"), **D())
    g2.invoke(Command(resume="X"), cfg("double"), **D())
    g2.invoke(Command(resume="Y"), cfg("double"), **D())
    for tid in ("double_mid", "double"):
        fx.dump(g2, tid)

    g3 = (StateGraph(State).add_node("ask3", ask3).add_edge(START, "ask3").add_edge("ask3", END)
          .compile(checkpointer=fx.saver))
    g3.invoke({"log": []}, cfg("schema_paused"), **D())
    g3.invoke({"log": []}, cfg("schema_mid"), **D())
    g3.invoke(Command(resume="yes"), cfg("schema_mid"), **D())
    g3.invoke({"log": []}, cfg("schema"), **D())
    g3.invoke(Command(resume="yes"), cfg("schema"), **D())
    g3.invoke(Command(resume={"ok": True, "note": "n"}), cfg("schema"), **D())
    g3.invoke({"log": []}, cfg("schema_bad"), **D())
    g3.invoke(Command(resume="yes"), cfg("schema_bad"), **D())
    fx.attempt("schema_bad: Command(resume={'ok': 'not-a-bool'})", g3.invoke,
               Command(resume={"ok": "not-a-bool"}), cfg("schema_bad"), **D())
    for tid in ("schema_paused", "schema_mid", "schema", "schema_bad"):
        fx.dump(g3, tid)
    fx.finish()


if __name__ == "__main__":
    main()

"""ShallowPostgresSaver: real rows of langgraph-checkpoint-postgres's one-checkpoint-per-namespace saver
(deprecated since 2.0.20, still shipped in the pinned 3.2.0), for tests/oracle_fixtures.rs's Postgres
comparison. Postgres only: run by tests/postgres/ci.sh with SUPERSTEP_ORACLE_PG set.

    SUPERSTEP_ORACLE_PG=URL python tests/postgres/gen_shallow.py --out DIR

Graph G1: START -> draft -> ask (interrupt) -> done -> END, state {log: list (operator.add), n: int}
  'paused'   : invoke -> paused at the interrupt (only the latest checkpoint is kept)
  'answered' : invoke, Command(resume='yes') -> completes
  'twice'    : two invokes on one thread (the second starts from the first's end)
  'edited'   : paused, then update_state({'n': 7}) as `ask`
Graph G2: START -> outer (a subgraph: inner interrupt) -> END
  'sub'      : paused inside the subgraph (a namespace of its own, also one checkpoint)
Graph G3: fan-out with Send to `work`, interrupt_before=['work']
  'sends'    : paused before the Send tasks (pending sends in the checkpoint)
"""
import operator
import os
import sys
import warnings
from typing import Annotated, TypedDict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "oracle"))

from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.types import Command, Send, interrupt  # noqa: E402

import common  # noqa: E402
from common import Fixture  # noqa: E402

if not common.ORACLE_PG:
    sys.exit("gen_shallow.py: ShallowPostgresSaver needs a server: set SUPERSTEP_ORACLE_PG")


class State(TypedDict):
    log: Annotated[list, operator.add]
    n: int


def draft(state):
    return {"log": ["draft"], "n": state.get("n", 0) + 1}


def ask(state):
    ans = interrupt({"question": "ok?", "n": state["n"]})
    return {"log": [f"ask:{ans}"]}


def done(state):
    return {"log": ["done"]}


def g1(saver):
    b = StateGraph(State)
    b.add_node("draft", draft)
    b.add_node("ask", ask)
    b.add_node("done", done)
    b.add_edge(START, "draft")
    b.add_edge("draft", "ask")
    b.add_edge("ask", "done")
    b.add_edge("done", END)
    return b.compile(checkpointer=saver)


def inner(state):
    ans = interrupt("inner?")
    return {"log": [f"inner:{ans}"]}


def g2(saver):
    sb = StateGraph(State)
    sb.add_node("inner", inner)
    sb.add_edge(START, "inner")
    sb.add_edge("inner", END)
    b = StateGraph(State)
    b.add_node("outer", sb.compile())
    b.add_edge(START, "outer")
    b.add_edge("outer", END)
    return b.compile(checkpointer=saver)


def fan(state):
    return {"log": ["fan"]}


def route(state):
    return [Send("work", {"log": [f"item{i}"], "n": i}) for i in range(3)]


def work(state):
    return {"log": [f"work{state['n']}"]}


def g3(saver):
    b = StateGraph(State)
    b.add_node("fan", fan)
    b.add_node("work", work)
    b.add_edge(START, "fan")
    b.add_conditional_edges("fan", route, ["work"])
    b.add_edge("work", END)
    return b.compile(checkpointer=saver, interrupt_before=["work"])


def main():
    import psycopg
    from psycopg.rows import dict_row

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from langgraph.checkpoint.postgres.shallow import ShallowPostgresSaver

    fx = Fixture("shallow")
    # Fixture made a PostgresSaver database: start again with ShallowPostgresSaver's own tables
    fx.conn.close()
    fx.pg_url = common.fresh_pg_database("fx_shallow")
    fx.conn = psycopg.Connection.connect(fx.pg_url, autocommit=True, prepare_threshold=0, row_factory=dict_row)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        fx.saver = ShallowPostgresSaver(fx.conn)
    fx.saver.setup()
    fx.saver_name = "ShallowPostgresSaver"

    def cfg(t):
        return {"configurable": {"thread_id": t}}

    a = g1(fx.saver)
    a.invoke({"log": [], "n": 0}, cfg("paused"))
    fx.dump(a, "paused")
    a.invoke({"log": [], "n": 0}, cfg("answered"))
    a.invoke(Command(resume="yes"), cfg("answered"))
    fx.dump(a, "answered")
    a.invoke({"log": [], "n": 0}, cfg("twice"))
    a.invoke(Command(resume="first"), cfg("twice"))
    a.invoke({"log": ["again"], "n": 10}, cfg("twice"))
    fx.dump(a, "twice")
    a.invoke({"log": [], "n": 0}, cfg("edited"))
    a.update_state(cfg("edited"), {"n": 7}, as_node="ask")
    fx.dump(a, "edited")
    b = g2(fx.saver)
    b.invoke({"log": [], "n": 0}, cfg("sub"))
    fx.dump(b, "sub", all_ns=True)
    c = g3(fx.saver)
    c.invoke({"log": [], "n": 0}, cfg("sends"))
    fx.dump(c, "sends")
    fx.finish()


if __name__ == "__main__":
    main()

"""Checkpoint metadata JSON and durability modes (spec §1.3, §13.1).
Graph START -> a -> b -> END, state {log: Annotated[list, add]}; b calls interrupt('q') when log[0] == 'int'.

  'meta'     : config metadata {'user': 'bob', 'n': 3, 'flag': True, 'obj': {...}, 'thread_id': 'ignored',
               'note': 'tab\\there\\u0000nul', 'emoji': '\U0001F600'} and configurable extras (user_id, __hidden,
               langgraph_step, temperature, nested dict, unicode 'héllo\\u0000'): str values kept with NUL removed,
               int/bool/float kept, dicts/lists/None dropped, reserved and '__'-prefixed keys skipped
  'exit'     : durability='exit' -> only the final checkpoint is stored (step 2, parent NULL)
  'exit_int' : durability='exit' with an interrupt: the final (interrupted) checkpoint + its INTERRUPT row;
               then Command(resume='R') with durability='exit' -> one more checkpoint
  'async'    : the default async durability on the plain graph (same rows as sync, in arbitrary rowid order)
"""
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from common import D, Fixture


class State(TypedDict):
    log: Annotated[list[str], operator.add]


def a(state):
    return {"log": ["a"]}


def b(state):
    if state["log"] and state["log"][0] == "int":
        return {"log": ["b:" + interrupt("q")]}
    return {"log": ["b"]}


def main():
    fx = Fixture("metadata")
    g = (StateGraph(State).add_node("a", a).add_node("b", b).add_edge(START, "a").add_edge("a", "b")
         .add_edge("b", END).compile(checkpointer=fx.saver))
    meta_cfg = {
        "configurable": {"thread_id": "meta", "user_id": "u-1", "__hidden": "x", "checkpoint_ns": "",
                         "langgraph_step": 9, "temperature": 0.5, "nested": {"k": 1}, "nothing": None,
                         "unicode": "héllo\u0000", "big": 2**40, "neg": -7},
        "metadata": {"user": "bob", "n": 3, "flag": True, "obj": {"k": [1, 2]}, "thread_id": "ignored",
                     "note": "tab\there\u0000nul", "emoji": "\U0001F600", "lst": [1]},
        "run_id": "0193a4c8-0000-7000-8000-000000000001",
    }
    fx.extra["meta_config"] = meta_cfg
    g.invoke({"log": []}, meta_cfg, **D())
    g.invoke({"log": []}, {"configurable": {"thread_id": "exit"}}, durability="exit")
    fx.returned("exit_int: invoke (durability='exit')",
                g.invoke({"log": ["int"]}, {"configurable": {"thread_id": "exit_int"}}, durability="exit"))
    fx.returned("exit_int: Command(resume='R') (durability='exit')",
                g.invoke(Command(resume="R"), {"configurable": {"thread_id": "exit_int"}}, durability="exit"))
    g.invoke({"log": []}, {"configurable": {"thread_id": "async"}}, durability="async")
    for tid in ("meta", "exit", "exit_int", "async"):
        fx.dump(g, tid)
    if fx.pg:
        raw = fx.sql("SELECT thread_id, checkpoint_id, jsonb_typeof(metadata), metadata::text "
                     "FROM checkpoints ORDER BY thread_id, checkpoint_id")
    else:
        raw = fx.sql("SELECT thread_id, checkpoint_id, typeof(metadata), CAST(metadata AS TEXT) "
                     "FROM checkpoints ORDER BY thread_id, checkpoint_id")
    fx.extra["raw_metadata"] = [{"thread_id": t, "checkpoint_id": c, "sql_type": ty, "text": txt}
                                for t, c, ty, txt in raw]
    fx.finish()


if __name__ == "__main__":
    main()

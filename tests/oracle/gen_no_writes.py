"""The __no_writes__ marker (spec §11, ex14): a task that finishes with no output records
('__no_writes__', None), so it counts as finished; its history result is {}.

  'nw'  : START -> quiet -> END, quiet returns None (marker at idx 0)
  'nwi' : START -> quiet_int -> END, quiet_int calls interrupt('q') then returns None; after
          Command(resume='r') the marker follows the RESUME row (idx 1)
  'nwp' : START -> quiet, START -> loud (parallel), loud returns {'x': 2}: the marker and a normal write in
          the same step
"""
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from common import D, Fixture


class State(TypedDict):
    x: int


def quiet(state):
    return None


def quiet_int(state):
    interrupt("q")
    return None


def loud(state):
    return {"x": 2}


def cfg(tid):
    return {"configurable": {"thread_id": tid}}


def main():
    fx = Fixture("no_writes")
    g = (StateGraph(State).add_node("quiet", quiet).add_edge(START, "quiet").add_edge("quiet", END)
         .compile(checkpointer=fx.saver))
    g.invoke({"x": 1}, cfg("nw"), **D())
    fx.dump(g, "nw")

    g2 = (StateGraph(State).add_node("quiet_int", quiet_int).add_edge(START, "quiet_int")
          .add_edge("quiet_int", END).compile(checkpointer=fx.saver))
    g2.invoke({"x": 1}, cfg("nwi"), **D())
    g2.invoke(Command(resume="r"), cfg("nwi"), **D())
    fx.dump(g2, "nwi")

    g3 = (StateGraph(State).add_node("quiet", quiet).add_node("loud", loud)
          .add_edge(START, "quiet").add_edge(START, "loud").add_edge("quiet", END).add_edge("loud", END)
          .compile(checkpointer=fx.saver))
    g3.invoke({"x": 1}, cfg("nwp"), **D())
    fx.dump(g3, "nwp")
    fx.finish()


if __name__ == "__main__":
    main()

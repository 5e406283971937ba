"""Linear graphs (spec §6.6a).

thread 't1'      : START -> a -> b -> END, state {x: LastValue str, vals: Annotated[list, operator.add]},
                   input {"x": "", "vals": ["in"]}; then a SECOND invoke {"x": "Z"} on the same thread
                   (input checkpoint at step 3, loop checkpoints 4..6).
thread 'reducers': START -> inc -> END with more reducer channels: Annotated[int, operator.add] (default 0),
                   Annotated[dict, custom merge] (default {}), a LastValue never written (absent from values).
"""
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph

from common import D, Fixture


class State(TypedDict):
    x: str
    vals: Annotated[list[str], operator.add]


def a(state):
    return {"x": state["x"] + "A", "vals": ["a"]}


def b(state):
    return {"x": state["x"] + "B", "vals": ["b"]}


def merge(left: dict, right: dict) -> dict:
    return {**left, **right}


class RState(TypedDict):
    count: Annotated[int, operator.add]
    tags: Annotated[dict, merge]
    never: str


def inc(state):
    return {"count": 2, "tags": {"inc": True}}


def main():
    fx = Fixture("linear")
    g = (StateGraph(State).add_node("a", a).add_node("b", b)
         .add_edge(START, "a").add_edge("a", "b").add_edge("b", END)
         .compile(checkpointer=fx.saver))
    cfg = {"configurable": {"thread_id": "t1"}}
    g.invoke({"x": "", "vals": ["in"]}, cfg, **D())
    g.invoke({"x": "Z"}, cfg, **D())
    fx.dump(g, "t1")

    g2 = (StateGraph(RState).add_node("inc", inc).add_edge(START, "inc").add_edge("inc", END)
          .compile(checkpointer=fx.saver))
    g2.invoke({"count": 1, "tags": {"in": 1}}, {"configurable": {"thread_id": "reducers"}}, **D())
    fx.dump(g2, "reducers")
    fx.finish()


if __name__ == "__main__":
    main()

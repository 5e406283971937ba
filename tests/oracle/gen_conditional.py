"""Conditional edges (spec §6.2, §6.6b).

START -> a -> route(state) -> b | c | END ; b -> END ; c -> END.
route returns "b" for even n, "c" for odd n, END for n > 10.
threads 'even' (n=2), 'odd' (n=3), 'end' (n=11: a's conditional writer emits no branch write, run ends).
"""
import operator
from typing import Annotated, Literal, TypedDict

from langgraph.graph import END, START, StateGraph

from common import D, Fixture


class State(TypedDict):
    n: int
    path: Annotated[list[str], operator.add]


def a(state):
    return {"path": ["a"]}


def b(state):
    return {"path": ["b"]}


def c(state):
    return {"path": ["c"]}


def route(state) -> Literal["b", "c", "__end__"]:
    if state["n"] > 10:
        return END
    return "b" if state["n"] % 2 == 0 else "c"


def main():
    fx = Fixture("conditional")
    g = (StateGraph(State).add_node("a", a).add_node("b", b).add_node("c", c)
         .add_edge(START, "a").add_conditional_edges("a", route).add_edge("b", END).add_edge("c", END)
         .compile(checkpointer=fx.saver))
    for tid, n in (("even", 2), ("odd", 3), ("end", 11)):
        g.invoke({"n": n, "path": []}, {"configurable": {"thread_id": tid}}, **D())
        fx.dump(g, tid)
    fx.finish()


if __name__ == "__main__":
    main()

"""nested: a subgraph inside a subgraph (parent -> mid -> leaf), no interrupts; breakpoints set
inside them stop the run there."""
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    notes: Annotated[list, operator.add]


def node(name):
    def run(state: State):
        return {"notes": [name]}

    return run


def chain(names, subs=None):
    b = StateGraph(State)
    prev = START
    for n in names:
        b.add_node(n, (subs or {}).get(n) or node(n))
        b.add_edge(prev, n)
        prev = n
    b.add_edge(prev, END)
    return b


leaf = chain(["a", "b"]).compile()
mid = chain(["m1", "leaf", "m2"], {"leaf": leaf}).compile()
graph = chain(["p1", "mid", "p2"], {"mid": mid}).compile()

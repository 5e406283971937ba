"""The doctor suite's graph and its deliberately changed versions (tests/doctor/README.md).

    START -> plan -(loops left)-> plan
                  -(route)-> review (interrupt) -> finish -> END
                           -> work (a subgraph: sub_a -> sub_ask (interrupt)) -> finish
                           -> finish

`build()` is the graph the store was written with; its keyword arguments make the new versions
`superstep check` is tried against: `review="approve"` renames a node, `scratch=False` removes a
state key, `delta=False` turns the DeltaChannel `messages` into a plain reducer channel,
`sub=False` makes the subgraph node `work` a plain function. The fifth change, a class no longer importable, is in the `models` module a version sees
(`no_class/models.py` has no `Ticket`).
"""
import operator
from typing import Annotated, Any, Optional, TypedDict

from langgraph.channels.delta import DeltaChannel
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt


class Sub(TypedDict):
    notes: Annotated[list, operator.add]


def sub_a(s):
    return {"notes": ["sub a"]}


def sub_ask(s):
    answer = interrupt({"question": "inside the subgraph: go on?"})
    return {"notes": [f"sub answer {answer}"]}


def subgraph():
    return (StateGraph(Sub).add_node("sub_a", sub_a).add_node("sub_ask", sub_ask)
            .add_edge(START, "sub_a").add_edge("sub_a", "sub_ask").compile())


def work_inline(s):
    return {"notes": ["worked inline"]}


def build(*, review="review", scratch=True, delta=True, sub=True, checkpointer=None):
    messages = DeltaChannel(operator.add, snapshot_frequency=3) if delta else operator.add
    fields = {
        "n": int,
        "loops": int,
        "route": str,
        "messages": Annotated[list, messages],
        "notes": Annotated[list, operator.add],
        "ticket": Optional[Any],
    }
    if scratch:
        fields["scratch"] = str
    State = TypedDict("State", fields)

    def plan(s):
        n = s.get("n", 0) + 1
        return {"n": n, "loops": max(s.get("loops", 0) - 1, 0),
                "messages": [f"plan {n}: " + "x" * (20 * n)], "notes": [f"p{n}"]}

    def after_plan(s):
        if s.get("loops", 0) > 0:
            return "plan"
        route = s.get("route", "finish")
        return review if route == "review" else route

    def ask(s):
        answer = interrupt({"question": "approve?", "n": s.get("n", 0)})
        return {"messages": [f"review: {answer}"]}

    def finish(s):
        return {"messages": ["done"], "notes": ["finished"]}

    g = StateGraph(State)
    g.add_node("plan", plan)
    g.add_node(review, ask)
    g.add_node("work", subgraph() if sub else work_inline)
    g.add_node("finish", finish)
    g.add_edge(START, "plan")
    g.add_conditional_edges("plan", after_plan, ["plan", review, "work", "finish"])
    g.add_edge(review, "finish")
    g.add_edge("work", "finish")
    g.add_edge("finish", END)
    return g.compile(checkpointer=checkpointer)

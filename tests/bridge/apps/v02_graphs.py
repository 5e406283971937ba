"""The graphs of tests/oracle/v02/gen_v02.py (which LangGraph 0.2.20 / 0.2.76 ran to write
tests/fixtures/v0_2_*.sqlite), written for LangGraph 1.2: the same state, nodes and edges. LangGraph
1.2 continues the threads 0.2 left (its StateGraph migrates their checkpoints as it reads them)."""
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt


class State(TypedDict):
    request: str
    draft: str
    decision: str
    log: Annotated[list, operator.add]


def draft(state):
    return {"draft": f"Plan: {state['request']}", "log": ["draft"]}


def approve(state):
    answer = interrupt({"question": "Approve this action?", "draft": state["draft"]})
    return {"decision": "approved" if answer else "rejected", "log": ["approve"]}


def execute(state):
    return {"log": ["execute"]}


def fan(state):
    return {"log": ["fan"]}


def left(state):
    return {"log": ["left"]}


def right(state):
    return {"log": ["right"]}


def joined(state):
    return {"log": ["joined"]}


a = (StateGraph(State).add_node("write_draft", draft).add_node("approve", approve).add_node("execute", execute)
     .add_edge(START, "write_draft").add_edge("write_draft", "approve").add_edge("approve", "execute")
     .add_edge("execute", END).compile())
b = (StateGraph(State).add_node("write_draft", draft).add_node("execute", execute)
     .add_edge(START, "write_draft").add_edge("write_draft", "execute").add_edge("execute", END)
     .compile(interrupt_before=["execute"]))
c_before = (StateGraph(State).add_node("fan", fan).add_node("left", left).add_node("right", right)
            .add_node("joined", joined).add_edge(START, "fan")
            .add_conditional_edges("fan", lambda s: ["left", "right"], ["left", "right"])
            .add_edge(["left", "right"], "joined").add_edge("joined", END)
            .compile(interrupt_before=["joined"]))

"""interrupt: a human approves or rejects a drafted action; Command(goto) routes on the answer."""
import operator
from typing import Annotated, Literal, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt


class State(TypedDict):
    request: str
    draft: str
    decision: str
    log: Annotated[list, operator.add]


def draft(state: State):
    print("drafting", state["request"])
    return {"draft": f"do: {state['request']}", "log": ["drafted"]}


def approve(state: State) -> Command[Literal["execute", "cancel"]]:
    answer = interrupt({"question": "Approve?", "draft": state["draft"]})
    print("answer", answer)
    if answer is True or answer == "yes":
        return Command(goto="execute", update={"decision": "approved", "log": ["approved"]})
    return Command(goto="cancel", update={"decision": "rejected", "log": ["rejected"]})


def execute(state: State):
    return {"log": ["executed"]}


def cancel(state: State):
    return {"log": ["cancelled"]}


builder = StateGraph(State)
builder.add_node("draft", draft)
builder.add_node("approve", approve)
builder.add_node("execute", execute)
builder.add_node("cancel", cancel)
builder.add_edge(START, "draft")
builder.add_edge("draft", "approve")
builder.add_edge("execute", END)
builder.add_edge("cancel", END)
graph = builder.compile()

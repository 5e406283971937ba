"""Order support: an add_messages conversation, a model that calls tools, and a human who
approves every refund (an interrupt) before the refund tool runs.

    START -> agent -> tools -> agent -> ... -> END
                   \-> approval -(approved)-> tools
                               \-(declined)-> agent

Debug it with `superstep examples/support/langgraph.json` (see the README).
"""

import os
from typing import Annotated, Literal, TypedDict

from langchain_core.messages import AnyMessage, SystemMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, interrupt

from support.model import ScriptedSupportModel
from support.tools import TOOLS

SHOP = os.environ.get("SUPPORT_SHOP", "our shop")
print(f"support agent for {SHOP}: {len(TOOLS)} tools loaded")

model = ScriptedSupportModel().bind_tools(TOOLS)


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def agent(state: State) -> dict:
    system = SystemMessage(content=f"You are the customer support agent of {SHOP}. Ask before refunding.")
    return {"messages": [model.invoke([system, *state["messages"]])]}


def route(state: State) -> Literal["tools", "approval", "__end__"]:
    calls = state["messages"][-1].tool_calls
    if not calls:
        return END
    if any(c["name"] == "issue_refund" for c in calls):
        return "approval"
    return "tools"


def approval(state: State) -> Command[Literal["tools", "agent"]]:
    call = next(c for c in state["messages"][-1].tool_calls if c["name"] == "issue_refund")
    answer = interrupt({"question": "Approve this refund?", **call["args"]})
    if answer is True or (isinstance(answer, str) and answer.lower() in ("y", "yes", "approve")):
        return Command(goto="tools")
    reason = answer.get("reason", "") if isinstance(answer, dict) else str(answer)
    declined = ToolMessage(content=f"Refund declined by a human: {reason}", tool_call_id=call["id"], name="issue_refund")
    return Command(goto="agent", update={"messages": [declined]})


builder = StateGraph(State)
builder.add_node("agent", agent)
builder.add_node("approval", approval)
builder.add_node("tools", ToolNode(TOOLS))
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", route)
builder.add_edge("tools", "agent")

# No checkpointer here: the platform (`langgraph dev`) brings its own, and superstep brings
# LangGraph's SqliteSaver on the file it is given, so every row is LangGraph's.
graph = builder.compile()

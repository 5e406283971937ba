"""chat: an `add_messages` conversation with a scripted model (no network): `reply` answers each
human message, and calls the `lookup` tool when asked about an order. For follow-up turns (`m`,
`run -t T --input` on an existing thread) and the `u` editor's message proposal."""
import re
from typing import Annotated, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def reply(state: State):
    msgs = state["messages"]
    last = msgs[-1]
    n = sum(1 for m in msgs if m.type == "ai")
    if last.type == "tool":
        return {"messages": [AIMessage(content=f"Order status: {last.content}", id=f"ai-{n}")]}
    order = re.search(r"order (\d+)", str(last.content))
    if order:
        call = {"name": "lookup", "args": {"order": order.group(1)}, "id": f"call-{n}"}
        return {"messages": [AIMessage(content="", tool_calls=[call], id=f"ai-{n}")]}
    return {"messages": [AIMessage(content=f"You said: {last.content}", id=f"ai-{n}")]}


def lookup(state: State):
    call = state["messages"][-1].tool_calls[0]
    status = "shipped" if call["args"]["order"] != "13" else "lost"
    return {"messages": [ToolMessage(content=status, tool_call_id=call["id"], id=f"tool-{call['id']}")]}


def route(state: State):
    return "lookup" if state["messages"][-1].tool_calls else END


builder = StateGraph(State)
builder.add_node("reply", reply)
builder.add_node("lookup", lookup)
builder.add_edge(START, "reply")
builder.add_conditional_edges("reply", route, ["lookup", END])
builder.add_edge("lookup", "reply")
graph = builder.compile()

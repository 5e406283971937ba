"""Replay test apps: a fake chat model that counts its calls and a tool with a side effect, both
counted in files under $REPLAY_COUNTS (model.count, tool.count: one line per real call).

    graph:  START -> plan -> agent -> tools -> agent -> ... -> END
            plan calls the `policy` tool (a request that never depends on the conversation); the
            model asks for `bump` TURNS times, then answers.
"""

import os
from typing import Annotated, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode

TURNS = int(os.environ.get("REPLAY_TURNS", "4"))


def count(what, detail=""):
    d = os.environ.get("REPLAY_COUNTS")
    if d:
        with open(os.path.join(d, what + ".count"), "a") as f:
            f.write(detail + "\n")


def asked(messages):
    h = next((m for m in reversed(messages) if isinstance(m, HumanMessage)), None)
    return h.content if h is not None else ""


class CountingModel(BaseChatModel):
    """Asks for the `bump` tool TURNS times after the last human message, then answers."""

    @property
    def _llm_type(self) -> str:
        return "counting"

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        count("model", asked(messages))
        last_human = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
        done = sum(isinstance(m, ToolMessage) for m in messages[last_human:])
        text = asked(messages)
        usage = {"input_tokens": 10 * len(messages), "output_tokens": 7, "total_tokens": 10 * len(messages) + 7}
        if done < TURNS:
            call = {"name": "bump", "args": {"k": done, "note": text[:20]}, "id": f"call_{done}", "type": "tool_call"}
            msg = AIMessage(content=f"turn {done}: {text}", tool_calls=[call], usage_metadata=usage)
        else:
            msg = AIMessage(content=f"done after {done} bumps: {text}", usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=msg)])


@tool
def bump(k: int, note: str) -> str:
    """Bump the counter (a side effect: a line in tool.count)."""
    count("tool", f"{k} {note}")
    return f"bumped {k} for {note}"


@tool
def policy(topic: str) -> str:
    """Look the house policy up (counted in tool.count)."""
    count("tool", f"policy {topic}")
    return f"policy for {topic}: bump at most {TURNS} times"


model = CountingModel().bind_tools([bump])


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    notes: str


def plan(state: State) -> dict:
    return {"notes": policy.invoke({"topic": "bumps"})}


def agent(state: State) -> dict:
    return {"messages": [model.invoke(state["messages"])]}


def route(state: State):
    return "tools" if state["messages"][-1].tool_calls else END


builder = StateGraph(State)
builder.add_node("plan", plan)
builder.add_node("agent", agent)
builder.add_node("tools", ToolNode([bump]))
builder.add_edge(START, "plan")
builder.add_edge("plan", "agent")
builder.add_conditional_edges("agent", route, ["tools", END])
builder.add_edge("tools", "agent")
graph = builder.compile()

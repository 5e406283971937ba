"""LangChain messages in real agent threads: what most LangGraph apps keep in their state.

Every model is langchain_core's GenericFakeChatModel (answers scripted, tool calls included); the
graphs, tool execution, message ids and reducers are real LangGraph / langgraph-prebuilt.

Graph A: langgraph.prebuilt.create_react_agent (agent <-> tools) with three tools: get_weather,
         calculator (raises on a bad expression: ToolNode(handle_tool_errors=True) turns that into a
         ToolMessage with status='error') and search.
  'react'        : a system prompt and two user turns. Turn 1: two parallel tool calls (get_weather,
                   calculator('2**10')) then an answer; turn 2: content blocks (text) with a search call,
                   then a calculator error ('1/0'), then an answer. usage / response metadata on every
                   AI message.
  'react_paused' : the same agent compiled with interrupt_before=['tools']: paused with a tool call
                   waiting (next = tools).
  'long'         : a 150-turn conversation, 600 messages. The first 149 turns run on an InMemorySaver
                   (same graph, same fake model); their 596 messages are the input of this thread's one
                   invoke (durability='exit': one checkpoint), whose turn adds the last 4 messages.
Graph B: StateGraph(MessagesState) agent -> review, where review calls
         interrupt({'question', 'tool_call', 'message': <the AIMessage>}):
  'review'       : paused at review: the interrupt payload holds a LangChain message.
Graph C: START -> emit -> END; state `messages` (add_messages) and `stream` (operator.add, so message
         chunks stay chunks). emit returns one of every message class:
  'kinds'        : SystemMessage, HumanMessage with content blocks (text + image_url) and a name,
                   AIMessage with invalid_tool_calls, FunctionMessage, ChatMessage(role='critic'),
                   ToolMessage(status='error', artifact), and in `stream`: AIMessageChunk (with
                   tool_call_chunks) and HumanMessageChunk.
"""
import operator
import warnings
from typing import Annotated, TypedDict

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    HumanMessageChunk,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, create_react_agent
from langgraph.types import interrupt

from common import D, Fixture

# create_react_agent still ships in langgraph-prebuilt 1.x (moved to langchain.agents in V1.0, removed in
# V2.0); the fixture is about the prebuilt agent LangGraph apps use today.
warnings.filterwarnings("ignore", message="create_react_agent has been moved")


class FakeToolModel(GenericFakeChatModel):
    """GenericFakeChatModel that accepts bind_tools (the agent binds its tools to the model)."""

    def bind_tools(self, tools, **kwargs):
        return self


@tool
def get_weather(city: str) -> str:
    """The current weather in a city."""
    return f"{city}: 18°C, light rain, wind 12 km/h from the south-west"


@tool
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression."""
    if "/0" in expression.replace(" ", ""):
        raise ZeroDivisionError("division by zero")
    return str(eval(expression, {"__builtins__": {}}))  # noqa: S307 - fixed test inputs


@tool
def search(query: str) -> str:
    """Search the web."""
    return (f"Top results for {query!r}: 1. Hôtel du Louvre (4★, 350 m from the museum, from €310) "
            "2. Le Pavillon de la Reine (5★, Place des Vosges) 3. Hôtel Brighton (4★, rue de Rivoli, "
            "view over the Tuileries)")


TOOLS = [get_weather, calculator, search]


def usage(i, o):
    return {"input_tokens": i, "output_tokens": o, "total_tokens": i + o}


META = {"model_name": "fake-gpt", "finish_reason": "stop", "system_fingerprint": "fp_fixture"}


def ai(content, calls=(), n=0, **kw):
    return AIMessage(
        content=content,
        tool_calls=[{"name": c[0], "args": c[1], "id": c[2], "type": "tool_call"} for c in calls],
        usage_metadata=usage(100 + 7 * n, 20 + n),
        response_metadata={**META, "finish_reason": "tool_calls" if calls else "stop"},
        **kw,
    )


def react_script():
    return [
        ai("", [("get_weather", {"city": "Paris"}, "call_weather_1"),
                ("calculator", {"expression": "2**10"}, "call_calc_1")], 1),
        ai("It is 18°C with light rain in Paris right now, so take an umbrella. And 2**10 is 1024.", n=2),
        ai([{"type": "text", "text": "Let me look for hotels near the Louvre first."}],
           [("search", {"query": "hotels near the Louvre"}, "call_search_1")], 3),
        ai("", [("calculator", {"expression": "310 / 0"}, "call_calc_2")], 4),
        ai("The Hôtel du Louvre is 350 m from the museum, from €310 a night. I could not split the price "
           "per person: the calculator refused to divide by zero travellers.", n=5),
    ]


def agent(model, **kw):
    return create_react_agent(model, ToolNode(TOOLS, handle_tool_errors=True), **kw)


def long_turn(i):
    """The fake model's two answers for turn i: a tool call, then the reply."""
    city = ["Paris", "Lyon", "Nice", "Lille", "Nantes"][i % 5]
    return [
        ai("", [("get_weather", {"city": city}, f"call_w_{i}")], i),
        ai(f"Turn {i}: {city} is at 18°C with light rain.", n=i),
    ]


class KindsState(TypedDict):
    messages: Annotated[list, add_messages]
    stream: Annotated[list, operator.add]


def emit(state):
    return {
        "messages": [
            SystemMessage("You review travel plans.", id="sys-1"),
            HumanMessage(
                [{"type": "text", "text": "Is this hotel photo the one by the Louvre?"},
                 {"type": "image_url", "image_url": {"url": "https://example.com/hotel.jpg"}}],
                name="alice", id="human-1"),
            AIMessage("", id="ai-bad-1", invalid_tool_calls=[
                {"name": "search", "args": "{\"query\": \"hotel", "id": "call_bad_1",
                 "error": "Unterminated string at line 1 column 10", "type": "invalid_tool_call"}]),
            FunctionMessage("{\"match\": true}", name="compare_images", id="fn-1"),
            ChatMessage("The photo shows the Tuileries side.", role="critic", id="chat-1"),
            ToolMessage("lookup failed: timeout after 30 s", tool_call_id="call_bad_1", status="error",
                        artifact={"retries": 3}, name="search", id="tool-1"),
        ],
        "stream": [
            AIMessageChunk("Checking the", id="chunk-1",
                           tool_call_chunks=[{"name": "search", "args": "{\"query\": \"Lou",
                                              "id": "call_chunk_1", "index": 0,
                                              "type": "tool_call_chunk"}]),
            HumanMessageChunk("and the price?", id="chunk-2"),
        ],
    }


def main():
    fx = Fixture("agent")

    # Graph A: the prebuilt ReAct agent
    react = agent(FakeToolModel(messages=iter(react_script())), checkpointer=fx.saver)
    cfg = {"configurable": {"thread_id": "react"}}
    out = react.invoke({"messages": [SystemMessage("You are a concise travel assistant."),
                                     HumanMessage("What's the weather in Paris, and what is 2**10?")]},
                       cfg, **D())
    fx.event(f"react turn 1: {len(out['messages'])} messages")
    out = react.invoke({"messages": [HumanMessage("Find me a hotel near the Louvre and split the price per person.")]},
                       cfg, **D())
    fx.event(f"react turn 2: {len(out['messages'])} messages")
    fx.dump(react, "react")

    paused = agent(FakeToolModel(messages=iter(react_script())), checkpointer=fx.saver,
                   interrupt_before=["tools"])
    cfg = {"configurable": {"thread_id": "react_paused"}}
    paused.invoke({"messages": [HumanMessage("What's the weather in Paris, and what is 2**10?")]}, cfg, **D())
    fx.dump(paused, "react_paused")

    # the 600-message thread: 149 turns in memory, their messages are the input of the stored turn
    script = [m for i in range(150) for m in long_turn(i)]
    mem = agent(FakeToolModel(messages=iter(script)), checkpointer=InMemorySaver())
    mcfg = {"configurable": {"thread_id": "long"}}
    for i in range(149):
        mem.invoke({"messages": [HumanMessage(f"Turn {i}: what's the weather?")]}, mcfg)
    history = mem.get_state(mcfg).values["messages"]
    stored = agent(FakeToolModel(messages=iter(script[298:])), checkpointer=fx.saver)
    out = stored.invoke({"messages": history + [HumanMessage("Turn 149: what's the weather?")]},
                        {"configurable": {"thread_id": "long"}}, **D(durability="exit"))
    fx.event(f"long: {len(out['messages'])} messages")
    fx.dump(stored, "long")

    # Graph B: an interrupt whose payload holds a message
    model = FakeToolModel(messages=iter(react_script()))

    def call_model(state):
        return {"messages": [model.invoke(state["messages"])]}

    def review(state):
        last = state["messages"][-1]
        answer = interrupt({"question": "Run this tool call?", "tool_call": last.tool_calls[0], "message": last})
        return {"messages": [HumanMessage(f"review: {answer}")]}

    g = StateGraph(MessagesState)
    g.add_node("agent", call_model)
    g.add_node("review", review)
    g.add_edge(START, "agent")
    g.add_edge("agent", "review")
    g.add_edge("review", END)
    rg = g.compile(checkpointer=fx.saver)
    rg.invoke({"messages": [HumanMessage("What's the weather in Paris, and what is 2**10?")]},
              {"configurable": {"thread_id": "review"}}, **D())
    fx.dump(rg, "review")

    # Graph C: one of every message class
    g = StateGraph(KindsState)
    g.add_node("emit", emit)
    g.add_edge(START, "emit")
    g.add_edge("emit", END)
    kg = g.compile(checkpointer=fx.saver)
    kg.invoke({"messages": [], "stream": []}, {"configurable": {"thread_id": "kinds"}}, **D())
    fx.dump(kg, "kinds")

    fx.finish()


if __name__ == "__main__":
    main()

"""The replay benchmark's graph (benches/replay.rs): one node looping N times; each superstep asks
a fake chat model K times (REPLAY_BENCH_K) with a short conversation and calls a tool once when
K > 0 — so the difference between recording on and off is the recorder's cost per call and per
superstep. The model answers at once: what is measured is the machinery, not a model.
"""

import os
from typing import TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph

K = int(os.environ.get("REPLAY_BENCH_K", "4"))


class Instant(BaseChatModel):
    @property
    def _llm_type(self) -> str:
        return "instant"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        text = f"answer to {messages[-1].content}"
        usage = {"input_tokens": 12, "output_tokens": 3, "total_tokens": 15}
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text, usage_metadata=usage))])


@tool
def lookup(i: int) -> str:
    """Look i up."""
    return f"item {i}"


model = Instant()


class State(TypedDict):
    i: int
    n: int


def tick(state: State) -> dict:
    i = state["i"]
    for k in range(K):
        model.invoke([SystemMessage("You count."), HumanMessage(f"step {i}"), AIMessage("ok"), HumanMessage(f"call {k}")])
    if K:
        lookup.invoke({"i": i})
    return {"i": i + 1}


def more(state: State) -> str:
    return "tick" if state["i"] < state["n"] else END


builder = StateGraph(State)
builder.add_node("tick", tick)
builder.add_edge(START, "tick")
builder.add_conditional_edges("tick", more, ["tick", END])
graph = builder.compile()

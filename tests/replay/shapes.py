"""Replay test apps of other shapes, with agent.py's counting model and counted tools:

    async_graph  the agent loop with async nodes (ainvoke / ToolNode's async path)
    fanout       plan -> Send("work", item) x3 (each asks the model, concurrently) -> total
    nested       inner (a subgraph: ask calls the model) -> after (calls a tool)
    retry        fetch: the model, then `flaky` (fails on its first call ever), RetryPolicy(2)
    once         fetch without a retry policy: the run stops at the error; continue retries
    parallel     a and b, in parallel, each ask the model and then interrupt for an answer
    completion   a text-completion LLM (BaseLLM) asked twice in one node, then once more
"""

import operator
import os
from typing import Annotated, TypedDict

from agent import CountingModel, State, TURNS, bump, count, route  # noqa: F401
from langchain_core.language_models import LLM
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import RetryPolicy, Send, interrupt

model = CountingModel().bind_tools([bump])


def ask(text):
    """The model's answer to one user message (a fresh conversation)."""
    return model.invoke([HumanMessage(content=text, id="q")]).content


# -- async_graph ---------------------------------------------------------------------------------


async def agent_async(state: State) -> dict:
    return {"messages": [await model.ainvoke(state["messages"])]}


b = StateGraph(State)
b.add_node("agent", agent_async)
b.add_node("tools", ToolNode([bump]))
b.add_edge(START, "agent")
b.add_conditional_edges("agent", route, ["tools", END])
b.add_edge("tools", "agent")
async_graph = b.compile()


# -- fanout --------------------------------------------------------------------------------------


class Fan(TypedDict):
    items: list
    answers: Annotated[list, operator.add]
    total: int


def plan(state: Fan):
    return {}


def spread(state: Fan):
    return [Send("work", {"item": i}) for i in state["items"]]


def work(arg: dict):
    item = arg["item"]
    return {"answers": [f"{item}: {ask(f'item {item}')}"]}


def total(state: Fan):
    return {"total": len(state["answers"])}


b = StateGraph(Fan)
b.add_node("plan", plan)
b.add_node("work", work)
b.add_node("total", total)
b.add_edge(START, "plan")
b.add_conditional_edges("plan", spread, ["work"])
b.add_edge("work", "total")
b.add_edge("total", END)
fanout = b.compile()


# -- nested --------------------------------------------------------------------------------------


class Notes(TypedDict):
    notes: Annotated[list, operator.add]


@tool
def note(text: str) -> str:
    """File a note (counted in tool.count)."""
    count("tool", f"note {text}")
    return f"noted: {text}"


def inner_ask(state: Notes):
    return {"notes": [ask("inside")]}


sb = StateGraph(Notes)
sb.add_node("ask", inner_ask)
sb.add_edge(START, "ask")
inner = sb.compile()


def after(state: Notes):
    return {"notes": [note.invoke({"text": state["notes"][-1]})]}


b = StateGraph(Notes)
b.add_node("inner", inner)
b.add_node("after", after)
b.add_edge(START, "inner")
b.add_edge("inner", "after")
b.add_edge("after", END)
nested = b.compile()


# -- retry / once --------------------------------------------------------------------------------


@tool
def flaky(order: str) -> str:
    """Fetch an order; the first call ever fails (counted in tool.count)."""
    failed_before = os.path.exists(os.path.join(os.environ.get("REPLAY_COUNTS", "."), "flaky.failed"))
    count("tool", f"flaky {order}")
    if not failed_before:
        open(os.path.join(os.environ.get("REPLAY_COUNTS", "."), "flaky.failed"), "w").close()
        raise ConnectionError("the order service is down")
    return f"order {order}: shipped"


def fetch(state: Notes):
    plan = ask("which order?")
    return {"notes": [plan, flaky.invoke({"order": "1042"})]}


def finish(state: Notes):
    return {"notes": [ask("wrap up")]}


def retry_graph(policy):
    b = StateGraph(Notes)
    b.add_node("fetch", fetch, retry_policy=policy)
    b.add_node("finish", finish)
    b.add_edge(START, "fetch")
    b.add_edge("fetch", "finish")
    b.add_edge("finish", END)
    return b.compile()


retry = retry_graph(RetryPolicy(max_attempts=2, initial_interval=0.0, jitter=False))
once = retry_graph(None)


# -- parallel ------------------------------------------------------------------------------------


def asker(name):
    def node(state: Notes):
        draft = ask(f"draft for {name}")
        answer = interrupt({"node": name, "draft": draft})
        return {"notes": [f"{name}: {draft} / {answer}"]}

    return node


b = StateGraph(Notes)
b.add_node("a", asker("a"))
b.add_node("b", asker("b"))
b.add_edge(START, "a")
b.add_edge(START, "b")
b.add_edge("a", END)
b.add_edge("b", END)
parallel = b.compile()


# -- completion ----------------------------------------------------------------------------------


class CountingLLM(LLM):
    """A text-completion LLM (counted in model.count)."""

    @property
    def _llm_type(self) -> str:
        return "counting-llm"

    def _call(self, prompt, stop=None, run_manager=None, **kwargs):
        count("model", prompt)
        return f"completed: {prompt}"


llm = CountingLLM()


def draft(state: Notes):
    return {"notes": [llm.invoke("title"), llm.invoke("outline")]}


def polish(state: Notes):
    return {"notes": [llm.invoke(f"polish {state['notes'][-1]}")]}


b = StateGraph(Notes)
b.add_node("draft", draft)
b.add_node("polish", polish)
b.add_edge(START, "draft")
b.add_edge("draft", "polish")
b.add_edge("polish", END)
completion = b.compile()

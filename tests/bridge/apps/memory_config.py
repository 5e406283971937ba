"""An older-style memory graph: sync nodes, the user id from `config["configurable"]` (as the
memory-agent template read it before context_schema), the store injected as `store: BaseStore`,
and the graph compiled with an InMemoryStore of its own (replaced, as langgraph dev replaces it)."""
import operator
from typing import Annotated, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore


class State(TypedDict):
    note: str
    seen: Annotated[list, operator.add]


def remember(state: State, config: RunnableConfig, *, store: BaseStore):
    user = config["configurable"]["user_id"]
    n = len(store.search(("notes", user)))
    store.put(("notes", user), f"note-{n}", {"text": state["note"]})
    return {"seen": [f"saved note-{n} for {user}"]}


def recall(state: State, config: RunnableConfig, *, store: BaseStore):
    user = config["configurable"]["user_id"]
    # by key: search orders by updated_at, a one-second timestamp that two quick runs share
    items = sorted(store.search(("notes", user)), key=lambda i: i.key)
    return {"seen": [f"{user} has {len(items)} notes: " + ", ".join(i.value["text"] for i in items)]}


b = StateGraph(State)
b.add_node("remember", remember)
b.add_node("recall", recall)
b.add_edge(START, "remember")
b.add_edge("remember", "recall")
b.add_edge("recall", END)
graph = b.compile(store=InMemoryStore())

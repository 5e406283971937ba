"""linear: three nodes in a row; `graph` is the uncompiled StateGraph (superstep compiles it)."""
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph

print("linear.py imported")  # import-time output must not reach superstep's protocol


class State(TypedDict):
    topic: str
    log: Annotated[list, operator.add]
    words: int


def research(state: State):
    print(f"researching {state['topic']}")
    return {"log": ["research"], "words": len(state["topic"].split())}


def draft(state: State):
    return {"log": ["draft"], "words": state["words"] * 10}


def publish(state: State):
    return {"log": [f"publish {state['words']} words"]}


graph = StateGraph(State)
graph.add_node("research", research)
graph.add_node("draft", draft)
graph.add_node("publish", publish)
graph.add_edge(START, "research")
graph.add_edge("research", "draft")
graph.add_edge("draft", "publish")
graph.add_edge("publish", END)

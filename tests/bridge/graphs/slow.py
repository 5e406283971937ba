"""slow: nodes that take `seconds` to finish (a hung node for the cancel tests).

`graph`: one slow node (it runs in the bridge's main thread, so SIGINT interrupts its sleep);
`parallel`: two slow nodes in one superstep (they run in LangGraph's worker threads, which no
signal reaches: the bridge is killed); `nested`: a subgraph whose `wake` node returns at once the
first time this process runs it and hangs every time after (a time travel from a subgraph
checkpoint that the TUI must be able to cancel)."""
import operator
import time
from pathlib import Path
from typing import Annotated, NotRequired, TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    seconds: float
    log: Annotated[list, operator.add]
    # a file each slow node creates when it starts sleeping: the tests wait on it, not on a clock
    mark: NotRequired[str]


def started(state: State, who: str):
    if state.get("mark"):
        Path(f"{state['mark']}.{who}").touch()


def quick(state: State):
    return {"log": ["quick"]}


def sleepy(state: State):
    print("going to sleep", flush=True)
    started(state, "sleepy")
    time.sleep(state["seconds"])
    return {"log": ["slept"]}


def other(state: State):
    started(state, "other")
    time.sleep(state["seconds"])
    return {"log": ["other slept"]}


b = StateGraph(State)
b.add_node("quick", quick)
b.add_node("sleepy", sleepy)
b.add_edge(START, "quick")
b.add_edge("quick", "sleepy")
b.add_edge("sleepy", END)
graph = b.compile()

p = StateGraph(State)
p.add_node("quick", quick)
p.add_node("sleepy", sleepy)
p.add_node("other", other)
p.add_edge(START, "quick")
p.add_edge("quick", "sleepy")
p.add_edge("quick", "other")
p.add_edge("sleepy", END)
p.add_edge("other", END)
parallel = p.compile()


CALLS = [0]


def wake(state: State):
    CALLS[0] += 1
    if CALLS[0] > 1:
        time.sleep(3600)
    return {"log": ["woke"]}


i = StateGraph(State)
i.add_node("quick", quick)
i.add_node("wake", wake)
i.add_edge(START, "quick")
i.add_edge("quick", "wake")
i.add_edge("wake", END)
n = StateGraph(State)
n.add_node("inner", i.compile())
n.add_edge(START, "inner")
n.add_edge("inner", END)
nested = n.compile()

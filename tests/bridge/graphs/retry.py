"""retry: a flaky node succeeds on its third attempt (RetryPolicy); a strict node fails until the
state says the service is up (an ERROR write, then update_state and continue)."""
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import RetryPolicy

CALLS = {"flaky": 0}


class State(TypedDict):
    service_up: bool
    log: Annotated[list, operator.add]


def flaky(state: State):
    CALLS["flaky"] += 1
    print("flaky attempt", CALLS["flaky"])
    if CALLS["flaky"] % 3 != 0:
        raise ConnectionError(f"flaky failure {CALLS['flaky']}")
    return {"log": ["flaky ok"]}


def strict(state: State):
    if not state.get("service_up"):
        raise ValueError("service down")
    return {"log": ["strict ok"]}


builder = StateGraph(State)
builder.add_node("flaky", flaky, retry_policy=RetryPolicy(max_attempts=3, initial_interval=0.0, jitter=False))
builder.add_node("strict", strict, retry_policy=RetryPolicy(max_attempts=2, initial_interval=0.0, jitter=False, retry_on=ValueError))
builder.add_edge(START, "flaky")
builder.add_edge("flaky", "strict")
builder.add_edge("strict", END)
graph = builder.compile()

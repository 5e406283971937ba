"""Errors and retries (spec §9). State {log: Annotated[list, add]}.

Graph E: START -> ok_a, START -> flaky; both -> END. flaky sleeps 0.3 s (so ok_a has finished and saved
its writes) and raises ValueError('boom 1') on its first call per thread; later calls succeed.
  'err_failed'   : invoke -> raises; the step-0 checkpoint holds ok_a's writes + flaky's ERROR write
                   (idx -1, value "ValueError('boom 1')", a repr string); no step-1 checkpoint
  'err'          : ... then invoke(None): ok_a's stored output is reused, only flaky re-runs; the old ERROR row
                   stays next to flaky's new writes (history shows both error and result)
  'err_newinput' : ... failure, then invoke with NEW input: the failed step's tasks are discarded
Graph R: START -> r -> END with RetryPolicy(max_attempts=3, initial_interval=0.01, jitter=False,
         retry_on=KeyError); r raises KeyError on its first two calls, then succeeds
  'retry'        : no ERROR rows are persisted
Graph X: START -> r -> END, r always raises KeyError('always'), RetryPolicy(max_attempts=2, ...)
  'retry_exhausted' : one ERROR row "KeyError('always')" after all attempts
The exceptions re-raised by invoke are recorded in events.
"""
import operator
import time
from collections import Counter
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import RetryPolicy

from common import D, Fixture


class State(TypedDict):
    log: Annotated[list[str], operator.add]


calls = Counter()


def ok_a(state):
    return {"log": ["ok_a"]}


def flaky(state, config):
    tid = config["configurable"]["thread_id"]
    calls["flaky", tid] += 1
    if calls["flaky", tid] == 1:
        time.sleep(0.3)
        raise ValueError("boom 1")
    return {"log": ["flaky"]}


def retry_node(state, config):
    tid = config["configurable"]["thread_id"]
    calls["retry", tid] += 1
    if calls["retry", tid] < 3:
        raise KeyError(f"transient {calls['retry', tid]}")
    return {"log": ["retry_ok"]}


def always(state):
    raise KeyError("always")


def cfg(tid):
    return {"configurable": {"thread_id": tid}}


def main():
    fx = Fixture("errors")
    g = (StateGraph(State).add_node("ok_a", ok_a).add_node("flaky", flaky)
         .add_edge(START, "ok_a").add_edge(START, "flaky").add_edge("ok_a", END).add_edge("flaky", END)
         .compile(checkpointer=fx.saver))
    for tid in ("err_failed", "err", "err_newinput"):
        fx.attempt(f"{tid}: invoke", g.invoke, {"log": []}, cfg(tid), **D())
    fx.returned("err: invoke(None)", g.invoke(None, cfg("err"), **D()))
    fx.returned("err_newinput: invoke({'log': ['again']})", g.invoke({"log": ["again"]}, cfg("err_newinput"), **D()))
    for tid in ("err_failed", "err", "err_newinput"):
        fx.dump(g, tid)

    policy = RetryPolicy(max_attempts=3, initial_interval=0.01, jitter=False, retry_on=KeyError)
    g2 = (StateGraph(State).add_node("r", retry_node, retry_policy=policy)
          .add_edge(START, "r").add_edge("r", END).compile(checkpointer=fx.saver))
    fx.returned("retry: invoke", g2.invoke({"log": []}, cfg("retry"), **D()))
    fx.event(f"retry: node r was called {calls['retry', 'retry']} times")
    fx.dump(g2, "retry")

    policy2 = RetryPolicy(max_attempts=2, initial_interval=0.01, jitter=False, retry_on=KeyError)
    g3 = (StateGraph(State).add_node("r", always, retry_policy=policy2)
          .add_edge(START, "r").add_edge("r", END).compile(checkpointer=fx.saver))
    fx.attempt("retry_exhausted: invoke", g3.invoke, {"log": []}, cfg("retry_exhausted"), **D())
    fx.dump(g3, "retry_exhausted")
    fx.finish()


if __name__ == "__main__":
    main()

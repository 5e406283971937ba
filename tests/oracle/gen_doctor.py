"""The store the doctor suite (`du`, `prune`, `check`) works on, written by real LangGraph
(tests/doctor/README.md).

Threads of tests/doctor/graphs/shape.py (build()):
  done          runs to the end (nothing parked)
  parked_review parked on the interrupt in `review`
  parked_break  parked at a breakpoint before `finish` (interrupt_before)
  parked_sub    parked on the interrupt inside the subgraph `work` (namespace work:<task id>)
  long          30 loops of `plan` (the DeltaChannel `messages` snapshots every 3 updates, `notes`
                grows by a copy per checkpoint), then parked on `review`
  forked        parked on `review`, then two forks by time travel (update_state on older
                checkpoints, then invoke(None)): each runs to the end; the first branch's tip stays
                parked, the second's is an older finished tip, the newest is the head
  ticket        holds a `models.Ticket` (a dataclass of the app), parked on `review`
  scratchy      holds a value in `scratch`, parked on `review`

Writes <out>/doctor.sqlite (or a Postgres database with SUPERSTEP_ORACLE_PG) and <out>/doctor.json:
every thread's get_state / get_state_history in every namespace (common.py), plus `parked`: each
parked checkpoint and how to resume it (tests/doctor/verify_pruned.py resumes them), and `sizes`:
for every checkpoint, each stored channel value's length as LangGraph's serializer encodes it
(what `superstep du` adds up).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "doctor", "graphs"))

from common import D, Fixture, _SERDE  # noqa: E402
from models import Ticket  # noqa: E402
from shape import build  # noqa: E402


def cfg(t, checkpoint=None):
    c = {"configurable": {"thread_id": t}}
    if checkpoint:
        c["configurable"]["checkpoint_id"] = checkpoint
    return c


def main():
    fx = Fixture("doctor")
    g = build(checkpointer=fx.saver)
    parked = []

    def park(thread, how, checkpoint=None):
        parked.append({"thread_id": thread, "resume": how, "checkpoint_id": checkpoint})

    fx.returned("done", g.invoke({"route": "finish", "loops": 1}, cfg("done"), **D()))
    fx.returned("parked_review", g.invoke({"route": "review", "loops": 1}, cfg("parked_review"), **D()))
    park("parked_review", "answer")
    fx.returned("parked_break", g.invoke({"route": "finish", "loops": 1}, cfg("parked_break"),
                                         interrupt_before=["finish"], **D()))
    park("parked_break", "continue")
    fx.returned("parked_sub", g.invoke({"route": "work", "loops": 0}, cfg("parked_sub"), **D()))
    park("parked_sub", "answer")
    fx.returned("long", g.invoke({"route": "review", "loops": 30}, cfg("long"), **D()))
    park("long", "answer")

    fx.returned("forked", g.invoke({"route": "review", "loops": 3}, cfg("forked"), **D()))
    tip = g.get_state(cfg("forked")).config["configurable"]["checkpoint_id"]
    park("forked", "answer", tip)
    hist = list(g.get_state_history(cfg("forked")))
    for n in (2, 1):
        at = next(s for s in hist if s.values.get("n") == n and s.next == ("plan",))
        forked = g.update_state(at.config, {"route": "finish", "loops": 0})
        fx.returned(f"forked from n={n}", g.invoke(None, forked, **D()))

    fx.returned("ticket", g.invoke({"route": "review", "loops": 0,
                                    "ticket": Ticket(id=7, title="printer on fire")}, cfg("ticket"), **D()))
    park("ticket", "answer")
    fx.returned("scratchy", g.invoke({"route": "review", "loops": 0, "scratch": "note to self"},
                                     cfg("scratchy"), **D()))
    park("scratchy", "answer")

    for t in ("done", "parked_review", "parked_break", "parked_sub", "long", "forked", "ticket", "scratchy"):
        fx.dump(g, t, all_ns=True)
    fx.finish({"parked": parked, "sizes": value_sizes(fx)})


def value_sizes(fx):
    """{thread: {ns: {checkpoint id: {channel: bytes}}}}: the length of each stored channel value as
    LangGraph's serializer writes it (msgpack; a DeltaChannel snapshot as its extension), read back
    with get_tuple. Postgres keeps values in blobs; the same lengths."""
    out = {}
    for tid, ns in fx.sql("SELECT DISTINCT thread_id, checkpoint_ns FROM checkpoints"):
        for tup in fx.saver.list({"configurable": {"thread_id": tid, "checkpoint_ns": ns}}):
            sizes = {}
            for k, v in tup.checkpoint["channel_values"].items():
                typ, data = _SERDE.dumps_typed(v)
                # None is a msgpack nil (one byte) inside the checkpoint
                sizes[k] = len(data) if typ == "msgpack" else 1 if typ == "null" else None
            out.setdefault(tid, {}).setdefault(ns, {})[tup.config["configurable"]["checkpoint_id"]] = sizes
    return out


if __name__ == "__main__":
    main()

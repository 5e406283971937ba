"""Time travel, forks and replays (spec §10.1, §10.2). Graph START -> ask (interrupt('q')) -> after -> END.

thread 'tt' (ex08 sequence):
  1. invoke -> pauses at the interrupt (C0, step 0)
  2. Command(resume='A') -> completes (C1 step 1, C2 step 2)
  3. invoke(None, C0 config) -> replay of an interrupt checkpoint: a 'fork' checkpoint (step 1, parent C0),
     new task id, new interrupt id, pauses again
  4. Command(resume='B') addressed at C0 (a superseded checkpoint): no fork; the old answer 'A' is reused;
     C0's NULL RESUME row is replaced by 'B'; new loop checkpoints are children of C0
  5. Command(resume='C') on the latest (nothing pending): NULL RESUME stored on the head, no checkpoint
  6. invoke(None, C1 config) -> replay of a plain checkpoint: fork (step 2, parent C1), 'after' re-runs
thread 'tt_replayed': steps 1-3 only (live state = the fork checkpoint paused at the new interrupt)
thread 'tt_input'   : steps 1-2, then invoke({'log': ['new']}, C0 config): an 'input' checkpoint (step 1) whose
                      parent is C0; the pending ask task of C0 is discarded; START runs, ask interrupts again
thread 'tt_cmd'     : steps 1-2, then invoke(Command(update={'log': ['upd']}), C1 config): time travel with a
                      Command forks; the update is carried into the fork checkpoint's values, not stored as rows
"""
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from common import D, Fixture


class State(TypedDict):
    log: Annotated[list, operator.add]


def ask(state):
    ans = interrupt("q")
    return {"log": [f"ask:{ans}"]}


def after(state):
    return {"log": ["after"]}


def cfg(tid):
    return {"configurable": {"thread_id": tid}}


def main():
    fx = Fixture("time_travel")
    g = (StateGraph(State).add_node("ask", ask).add_node("after", after)
         .add_edge(START, "ask").add_edge("ask", "after").add_edge("after", END)
         .compile(checkpointer=fx.saver))

    def steps_1_2(tid):
        g.invoke({"log": []}, cfg(tid), **D())
        c0 = g.get_state(cfg(tid)).config
        g.invoke(Command(resume="A"), cfg(tid), **D())
        c1 = [h for h in g.get_state_history(cfg(tid)) if h.metadata["step"] == 1][0].config
        return c0, c1

    c0, c1 = steps_1_2("tt")
    fx.returned("tt step 3: invoke(None, C0)", g.invoke(None, c0, **D()))
    fx.returned("tt step 4: Command(resume='B') at C0", g.invoke(Command(resume="B"), c0, **D()))
    fx.returned("tt step 5: Command(resume='C') on the head", g.invoke(Command(resume="C"), cfg("tt"), **D()))
    fx.returned("tt step 6: invoke(None, C1)", g.invoke(None, c1, **D()))

    c0, _ = steps_1_2("tt_replayed")
    fx.returned("tt_replayed: invoke(None, C0)", g.invoke(None, c0, **D()))

    c0, _ = steps_1_2("tt_input")
    fx.returned("tt_input: invoke({'log': ['new']}, C0)", g.invoke({"log": ["new"]}, c0, **D()))

    _, c1 = steps_1_2("tt_cmd")
    fx.returned("tt_cmd: invoke(Command(update={'log': ['upd']}), C1)",
                g.invoke(Command(update={"log": ["upd"]}), c1, **D()))

    for tid in ("tt", "tt_replayed", "tt_input", "tt_cmd"):
        fx.dump(g, tid)
    fx.finish()


if __name__ == "__main__":
    main()

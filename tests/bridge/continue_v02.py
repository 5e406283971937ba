"""The straight run for a thread LangGraph 0.2 wrote: LangGraph 1.2 continues it directly.

    python tests/bridge/continue_v02.py DB VERSION

On a copy of tests/fixtures/v0_2_<VERSION>.sqlite, with the 1.2 graphs of tests/bridge/apps/
v02_graphs.py and a SqliteSaver on the file: 'before' (paused before execute) and
'cond_join_before' (paused before joined) are continued with invoke(None); on 0.2.76's file the
'paused' thread (interrupt() in approve) is resumed with Command(resume=True).
"""
import os
import sqlite3
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "apps"))

from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from langgraph.types import Command  # noqa: E402

import v02_graphs as g  # noqa: E402


def main():
    db, version = sys.argv[1:3]
    saver = SqliteSaver(sqlite3.connect(db, check_same_thread=False))
    saver.setup()

    def cfg(t):
        return {"configurable": {"thread_id": t}}

    g.b.copy(update={"checkpointer": saver}).invoke(None, cfg("before"))
    g.c_before.copy(update={"checkpointer": saver}).invoke(None, cfg("cond_join_before"))
    if version == "76":
        g.a.copy(update={"checkpointer": saver}).invoke(Command(resume=True), cfg("paused"))


if __name__ == "__main__":
    main()

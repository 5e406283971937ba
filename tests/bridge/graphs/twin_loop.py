"""twin_loop: graphs/loop.json's LangGraph twin (tests/differential/twin.py builds it from the spec),
compiled without a checkpointer: superstep's bridge gives it LangGraph's SqliteSaver. The
conditional-breakpoint tests (tests/it/compare_break.rs) pause it and the spec at the same step."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(REPO, "tests", "differential"))

from twin import build_graph  # noqa: E402

graph = build_graph(os.path.join(REPO, "graphs", "loop.json"), None)

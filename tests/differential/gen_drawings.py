"""LangGraph's own Mermaid drawing of some repo specs (issue 13: Command(goto) destinations).

For each spec named on the command line (default: the ones whose nodes route by Command(goto=...)),
the twin (`twin.build_graph`, which passes a node's "destinations" to `add_node(destinations=...)`,
as LangGraph's `Command[Literal[...]]` hint does) is compiled and `get_graph().draw_mermaid()` is
written to tests/fixtures/graph_drawings/<name>.mmd (or to --out DIR). tests/graph_drawing.rs checks
that `superstep graph --mermaid` draws the same nodes and edges; .ci/run regenerates them into a
temporary directory with the pinned venv and fails if they differ from the committed ones.

    /work/venv-oracle/bin/python tests/differential/gen_drawings.py [--out DIR] [SPEC ...]
"""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from twin import build_graph, spec_file  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(REPO, "tests", "fixtures", "graph_drawings")
DEFAULT = ["approval", "tool_call", "escalate_agent", "pipeline", "loop"]


def main(args: list[str]) -> None:
    out = OUT
    if args[:1] == ["--out"]:
        out, args = args[1], args[2:]
    os.makedirs(out, exist_ok=True)
    for name in args or DEFAULT:
        graph = build_graph(spec_file(REPO, name), None)
        with open(os.path.join(out, f"{name}.mmd"), "w", encoding="utf-8") as f:
            f.write(graph.get_graph().draw_mermaid())
        print(f"wrote {name}.mmd")


if __name__ == "__main__":
    main(sys.argv[1:])

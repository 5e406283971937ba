"""The doctor suite's graph, version 'no_class' (see ../shape.py)."""
import os
import sys

sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from shape import build  # noqa: E402

graph = build()

"""slow_import: an import that takes as long as the test wants — it waits until the file named by
$SLOW_IMPORT_RELEASE exists (the TUI must say it is importing meanwhile)."""
import os
import time

from langgraph.graph import END, START, StateGraph

while not os.path.exists(os.environ["SLOW_IMPORT_RELEASE"]):
    time.sleep(0.05)

b = StateGraph(dict)
b.add_node("a", lambda s: {})
b.add_edge(START, "a")
b.add_edge("a", END)
graph = b.compile()

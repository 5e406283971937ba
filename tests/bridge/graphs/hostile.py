"""hostile: plausible apps that probe how the bridge saves, dies and captures output (issue 21).

`counter`: `inc` adds 1 to `n` until `n` reaches `stop` (default 1000), one superstep each
(`async_counter`: the same with an async node, so the bridge uses LangGraph's async saver);
`unencodable`: `inc`, then `bad` returns an object msgpack cannot encode into `blob`;
`regex`: `inc`, then `hog` runs a catastrophic regex (C code holding the GIL for hours) after
writing its pid to `mark`; `raw`: writes through every path a plain Python program may use
(`sys.stdout.buffer`, `os.write(1/2)`, a subprocess, faulthandler, `\\r` progress updates);
`ctrl_c`: raises KeyboardInterrupt itself; `progress`: `updates` tqdm-style `\\r` updates without
a newline, then one newline (the seconds they took written to `mark`)."""
import faulthandler
import os
import re
import subprocess
import sys
import time
from typing import NotRequired, TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    n: int
    stop: NotRequired[int]
    mark: NotRequired[str]
    blob: NotRequired[object]
    updates: NotRequired[int]


def inc(state: State):
    return {"n": state["n"] + 1}


async def ainc(state: State):
    return {"n": state["n"] + 1}


def more(state: State):
    return END if state["n"] >= state.get("stop", 1000) else "inc"


def bad(state: State):
    class Opaque:
        pass

    return {"blob": Opaque()}


def hog(state: State):
    with open(state["mark"], "w") as f:
        f.write(str(os.getpid()))
    re.match(r"(a+)+$", "a" * 64 + "b")
    return {"n": -1}


def raw(state: State):
    sys.stdout.buffer.write(b"via buffer\n")
    sys.stdout.flush()
    os.write(1, b"via fd 1\n")
    os.write(2, b"via fd 2\n")
    subprocess.run([sys.executable, "-c", "print('from a subprocess')"], stdout=sys.stdout, check=True)
    subprocess.run([sys.executable, "-c", "import sys; sys.stderr.write('subprocess stderr\\n')"], check=True)
    faulthandler.enable()
    faulthandler.dump_traceback(all_threads=False)
    faulthandler.disable()
    print("10%\r50%\r100% done")
    print("abcdef\rxy")  # a terminal shows xycdef
    sys.stdout.write("no newline at the end")
    return {"n": state["n"] + 1}


def ctrl_c(state: State):
    raise KeyboardInterrupt("raised by the node itself")


def progress(state: State):
    w = sys.stderr.write
    total = state.get("updates", 1000)
    t = time.perf_counter()
    for i in range(total):
        w(f"\r{i + 1}/{total} |{'#' * (20 * (i + 1) // total):<20}|")
    w("\n")
    sys.stderr.flush()
    if state.get("mark"):
        # how long the updates took, for tests/stress/progress.py
        with open(state["mark"], "w") as f:
            f.write(repr(time.perf_counter() - t))
    return {"n": state["n"] + 1}


def chain(*nodes, loop=False):
    b = StateGraph(State)
    for name, fn in nodes:
        b.add_node(name, fn)
    b.add_edge(START, nodes[0][0])
    for (a, _), (c, _) in zip(nodes, nodes[1:]):
        b.add_edge(a, c)
    if loop:
        b.add_conditional_edges(nodes[-1][0], more)
    else:
        b.add_edge(nodes[-1][0], END)
    return b.compile()


counter = chain(("inc", inc), loop=True)
async_counter = chain(("inc", ainc), loop=True)
unencodable = chain(("inc", inc), ("bad", bad))
regex = chain(("inc", inc), ("hog", hog))
raw_output = chain(("raw", raw))
ctrl_c_graph = chain(("inc", inc), ("ctrl_c", ctrl_c))
progress_bar = chain(("progress", progress))


# the functional API: prints inside an @task and the entrypoint
from langgraph.func import entrypoint, task  # noqa: E402


@task
def shout(word: str) -> str:
    print(f"task shouts {word}")
    return word.upper()


@entrypoint()
def functional(inputs: dict) -> dict:
    print("entrypoint starts")
    loud = shout(inputs["word"]).result()
    return {"loud": loud}


# the bridge's own death: os._exit in a node; and (exit_at_import.py) at import
def exits(state: State):
    os._exit(1)


def killed(state: State):
    os.kill(os.getpid(), 9)


exit_in_node = chain(("inc", inc), ("exits", exits))
killed_in_node = chain(("inc", inc), ("killed", killed))

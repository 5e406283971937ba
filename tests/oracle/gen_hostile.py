"""Hostile strings: terminal escape sequences and invisible characters in every field real LangGraph
writes (issue 15 item 1), and ids with multi-byte characters (item 4).

The catalogue PAYLOADS holds what a hostile or careless app can put in a checkpoint file: OSC 0 (retitle
the terminal), OSC 52 (write the clipboard), ESC[2J (clear the screen), OSC 8 (a hyperlink), BEL/BS/CR,
a newline, C1 controls (U+009B CSI, U+009D OSC), DEL, a bidi override (U+202E), zero-width characters.

Graph H: state keys  "k<payload>" (one per payload, last value) and "log" (add); nodes
  "write<payload>"  sets every key to a string carrying its payload, and log
  "ask<payload>"    calls interrupt(<payload dict>)
  "boom<payload>"   (graph E) raises ValueError(<payload>)
  "sub<payload>"    (graph S) a compiled subgraph whose node calls interrupt(payload): the namespace
                    'sub<payload>:<task id>' carries the payload
Node names avoid ':' and '|' (LangGraph reserves them), so the OSC 8 payload is used with '%3A'.

Threads (thread id 'h-<name>-<payload>' for every payload, paused at the interrupt, invoked with
metadata {"note": <payload>}): each shows the payload in thread id, node names, state keys, values,
interrupt value and metadata.
  'err-<name><payload>' : invoke raises; the ERROR write's repr carries the payload
  'sub-<name><payload>' : paused inside the subgraph
Crafted with SqliteSaver.put / put_writes (LangGraph's own writer, ids LangGraph would never choose):
  'ids'             : put_writes from task ids 'abcdefgé-…' (36 bytes, 'é' across byte 8), 'abcdefgé' and
                      '<ESC>]0;title<BEL>' (an escape sequence), the last to channel '<CSI>2J'
hostile_ids.sqlite (no .json: LangGraph's get_state raises ValueError on it): thread 'ids' continued by
SqliteSaver.put with checkpoints '1ffffffé-…' and its child '1fffffff-0000-6000-8000é…' (36 bytes each, 'é'
across byte 8 / byte 24), each with writes from task ids 'abcdefgé-…' and 'abcdefgé'.
"""
from typing import Annotated, TypedDict
import operator

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from common import D, Fixture, finalize_db, fresh_db

PAYLOADS = {
    "osc0": "\x1b]0;PWNED-TITLE\x07",
    "osc52": "\x1b]52;c;cHduZWQ=\x07",
    "clear": "\x1b[2J\x1b[H",
    "osc8": "\x1b]8;;http%3A//evil.example/\x1b\\click\x1b]8;;\x1b\\",
    "bel_bs_cr": "\x07\x08\x08\rX",
    "newline": "two\nlines",
    "c1": "\u009b31m\u009d0;t\u009c",
    "del": "d\x7fl",
    "bidi": "abc\u202edcba",
    "zw": "a\u200bb\u2060c\ufeff",
}


# 36 bytes each, 'é' (2 bytes) across byte 8 / byte 24
TASK_E8 = "abcdefgé-0000-6000-8000-00000000000"
CP_E8 = "1ffffffé-0000-6000-8000-00000000000"
CP_E24 = "1fffffff-0000-6000-8000é00000000000"
assert all(len(x.encode()) == 36 for x in (TASK_E8, CP_E8, CP_E24))


def keys():
    return {f"k{p}": str for p in PAYLOADS.values()}


State = TypedDict("State", {**keys(), "log": Annotated[list, operator.add]})


def cfg(tid, note=None):
    c = {"configurable": {"thread_id": tid}}
    if note is not None:
        c["metadata"] = {"note": note}
    return c


def writer(payload):
    def w(state):
        return {**{k: f"value {k} {payload}" for k in keys()}, "log": [payload]}
    return w


def asker(payload):
    def a(state):
        return {"log": [f"answer {interrupt({'question': payload, 'hint': 'answer' + payload})}"]}
    return a


def boom(payload):
    def b(state):
        raise ValueError(f"boom {payload}")
    return b


def main():
    fx = Fixture("hostile")
    for name, p in PAYLOADS.items():
        g = (StateGraph(State).add_node(f"write{p}", writer(p)).add_node(f"ask{p}", asker(p))
             .add_edge(START, f"write{p}").add_edge(f"write{p}", f"ask{p}").add_edge(f"ask{p}", END)
             .compile(checkpointer=fx.saver))
        tid = f"h-{name}-{p}"
        g.invoke({"log": []}, cfg(tid, p), **D())
        fx.dump(g, tid)

        ge = (StateGraph(State).add_node(f"boom{p}", boom(p)).add_edge(START, f"boom{p}")
              .add_edge(f"boom{p}", END).compile(checkpointer=fx.saver))
        fx.attempt(f"err-{name}: invoke", ge.invoke, {"log": [p]}, cfg(f"err-{name}{p}", p), **D())
        fx.dump(ge, f"err-{name}{p}")

        sub = (StateGraph(State).add_node(f"inner{p}", asker(p)).add_edge(START, f"inner{p}")
               .add_edge(f"inner{p}", END).compile())
        gs = (StateGraph(State).add_node(f"sub{p}", sub).add_edge(START, f"sub{p}")
              .add_edge(f"sub{p}", END).compile(checkpointer=fx.saver))
        gs.invoke({"log": []}, cfg(f"sub-{name}{p}", p), **D())
        fx.dump(gs, f"sub-{name}{p}", all_ns=True)

    # ids LangGraph would not choose, written by its own saver: task ids of 36 bytes with 'é' across byte 8,
    # and an escape sequence
    p = PAYLOADS["osc0"]
    g = (StateGraph(State).add_node("write", writer("plain")).add_node("ask", asker("plain"))
         .add_edge(START, "write").add_edge("write", "ask").add_edge("ask", END)
         .compile(checkpointer=fx.saver))
    g.invoke({"log": []}, cfg("ids"), **D())
    latest = fx.saver.get_tuple(cfg("ids")).config
    fx.saver.put_writes(latest, [("log", ["from a multi-byte task id"])], TASK_E8)
    fx.saver.put_writes(latest, [("log", ["short task id"])], "abcdefgé")
    fx.saver.put_writes(latest, [("\u009b2J", "a channel named CSI 2J")], p)
    fx.dump(g, "ids")
    fx.finish()

    # checkpoint ids with a multi-byte character, in a file of its own: LangGraph's get_state cannot show
    # them (prepare_next_tasks unhexlifies the id: ValueError), so there is no oracle dump
    path, conn, saver = fresh_db(fx.out_dir, "hostile_ids")
    g = (StateGraph(State).add_node("write", writer("plain")).add_node("ask", asker("plain"))
         .add_edge(START, "write").add_edge("write", "ask").add_edge("ask", END)
         .compile(checkpointer=saver))
    g.invoke({"log": []}, cfg("ids"), **D())
    tup = saver.get_tuple(cfg("ids"))
    parent = tup.config
    for i, cid in enumerate((CP_E8, CP_E24)):
        cp = {**tup.checkpoint, "id": cid}
        parent = saver.put(parent, cp, {**tup.metadata, "step": tup.metadata["step"] + 1 + i},
                           cp["channel_versions"])
        saver.put_writes(parent, [("log", ["from a multi-byte task id"])], TASK_E8)
        saver.put_writes(parent, [("log", ["short task id"])], "abcdefgé")
    try:
        g.get_state(cfg("ids"))
        raise RuntimeError("LangGraph showed a non-hex checkpoint id; update the docstring")
    except ValueError as e:
        print(f"hostile_ids: LangGraph's get_state raises ValueError: {e}")
    finalize_db(path, conn)


if __name__ == "__main__":
    main()

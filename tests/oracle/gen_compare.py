"""Threads to compare (issue 25): forks, subgraphs, Send, parallel interrupts, messages with tool calls.
Besides the thread dumps, `compare.json` holds `compare`: checkpoint pairs with the diff, and run pairs with
the divergence, that this script computes from LangGraph's own `get_state_history` (the rules are the ones
docs/compare.md states; superstep's `diff` / `diverge` must agree).

Graph C (chat): START -> agent -> (tool calls?) tools -> agent ... -> END; messages via add_messages, `turns`
via operator.add. The agent asks the `weather` tool for the city its human message names, then answers.
  'chat_a'    : "weather in Paris" to the end
  'chat_b'    : "weather in Rome" to the end
  'chat_fork' : as chat_a, then update_state on the step-1 checkpoint (the AI tool call) replacing that AI
                message (same id) with a call for Oslo, and invoke(None) from the fork: two branches
Graph S (subgraph): START -> prep -> sub -> post -> END; sub = START -> s1 -> s2 -> END, all on `log`
(operator.add) and `x`.
  'sub_a' (x=1), 'sub_b' (x=2)
Graph M (Send): START -> fan -> Send('work', item) per item -> collect -> END; work multiplies by FACTOR.
  'send_a' (FACTOR 10), 'send_b' (FACTOR 11, same input): the runs part in the push tasks' writes
Graph P (parallel interrupts): START -> ask1, ask2 (both interrupt) -> join -> END.
  'par_a' : resumed with {q1: 'yes', q2: 'no'}; 'par_b': {q1: 'yes', q2: 'yes'};
  'par_half': only q1 answered (q2 still pending)
"""
import json
import operator
import re
from typing import Annotated, TypedDict

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, Send, interrupt

from common import D, Fixture, snapshot_json, view_typed


# ---------------------------------------------------------------------------------------------------
# graphs
# ---------------------------------------------------------------------------------------------------

class Chat(TypedDict):
    messages: Annotated[list, add_messages]
    turns: Annotated[int, operator.add]


def agent(state):
    msgs = state["messages"]
    last = msgs[-1]
    n = len(msgs)
    if isinstance(last, HumanMessage):
        city = last.content.split()[-1]
        call = {"name": "weather", "args": {"city": city}, "id": f"call_{city.lower()}"}
        return {"messages": [AIMessage(content="", id=f"ai-{n}", tool_calls=[call])], "turns": 1}
    return {"messages": [AIMessage(content=f"Answer: {last.content}", id=f"ai-{n}")], "turns": 1}


def route(state):
    return "tools" if getattr(state["messages"][-1], "tool_calls", None) else END


def tools(state):
    ai = state["messages"][-1]
    return {"messages": [ToolMessage(content=f"{c['args']['city']}: sunny", tool_call_id=c["id"], name=c["name"])
                         for c in ai.tool_calls]}


class Sub(TypedDict):
    log: Annotated[list[str], operator.add]
    x: int


def mk(name):
    def f(state):
        return {"log": [f"{name}:{state['x']}"], "x": state["x"] + 1}
    f.__name__ = name
    return f


class Map(TypedDict):
    items: list[int]
    results: Annotated[list[int], operator.add]
    total: int


FACTOR = {"k": 10}


def fan(state):
    return {}


def to_work(state):
    return [Send("work", {"items": [i], "results": [], "total": 0}) for i in state["items"]]


def work(state):
    return {"results": [state["items"][0] * FACTOR["k"]]}


def collect(state):
    return {"total": sum(state["results"])}


class Par(TypedDict):
    answers: Annotated[list[str], operator.add]
    done: bool


def ask1(state):
    return {"answers": [f"q1={interrupt('q1')}"]}


def ask2(state):
    return {"answers": [f"q2={interrupt('q2')}"]}


def join(state):
    return {"done": True}


def cfg(tid, ns="", cid=None):
    c = {"thread_id": tid, "checkpoint_ns": ns}
    if cid:
        c["checkpoint_id"] = cid
    return {"configurable": c}


# ---------------------------------------------------------------------------------------------------
# the rules of superstep's diff / diverge, over LangGraph's StateSnapshots (JSON views: common.view)
# ---------------------------------------------------------------------------------------------------

IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MESSAGE_CLASSES = {"HumanMessage", "AIMessage", "ToolMessage", "SystemMessage", "FunctionMessage",
                   "ChatMessage", "RemoveMessage"}


def key_seg(k):
    return f".{k}" if IDENT.match(k) else "[" + json.dumps(k, ensure_ascii=False) + "]"


def jsondiff(a, b, path="", out=None):
    out = [] if out is None else out
    if a == b and type(a) is type(b):
        return out
    if isinstance(a, dict) and isinstance(b, dict) and a.get("__type__") == b.get("__type__"):
        for k, v in a.items():
            if k in b:
                jsondiff(v, b[k], path + key_seg(k), out)
            else:
                out.append({"path": path + key_seg(k), "op": "removed", "a": v})
        for k, w in b.items():
            if k not in a:
                out.append({"path": path + key_seg(k), "op": "added", "b": w})
    elif isinstance(a, list) and isinstance(b, list):
        for i, (v, w) in enumerate(zip(a, b)):
            jsondiff(v, w, f"{path}[{i}]", out)
        for i in range(len(b), len(a)):
            out.append({"path": f"{path}[{i}]", "op": "removed", "a": a[i]})
        for i in range(len(a), len(b)):
            out.append({"path": f"{path}[{i}]", "op": "added", "b": b[i]})
    else:
        out.append({"path": path, "op": "changed", "a": a, "b": b})
    return out


def is_message(v):
    t = v.get("__type__", "") if isinstance(v, dict) else ""
    if not t.startswith("langchain_core.messages."):
        return False
    cls = t.rsplit(".", 1)[-1]
    return cls.removesuffix("Chunk") in MESSAGE_CLASSES


def both_message_lists(a, b):
    return (isinstance(a, list) and isinstance(b, list) and (a or b)
            and all(is_message(m) for m in a + b))


def tool_calls_diff(a, b):
    by_id = all(c.get("id") is not None for c in a + b)

    def partner(lst, i, c):
        if by_id:
            return next((x for x in lst if x.get("id") == c.get("id")), None)
        return lst[i] if i < len(lst) else None

    out = {"added": [], "removed": [], "changed": []}
    for i, c in enumerate(a):
        d = partner(b, i, c)
        if d is None:
            out["removed"].append(c)
        elif d != c:
            out["changed"].append([c, d])
    for i, d in enumerate(b):
        if partner(a, i, d) is None:
            out["added"].append(d)
    return out


def edited(i, j, x, y):
    fields = sorted({k for k in list(x) + list(y) if x.get(k) != y.get(k)})
    e = {"op": "edited", "index_a": i, "index_b": j, "id": y.get("id"), "fields": fields}
    if "tool_calls" in fields:
        e["tool_calls"] = tool_calls_diff(x.get("tool_calls") or [], y.get("tool_calls") or [])
    e["a"], e["b"] = x, y
    return e


def messages_diff(a, b):
    out = []
    if all(m.get("id") is not None for m in a + b):
        ids_a = [m["id"] for m in a]
        ids_b = [m["id"] for m in b]
        for i, m in enumerate(a):
            if m["id"] not in ids_b:
                out.append({"op": "removed", "index": i, "message": m})
        for j, m in enumerate(b):
            if m["id"] in ids_a:
                i = ids_a.index(m["id"])
                if a[i] != m:
                    out.append(edited(i, j, a[i], m))
            else:
                out.append({"op": "added", "index": j, "message": m})
    else:
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                out.append(edited(i, i, x, y))
        for i in range(len(b), len(a)):
            out.append({"op": "removed", "index": i, "message": a[i]})
        for j in range(len(a), len(b)):
            out.append({"op": "added", "index": j, "message": b[j]})
    return out


def key_change(k, a, b, has_a, has_b):
    if has_a and not has_b:
        return {"change": "removed", "key": k, "a": a}
    if has_b and not has_a:
        return {"change": "added", "key": k, "b": b}
    if a == b:
        return None
    if both_message_lists(a, b):
        return {"change": "messages", "key": k, "messages": messages_diff(a, b)}
    return {"change": "changed", "key": k, "paths": jsondiff(a, b)}


def values_diff(va, vb):
    out = []
    for k in list(va) + [k for k in vb if k not in va]:
        c = key_change(k, va.get(k), vb.get(k), k in va, k in vb)
        if c:
            out.append(c)
    return out


def comparable(j):
    if isinstance(j, dict):
        interrupt_ = str(j.get("__type__", "")).endswith(".Interrupt")
        return {k: comparable(v) for k, v in j.items() if not (interrupt_ and k == "id")}
    if isinstance(j, list):
        return [comparable(v) for v in j]
    return j


def multiset(a, b):
    left = list(b)
    removed = []
    for x in a:
        if x in left:
            left.remove(x)
        else:
            removed.append(x)
    return {"removed": removed, "added": left}


def diff_expected(sa, sb):
    """superstep diff's JSON for two snapshot_json dicts (less the sides)."""
    def tasks(s):
        return [{"name": t["name"], "path": t["path"], "error": t["error"],
                 "interrupts": [i["value"] for i in t["interrupts"]], "result": t["result"]} for t in s["tasks"]]

    def writes(s):
        names = {t["id"]: t["name"] for t in s["tasks"]}
        return [{"node": names.get(w["task_id"], w["task_id"]), "channel": w["channel"],
                 "value": comparable(w["value"])} for w in s["pending_writes"]]

    values = values_diff(sa["values"], sb["values"])
    nxt = None if sa["next"] == sb["next"] else {"a": sa["next"], "b": sb["next"]}
    t = multiset(tasks(sa), tasks(sb))
    i = multiset([x["value"] for x in sa["interrupts"]], [x["value"] for x in sb["interrupts"]])
    w = multiset(writes(sa), writes(sb))
    same = not values and nxt is None and not any(t.values()) and not any(i.values()) and not any(w.values())
    return {"same": same, "values": values, "next": nxt, "tasks": t, "interrupts": i, "pending_writes": w}


# ---------------------------------------------------------------------------------------------------

def main():
    fx = Fixture("compare")

    def sj(s):
        return snapshot_json(s, fx.saver)

    def history(graph, tid, ns=""):
        return list(graph.get_state_history(cfg(tid, ns)))

    def cid(s):
        return s.config["configurable"]["checkpoint_id"]

    def at_step(graph, tid, step, ns=""):
        """The checkpoint with that step on the current branch (superstep's THREAD@STEP)."""
        for s in lineage(graph, tid, ns, None)[::-1]:
            if s.metadata.get("step") == step:
                return s
        raise KeyError((tid, step))

    def lineage(graph, tid, ns, head_id):
        hist = history(graph, tid, ns)
        by_id = {cid(h): h for h in hist}
        cur = by_id[head_id] if head_id else hist[0]
        chain = []
        while cur is not None:
            chain.append(cur)
            p = cur.parent_config
            cur = by_id.get(p["configurable"]["checkpoint_id"]) if p else None
        return chain[::-1]

    def task_writes(tid, ns, checkpoint_id):
        table, col = ("checkpoint_writes", "blob") if fx.pg else ("writes", "value")
        rows = fx.sql(f"SELECT task_id, task_path, idx, channel, type, {col} FROM {table} WHERE thread_id = ? "
                      "AND checkpoint_ns = ? AND checkpoint_id = ? ORDER BY task_path, task_id, idx",
                      (tid, ns, checkpoint_id))
        out = {}
        for task_id, path, _idx, ch, ty, val in rows:
            v = comparable(view_typed(ty, bytes(val) if val is not None else b""))
            out.setdefault(path, []).append({"channel": ch, "value": v})
        return out

    def diverge_expected(graph, a, b):
        """a, b: (thread, ns, head checkpoint id or None for the newest)."""
        la, lb = lineage(graph, *a), lineage(graph, *b)
        out = {"diverged": False, "index": None, "common": None, "at_a": None, "at_b": None,
               "differs": [], "value_keys": [], "next": None, "tasks": {}}
        for i in range(max(len(la), len(lb))):
            x = la[i] if i < len(la) else None
            y = lb[i] if i < len(lb) else None
            if x is None or y is None:
                out.update(diverged=True, index=i, at_a=x and cid(x), at_b=y and cid(y), differs=["length"])
                break
            if (a[0], a[1], cid(x)) == (b[0], b[1], cid(y)):
                out["common"] = cid(x)
                continue
            jx, jy = sj(x), sj(y)
            vd = values_diff(jx["values"], jy["values"])
            nd = jx["next"] != jy["next"]
            if not vd and not nd:
                continue
            out.update(diverged=True, index=i, at_a=cid(x), at_b=cid(y),
                       differs=(["values"] if vd else []) + (["next"] if nd else []),
                       value_keys=sorted(c["key"] for c in vd),
                       next={"a": jx["next"], "b": jy["next"]} if nd else None)
            if i > 0:
                pa, pb = la[i - 1], lb[i - 1]
                if (a[0], a[1], cid(pa)) != (b[0], b[1], cid(pb)):
                    wa = task_writes(a[0], a[1], cid(pa))
                    wb = task_writes(b[0], b[1], cid(pb))
                    out["tasks"] = {p: {"a": wa.get(p, []), "b": wb.get(p, [])}
                                    for p in list(wa) + [p for p in wb if p not in wa]
                                    if wa.get(p, []) != wb.get(p, [])}
            break
        return out

    diffs, divergences = [], []

    def add_diff(label, graph, a, b):
        """a, b: (thread, ns, StateSnapshot)."""
        exp = diff_expected(sj(a[2]), sj(b[2]))
        diffs.append({"label": label,
                      "a": {"thread_id": a[0], "checkpoint_ns": a[1], "checkpoint_id": cid(a[2])},
                      "b": {"thread_id": b[0], "checkpoint_ns": b[1], "checkpoint_id": cid(b[2])},
                      "expected": exp})

    def add_diverge(label, graph, a, b):
        divergences.append({"label": label,
                            "a": {"thread_id": a[0], "checkpoint_ns": a[1], "checkpoint_id": a[2]},
                            "b": {"thread_id": b[0], "checkpoint_ns": b[1], "checkpoint_id": b[2]},
                            "expected": diverge_expected(graph, a, b)})

    # --- C: chat -----------------------------------------------------------------------------------
    chat = (StateGraph(Chat).add_node("agent", agent).add_node("tools", tools)
            .add_edge(START, "agent").add_conditional_edges("agent", route, ["tools", END])
            .add_edge("tools", "agent").compile(checkpointer=fx.saver))
    chat.invoke({"messages": [HumanMessage("weather in Paris")]}, cfg("chat_a"), **D())
    chat.invoke({"messages": [HumanMessage("weather in Rome")]}, cfg("chat_b"), **D())
    chat.invoke({"messages": [HumanMessage("weather in Paris")]}, cfg("chat_fork"), **D())
    s1 = at_step(chat, "chat_fork", 1)
    ai = s1.values["messages"][-1]
    oslo = AIMessage(content="", id=ai.id, tool_calls=[{"name": "weather", "args": {"city": "Oslo"},
                                                         "id": "call_oslo"}])
    fork_cfg = chat.update_state(s1.config, {"messages": [oslo]}, as_node="agent")
    chat.invoke(None, fork_cfg, **D())
    orig_head = lineage(chat, "chat_fork", "", None)  # the fork's branch is now the newest
    fork_step2 = at_step(chat, "chat_fork", 2)
    orig_step2 = [h for h in history(chat, "chat_fork") if h.metadata.get("step") == 2
                  and cid(h) != cid(fork_step2)][0]
    add_diff("chat: step 1 -> step 3 of one thread", chat,
             ("chat_a", "", at_step(chat, "chat_a", 1)), ("chat_a", "", at_step(chat, "chat_a", 3)))
    add_diff("chat: two threads' heads", chat,
             ("chat_a", "", history(chat, "chat_a")[0]), ("chat_b", "", history(chat, "chat_b")[0]))
    add_diff("chat: a fork (edited AI message, other tool call) and its original", chat,
             ("chat_fork", "", orig_step2), ("chat_fork", "", fork_step2))
    add_diff("chat: the same checkpoint", chat,
             ("chat_a", "", at_step(chat, "chat_a", 2)), ("chat_a", "", at_step(chat, "chat_a", 2)))
    add_diff("chat: paused-before-tools step vs input", chat,
             ("chat_b", "", at_step(chat, "chat_b", -1)), ("chat_b", "", at_step(chat, "chat_b", 1)))
    add_diverge("chat: two threads", chat, ("chat_a", "", None), ("chat_b", "", None))
    add_diverge("chat: the same run", chat, ("chat_a", "", None), ("chat_a", "", None))
    # `diverge chat_fork` alone: the original branch's head is the newest checkpoint outside the
    # fork's lineage
    mine = {cid(h) for h in orig_head}
    other = next(h for h in history(chat, "chat_fork") if cid(h) not in mine)
    add_diverge("chat: a fork and its original", chat, ("chat_fork", "", None), ("chat_fork", "", cid(other)))
    divergences[-1]["one_argument"] = True
    add_diverge("chat: fork vs chat_a (another thread, same input)", chat,
                ("chat_fork", "", None), ("chat_a", "", None))

    # --- S: subgraph -------------------------------------------------------------------------------
    sub = StateGraph(Sub).add_node("s1", mk("s1")).add_node("s2", mk("s2"))
    sub = sub.add_edge(START, "s1").add_edge("s1", "s2").add_edge("s2", END).compile()
    sg = (StateGraph(Sub).add_node("prep", mk("prep")).add_node("sub", sub).add_node("post", mk("post"))
          .add_edge(START, "prep").add_edge("prep", "sub").add_edge("sub", "post").add_edge("post", END)
          .compile(checkpointer=fx.saver))
    sg.invoke({"log": [], "x": 1}, cfg("sub_a"), **D())
    sg.invoke({"log": [], "x": 2}, cfg("sub_b"), **D())
    ns_a = [n for n in fx.namespaces("sub_a") if n][0]
    ns_b = [n for n in fx.namespaces("sub_b") if n][0]
    add_diff("subgraph: the subgraph's newest checkpoint in two threads", sg,
             ("sub_a", ns_a, history(sg, "sub_a", ns_a)[0]), ("sub_b", ns_b, history(sg, "sub_b", ns_b)[0]))
    add_diff("subgraph: the parent's step 1 (sub pending) in two threads", sg,
             ("sub_a", "", at_step(sg, "sub_a", 1)), ("sub_b", "", at_step(sg, "sub_b", 1)))
    add_diverge("subgraph: two threads", sg, ("sub_a", "", None), ("sub_b", "", None))
    add_diverge("subgraph: inside the subgraph", sg, ("sub_a", ns_a, None), ("sub_b", ns_b, None))

    # --- M: Send -----------------------------------------------------------------------------------
    mg = (StateGraph(Map).add_node("fan", fan).add_node("work", work).add_node("collect", collect)
          .add_edge(START, "fan").add_conditional_edges("fan", to_work, ["work"])
          .add_edge("work", "collect").add_edge("collect", END).compile(checkpointer=fx.saver))
    FACTOR["k"] = 10
    mg.invoke({"items": [1, 2, 3], "results": [], "total": 0}, cfg("send_a"), **D())
    FACTOR["k"] = 11
    mg.invoke({"items": [1, 2, 3], "results": [], "total": 0}, cfg("send_b"), **D())
    add_diff("send: after the mapped step", mg,
             ("send_a", "", at_step(mg, "send_a", 2)), ("send_b", "", at_step(mg, "send_b", 2)))
    add_diff("send: with the Send tasks pending", mg,
             ("send_a", "", at_step(mg, "send_a", 1)), ("send_b", "", at_step(mg, "send_b", 1)))
    add_diverge("send: the push tasks' writes differ", mg, ("send_a", "", None), ("send_b", "", None))

    # --- P: parallel interrupts --------------------------------------------------------------------
    pg = (StateGraph(Par).add_node("ask1", ask1).add_node("ask2", ask2).add_node("join", join)
          .add_edge(START, "ask1").add_edge(START, "ask2").add_edge(["ask1", "ask2"], "join")
          .add_edge("join", END).compile(checkpointer=fx.saver))

    def ids(tid):
        r = pg.invoke({"answers": [], "done": False}, cfg(tid), **D())
        return {i.value: i.id for i in r["__interrupt__"]}

    i = ids("par_a")
    pg.invoke(Command(resume={i["q1"]: "yes", i["q2"]: "no"}), cfg("par_a"), **D())
    i = ids("par_b")
    pg.invoke(Command(resume={i["q1"]: "yes", i["q2"]: "yes"}), cfg("par_b"), **D())
    i = ids("par_half")
    pg.invoke(Command(resume={i["q1"]: "yes"}), cfg("par_half"), **D())
    add_diff("parallel interrupts: both paused (interrupt ids differ, values do not)", pg,
             ("par_a", "", at_step(pg, "par_a", 0)), ("par_b", "", at_step(pg, "par_b", 0)))
    add_diff("parallel interrupts: answered both vs one", pg,
             ("par_a", "", history(pg, "par_a")[0]), ("par_half", "", history(pg, "par_half")[0]))
    add_diff("parallel interrupts: the heads", pg,
             ("par_a", "", history(pg, "par_a")[0]), ("par_b", "", history(pg, "par_b")[0]))
    add_diverge("parallel interrupts: other answers", pg, ("par_a", "", None), ("par_b", "", None))
    add_diverge("parallel interrupts: one run is shorter", pg, ("par_a", "", None), ("par_half", "", None))

    for tid in ("chat_a", "chat_b", "chat_fork"):
        fx.dump(chat, tid)
    for tid in ("sub_a", "sub_b"):
        fx.dump(sg, tid, all_ns=True)
    for tid in ("send_a", "send_b"):
        fx.dump(mg, tid)
    for tid in ("par_a", "par_b", "par_half"):
        fx.dump(pg, tid)
    fx.finish({"compare": {"diffs": diffs, "divergences": divergences}})


if __name__ == "__main__":
    main()

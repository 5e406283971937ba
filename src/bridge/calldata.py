"""What a recorded call is, pure helpers of superstep's call recorder (shipped as
`superstep_calldata`): its place in the run without task ids, its request as LangChain's cache
keys it (canonical JSON), one-line summaries, errors kept and raised again, message ids.
"""

import hashlib
import importlib
import json
import re

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def path_key(name, path):
    """A task's place in its superstep, without task ids: `agent` (a pull task), `work#1` (the
    second `Send`), else the path with ids blanked."""
    if isinstance(path, (list, tuple)) and path:
        if path[0] == "__pregel_pull":
            return str(name)
        if path[0] == "__pregel_push" and len(path) >= 2 and isinstance(path[1], int):
            return f"{name}#{path[1]}"
    return f"{name}{_UUID.sub('*', repr(path))}"


def canonical(obj):
    return json.dumps(obj, sort_keys=True, default=repr, ensure_ascii=False, separators=(",", ":"))


def digest(text):
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()


def one_line(text, limit=160):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def message_line(m):
    kind = getattr(m, "type", type(m).__name__)
    content = getattr(m, "content", m)
    if not isinstance(content, str):
        content = canonical(content)
    calls = getattr(m, "tool_calls", None) or []
    if calls:
        shown = ", ".join(f"{c.get('name')}({canonical(c.get('args'))})" for c in calls)
        content = (content + " " if content else "") + "→ " + shown
    name = getattr(m, "name", None)
    who = f"{kind}({name})" if name and kind == "tool" else kind
    return one_line(f"{who}: {content}")


# A conversation's messages are the same objects call after call (the state's list, grown by one
# or two each turn): each message's JSON is made once. id(message) -> (message, its JSON).
_MESSAGES = {}
MESSAGE_FIELDS = ("type", "content", "name", "tool_calls", "invalid_tool_calls", "tool_call_id", "status", "additional_kwargs")
# id(model), stop and call kwargs -> (model, its llm string)
_LLM = {}


def message_text(m):
    """What a provider is sent of a message, as canonical JSON (its id left out, as LangChain's
    cache leaves it out: add_messages gives ids after the fact)."""
    got = _MESSAGES.get(id(m))
    if got is not None and got[0] is m:
        return got[1]
    # a pydantic model keeps its fields in __dict__; getattr of a field a message type lacks
    # would go through pydantic's __getattr__ and an exception
    fields = getattr(m, "__dict__", None) or {}
    view = {}
    for k in MESSAGE_FIELDS:
        v = fields.get(k)
        if v is not None and v != "" and v != [] and v != {}:
            view[k] = v
    text = canonical(view if view else repr(m))
    if len(_MESSAGES) > 100_000:
        _MESSAGES.clear()
    _MESSAGES[id(m)] = (m, text)
    return text


def forget_messages():
    """A new run: the JSON kept for the last run's messages goes."""
    _MESSAGES.clear()


def llm_string(model, stop, kwargs):
    """LangChain's cache key for the model and its settings (bound tools included)."""
    key = (id(model), canonical(stop), canonical(kwargs))
    got = _LLM.get(key)
    if got is not None and got[0] is model:
        return got[1]
    try:
        llm = model._get_llm_string(stop=stop, **kwargs)
    except Exception:
        llm = type(model).__name__
    if len(_LLM) > 10_000:
        _LLM.clear()
    _LLM[key] = (model, llm)
    return llm


def model_request(model, messages, stop, kwargs):
    """(request JSON, one-line summary): what LangChain's cache keys a call on — the messages
    without ids and the llm string."""
    texts = [message_text(m) for m in messages]
    text = '{"llm":' + json.dumps(llm_string(model, stop, kwargs), ensure_ascii=False) + ',"messages":[' + ",".join(texts) + "]}"
    summary = ""
    if messages:
        last = messages[-1]
        content = getattr(last, "content", last)
        if not isinstance(content, str):
            content = canonical(content)
        summary = one_line(f"{len(messages)} msgs, last {getattr(last, 'type', 'message')}: {content}")
    return text, summary


def model_name(model):
    for attr in ("model_name", "model", "model_id"):
        v = getattr(model, attr, None)
        if isinstance(v, str) and v:
            return v
    return type(model).__name__


def tool_request(tool, tool_input, tool_call_id):
    """(request JSON, one-line summary): the tool's name, the arguments the model gave (injected
    ones left out) and the tool call id."""
    inp = tool_input
    if isinstance(inp, dict):
        try:
            injected = tool._injected_args_keys
        except Exception:
            injected = ()
        inp = {k: v for k, v in inp.items() if k not in injected and k not in ("runtime", "state", "store", "config")} if injected else dict(inp)
    text = canonical({"name": tool.name, "input": inp, "tool_call_id": tool_call_id})
    return text, one_line(f"{tool.name}({canonical(inp)})")


def first_diff(a, b, path=""):
    """The first place two JSON values differ: (path, old, new), or None."""
    if type(a) is not type(b):
        return (path or "$", a, b)
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return (f"{path}.{k}" if path else k, a.get(k), b.get(k))
            d = first_diff(a[k], b[k], f"{path}.{k}" if path else k)
            if d:
                return d
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_diff(x, y, f"{path}[{i}]")
            if d:
                return d
        if len(a) != len(b):
            return (f"{path}[{min(len(a), len(b))}]", a[len(b):][:1] or None, b[len(a):][:1] or None)
        return None
    return None if a == b else (path or "$", a, b)


def error_record(e):
    t = type(e)
    try:
        args = json.loads(canonical(list(e.args)))
    except Exception:
        args = [str(e)]
    return {"type": f"{t.__module__}.{t.__qualname__}", "message": str(e), "args": args}


def rebuild_error(rec):
    mod, _, qual = rec["type"].rpartition(".")
    try:
        cls = importlib.import_module(mod)
        for part in qual.split("."):
            cls = getattr(cls, part)
        if isinstance(cls, type) and issubclass(cls, BaseException):
            return cls(*rec.get("args", []))
    except Exception:
        pass
    return type(qual.rsplit(".", 1)[-1] or "RecordedError", (Exception,), {})(rec.get("message", ""))


def response_line(kind, value):
    from langchain_core.messages import BaseMessage

    if isinstance(value, BaseMessage):
        return message_line(value)
    if kind == "model" and isinstance(value, dict) and value.get("generations"):
        g = value["generations"][0]
        if isinstance(g, list):
            g = g[0] if g else {}
        m = g.get("message")
        return message_line(m) if m is not None else one_line(g.get("text", ""))
    return one_line(value if isinstance(value, str) else canonical(value))


def tokens(value):
    try:
        m = value["generations"][0]["message"]
        u = getattr(m, "usage_metadata", None) or {}
        return u.get("input_tokens"), u.get("output_tokens")
    except Exception:
        return None, None


def ids_of(value):
    from langchain_core.messages import BaseMessage

    if isinstance(value, BaseMessage):
        return [value.id]
    return None


def late_ids(value, before):
    """Ids LangGraph gave the returned message after the call (add_messages gives a message
    without one a uuid): replayed, the message must carry the same."""
    now = ids_of(value)
    if now is None or before is None or now == before:
        return None
    return now


def apply_ids(value, ids):
    """A replayed message gets the id its original got from add_messages after the call.

    LangGraph saves a task's writes in the background while add_messages gives the same message
    object its uuid, so a stored write holds the id or not depending on which ran first (10 plain
    LangGraph runs of tests/replay/agent.py: 39 of 40 ToolMessage writes hold it); the replayed
    message carries it from the start, so its write holds it and the state has the original's."""
    from langchain_core.messages import BaseMessage

    if isinstance(value, BaseMessage) and ids and ids[0]:
        value.id = ids[0]


def micros(ms):
    # an integer on the wire: superstep reads bridge events with serde's internally tagged enums,
    # which cannot read a float there
    return None if ms is None else int(round(ms * 1000))


def summary(r):
    return {
        "seq": r["seq"], "task_id": r["task_id"], "ns": r["task_ns"], "node": r["node"], "attempt": r["attempt"],
        "kind": r["kind"], "name": r["name"], "status": r["status"], "request": r["request_summary"],
        "response": r.get("response_summary", ""), "latency_us": micros(r.get("latency_ms")),
        "input_tokens": r.get("input_tokens"), "output_tokens": r.get("output_tokens"),
        "error": bool(r.get("error")), "id": r.get("id"), "checkpoint": r["checkpoint_id"], "run": r["run"],
        "root_task_id": r["root_task_id"], "step": r["step"], "ref_id": r.get("ref_id"),
    }



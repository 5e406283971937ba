"""The LangGraph twin of a superstep graph spec (differential suite, see README.md).

`build_graph(spec_path, checkpointer, seed)` turns `graphs/<name>.json` (+ its Starlark code) into a real
compiled LangGraph `StateGraph`. The Starlark node code is executed as Python (Starlark is a Python
subset) with superstep's node builtins provided here:

* `interrupt`, `Command`, `Send`      -> LangGraph's own `langgraph.types` objects
* `fail(*args)`                        -> `raise Exception(msg)` (message built like Starlark's `fail`)
* `raise_error(kind, msg)`             -> raise the Python exception class named `kind`
* `effect(name, data=None)`, `print`   -> no-ops (superstep only records them)
* `random()`, `uuid4()`, `now()`, `llm(prompt)` -> the same deterministic stream as superstep's
  `TaskContext::helper_u64` (src/engine/interrupts.rs):
      h = xxh3_64(f"{seed}|{step}|{task_path}|{attempt}|{call_index}|{reexec}|{salt}")

The helper context of a call is found from LangGraph's own runnable config (`get_config()`):

* inside a task (node function, or a conditional edge run by the task's writers, including the
  `__start__` task): seed = the scenario seed, step = `metadata.langgraph_step`, task path =
  `task_path_str(metadata.langgraph_path)`, attempt = `runtime.execution_info.node_attempt`,
  call_index counts every helper call of that attempt (node function and its conditional edges share
  it), reexec = 1 if the task held resume answers or a plain resume value was available when the
  execution began (first attempt; kept for retries);
* inside `update_state` (a node's writers run without a task): seed 0, step 0, path "", attempt 1,
  reexec 0, one counter per update — as superstep's `writer_writes`;
* inside a custom reducer: seed 0, step 0, path "", attempt 1, reexec 0, a fresh counter per reducer
  call — as superstep's `StarlarkCode::reduce`.
"""
from __future__ import annotations

import builtins
import copy
import datetime as _dt
import functools
import json
import operator
import os
import threading
import types
import uuid
from typing import Annotated, Any, TypedDict

import xxhash
from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from langgraph.pregel._algo import task_path_str
from langgraph.types import Command as _Command
from langgraph.types import RetryPolicy
from langgraph.types import Send as _Send
from langgraph.types import interrupt as _interrupt

CONF = "configurable"
KEY_SCRATCHPAD = "__pregel_scratchpad"
KEY_RUNTIME = "__pregel_runtime"
KEY_SEND = "__pregel_send"

WORDS = [
    "quick", "draft", "summary", "plan", "careful", "bold", "revised", "final", "short",
    "detailed", "friendly", "formal", "option", "proposal", "answer", "note", "brief", "update",
    "report", "idea", "reply", "version", "outline", "sketch",
]

# 2026-01-01T00:00:00Z
NOW_BASE = 1_767_225_600
NOW_SPAN = 31_536_000

M64 = (1 << 64) - 1


# ----------------------------------------------------------------------------------------------------
# the deterministic helper stream (pure functions, also used by the self-checks)
# ----------------------------------------------------------------------------------------------------

def helper_key(seed, step, path, attempt, call_index, reexec, salt) -> str:
    return f"{seed}|{step}|{path}|{attempt}|{call_index}|{1 if reexec else 0}|{salt}"


def helper_u64(seed, step, path, attempt, call_index, reexec, salt) -> int:
    return xxhash.xxh3_64_intdigest(
        helper_key(seed, step, path, attempt, call_index, reexec, salt).encode("utf-8")
    )


def random_from(h: int) -> float:
    return (h >> 11) / float(1 << 53)


def now_from(h: int) -> str:
    secs = NOW_BASE + h % NOW_SPAN
    return _dt.datetime.fromtimestamp(secs, _dt.timezone.utc).isoformat()


def llm_from(h: int, prompt: str) -> str:
    w = [WORDS[(h >> (i * 8)) % len(WORDS)] for i in range(3)]
    return f"{w[0]} {w[1]} {w[2]} #{(h >> 32) & 0xFFFF:04x}: {prompt}"


def uuid4_from(a: int, b: int) -> str:
    raw = (a & M64).to_bytes(8, "big") + (b & M64).to_bytes(8, "big")
    # version 4 + RFC 4122 variant, like Rust's uuid::Builder::from_random_bytes
    return str(uuid.UUID(bytes=raw, version=4))


# ----------------------------------------------------------------------------------------------------
# Starlark flavoured bits
# ----------------------------------------------------------------------------------------------------

def starlark_repr(v) -> str:
    """Starlark's `repr` for the plain values node code handles (strings double-quoted)."""
    if v is None:
        return "None"
    if v is True:
        return "True"
    if v is False:
        return "False"
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(starlark_repr(x) for x in v) + "]"
    if isinstance(v, tuple):
        if len(v) == 1:
            return "(" + starlark_repr(v[0]) + ",)"
        return "(" + ", ".join(starlark_repr(x) for x in v) + ")"
    if isinstance(v, _Struct):
        return "struct(" + ", ".join(f"{k}={starlark_repr(x)}" for k, x in v.items()) + ")"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{starlark_repr(k)}: {starlark_repr(x)}" for k, x in v.items()) + "}"
    return repr(v)


class _Struct(dict):
    """Starlark `struct(...)`: attribute access; stored like a dict (superstep: a map of its fields)."""

    def __getattr__(self, k):
        try:
            return self[k]
        except KeyError:
            raise AttributeError(k) from None


def _star_type(v) -> str:
    if v is None:
        return "NoneType"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "string"
    if isinstance(v, _Struct):
        return "struct"
    if isinstance(v, list):
        return "list"
    if isinstance(v, tuple):
        return "tuple"
    if isinstance(v, dict):
        return "dict"
    if isinstance(v, (set, frozenset)):
        return "set"
    if callable(v):
        return "function"
    return type(v).__name__


_star_json = types.SimpleNamespace(
    encode=lambda x: json.dumps(x, separators=(",", ":"), ensure_ascii=False),
    decode=json.loads,
    encode_indent=lambda x, prefix="", indent="\t": json.dumps(x, indent=indent, ensure_ascii=False),
)


# ----------------------------------------------------------------------------------------------------
# exceptions by name
# ----------------------------------------------------------------------------------------------------

_EXC_LOCK = threading.Lock()
_EXC_CLASSES: dict[str, type] = {}


def exception_class(name: str) -> type:
    """The exception class `raise_error(name, ...)` raises and `retry_on: [name]` matches.

    A Python builtin exception class of that name; else a LangGraph error class (`langgraph.errors`);
    else a (cached) new `Exception` subclass with that name. Builtins that can't be built from a single
    message (UnicodeDecodeError, ...) and BaseException-only builtins get a same-named subclass that can.
    """
    with _EXC_LOCK:
        if name in _EXC_CLASSES:
            return _EXC_CLASSES[name]
        import langgraph.errors as lg_errors

        cls = getattr(builtins, name, None)
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):
            cls = getattr(lg_errors, name, None)
            if not (isinstance(cls, type) and issubclass(cls, Exception)):
                cls = None
        if cls is None or not issubclass(cls, Exception):
            cls = type(name, (Exception,), {"__module__": "builtins"})
        else:
            try:
                probe = cls("x")
                ok = probe.args == ("x",)
            except Exception:
                ok = False
            if not ok:
                base = cls

                def __init__(self, msg=""):
                    Exception.__init__(self, msg)

                def __str__(self):
                    return str(self.args[0]) if self.args else ""

                cls = type(name, (base,), {"__init__": __init__, "__str__": __str__,
                                           "__module__": base.__module__})
        _EXC_CLASSES[name] = cls
        return cls


# ----------------------------------------------------------------------------------------------------
# helper contexts
# ----------------------------------------------------------------------------------------------------

class _HelperCtx:
    __slots__ = ("seed", "step", "path", "attempt", "reexec", "calls", "lock")

    def __init__(self, seed, step, path, attempt, reexec):
        self.seed, self.step, self.path, self.attempt, self.reexec = seed, step, path, attempt, reexec
        self.calls = 0
        self.lock = threading.Lock()

    def next(self, salt: str) -> int:
        with self.lock:
            n = self.calls
            self.calls += 1
        return helper_u64(self.seed, self.step, self.path, self.attempt, n, self.reexec, salt)


_REDUCER = threading.local()


class _Helpers:
    """The per-graph helper state: which context a builtin call belongs to."""

    def __init__(self, seed: int):
        self.seed = seed
        self.lock = threading.Lock()
        # (id(scratchpad), attempt) -> (scratchpad, ctx); the scratchpad is kept alive so ids stay unique
        self.attempts: dict[tuple[int, int], tuple[Any, _HelperCtx]] = {}
        # id(scratchpad.resume) -> (resume list, reexec): shared by all attempts of one execution
        self.executions: dict[int, tuple[Any, bool]] = {}
        # id(send callable) -> (callable, ctx): one update_state call
        self.updates: dict[int, tuple[Any, _HelperCtx]] = {}

    def _task_ctx(self, config) -> _HelperCtx | None:
        conf = config.get(CONF) or {}
        sp = conf.get(KEY_SCRATCHPAD)
        md = config.get("metadata") or {}
        if sp is None or "langgraph_path" not in md:
            return None
        runtime = conf.get(KEY_RUNTIME)
        info = getattr(runtime, "execution_info", None)
        attempt = getattr(info, "node_attempt", 1) or 1
        key = (id(sp), attempt)
        with self.lock:
            hit = self.attempts.get(key)
            if hit is not None and hit[0] is sp:
                return hit[1]
            ex = self.executions.get(id(sp.resume))
            if ex is not None and ex[0] is sp.resume:
                reexec = ex[1]
            else:
                reexec = bool(sp.resume) or sp.get_null_resume(False) is not None
                self.executions[id(sp.resume)] = (sp.resume, reexec)
            ctx = _HelperCtx(self.seed, md["langgraph_step"], task_path_str(md["langgraph_path"]),
                             attempt, reexec)
            self.attempts[key] = (sp, ctx)
            return ctx

    def begin_node(self):
        """Called first thing in a node function: fixes the execution's `reexec` before any
        `interrupt()` can consume a resume value."""
        try:
            config = get_config()
        except RuntimeError:
            return
        self._task_ctx(config)

    def ctx(self) -> _HelperCtx:
        red = getattr(_REDUCER, "ctx", None)
        if red is not None:
            return red
        try:
            config = get_config()
        except RuntimeError:
            return _HelperCtx(0, 0, "", 1, False)
        ctx = self._task_ctx(config)
        if ctx is not None:
            return ctx
        # update_state: the node's writers run outside any task
        send = (config.get(CONF) or {}).get(KEY_SEND)
        if send is None:
            return _HelperCtx(0, 0, "", 1, False)
        with self.lock:
            hit = self.updates.get(id(send))
            if hit is not None and hit[0] is send:
                return hit[1]
            ctx = _HelperCtx(0, 0, "", 1, False)
            self.updates[id(send)] = (send, ctx)
            return ctx

    # the builtins ------------------------------------------------------------------------------
    def random(self) -> float:
        return random_from(self.ctx().next("random"))

    def uuid4(self) -> str:
        cx = self.ctx()
        a = cx.next("uuid4a")
        b = cx.next("uuid4b")
        return uuid4_from(a, b)

    def now(self) -> str:
        return now_from(self.ctx().next("now"))

    def llm(self, prompt) -> str:
        h = self.ctx().next("llm")
        return llm_from(h, prompt if isinstance(prompt, str) else starlark_repr(prompt))


# ----------------------------------------------------------------------------------------------------
# node builtins
# ----------------------------------------------------------------------------------------------------

def _Command_builtin(*, goto=None, update=None, resume=None, graph=None):
    return _Command(graph=graph, update=update, resume=resume, goto=() if goto is None else goto)


def _Send_builtin(node, arg):
    return _Send(node, arg)


def _fail(*args):
    msg = " ".join(a if isinstance(a, str) else starlark_repr(a) for a in args)
    raise Exception(msg.strip())


def _raise_error(kind, message):
    raise exception_class(kind)(message)


def _effect(name, data=None):
    return None


def _print(*args, **kwargs):
    return None


def node_globals(helpers: _Helpers) -> dict:
    return {
        "__name__": "starlark_module",
        "interrupt": lambda value: _interrupt(value),
        "Command": _Command_builtin,
        "Send": _Send_builtin,
        "fail": _fail,
        "raise_error": _raise_error,
        "effect": _effect,
        "print": _print,
        "random": helpers.random,
        "uuid4": helpers.uuid4,
        "now": helpers.now,
        "llm": helpers.llm,
        # Starlark library extensions superstep enables (struct, json, map, filter, set)
        "struct": lambda **kw: _Struct(kw),
        "json": _star_json,
        "map": lambda f, xs: [f(x) for x in xs],
        "filter": lambda f, xs: [x for x in xs if (f(x) if f is not None else x)],
        "type": _star_type,
    }


# ----------------------------------------------------------------------------------------------------
# the spec
# ----------------------------------------------------------------------------------------------------

_TYPES = {"list": list, "str": str, "int": int, "float": float, "dict": dict, "bool": bool, "any": Any}


def _norm(n: str) -> str:
    return {"START": START, "END": END}.get(n, n)


def load_spec(spec_path: str) -> tuple[dict, str, str]:
    """(spec, code source, code file name) of a graph spec JSON."""
    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    if spec.get("code") is not None:
        code_file = os.path.join(os.path.dirname(os.path.abspath(spec_path)), spec["code"])
        with open(code_file, encoding="utf-8") as f:
            source = f.read()
    elif spec.get("code_inline") is not None:
        code_file = f"{spec_path}#code_inline"
        source = spec["code_inline"]
    else:
        code_file, source = f"{spec_path}#code", ""
    return spec, source, code_file


def _default_type(default):
    """A zero-argument "type" whose instance is `default` (BinaryOperatorAggregate starts at `typ()`)."""

    class _Default:
        def __new__(cls):
            return copy.deepcopy(default)

    _Default.__name__ = "Default"
    return _Default


def _state_schema(spec: dict, ns: dict) -> type:
    fields = {}
    for key, ks in (spec.get("state") or {}).items():
        ks = ks or {}
        reducer = ks.get("reducer")
        tname = ks.get("type")
        typ = _TYPES[tname] if tname is not None else None
        if reducer in (None, "last", "last_value"):
            fields[key] = typ if typ is not None else Any
            continue
        if reducer == "add":
            fn = operator.add
        else:
            star = ns[reducer]

            @functools.wraps(star)
            def fn(current, update, _star=star):
                prev = getattr(_REDUCER, "ctx", None)
                _REDUCER.ctx = _HelperCtx(0, 0, "", 1, False)
                try:
                    return _star(current, update)
                finally:
                    _REDUCER.ctx = prev

        delta = ks.get("delta")
        if delta:
            # Annotated[T, DeltaChannel(reducer, snapshot_frequency=N)]: the reducer takes the
            # step's writes as one batch; the channel starts from typ() (list by default)
            from langgraph.channels.delta import DeltaChannel

            freq = delta.get("snapshot_frequency", 100) if isinstance(delta, dict) else 100
            fields[key] = Annotated[typ if typ is not None else list, DeltaChannel(fn, snapshot_frequency=freq)]
            continue
        # initial value: `default`, else the type's empty value, else none (superstep's parse)
        if "default" in ks:
            d = ks["default"]
            if typ not in (None, Any) and type(d) is typ and d == typ():
                base = typ
            else:
                base = _default_type(d)
        elif typ is not None:
            base = typ
        else:
            base = Any  # Any() raises -> MISSING: no initial value
        fields[key] = Annotated[base, fn]
    return TypedDict(f"{spec.get('name', 'Graph')}State", fields)  # type: ignore[operator]


def _retry_policy(r: dict) -> RetryPolicy:
    kw = {}
    for k in ("initial_interval", "backoff_factor", "max_interval"):
        if k in r:
            kw[k] = float(r[k])
    if "max_attempts" in r:
        kw["max_attempts"] = int(r["max_attempts"])
    if "jitter" in r:
        kw["jitter"] = bool(r["jitter"])
    if r.get("retry_on") is not None:
        kw["retry_on"] = tuple(exception_class(n) for n in r["retry_on"])
    return RetryPolicy(**kw)


def _breakpoints(v):
    if v is None:
        return None
    if v == "*":
        return "*"
    return list(v)


def spec_file(repo, name):
    """A graph spec by name: the gallery `graphs/` first, then the test-only specs in
    `tests/differential/graphs/`."""
    for d in (os.path.join(repo, "graphs"), os.path.join(repo, "tests", "differential", "graphs")):
        p = os.path.join(d, f"{name}.json")
        if os.path.exists(p):
            return p
    raise FileNotFoundError(f"no graph spec {name}.json in graphs/ or tests/differential/graphs/")


def build_graph(spec_path, checkpointer, seed=0, interrupt_before=None, interrupt_after=None):
    """A compiled LangGraph StateGraph for a superstep graph spec.

    `interrupt_before` / `interrupt_after` override the spec's lists when given (not None).
    """
    spec, source, code_file = load_spec(spec_path)
    helpers = _Helpers(int(seed))
    ns = node_globals(helpers)
    exec(compile(source, code_file, "exec"), ns)  # noqa: S102 - the graph's own node code

    builder = StateGraph(_state_schema(spec, ns))

    for n in spec["nodes"]:
        if isinstance(n, str):
            n = {"name": n}
        name = n["name"]
        retry = _retry_policy(n["retry"]) if n.get("retry") is not None else None
        if n.get("subgraph"):
            child_path = os.path.join(os.path.dirname(os.path.abspath(spec_path)), n["subgraph"])
            action = build_graph(child_path, None, seed)
        else:
            star = ns[n.get("fn") or name]

            def action(state, _star=star):
                helpers.begin_node()
                return _star(state)

            action.__name__ = getattr(star, "__name__", name)
        extra = {"defer": True} if n.get("defer") else {}
        dests = n.get("destinations")
        if dests is not None:
            # where a Command(goto=...) may lead: drawing only, as a Command[Literal[...]] hint
            extra["destinations"] = (
                {_norm(k): v for k, v in dests.items()}
                if isinstance(dests, dict)
                else tuple(_norm(d) for d in dests)
            )
        if retry is not None:
            builder.add_node(name, action, retry_policy=retry, **extra)
        else:
            builder.add_node(name, action, **extra)

    for src, dst in spec.get("edges") or []:
        if isinstance(src, list):
            builder.add_edge([_norm(s) for s in src], _norm(dst))
        else:
            builder.add_edge(_norm(src), _norm(dst))

    for b in spec.get("conditional_edges") or []:
        star = ns[b["path"]]

        @functools.wraps(star)
        def path(state, _star=star):
            return _star(state)

        pm = b.get("path_map")
        if isinstance(pm, dict):
            pm = {k: _norm(v) for k, v in pm.items()}
        elif isinstance(pm, list):
            if any(_norm(d) != d for d in pm):
                pm = {d: _norm(d) for d in pm}
            else:
                pm = list(pm)
        builder.add_conditional_edges(_norm(b["source"]), path, pm)

    ib = interrupt_before if interrupt_before is not None else _breakpoints(spec.get("interrupt_before"))
    ia = interrupt_after if interrupt_after is not None else _breakpoints(spec.get("interrupt_after"))
    graph = builder.compile(checkpointer=checkpointer, interrupt_before=ib, interrupt_after=ia)
    graph.twin_spec = spec  # type: ignore[attr-defined]
    graph.twin_helpers = helpers  # type: ignore[attr-defined]
    return graph

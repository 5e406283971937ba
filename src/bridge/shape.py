"""The user's graph as superstep draws it: importing the reference, whether it needs an event
loop, its topology (nodes, edges, channels, breakpoints) and the input form's fields.

Part of superstep's bridge (src/bridge/bridge.py is the program; shipped as superstep_shape.py)."""

import importlib
import importlib.util
import inspect
import os
import sys

import superstep_wire as wire
from superstep_wire import BridgeError, exc_line, last_frame, plain_json

wire.OWN_FILES.append(__file__)

# ------------------------------------------------------------------------------------------------
# Loading the graph
# ------------------------------------------------------------------------------------------------

def import_target(ref):
    """The object a reference names: {"file": path} or {"module": name}, plus "attr"."""
    attr = ref["attr"]
    if ref.get("file"):
        path = os.path.abspath(ref["file"])
        if not os.path.exists(path):
            raise BridgeError("reference", f"{ref['file']}: no such file")
        d = os.path.dirname(path)
        if d not in sys.path:
            sys.path.insert(0, d)
        name = os.path.splitext(os.path.basename(path))[0]
        if name in sys.modules and getattr(sys.modules[name], "__file__", None) == path:
            module = sys.modules[name]
        else:
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:
                raise BridgeError("reference", f"{ref['file']}: not a Python file")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            try:
                spec.loader.exec_module(module)
            except BaseException as e:
                sys.modules.pop(name, None)
                raise BridgeError(
                    "import", f"importing {ref['file']} failed: {exc_line(e)}", frame=last_frame(e)
                )
        where = ref["file"]
    else:
        try:
            module = importlib.import_module(ref["module"])
        except BaseException as e:
            raise BridgeError(
                "import", f"importing module {ref['module']} failed: {exc_line(e)}", frame=last_frame(e)
            )
        where = f"module {ref['module']}"
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            names = sorted(n for n in dir(module) if not n.startswith("_"))
            raise BridgeError(
                "attribute",
                f"{where} has no attribute {attr!r} (it defines: {', '.join(names[:20])}{', …' if len(names) > 20 else ''})",
            )
        obj = getattr(obj, part)
    return obj


def is_async_graph(graph, seen=None):
    """Whether some node (or a subgraph's node) has only an async implementation: such a graph
    must run with astream / AsyncSqliteSaver."""
    from langgraph._internal._runnable import RunnableCallable

    seen = seen if seen is not None else set()
    if id(graph) in seen:
        return False
    seen.add(id(graph))
    for node in getattr(graph, "nodes", {}).values():
        bound = getattr(node, "bound", None)
        for r in _runnables(bound):
            if isinstance(r, RunnableCallable) and r.func is None and r.afunc is not None:
                return True
        for sub in getattr(node, "subgraphs", None) or []:
            if is_async_graph(sub, seen):
                return True
    return False


def _runnables(r):
    if r is None:
        return []
    out = [r]
    for attr in ("steps", "first", "middle", "last", "bound"):
        v = getattr(r, attr, None)
        if isinstance(v, (list, tuple)):
            for x in v:
                out.extend(_runnables(x))
        elif v is not None and attr != "steps" and v is not r and hasattr(v, "invoke"):
            out.extend(_runnables(v))
    return out


# ------------------------------------------------------------------------------------------------
# Topology: the graph's shape as superstep's inspector reads it (tests/oracle/common.py format,
# extended with edges, breakpoints and subgraphs).
# ------------------------------------------------------------------------------------------------

def _qualname(f):
    mod = getattr(f, "__module__", None)
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None)
    if name is None:
        return None
    return f"{mod}.{name}" if mod else name


def topology(graph):
    from langgraph._internal._typing import MISSING
    from langgraph.channels.binop import BinaryOperatorAggregate

    state_keys = graph.stream_channels_asis
    state_keys = [state_keys] if isinstance(state_keys, str) else list(state_keys)
    channels = {}
    for name, ch in graph.channels.items():
        op = getattr(ch, "operator", None)
        default = None
        if isinstance(ch, BinaryOperatorAggregate):
            try:
                v = ch.copy().value
                default = None if v is MISSING else plain_json(v)
            except Exception:
                default = None
        channels[name] = {
            "kind": type(ch).__name__,
            "reducer": getattr(op, "__name__", None) if op is not None else None,
            "reducer_qualname": _qualname(op) if op is not None else None,
            "default": default,
        }
    edges = []
    try:
        drawn = graph.get_graph()
        for e in drawn.edges:
            edges.append(
                {
                    "source": e.source,
                    "target": e.target,
                    "conditional": bool(e.conditional),
                    "label": e.data if isinstance(e.data, str) else None,
                }
            )
    except Exception:
        pass
    subs = {}
    for name, node in graph.nodes.items():
        for sub in getattr(node, "subgraphs", None) or []:
            try:
                subs[name] = topology(sub)
            except Exception:
                pass
            break

    def bp(v):
        if v == "*" or v is None:
            return v
        return list(v)

    return {
        "name": graph.get_name() if hasattr(graph, "get_name") else getattr(graph, "name", None),
        "nodes": [{"name": n, "triggers": list(node.triggers)} for n, node in graph.nodes.items()],
        "state_keys": state_keys,
        # LangGraph's values are the bare value of one channel (a functional-API entrypoint's
        # __end__, a StateGraph's __root__), not a dict of state keys
        "root_value": isinstance(graph.stream_channels_asis, str),
        "channels": channels,
        "subgraphs": [n for n, node in graph.nodes.items() if node.subgraphs],
        "edges": edges,
        "interrupt_before": bp(graph.interrupt_before_nodes) or [],
        "interrupt_after": bp(graph.interrupt_after_nodes) or [],
        "subgraph_topologies": subs,
    }


# ------------------------------------------------------------------------------------------------
# Attempts: one LangChain run per attempt of a task (a retry starts another).
# ------------------------------------------------------------------------------------------------

def input_fields(graph):
    """The graph's input schema as fields for superstep's input form (`N`, `m`): [{"key",
    "kind", "required", "default"?, "choices"?, "fields"?}], kinds str / int / float / bool /
    list / dict / messages / literal / object / any. Read from the type hints (pydantic's JSON
    schema refuses typing.TypedDict on Python < 3.12); [] when there is no schema to read."""
    try:
        builder = getattr(graph, "builder", None)
        schema = getattr(builder, "input_schema", None) or getattr(builder, "state_schema", None)
        if schema is None:
            return []
        return _schema_fields(schema, 0)
    except Exception:
        return []


def _schema_fields(schema, depth):
    import dataclasses
    import typing

    hints = typing.get_type_hints(schema, include_extras=True)
    required = getattr(schema, "__required_keys__", None)
    defaults = {}
    if dataclasses.is_dataclass(schema):
        for f in dataclasses.fields(schema):
            if f.default is not dataclasses.MISSING:
                defaults[f.name] = f.default
            elif f.default_factory is not dataclasses.MISSING:
                try:
                    defaults[f.name] = f.default_factory()
                except Exception:
                    pass
    for name, info in (getattr(schema, "model_fields", None) or {}).items():
        try:
            if not info.is_required():
                defaults[name] = info.get_default(call_default_factory=True)
        except Exception:
            pass
    out = []
    for key, hint in hints.items():
        if key.startswith("_"):
            continue
        f = {"key": key, **_kind(hint, depth)}
        f["required"] = (key in required) if required is not None else key not in defaults
        if key in defaults:
            d = plain_json(defaults[key])
            if d is not None or defaults[key] is None:
                f["default"] = d
        out.append(f)
    return out


def _kind(hint, depth):
    import enum
    import typing

    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    wrappers = [getattr(typing, w, None) for w in ("NotRequired", "Required", "ReadOnly")]
    if origin is not None and origin in wrappers:
        return _kind(args[0], depth)
    if origin is typing.Annotated:
        reducer = [m for m in hint.__metadata__ if callable(m)]
        if any("add_messages" in getattr(r, "__qualname__", "") for r in reducer):
            return {"kind": "messages"}
        return _kind(args[0], depth)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        rest = [a for a in args if a is not type(None)]
        k = _kind(rest[0], depth) if len(rest) == 1 else {"kind": "any"}
        return {**k, "optional": True} if len(rest) < len(args) else k
    if origin is typing.Literal:
        return {"kind": "literal", "choices": [a for a in args if plain_json(a) is not None]}
    if origin in (list, tuple, set, frozenset) or (origin is not None and getattr(origin, "__name__", "") in ("Sequence", "MutableSequence")):
        try:
            from langchain_core.messages import BaseMessage

            inner = typing.get_args(args[0])[0] if args and typing.get_origin(args[0]) is typing.Annotated else (args[0] if args else None)
            if isinstance(inner, type) and issubclass(inner, BaseMessage):
                return {"kind": "messages"}
        except Exception:
            pass
        return {"kind": "list"}
    if origin is dict or hint is dict:
        return {"kind": "dict"}
    if hint is bool:
        return {"kind": "bool"}
    if hint is int:
        return {"kind": "int"}
    if hint is float:
        return {"kind": "float"}
    if hint is str:
        return {"kind": "str"}
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return {"kind": "literal", "choices": [m.value for m in hint if plain_json(m.value) is not None]}
    if isinstance(hint, type) and depth < 2 and (hasattr(hint, "__annotations__") and (getattr(hint, "__required_keys__", None) is not None or hasattr(hint, "model_fields") or hasattr(hint, "__dataclass_fields__"))):
        try:
            return {"kind": "object", "fields": _schema_fields(hint, depth + 1)}
        except Exception:
            return {"kind": "dict"}
    if hint in (list, tuple, set):
        return {"kind": "list"}
    return {"kind": "any"}

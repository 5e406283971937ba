"""The store doctor's side of the bridge (`superstep check`): would a graph's serializer revive the
classes a checkpoint store holds? Shipped with the bridge as superstep_doctor; answers the
`revive` request. Nothing is run."""

import importlib


def exc_line(e):
    """`ClassName: message`, as Python prints the last line of a traceback."""
    msg = str(e)
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__


def revive(graph, classes):
    """For each stored msgpack extension naming a class ((code, payload) as stored: payload
    [module, name, ...]), why the graph's serializer would not give back an instance of that class
    (None: it would). The serializer is the graph's own checkpointer's, else LangGraph's default
    JsonPlusSerializer (allow-lists and LANGGRAPH_STRICT_MSGPACK as they are set); it is asked
    through its public loads_typed, its allow-list answers heard through its serde event hook. Nothing
    is run."""
    import ormsgpack
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    try:
        from langgraph.checkpoint.serde.event_hooks import register_serde_event_listener
    except ImportError:  # a langgraph-checkpoint without serde events: blocking is not heard
        register_serde_event_listener = None
    cp = getattr(graph, "checkpointer", None)
    serde = getattr(cp, "serde", None) or JsonPlusSerializer()
    out = []
    for code, data in classes:
        try:
            head = ormsgpack.unpackb(data, option=ormsgpack.OPT_NON_STR_KEYS, ext_hook=lambda c, d: None)
            module, name = str(head[0]), str(head[1])
        except Exception as e:  # noqa: BLE001
            out.append(f"an unreadable class reference ({exc_line(e)})")
            continue
        heard = []
        unregister = register_serde_event_listener(heard.append) if register_serde_event_listener else None
        try:
            value = serde.loads_typed(("msgpack", ormsgpack.packb(ormsgpack.Ext(code, data))))
        except Exception as e:  # noqa: BLE001
            out.append(f"the serializer fails on it: {exc_line(e)}")
            continue
        finally:
            if unregister:
                unregister()
        if any(e.get("kind", "").endswith("_blocked") and e.get("name") == name for e in heard):
            out.append(f"{module}.{name} is not in the serializer's allow-list (allowed_msgpack_modules / LANGGRAPH_STRICT_MSGPACK): it comes back as plain data")
            continue
        try:
            cls = getattr(importlib.import_module(module), name)
        except Exception as e:  # noqa: BLE001
            out.append(f"{module}.{name} is not importable ({exc_line(e)}): it comes back as plain data")
            continue
        if isinstance(cls, type) and not isinstance(value, cls):
            out.append(f"{module}.{name} comes back as {type(value).__name__}, not an instance of it")
            continue
        out.append(None)
    return out

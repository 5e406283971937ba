"""superstep's bridge, what a run is given besides its input: the runtime context, the user's
RunnableConfig fields and (later) the store. Shipped with superstep_bridge (process.rs) and imported by it.

Context: LangGraph 1.x passes `context=` to `stream` and coerces a dict into the graph's
`context_schema` itself (`_coerce_context`: a dataclass or a pydantic model is built with
`schema(**ctx)`, anything else is passed as is). `langgraph dev` sends the run's context as such a
dict, `{}` when the caller gave none — so the schema's defaults (and whatever its `__post_init__`
reads from the environment, as the official templates do) make it. The bridge does the same and
checks it before any node runs, so a missing required field is an error naming it.

Config: only the fields the user set are sent (LangGraph's defaults stay LangGraph's: a run whose
user set no recursion_limit gets LangGraph's own, 10,007 in 1.2.24).
"""

import dataclasses
import typing


class ContextError(Exception):
    """A context that does not fit the graph's context_schema: the message names the field."""


def _type_name(t):
    if isinstance(t, type):
        return t.__name__
    s = repr(t)
    return s.replace("typing.", "")


def _schema_kind(schema):
    try:
        from pydantic import BaseModel

        if isinstance(schema, type) and issubclass(schema, BaseModel):
            return "pydantic"
    except ImportError:
        pass
    if dataclasses.is_dataclass(schema):
        return "dataclass"
    if isinstance(schema, type) and issubclass(schema, dict) and hasattr(schema, "__required_keys__"):
        return "typeddict"
    return "other"


def context_fields(schema):
    """[(name, type name, required)] of a context schema, in declaration order."""
    kind = _schema_kind(schema)
    out = []
    if kind == "dataclass":
        for f in dataclasses.fields(schema):
            if not f.init:
                continue
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            out.append((f.name, _type_name(f.type), required))
    elif kind == "pydantic":
        for name, info in schema.model_fields.items():
            out.append((name, _type_name(info.annotation), info.is_required()))
    elif kind == "typeddict":
        try:
            hints = typing.get_type_hints(schema)
        except Exception:
            hints = dict(getattr(schema, "__annotations__", {}))
        for name, t in hints.items():
            out.append((name, _type_name(t), name in schema.__required_keys__))
    return out


def describe_context(graph):
    """The graph's context_schema for superstep (`loaded.context_schema`), or None."""
    schema = getattr(graph, "context_schema", None)
    if schema is None:
        return None
    return {
        "name": getattr(schema, "__name__", repr(schema)),
        "kind": _schema_kind(schema),
        "fields": [{"name": n, "type": t, "required": r} for n, t, r in context_fields(schema)],
    }


def context_view(ctx):
    """A coerced context as plain JSON-able data, for superstep to show."""
    if ctx is None:
        return None
    if dataclasses.is_dataclass(ctx) and not isinstance(ctx, type):
        return {f.name: getattr(ctx, f.name) for f in dataclasses.fields(ctx)}
    dump = getattr(ctx, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    return ctx


def check_context(graph, given):
    """The context a run gets: `given` (a dict, or None when the user gave none: `{}` then, as
    langgraph dev sends it) coerced the way LangGraph's stream coerces it. Returns (value to
    pass to stream or None, view, built_from_defaults); raises ContextError naming what is wrong."""
    schema = getattr(graph, "context_schema", None)
    if given is None:
        if schema is None:
            return None, None, False
        given = {}
        built = True
    else:
        built = False
    if schema is None:
        return given, given, False
    name = getattr(schema, "__name__", repr(schema))
    kind = _schema_kind(schema)
    if not isinstance(given, dict):
        if kind in ("dataclass", "pydantic", "typeddict"):
            raise ContextError(f"context_schema {name}: expected a JSON object, got {type(given).__name__}")
        return given, given, built
    fields = context_fields(schema)
    if kind in ("dataclass", "typeddict"):
        missing = [n for n, _, req in fields if req and n not in given]
        if missing:
            raise ContextError(
                f"context_schema {name}: missing required field {missing[0]!r}"
                + (f" (and {', '.join(repr(m) for m in missing[1:])})" if len(missing) > 1 else "")
            )
        known = {n for n, _, _ in fields}
        unknown = [k for k in given if k not in known]
        if unknown and kind == "dataclass":
            raise ContextError(
                f"context_schema {name}: unknown field {unknown[0]!r} (fields: {', '.join(sorted(known)) or 'none'})"
            )
    from langgraph.pregel.main import _coerce_context

    try:
        value = _coerce_context(schema, given)
    except Exception as e:
        errors = getattr(e, "errors", None)
        if callable(errors):
            try:
                first = e.errors()[0]
                loc = ".".join(str(p) for p in first.get("loc", ()))
                if first.get("type") == "missing":
                    raise ContextError(f"context_schema {name}: missing required field {loc!r}")
                raise ContextError(f"context_schema {name}: field {loc!r}: {first.get('msg')}")
            except ContextError:
                raise
            except Exception:
                pass
        raise ContextError(f"context_schema {name}: {type(e).__name__}: {e}")
    # what stream gets is the dict: LangGraph coerces it again, exactly as for langgraph dev
    return given, context_view(value), built


# the RunnableConfig fields superstep passes through as the user wrote them
CONFIG_KEYS = ("configurable", "tags", "metadata", "recursion_limit", "max_concurrency", "run_name")


def run_config(user, configurable, callbacks=None):
    """The config of one call: the user's fields as given, `configurable` the user's keys plus
    superstep's (thread_id, checkpoint_id ...), and the bridge's callbacks."""
    user = user or {}
    cfg = {k: v for k, v in user.items() if k in CONFIG_KEYS and k != "configurable"}
    conf = dict(user.get("configurable") or {})
    conf.update(configurable)
    cfg["configurable"] = conf
    if callbacks:
        cfg["callbacks"] = callbacks
    return cfg


def recursion_limit_of(loop, user):
    """The recursion limit a run had: the one the user set, else LangGraph's own default."""
    if user and user.get("recursion_limit") is not None:
        return user["recursion_limit"]
    cfg = getattr(loop, "config", None) or {}
    if cfg.get("recursion_limit") is not None:
        return cfg["recursion_limit"]
    from langgraph._internal._config import DEFAULT_RECURSION_LIMIT

    return int(DEFAULT_RECURSION_LIMIT)


# ------------------------------------------------------------------------------------------------
# The store: LangGraph's own BaseStore on the checkpoint database, so memory survives between runs
# ------------------------------------------------------------------------------------------------

def _import_callable(spec, what):
    """`/abs/path/file.py:attr` or `module:attr` (superstep resolved a langgraph.json's `./` paths)."""
    import importlib
    import importlib.util
    import os

    left, attr = spec.rsplit(":", 1)
    if left.endswith(".py"):
        name = "superstep_user_" + os.path.splitext(os.path.basename(left))[0]
        s = importlib.util.spec_from_file_location(name, left)
        if s is None or s.loader is None:
            raise ValueError(f"{what}: {left} is not a Python file")
        mod = importlib.util.module_from_spec(s)
        s.loader.exec_module(mod)
    else:
        mod = importlib.import_module(left)
    return getattr(mod, attr)


def _index_config(index):
    """langgraph.json's store.index as SqliteStore / PostgresStore take it: `embed` may name a
    function (`file.py:fn`) — otherwise a "provider:model" string LangGraph resolves itself."""
    if not index:
        return None
    index = dict(index)
    embed = index.get("embed")
    if isinstance(embed, str) and ".py:" in embed:
        index["embed"] = _import_callable(embed, "store.index.embed")
    return index


class StoreUnavailable(Exception):
    """The store langgraph.json asks for cannot be opened in this interpreter (said before any
    node runs, not as an AttributeError raised inside the first node that searches it)."""


def sqlite_vector_search_available():
    """SqliteStore with an `index` loads the sqlite-vec extension into the connection on first
    use (`conn.enable_load_extension`): a Python whose sqlite3 module was built without loadable
    extensions (pyenv's default, macOS's system Python) or without the sqlite-vec package fails
    inside the first node that touches the store."""
    import sqlite3

    if not hasattr(sqlite3.Connection, "enable_load_extension"):
        raise StoreUnavailable(
            "langgraph.json's store.index needs SQLite's vector extension (sqlite-vec), and this "
            "Python's sqlite3 module cannot load extensions (built without "
            "--enable-loadable-sqlite-extensions): use a Python that can (a distribution's "
            "python3, uv's), a Postgres --db (PostgresStore with pgvector), or drop store.index "
            "for this run"
        )
    try:
        import sqlite_vec  # noqa: F401
    except ImportError:
        raise StoreUnavailable(
            "langgraph.json's store.index needs the sqlite-vec package in this interpreter "
            "(pip install sqlite-vec), as LangGraph's SqliteStore loads it for vector search"
        )


def check_store(store_cfg, db):
    """What the store needs that this interpreter lacks, found before the saver creates a table
    (a run refused here leaves no new file behind)."""
    cfg = store_cfg or {}
    if cfg.get("path") or not cfg.get("index") or db.startswith(("postgresql://", "postgres://")):
        return
    sqlite_vector_search_available()


def open_store(session, store_cfg):
    """The store a run gets, opened with the saver. `store_cfg` is langgraph.json's `store`:
    `path` names the app's own store factory (used as is, as langgraph dev does); otherwise
    LangGraph's SqliteStore on the checkpoint file (AsyncSqliteStore for an async graph) or
    PostgresStore on the Postgres database, with `index` / `ttl` passed through. A SQLite store
    creates its tables on first use only: a graph that never touches the store leaves the file
    with the saver's tables alone."""
    import inspect
    import sqlite3

    cfg = store_cfg or {}
    aloop = session.aloop
    if cfg.get("path"):
        made = _import_callable(cfg["path"], "store.path")
        made = made() if callable(made) else made
        if inspect.isawaitable(made):
            made = aloop.run_until_complete(made)
        if hasattr(made, "__aenter__") and not hasattr(made, "batch"):
            cm = made
            made = aloop.run_until_complete(cm.__aenter__())
            session.exit_stack.callback(lambda: aloop.run_until_complete(cm.__aexit__(None, None, None)))
        elif hasattr(made, "__enter__") and not hasattr(made, "batch"):
            made = session.exit_stack.enter_context(made)
        return made
    index = _index_config(cfg.get("index"))
    ttl = cfg.get("ttl")
    kw = {}
    if index:
        kw["index"] = index
    if ttl:
        kw["ttl"] = ttl
    db = session.db
    if db.startswith(("postgresql://", "postgres://")):
        if session.is_async:
            from langgraph.store.postgres.aio import AsyncPostgresStore

            cm = AsyncPostgresStore.from_conn_string(db, **kw)
            store = aloop.run_until_complete(cm.__aenter__())
            session.exit_stack.callback(lambda: aloop.run_until_complete(cm.__aexit__(None, None, None)))
            aloop.run_until_complete(store.setup())
            return store
        from langgraph.store.postgres import PostgresStore

        store = session.exit_stack.enter_context(PostgresStore.from_conn_string(db, **kw))
        store.setup()
        return store
    if session.is_async:
        import aiosqlite
        from langgraph.store.sqlite.aio import AsyncSqliteStore

        async def make():
            # as AsyncSqliteStore.from_conn_string connects; built inside the loop (its batching
            # task belongs to it)
            return AsyncSqliteStore(await aiosqlite.connect(db, isolation_level=None), **kw)

        store = aloop.run_until_complete(make())

        def close():
            task = getattr(store, "_task", None)
            if task is not None:
                task.cancel()
                import asyncio

                aloop.run_until_complete(asyncio.gather(task, return_exceptions=True))
            aloop.run_until_complete(store.conn.close())

        session.exit_stack.callback(close)
        return store
    from langgraph.store.sqlite import SqliteStore

    # as SqliteStore.from_conn_string connects (autocommit)
    conn = sqlite3.connect(db, check_same_thread=False, isolation_level=None)
    session.exit_stack.callback(conn.close)
    return SqliteStore(conn, **kw)

"""The straight run: a scenario's ops with plain LangGraph calls (invoke / ainvoke, Command,
update_state) on a SqliteSaver file — the oracle the bridge's stepped rows are compared with.

    python tests/bridge/straight.py SCENARIO OUT.sqlite OUT.events.json

Loads the graph the way langgraph dev accepts it (a StateGraph is compiled; a factory is called
with a RunnableConfig; a context manager is entered) and replaces its checkpointer with
SqliteSaver / AsyncSqliteSaver (`graph.copy(update=...)`). Independent of the bridge's code.
"""
import asyncio
import contextlib
import importlib.util
import inspect
import json
import os
import sqlite3
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load(ref):
    if ".json:" in ref:
        # a langgraph.json graph id: its directory (and local dependencies) on sys.path, its env
        # set where the shell has not set it, then the graph's "./file.py:attr" / "module:attr"
        cfg_path, gid = ref.split(".json:")
        cfg_path = os.path.join(HERE, cfg_path + ".json")
        d = os.path.dirname(cfg_path)
        with open(cfg_path) as f:
            cfg = json.load(f)
        for dep in reversed(cfg.get("dependencies") or []):
            if dep.startswith((".", "/")):
                sys.path.insert(0, os.path.normpath(os.path.join(d, dep)))
        sys.path.insert(0, d)
        for k, v in (cfg.get("env") or {}).items():
            os.environ.setdefault(k, str(v))
        target = cfg["graphs"][gid]
        target = target["path"] if isinstance(target, dict) else target
        left, attr = target.rsplit(":", 1)
        if left.endswith(".py"):
            return load(os.path.relpath(os.path.join(d, left), HERE) + ":" + attr)
        return getattr(importlib.import_module(left), attr)
    path, attr = ref.rsplit(":", 1)
    path = os.path.join(HERE, path)
    sys.path.insert(0, os.path.dirname(path))
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return getattr(mod, attr)


def resolve(obj, stack, loop):
    from langgraph.graph.state import StateGraph
    from langgraph.pregel import Pregel

    if isinstance(obj, StateGraph):
        return obj.compile()
    if isinstance(obj, Pregel):
        return obj
    made = obj({"configurable": {}})
    if inspect.isawaitable(made):
        made = loop.run_until_complete(made)
    if hasattr(made, "__enter__") and not isinstance(made, Pregel):
        made = stack.enter_context(made)
    return resolve(made, stack, loop)


def is_async(graph):
    from langgraph._internal._runnable import RunnableCallable

    for node in graph.nodes.values():
        b = node.bound
        for r in [b, *getattr(b, "steps", [])]:
            if isinstance(r, RunnableCallable) and r.func is None and r.afunc is not None:
                return True
    return False


def namespace(out, pg, thread, path):
    """The newest namespace of `thread` whose node path is `path` (`inner`, `mid|leaf`), and its
    checkpoint ids, oldest first."""
    q = "SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE thread_id={p} AND checkpoint_ns<>'' ORDER BY checkpoint_id"
    if pg:
        import psycopg

        with psycopg.connect(out) as c:
            rows = list(c.execute(q.format(p="%s"), (thread,)))
    else:
        rows = list(sqlite3.connect(out).execute(q.format(p="?"), (thread,)))
    want = path.split("|")
    match = [(ns, cid) for ns, cid in rows if [s.split(":")[0] for s in ns.split("|")] == want]
    if not match:
        raise SystemExit(f"no namespace {path} on thread {thread}")
    ns = max(match, key=lambda r: r[1])[0]
    return ns, [cid for n, cid in match if n == ns]


async def alist(agen):
    return [x async for x in agen]


def open_store(out, pg, use_async, stack, loop):
    if pg:
        if use_async:
            from langgraph.store.postgres.aio import AsyncPostgresStore

            cm = AsyncPostgresStore.from_conn_string(out)
            store = loop.run_until_complete(cm.__aenter__())
            stack.callback(lambda: loop.run_until_complete(cm.__aexit__(None, None, None)))
            loop.run_until_complete(store.setup())
            return store
        from langgraph.store.postgres import PostgresStore

        store = stack.enter_context(PostgresStore.from_conn_string(out))
        store.setup()
        return store
    if use_async:
        import aiosqlite
        from langgraph.store.sqlite.aio import AsyncSqliteStore

        async def make():
            return AsyncSqliteStore(await aiosqlite.connect(out, isolation_level=None))

        store = loop.run_until_complete(make())

        def close():
            # the store's batching task, then its connection
            if store._task is not None:
                store._task.cancel()
                loop.run_until_complete(asyncio.gather(store._task, return_exceptions=True))
            loop.run_until_complete(store.conn.close())

        stack.callback(close)
        return store
    from langgraph.store.sqlite import SqliteStore

    return SqliteStore(sqlite3.connect(out, check_same_thread=False, isolation_level=None))


def main():
    name, out, events_path = sys.argv[1:4]
    with open(os.path.join(HERE, "scenarios.json")) as f:
        scen = next(s for s in json.load(f)["scenarios"] if s["name"] == name)
    pg = out.startswith(("postgresql://", "postgres://"))
    for suffix in ("", "-wal", "-shm"):
        if not pg and os.path.exists(out + suffix):
            os.remove(out + suffix)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    stack = contextlib.ExitStack()
    graph = resolve(load(scen["graph"]), stack, loop)
    use_async = is_async(graph)
    if pg:
        # a Postgres database (empty): PostgresSaver / AsyncPostgresSaver, as an app opens them
        if use_async:
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

            cm = AsyncPostgresSaver.from_conn_string(out)
            saver = loop.run_until_complete(cm.__aenter__())
            loop.run_until_complete(saver.setup())
        else:
            from langgraph.checkpoint.postgres import PostgresSaver

            saver = stack.enter_context(PostgresSaver.from_conn_string(out))
            saver.setup()
    elif use_async:
        import aiosqlite
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        async def make():
            s = AsyncSqliteSaver(await aiosqlite.connect(out))
            await s.setup()
            return s

        saver = loop.run_until_complete(make())
    else:
        from langgraph.checkpoint.sqlite import SqliteSaver

        saver = SqliteSaver(sqlite3.connect(out, check_same_thread=False))
        saver.setup()
    # the store superstep gives a graph: LangGraph's own SqliteStore on the same file
    # (AsyncSqliteStore for an async graph; PostgresStore / AsyncPostgresStore on Postgres)
    store = open_store(out, pg, use_async, stack, loop)
    g = graph.copy(update={"checkpointer": saver, "store": store})
    from langgraph.types import Command

    has_schema = getattr(g, "context_schema", None) is not None

    def call(fn_sync, fn_async, *a, **kw):
        if use_async:
            return loop.run_until_complete(fn_async(*a, **kw))
        return fn_sync(*a, **kw)

    # breakpoints inside subgraphs: set on the compiled subgraph objects for one op, then the
    # compiled-in values back (runtime interrupt_before/after do not reach subgraphs)
    subs = dict(g.get_subgraphs(recurse=True))
    compiled = {p: (sg.interrupt_before_nodes, sg.interrupt_after_nodes) for p, sg in subs.items()}

    def union(c, r):
        if c == "*" or r == "*":
            return "*"
        return list(c or []) + [n for n in (r or []) if n not in (c or [])]

    def set_inner(op):
        for p, sg in subs.items():
            cb, ca = compiled[p]
            sg.interrupt_before_nodes = union(cb, (op.get("sub_break_before") or {}).get(p))
            sg.interrupt_after_nodes = union(ca, (op.get("sub_break_after") or {}).get(p))

    def restore_inner():
        for p, sg in subs.items():
            sg.interrupt_before_nodes, sg.interrupt_after_nodes = compiled[p]

    events = []
    i = 0
    for th in scen["threads"]:
        for op in th["ops"]:
            # the run's config: the op's (or thread's, or scenario's) RunnableConfig fields as given,
            # thread_id added; its context: as given, or {} (the schema's defaults, as langgraph dev)
            user = op.get("config", th.get("config", scen.get("config"))) or {}
            conf = {**(user.get("configurable") or {}), "thread_id": th["thread"]}
            cfg = {**user, "configurable": conf}
            kw = {}
            ctx = op.get("context", th.get("context", scen.get("context")))
            if ctx is not None:
                kw["context"] = ctx
            elif has_schema:
                kw["context"] = {}
            if op.get("break_before"):
                kw["interrupt_before"] = op["break_before"]
            if op.get("break_after"):
                kw["interrupt_after"] = op["break_after"]
            set_inner(op)
            try:
                kind = op["op"]
                if kind in ("update", "replay", "resume") and op.get("ns"):
                    # a subgraph's checkpoint (--ns): {thread_id, checkpoint_ns} for an update of
                    # its latest, else the config of that checkpoint's own snapshot without the
                    # __pregel_* objects LangGraph lends the subgraph (tests/differential/run_twin.py)
                    ns, ids = namespace(out, pg, th["thread"], op["ns"])
                    conf = {"thread_id": th["thread"], "checkpoint_ns": ns}
                    if op.get("checkpoint") is not None:
                        conf["checkpoint_id"] = ids[op["checkpoint"]]
                        snap = call(g.get_state, g.aget_state, {"configurable": dict(conf)})
                        conf = {k: v for k, v in snap.config["configurable"].items() if not k.startswith("__pregel")}
                    c = {**user, "configurable": {**(user.get("configurable") or {}), **conf}}
                    if kind == "update":
                        call(g.update_state, g.aupdate_state, c, op.get("values"), as_node=op.get("as_node"))
                    elif kind == "resume":
                        call(g.invoke, g.ainvoke, Command(resume=op["value"]), c, **kw)
                    else:
                        call(g.invoke, g.ainvoke, None, c, **kw)
                elif kind == "run":
                    call(g.invoke, g.ainvoke, op["input"], cfg, **kw)
                elif kind == "continue":
                    call(g.invoke, g.ainvoke, None, cfg, **kw)
                elif kind == "resume":
                    if "ids" in op:
                        st = call(g.get_state, g.aget_state, cfg)
                        by_node = {t.name: t.interrupts[0].id for t in st.tasks if t.interrupts}
                        resume = {by_node[n]: v for n, v in op["ids"].items()}
                    else:
                        resume = op["value"]
                    call(g.invoke, g.ainvoke, Command(resume=resume), cfg, **kw)
                elif kind == "replay":
                    if pg:
                        import psycopg

                        with psycopg.connect(out) as c:
                            ids = [r[0] for r in c.execute(
                                "SELECT checkpoint_id FROM checkpoints WHERE thread_id=%s AND checkpoint_ns='' ORDER BY checkpoint_id",
                                (th["thread"],))]
                    else:
                        ids = [r[0] for r in sqlite3.connect(out).execute(
                            "SELECT checkpoint_id FROM checkpoints WHERE thread_id=? AND checkpoint_ns='' ORDER BY checkpoint_id",
                            (th["thread"],))]
                    c = {**user, "configurable": {**conf, "checkpoint_id": ids[op["checkpoint"]]}}
                    call(g.invoke, g.ainvoke, None, c, **kw)
                elif kind == "update" and op.get("checkpoint") is not None:
                    # a fork of an older checkpoint, as LangGraph's time-travel guide does it:
                    # update_state on that checkpoint's own config from get_state_history
                    hist = call(lambda c: list(g.get_state_history(c)), lambda c: alist(g.aget_state_history(c)), cfg)
                    hist.reverse()
                    c = {**user, "configurable": {**(user.get("configurable") or {}), **hist[op["checkpoint"]].config["configurable"]}}
                    call(g.update_state, g.aupdate_state, c, op.get("values"), as_node=op.get("as_node"))
                elif kind == "update":
                    call(g.update_state, g.aupdate_state, cfg, op.get("values"), as_node=op.get("as_node"))
                else:
                    raise SystemExit(f"unknown op {kind}")
                events.append({"op": i, "outcome": "ok"})
            except Exception as e:
                events.append({"op": i, "error": type(e).__name__})
            finally:
                restore_inner()
            if scen.get("observe"):
                # where the op left the thread: the root's next nodes, those waiting on an interrupt, values
                st = call(g.get_state, g.aget_state, cfg)
                waiting = sorted(t.name for t in st.tasks if t.interrupts)
                events[-1].update(next=sorted(st.next), waiting=waiting, values=json.loads(json.dumps(st.values)))
            i += 1
    with open(events_path, "w") as f:
        json.dump(events, f, indent=1)
    stack.close()
    if pg and use_async:
        loop.run_until_complete(cm.__aexit__(None, None, None))
    elif use_async:
        loop.run_until_complete(saver.conn.close())


if __name__ == "__main__":
    main()

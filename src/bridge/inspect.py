"""superstep's bridge, inspection made exact: LangGraph's own `get_state_history` over a checkpoint
database opened read-only. Shipped with superstep_bridge (process.rs) and imported by it.

With `--graph app.py:graph`, superstep reads the file itself and asks LangGraph only for what the
rows alone cannot tell: values a reducer of the app's own makes (a DeltaChannel with a user batch
reducer is stored as snapshots plus writes, rebuilt by running that reducer) and `next` for
checkpoints an older LangGraph wrote (0.2's channels, which LangGraph 1.2 migrates as it reads them).

Read-only means byte-identical: a SQLite file is opened `mode=ro` (`immutable=1` when it is in WAL
mode and nobody has it open, so no -wal / -shm appear next to it), the saver's `setup()` is never
run; a Postgres database is only read.
"""
import os


def _wal_header(path):
    try:
        with open(path, "rb") as f:
            head = f.read(20)
        return len(head) == 20 and head[18] == 2 and head[19] == 2
    except OSError:
        return False


def open_reader(db):
    """A checkpoint saver reading `db` and never writing to it (nor to its directory)."""
    if db.startswith(("postgresql://", "postgres://")):
        import psycopg
        from psycopg.rows import dict_row
        from langgraph.checkpoint.postgres import PostgresSaver

        conn = psycopg.Connection.connect(db, autocommit=True, prepare_threshold=0, row_factory=dict_row)
        conn.read_only = True
        return PostgresSaver(conn), conn.close
    import sqlite3
    from urllib.parse import quote

    from langgraph.checkpoint.sqlite import SqliteSaver

    path = os.path.abspath(db)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{db}: no such file")
    immutable = _wal_header(path) and not os.path.exists(path + "-wal")
    uri = f"file:{quote(path)}?mode=ro" + ("&immutable=1" if immutable else "")
    conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
    cols = [r[1] for r in conn.execute("PRAGMA main.table_info(writes)")]
    if cols and "task_path" not in cols:
        # an older saver's table (checkpoint-sqlite 1.x / 2.x): setup() would migrate it — a
        # write. A temporary view (in the temp schema, which read-only connections may write and
        # which shadows main for unqualified names) adds the column as the migration does.
        conn.execute(
            "CREATE TEMP VIEW writes AS SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, "
            "'' AS task_path, idx, channel, type, value FROM main.writes"
        )
    saver = SqliteSaver(conn)
    saver.is_setup = True  # setup() creates tables and switches the journal mode: never here
    return saver, conn.close


def states(graph, db, thread, ns, limit, typed):
    """LangGraph's StateSnapshot of each checkpoint of (thread, ns), newest first: its id, values
    (serialised by `typed`) and next."""
    saver, close = open_reader(db)
    try:
        g = graph.copy(update={"checkpointer": saver})
        conf = {"thread_id": thread}
        if ns:
            conf["checkpoint_ns"] = ns
        out = []
        for st in g.get_state_history({"configurable": conf}, limit=limit):
            values = st.values if isinstance(st.values, dict) else {"__root__": st.values}
            out.append(
                {
                    "checkpoint_id": st.config["configurable"]["checkpoint_id"],
                    "next": list(st.next),
                    "values": [[k, typed(v)] for k, v in values.items()],
                    "root": not isinstance(st.values, dict),
                }
            )
        return out
    finally:
        close()

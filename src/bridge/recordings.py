"""Where superstep's call recorder keeps its rows (shipped as `superstep_recordings`, imported by
`superstep_recorder`): beside LangGraph's rows, never in its tables — a sibling SQLite file
(`FILE.superstep-calls.sqlite`) for a SQLite store, `superstep_call*` tables in the database for a
Postgres one (PostgresSaver reads only its own four tables). superstep's `src/replay/store.rs` reads
the same tables.
"""

import sqlite3
import sys
import threading

SCHEMA = 1

TABLES = [
    """CREATE TABLE IF NOT EXISTS superstep_calls (
        id {pk},
        thread_id TEXT NOT NULL,
        checkpoint_id TEXT NOT NULL,
        run BIGINT NOT NULL,
        task_id TEXT NOT NULL,
        root_task_id TEXT NOT NULL,
        task_ns TEXT NOT NULL,
        position TEXT NOT NULL,
        node TEXT NOT NULL,
        step BIGINT,
        attempt BIGINT NOT NULL,
        seq BIGINT NOT NULL,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        request TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        response_type TEXT,
        response {blob},
        error TEXT,
        late_ids TEXT,
        request_summary TEXT NOT NULL,
        response_summary TEXT NOT NULL,
        status TEXT NOT NULL,
        ref_id BIGINT,
        latency_ms DOUBLE PRECISION,
        input_tokens BIGINT,
        output_tokens BIGINT,
        created_at TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS superstep_calls_checkpoint ON superstep_calls (thread_id, checkpoint_id)",
    "CREATE INDEX IF NOT EXISTS superstep_calls_task ON superstep_calls (thread_id, task_id)",
    """CREATE TABLE IF NOT EXISTS superstep_call_steps (
        thread_id TEXT NOT NULL, checkpoint_id TEXT NOT NULL, written_id TEXT NOT NULL, run BIGINT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS superstep_call_steps_from ON superstep_call_steps (thread_id, checkpoint_id)",
    """CREATE TABLE IF NOT EXISTS superstep_call_aliases (
        thread_id TEXT NOT NULL, checkpoint_id TEXT NOT NULL, ref_checkpoint_id TEXT NOT NULL,
        PRIMARY KEY (thread_id, checkpoint_id))""",
    "CREATE TABLE IF NOT EXISTS superstep_call_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
]

COLUMNS = [
    "thread_id", "checkpoint_id", "run", "task_id", "root_task_id", "task_ns", "position", "node", "step",
    "attempt", "seq", "kind", "name", "request", "request_hash", "response_type", "response", "error",
    "late_ids", "request_summary", "response_summary", "status", "ref_id", "latency_ms", "input_tokens",
    "output_tokens", "created_at",
]


class Store:
    def __init__(self, where):
        self.kind = where["kind"]
        if self.kind == "sqlite":
            self.conn = sqlite3.connect(where["path"], check_same_thread=False, isolation_level=None)
            # WAL, synchronous=NORMAL: a superstep's commit is an append, no fsync (a killed process
            # loses nothing committed; an OS crash may lose the last supersteps' calls, which then
            # run live again). A rollback journal cost 2x per superstep, an fsync per superstep
            # 20 ms (benches/replay.rs). Closed cleanly, the -wal and -shm files go; superstep reads
            # a file without them `immutable`, creating none.
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.ph = "?"
            pk, blob = "INTEGER PRIMARY KEY", "BLOB"
        else:
            import psycopg

            self.conn = psycopg.connect(where["url"], autocommit=True)
            self.ph = "%s"
            pk, blob = "BIGSERIAL PRIMARY KEY", "BYTEA"
        self.lock = threading.Lock()
        for sql in TABLES:
            self.conn.execute(sql.format(pk=pk, blob=blob))
        self.execute("INSERT INTO superstep_call_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING", ("schema", str(SCHEMA)))
        row = self.query("SELECT value FROM superstep_call_meta WHERE key = ?", ("schema",))
        if row and int(row[0][0]) > SCHEMA:
            raise RuntimeError(f"the call recordings were written by a newer superstep (schema {row[0][0]}, this one reads {SCHEMA})")

    def sql(self, s):
        return s.replace("?", self.ph) if self.ph != "?" else s

    def execute(self, s, args=()):
        with self.lock:
            self.conn.execute(self.sql(s), args)

    def query(self, s, args=()):
        with self.lock:
            cur = self.conn.execute(self.sql(s), args)
            return cur.fetchall()

    def close(self):
        with self.lock:
            try:
                self.conn.close()
            except Exception:
                pass

    def next_run(self):
        r = self.query("SELECT COALESCE(MAX(run), 0) FROM superstep_calls")
        s = self.query("SELECT COALESCE(MAX(run), 0) FROM superstep_call_steps")
        return max(r[0][0], s[0][0]) + 1

    def write(self, rows, step=None, alias=None):
        """One transaction: the calls of a superstep, the step (checkpoint -> written) and its alias."""
        cols = ", ".join(COLUMNS)
        marks = ", ".join("?" for _ in COLUMNS)
        with self.lock:
            if self.kind == "sqlite":
                # ids given here (one writer holds the file while BEGIN IMMEDIATE lasts), so the
                # rows go in with one executemany
                self.conn.execute("BEGIN IMMEDIATE")
                cur = self.conn
            else:
                tx = self.conn.transaction()
                tx.__enter__()
                cur = self.conn
            try:
                ids = []
                if self.kind == "sqlite" and rows:
                    first = cur.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM superstep_calls").fetchone()[0]
                    ids = list(range(first, first + len(rows)))
                    cur.executemany(
                        f"INSERT INTO superstep_calls (id, {cols}) VALUES (?, {marks})",
                        [[i] + [r.get(k) for k in COLUMNS] for i, r in zip(ids, rows)],
                    )
                else:
                    for r in rows:
                        c = cur.execute(self.sql(f"INSERT INTO superstep_calls ({cols}) VALUES ({marks}) RETURNING id"), [r.get(k) for k in COLUMNS])
                        ids.append(c.fetchone()[0])
                if step is not None:
                    cur.execute(self.sql("INSERT INTO superstep_call_steps (thread_id, checkpoint_id, written_id, run) VALUES (?, ?, ?, ?)"), step)
                if alias is not None:
                    cur.execute(
                        self.sql("INSERT INTO superstep_call_aliases (thread_id, checkpoint_id, ref_checkpoint_id) VALUES (?, ?, ?) ON CONFLICT (thread_id, checkpoint_id) DO UPDATE SET ref_checkpoint_id = excluded.ref_checkpoint_id"),
                        alias,
                    )
            except BaseException:
                if self.kind == "sqlite":
                    self.conn.execute("ROLLBACK")
                else:
                    tx.__exit__(*sys.exc_info())
                raise
            if self.kind == "sqlite":
                self.conn.execute("COMMIT")
            else:
                tx.__exit__(None, None, None)
            return ids



"""superstep's checks around LangGraph's own saver (shipped with the bridge as superstep_saves.py).

LangGraph saves checkpoints and task writes in the background and, when a run is stepped, nobody
looks at those saves' futures again: a save that failed (the database locked by another process,
a value the serializer cannot encode) would pass unnoticed. The bridge wraps the saver it hands
to LangGraph (`guard`): every save still runs LangGraph's own `put` / `put_writes` — the rows are
LangGraph's, byte for byte — and

* runs under the write lock the engine takes (SQLite: `BEGIN IMMEDIATE` on the saver's
  connection; Postgres: `pg_advisory_xact_lock` on the thread, the engine's key) after checking
  that the thread's newest root checkpoint is still the one this run last saw (one writer per
  thread: a second writer is refused, nothing of its step is written);
* records why a save failed, with what was being saved (the node, the channel, the value);
* can read a checkpoint back by id (`verify`), and tells whether the SQLite file it writes is
  still the file at its path (`store_lost`).
"""

import asyncio
import json
import os
import sqlite3
import threading


class SaveFailed(Exception):
    """A save that did not happen: `kind` (`locked`, `encode`, `thread_moved`, `missing`,
    `store_lost`, `save`), a message and a hint for the user."""

    def __init__(self, kind, message, hint=""):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.hint = hint


def q(name):
    """A name as the engine's messages quote it: `"name"`."""
    return json.dumps(str(name), ensure_ascii=False)


NOTHING_SAVED = "nothing of this step was saved: the thread stays at its last saved checkpoint"


def moved_message(thread, expected, found, paused):
    """The engine's ThreadMoved message (src/engine/mod.rs), or its twin for a run that was
    paused when the other writer moved the thread on (noticed before the next step ran)."""
    found, expected = found or "(none)", expected or "(none)"
    if paused:
        return (
            f"thread {q(thread)} moved on while this run was paused: another writer committed checkpoint "
            f"{found} (this run is paused at {expected}); nothing was run or written — reload the thread and step again"
        )
    return (
        f"thread {q(thread)} moved on while this step ran: another writer committed checkpoint "
        f"{found} (this step started from {expected}); nothing was written — reload the thread and step again"
    )


# ------------------------------------------------------------------------------------------------
# Who holds a SQLite lock (Linux: /proc/locks; nothing is opened, so none of our own POSIX locks
# is dropped)
# ------------------------------------------------------------------------------------------------

def lock_holders(path):
    """`pid 123 (python3 holder.py)` for each other process holding a write lock on the SQLite
    file or its `-shm`; [] when that cannot be known."""
    keys = set()
    for p in (path, path + "-shm", path + "-wal"):
        try:
            st = os.stat(p)
        except OSError:
            continue
        keys.add((os.major(st.st_dev), os.minor(st.st_dev), st.st_ino))
    try:
        with open("/proc/locks") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    pids = []
    for line in lines:
        parts = line.split()
        if "->" in parts:
            continue  # a waiter, not a holder
        try:
            kind, rw, pid, dev = parts[1], parts[3], int(parts[4]), parts[5]
            major, minor, ino = dev.split(":")
            key = (int(major, 16), int(minor, 16), int(ino))
        except (IndexError, ValueError):
            continue
        if kind in ("POSIX", "OFDLCK") and rw == "WRITE" and key in keys and pid not in (os.getpid(), -1) and pid not in pids:
            pids.append(pid)
    out = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except OSError:
            cmd = ""
        out.append(f"pid {pid} ({cmd[:120]})" if cmd else f"pid {pid}")
    return out


def is_locked_error(e):
    return isinstance(e, sqlite3.OperationalError) and "locked" in str(e)


# ------------------------------------------------------------------------------------------------
# The guard
# ------------------------------------------------------------------------------------------------

class _AsyncRLock:
    """A re-entrant asyncio lock (per task): the guarded aput holds the saver's lock around
    LangGraph's aput, which takes it again."""

    def __init__(self):
        self._lock = asyncio.Lock()
        self._owner = None
        self._depth = 0

    async def __aenter__(self):
        me = asyncio.current_task()
        if self._owner is me:
            self._depth += 1
            return self
        await self._lock.acquire()
        self._owner, self._depth = me, 1
        return self

    async def __aexit__(self, *exc):
        self._depth -= 1
        if self._depth == 0:
            self._owner = None
            self._lock.release()

    def locked(self):
        return self._lock.locked()


class Guard:
    """What the guarded saver checks against and what it saw fail."""

    def __init__(self, saver, db, postgres):
        self.saver = saver
        self.db = db
        self.postgres = postgres
        self.thread = None  # the thread whose head is watched
        self.expected = None  # its newest root checkpoint as this process last saw it
        self.watching = False
        self.failures = []
        self.lock = threading.Lock()
        self.task_name = lambda task_id: None  # set by the bridge: task id -> node name
        self.identity = self._identity() if not postgres else None

    # -- the file ---------------------------------------------------------------------------------

    def _identity(self):
        try:
            st = os.stat(self.db)
            return (st.st_dev, st.st_ino)
        except OSError:
            return None

    def store_lost(self):
        """Why the file at the path is not the one LangGraph writes any more, or None."""
        if self.postgres or self.identity is None:
            return None
        now = self._identity()
        if now == self.identity:
            return None
        what = "deleted" if now is None else "replaced by another file"
        return SaveFailed(
            "store_lost",
            f"the checkpoint file {self.db} was {what} after superstep opened it: nothing was run; "
            "what LangGraph would save now would go nowhere",
            "open superstep again on the file you want to step",
        )

    # -- the head ---------------------------------------------------------------------------------

    def watch(self, thread, head):
        self.thread, self.expected, self.watching = thread, head, True
        self.failures = []

    def unwatch(self):
        self.watching = False

    def _head_sql(self):
        if self.postgres:
            return "SELECT checkpoint_id FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1"
        return "SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''"

    def _check(self, found, paused=False):
        if found != self.expected:
            raise SaveFailed("thread_moved", moved_message(self.thread, self.expected, found, paused))

    def _saw(self, config, checkpoint):
        conf = config.get("configurable") or {}
        if conf.get("checkpoint_ns", "") == "" and str(conf.get("thread_id")) == str(self.thread):
            cid = checkpoint.get("id")
            if cid and (self.expected is None or cid > self.expected):
                self.expected = cid

    def _mine(self, config):
        conf = config.get("configurable") or {}
        return self.watching and str(conf.get("thread_id")) == str(self.thread)

    # -- failures ---------------------------------------------------------------------------------

    def failed(self, e, what, writes=None, task_id=None):
        """Turn an exception of a save into a SaveFailed naming the cause, and record it."""
        if isinstance(e, SaveFailed):
            f = e
        elif is_locked_error(e):
            holders = [] if self.postgres else lock_holders(self.db)
            by = f" by {', '.join(holders)}" if holders else " by another process"
            f = SaveFailed(
                "locked",
                f"saving {what} failed: the checkpoint database is locked{by} ({type(e).__name__}: {e})",
                NOTHING_SAVED + "; step again once the other process lets go of the file",
            )
        else:
            f = None
            if writes is not None:
                bad = self._unencodable(writes)
                if bad is not None:
                    channel, value, err = bad
                    node = self.task_name(task_id) if task_id else None
                    r = _short_repr(value)
                    f = SaveFailed(
                        "encode",
                        f"saving the writes of node {q(node or task_id)} failed: channel {q(channel)} holds {r}, "
                        f"which LangGraph's serializer cannot encode ({type(err).__name__}: {err})",
                        NOTHING_SAVED + "; return values LangGraph can serialize (JSON-like data, LangChain messages, "
                        "dataclasses, pydantic models) from that node",
                    )
            if f is None:
                f = SaveFailed("save", f"saving {what} failed: {type(e).__name__}: {e}", NOTHING_SAVED)
        with self.lock:
            if not self.failures or self.failures[-1] is not f:
                self.failures.append(f)
        return f

    def _unencodable(self, writes):
        serde = self.saver.serde
        for channel, value in writes:
            try:
                serde.dumps_typed(value)
            except Exception as err:  # the one LangGraph could not encode
                return channel, value, err
        return None

    def take_failure(self):
        with self.lock:
            f = self.failures[0] if self.failures else None
            self.failures = []
        return f


def _short_repr(v):
    try:
        r = repr(v)
    except Exception:
        r = f"a {type(v).__name__}"
    r = r if len(r) <= 160 else r[:157] + "…"
    return f"{r} (a {type(v).__module__}.{type(v).__qualname__})"


def _what_put(config, checkpoint):
    return f"checkpoint {checkpoint.get('id')} of thread {q(config['configurable'].get('thread_id'))}"


def _what_writes(g, config, task_id):
    node = g.task_name(task_id)
    who = f"node {q(node)} (task {task_id})" if node else f"task {task_id}"
    return f"the writes of {who} to checkpoint {config['configurable'].get('checkpoint_id')}"


def guard(saver, db, postgres):
    """Wrap `saver` in place (its class becomes a subclass with guarded saves); returns the
    Guard. LangGraph's own put/put_writes do the writing."""
    g = Guard(saver, db, postgres)
    base = type(saver)
    is_async = hasattr(saver, "lock") and isinstance(getattr(saver, "lock", None), asyncio.Lock)

    if postgres:
        from contextlib import contextmanager, asynccontextmanager

        @contextmanager
        def locked(self, config):
            from langgraph.checkpoint.postgres import _internal

            with self.lock, _internal.get_connection(self.conn) as conn, conn.transaction():
                thread = str(config["configurable"]["thread_id"])
                conn.execute("SELECT pg_advisory_xact_lock(hashtextextended('superstep:' || %s, 0))", (thread,))
                row = conn.execute(g._head_sql(), (thread,)).fetchone()
                g._check(_first(row))
                yield

        @asynccontextmanager
        async def alocked(self, config):
            from langgraph.checkpoint.postgres import _ainternal

            async with self.lock, _ainternal.get_connection(self.conn) as conn, conn.transaction():
                thread = str(config["configurable"]["thread_id"])
                await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended('superstep:' || %s, 0))", (thread,))
                row = await (await conn.execute(g._head_sql(), (thread,))).fetchone()
                g._check(_first(row))
                yield
    else:
        from contextlib import contextmanager, asynccontextmanager

        @contextmanager
        def locked(self, config):
            with self.lock:
                self.conn.execute("BEGIN IMMEDIATE")
                try:
                    row = self.conn.execute(g._head_sql(), (str(config["configurable"]["thread_id"]),)).fetchone()
                    g._check(_first(row))
                    yield
                except BaseException:
                    if self.conn.in_transaction:
                        self.conn.rollback()
                    raise
                if self.conn.in_transaction:
                    self.conn.commit()

        @asynccontextmanager
        async def alocked(self, config):
            async with self.lock:
                await self.conn.execute("BEGIN IMMEDIATE")
                try:
                    async with self.conn.execute(g._head_sql(), (str(config["configurable"]["thread_id"]),)) as cur:
                        row = await cur.fetchone()
                    g._check(_first(row))
                    yield
                except BaseException:
                    if self.conn.in_transaction:
                        await self.conn.rollback()
                    raise
                if self.conn.in_transaction:
                    await self.conn.commit()

    class Guarded(base):
        def put(self, config, checkpoint, metadata, new_versions):
            if not _mine_sync(self, config):
                return base.put(self, config, checkpoint, metadata, new_versions)
            try:
                with locked(self, config):
                    r = base.put(self, config, checkpoint, metadata, new_versions)
            except BaseException as e:
                raise g.failed(e, _what_put(config, checkpoint)) from e
            g._saw(config, checkpoint)
            return r

        def put_writes(self, config, writes, task_id, task_path=""):
            if not _mine_sync(self, config):
                return base.put_writes(self, config, writes, task_id, task_path)
            try:
                with locked(self, config):
                    return base.put_writes(self, config, writes, task_id, task_path)
            except BaseException as e:
                raise g.failed(e, _what_writes(g, config, task_id), writes, task_id) from e

        async def aput(self, config, checkpoint, metadata, new_versions):
            if not g._mine(config):
                return await base.aput(self, config, checkpoint, metadata, new_versions)
            try:
                async with alocked(self, config):
                    r = await base.aput(self, config, checkpoint, metadata, new_versions)
            except BaseException as e:
                raise g.failed(e, _what_put(config, checkpoint)) from e
            g._saw(config, checkpoint)
            return r

        async def aput_writes(self, config, writes, task_id, task_path=""):
            if not g._mine(config):
                return await base.aput_writes(self, config, writes, task_id, task_path)
            try:
                async with alocked(self, config):
                    return await base.aput_writes(self, config, writes, task_id, task_path)
            except BaseException as e:
                raise g.failed(e, _what_writes(g, config, task_id), writes, task_id) from e

    def _mine_sync(self, config):
        # an async saver's sync methods are LangGraph's (they hop to the event loop): not guarded
        return not is_async and g._mine(config)

    Guarded.__name__ = base.__name__
    Guarded.__qualname__ = base.__qualname__
    saver.__class__ = Guarded
    saver.lock = _AsyncRLock() if is_async else threading.RLock()
    return g


def _first(row):
    if row is None:
        return None
    if isinstance(row, dict):
        return next(iter(row.values()), None)
    return row[0]


# ------------------------------------------------------------------------------------------------
# Reading back
# ------------------------------------------------------------------------------------------------

def current_head(g, aloop, thread):
    """`thread`'s newest root checkpoint in the store now (None: no checkpoint yet)."""
    s = g.saver
    thread = str(thread)
    if g.postgres:
        if aloop is not None and isinstance(s.lock, _AsyncRLock):
            from langgraph.checkpoint.postgres import _ainternal

            async def q():
                async with s.lock, _ainternal.get_connection(s.conn) as conn:
                    return _first(await (await conn.execute(g._head_sql(), (thread,))).fetchone())

            return aloop.run_until_complete(q())
        from langgraph.checkpoint.postgres import _internal

        with s.lock, _internal.get_connection(s.conn) as conn:
            return _first(conn.execute(g._head_sql(), (thread,)).fetchone())
    if aloop is not None and isinstance(s.lock, _AsyncRLock):

        async def q():
            async with s.lock:
                async with s.conn.execute(g._head_sql(), (thread,)) as cur:
                    return _first(await cur.fetchone())

        return aloop.run_until_complete(q())
    with s.lock:
        row = s.conn.execute(g._head_sql(), (thread,)).fetchone()
        if s.conn.in_transaction:
            s.conn.commit()
        return _first(row)


def verify(g, aloop, thread, checkpoint_id):
    """Read checkpoint `checkpoint_id` back by id through LangGraph's saver; SaveFailed when it is
    not there."""
    cfg = {"configurable": {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": checkpoint_id}}
    s = g.saver
    try:
        if isinstance(s.lock, _AsyncRLock):
            got = aloop.run_until_complete(s.aget_tuple(cfg))
        else:
            got = s.get_tuple(cfg)
    except Exception as e:
        raise SaveFailed("missing", f"reading checkpoint {checkpoint_id} back failed: {type(e).__name__}: {e}", NOTHING_SAVED)
    if got is None or got.config["configurable"].get("checkpoint_id") != checkpoint_id:
        raise SaveFailed(
            "missing",
            f"checkpoint {checkpoint_id} of thread {q(thread)} is not in the store after the step: LangGraph's save did not land",
            NOTHING_SAVED,
        )

"""A PostgresSaver database at an older migration level: langgraph 0.2.76 with langgraph-checkpoint-postgres
2.0.8 (migration level 8: no `task_path` column; checkpoint format v1 with pending sends migrated from the
parent's writes on load), written and dumped by that version itself, for tests/oracle_fixtures.rs's Postgres
comparison. The graphs and threads are tests/oracle/v02/gen_v02.py's (imported from there).

Run with the venv of tests/postgres/requirements-v02-pg.txt (tests/postgres/ci.sh builds it):

    SUPERSTEP_ORACLE_PG=URL python tests/postgres/gen_v02_pg.py --out DIR

Writes DIR/v0_2_76_pg.json (+ .pgurl naming the fresh database fx_v0_2_76_pg).
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "oracle"))
sys.path.insert(0, os.path.join(HERE, "..", "oracle", "v02"))

import common  # noqa: E402
import gen_v02 as v02  # noqa: E402
from common import dump_thread, write_expected  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    out = os.path.abspath(ap.parse_args().out)
    os.makedirs(out, exist_ok=True)
    if not common.ORACLE_PG:
        sys.exit("gen_v02_pg.py: set SUPERSTEP_ORACLE_PG (a Postgres role that may create databases)")
    import importlib.metadata

    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    name = "v" + v02.VERSION.replace(".", "_") + "_pg"
    url = common.fresh_pg_database(f"fx_{name}")
    conn = psycopg.Connection.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row)
    saver = PostgresSaver(conn)
    saver.setup()
    events = []
    v02.run_sync(v02.graphs(saver), events)
    g = v02.graphs(saver)
    threads = [dump_thread(g[k], saver, t) for t, k in v02.THREADS]
    in_db = {r["thread_id"] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")}
    missing = in_db - {t for t, _ in v02.THREADS}
    if missing:
        raise RuntimeError(f"{name}: threads not dumped: {sorted(missing)}")
    level = conn.execute("SELECT max(v) AS v FROM checkpoint_migrations").fetchone()["v"]
    version = importlib.metadata.version("langgraph-checkpoint-postgres")
    write_expected(out, name, threads,
                   {"format": f"langgraph {v02.VERSION}", "writer": f"PostgresSaver {version}",
                    "saver": "PostgresSaver", "migration_level": level}, events)
    conn.close()
    with open(os.path.join(out, f"{name}.pgurl"), "w") as f:
        f.write(url + "\n")
    print(f"{name}: {len(threads)} threads (PostgresSaver {version}, migration level {level}), {len(events)} events")


if __name__ == "__main__":
    main()

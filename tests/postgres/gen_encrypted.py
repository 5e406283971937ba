"""A PostgresSaver database written through LangGraph's own EncryptedSerializer, for
tests/postgres.rs `encrypted_values_are_shown_opaque_with_a_note` (run by tests/postgres/ci.sh).

    python tests/postgres/gen_encrypted.py URL_OF_AN_EMPTY_DATABASE

Graph and stand-in cipher: tests/oracle/encrypted_graph.py (`type` = "msgpack+xortest").
Thread 't' paused at the interrupt; `request` is a str (inline in the JSONB, never encrypted), `log`
a list (a blob: encrypted), the pending writes encrypted.
"""
import os
import sys

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg.rows import dict_row

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oracle"))
from encrypted_graph import run, serde  # noqa: E402


def main():
    url = sys.argv[1]
    conn = psycopg.Connection.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row)
    saver = PostgresSaver(conn, serde=serde())
    saver.setup()
    run(saver)
    types = sorted({r["type"] for r in conn.execute("SELECT type FROM checkpoint_blobs")}
                   | {r["type"] for r in conn.execute("SELECT type FROM checkpoint_writes")})
    print(f"encrypted: thread t paused at ask; stored types {types}")
    conn.close()


if __name__ == "__main__":
    main()

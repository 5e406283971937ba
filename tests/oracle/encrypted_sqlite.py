"""A SqliteSaver file written through LangGraph's own EncryptedSerializer, for
tests/hostile_files.rs `an_encrypted_sqlite_checkpoint_is_named_encrypted_not_corrupt`.

    python tests/oracle/encrypted_sqlite.py --out tests/fixtures

Not a `gen_*.py` oracle fixture: LangGraph reads these rows back only with the key, so there is no
`get_state_history` dump for superstep to match. SqliteSaver encrypts the whole checkpoint blob
(`type` = "msgpack+xortest"), not only the channel values as PostgresSaver does. Graph and cipher:
encrypted_graph.py.
"""
import argparse
import os
import sqlite3

from langgraph.checkpoint.sqlite import SqliteSaver

from encrypted_graph import run, serde


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    path = os.path.join(ap.parse_args().out, "encrypted_sqlite.sqlite")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    conn = sqlite3.connect(path, check_same_thread=False)
    run(SqliteSaver(conn, serde=serde()))
    types = sorted({r[0] for r in conn.execute("SELECT type FROM checkpoints")}
                   | {r[0] for r in conn.execute("SELECT type FROM writes")})
    conn.close()
    print(f"encrypted_sqlite: thread t paused at ask; stored types {types}")


if __name__ == "__main__":
    main()

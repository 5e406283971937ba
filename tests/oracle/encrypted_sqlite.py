"""A SqliteSaver file written through LangGraph's own EncryptedSerializer, for
tests/hostile_files.rs `an_encrypted_sqlite_checkpoint_is_named_encrypted_not_corrupt`.

    python tests/oracle/encrypted_sqlite.py --out tests/fixtures

Not a `gen_*.py` oracle fixture: LangGraph reads these rows back only with the key, so there is no
`get_state_history` dump for superstep to match. SqliteSaver encrypts the whole checkpoint blob
(`type` = "msgpack+xortest"), not only the channel values as PostgresSaver does
(tests/postgres/gen_encrypted.py). The cipher is a stand-in for pycryptodome's AES (not in the
pinned venv): a CipherProtocol named "xortest" XORing the serialized bytes with a key.
Thread 't': START -> draft -> ask (interrupt) -> END, paused at the interrupt.
"""
import argparse
import operator
import os
import sqlite3
from typing import Annotated, TypedDict

from langgraph.checkpoint.serde.base import CipherProtocol
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

KEY = b"superstep-test-key"


class XorCipher(CipherProtocol):
    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        return "xortest", bytes(b ^ KEY[i % len(KEY)] for i, b in enumerate(plaintext))

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        assert ciphername == "xortest"
        return bytes(b ^ KEY[i % len(KEY)] for i, b in enumerate(ciphertext))


class State(TypedDict):
    request: str
    log: Annotated[list, operator.add]


def draft(state):
    return {"log": ["drafted " + state["request"]]}


def ask(state):
    answer = interrupt({"question": "approve?"})
    return {"log": [f"answer {answer}"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    path = os.path.join(ap.parse_args().out, "encrypted_sqlite.sqlite")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn, serde=EncryptedSerializer(XorCipher(), JsonPlusSerializer()))
    b = StateGraph(State)
    b.add_node("draft", draft)
    b.add_node("ask", ask)
    b.add_edge(START, "draft")
    b.add_edge("draft", "ask")
    b.add_edge("ask", END)
    g = b.compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "t"}}
    g.invoke({"request": "transfer", "log": []}, cfg)
    # LangGraph itself reads it back with the key
    assert g.get_state(cfg).values["log"] == ["drafted transfer"], g.get_state(cfg).values
    types = sorted({r[0] for r in conn.execute("SELECT type FROM checkpoints")}
                   | {r[0] for r in conn.execute("SELECT type FROM writes")})
    conn.close()
    print(f"encrypted_sqlite: thread t paused at ask; stored types {types}")


if __name__ == "__main__":
    main()

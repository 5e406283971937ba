"""A PostgresSaver database written through LangGraph's own EncryptedSerializer, for
tests/postgres.rs `encrypted_values_are_shown_opaque_with_a_note` (run by tests/postgres/ci.sh).

    python tests/postgres/gen_encrypted.py URL_OF_AN_EMPTY_DATABASE

EncryptedSerializer(cipher, JsonPlusSerializer()) as an app configures it (`PostgresSaver(conn,
serde=...)`); the cipher is a stand-in for pycryptodome's AES (not in the pinned venv): a CipherProtocol
named "xortest" whose ciphertext is the serialized bytes XORed with a key — the rows are the ones
EncryptedSerializer writes (`type` = "msgpack+xortest"), which superstep cannot decrypt either way.
Thread 't': START -> draft -> ask (interrupt) -> END, paused at the interrupt; `request` is a str (inline
in the JSONB, never encrypted), `log` a list (a blob: encrypted), the pending writes encrypted.
"""
import operator
import sys
from typing import Annotated, TypedDict

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.serde.base import CipherProtocol
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from psycopg.rows import dict_row

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
    url = sys.argv[1]
    conn = psycopg.Connection.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row)
    saver = PostgresSaver(conn, serde=EncryptedSerializer(XorCipher(), JsonPlusSerializer()))
    saver.setup()
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
    types = sorted({r["type"] for r in conn.execute("SELECT type FROM checkpoint_blobs")}
                   | {r["type"] for r in conn.execute("SELECT type FROM checkpoint_writes")})
    print(f"encrypted: thread t paused at ask; stored types {types}")
    conn.close()


if __name__ == "__main__":
    main()

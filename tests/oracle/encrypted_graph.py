"""The graph and stand-in cipher both encrypted fixtures use: tests/oracle/encrypted_sqlite.py
(SqliteSaver) and tests/postgres/gen_encrypted.py (PostgresSaver).

EncryptedSerializer(cipher, JsonPlusSerializer()) as an app configures it; the cipher is a stand-in
for pycryptodome's AES (not in the pinned venv): a CipherProtocol named "xortest" whose ciphertext is
the serialized bytes XORed with a key — the rows are the ones EncryptedSerializer writes, which
superstep cannot decrypt either way.
Thread 't': START -> draft -> ask (interrupt) -> END, paused at the interrupt.
"""
import operator
from typing import Annotated, TypedDict

from langgraph.checkpoint.serde.base import CipherProtocol
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

KEY = b"superstep-test-key"
CONFIG = {"configurable": {"thread_id": "t"}}


class XorCipher(CipherProtocol):
    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        return "xortest", bytes(b ^ KEY[i % len(KEY)] for i, b in enumerate(plaintext))

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        assert ciphername == "xortest"
        return bytes(b ^ KEY[i % len(KEY)] for i, b in enumerate(ciphertext))


def serde():
    return EncryptedSerializer(XorCipher(), JsonPlusSerializer())


class State(TypedDict):
    request: str
    log: Annotated[list, operator.add]


def draft(state):
    return {"log": ["drafted " + state["request"]]}


def ask(state):
    answer = interrupt({"question": "approve?"})
    return {"log": [f"answer {answer}"]}


def run(saver):
    """Thread 't' paused at ask; LangGraph itself reads it back with the key."""
    b = StateGraph(State)
    b.add_node("draft", draft)
    b.add_node("ask", ask)
    b.add_edge(START, "draft")
    b.add_edge("draft", "ask")
    b.add_edge("ask", END)
    g = b.compile(checkpointer=saver)
    g.invoke({"request": "transfer", "log": []}, CONFIG)
    assert g.get_state(CONFIG).values["log"] == ["drafted transfer"], g.get_state(CONFIG).values

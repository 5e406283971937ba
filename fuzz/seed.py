"""Seed the fuzz corpora from the repository's fixtures (nothing binary is committed).

    python3 fuzz/seed.py [CORPUS_DIR]        (default: fuzz/corpus)

value_decode: every checkpoint blob and write value of tests/fixtures/*.sqlite and graphs/demo.sqlite,
  prefixed with the byte that selects its envelope type; plus the serde vectors' msgpack bytes.
spec_load:    every graphs/*.json with its .star module, joined by a NUL byte.
json_input:   the JSON views of the serde vectors and the graphs' inputs.
keys / tui_keys: the key sequences the TUI tests press.
text:         the ids, namespaces and names of tests/fixtures/hostile*.sqlite (escape sequences, multi-byte ids).
"""
import glob
import hashlib
import json
import os
import re
import sqlite3
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "fuzz", "corpus")
TYPES = ["msgpack", "json", "null", "bytes", "bytearray", "pickle", "other"]


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def typed(ty, blob):
    return bytes([TYPES.index(ty) if ty in TYPES else 6]) + (blob or b"")


n = {}
for db in sorted(glob.glob(os.path.join(ROOT, "tests/fixtures/*.sqlite")) + [os.path.join(ROOT, "graphs/demo.sqlite")]):
    c = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    for ty, blob in c.execute("SELECT type, checkpoint FROM checkpoints"):
        put("value_decode", typed(ty, blob))
    for ty, blob in c.execute("SELECT type, value FROM writes"):
        put("value_decode", typed(ty, blob))
    c.close()

vectors = json.load(open(os.path.join(ROOT, "tests/fixtures/serde_vectors.json")))
items = vectors if isinstance(vectors, list) else vectors.get("vectors", [])
for v in items:
    if isinstance(v, dict):
        for k in ("msgpack_hex", "hex", "bytes_hex"):
            if isinstance(v.get(k), str):
                put("value_decode", typed(v.get("type", "msgpack"), bytes.fromhex(v[k])))
        for k in ("view", "json"):
            if k in v:
                put("json_input", json.dumps(v[k]))

for spec in sorted(glob.glob(os.path.join(ROOT, "graphs/*.json"))):
    text = open(spec).read()
    star = ""
    m = re.search(r'"code"\s*:\s*"([^"]+)"', text)
    if m and os.path.exists(os.path.join(ROOT, "graphs", m.group(1))):
        star = open(os.path.join(ROOT, "graphs", m.group(1))).read()
    put("spec_load", text + "\0" + star)
    try:
        inp = json.loads(text).get("input")
        if inp is not None:
            put("json_input", json.dumps(inp))
    except ValueError:
        pass

for t in ("tests/it/tui.rs", "tests/it/tui_graphs.rs", "tests/it/tui_cli.rs"):
    for k in re.findall(r'"((?:[^"\\]|\\.)*<(?:Enter|Esc|Tab|C-[a-z]|Up|Down|BS|Space)>(?:[^"\\]|\\.)*)"', open(os.path.join(ROOT, t)).read()):
        put("keys", k)
        put("tui_keys", k)
for k in ["nnn", "c", "r true<Enter>", "jjt y", "u{\"x\": 1}<Enter>", "?q", "/tick<Enter>]", "T<Down><Enter>", "b B n", ":resume 1<Enter>"]:
    put("keys", k)
    put("tui_keys", k)

# text: every id, namespace, node and channel name of the hostile fixture (escape sequences, multi-byte
# ids), each after a width byte
for db in ("tests/fixtures/hostile.sqlite", "tests/fixtures/hostile_ids.sqlite"):
    c = sqlite3.connect(f"file:{os.path.join(ROOT, db)}?mode=ro&immutable=1", uri=True)
    q = ("SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints "
         "UNION SELECT task_id, channel, task_path FROM writes")
    for row in c.execute(q):
        for x in row:
            if isinstance(x, str) and x:
                put("text", bytes([8 + len(x) % 40]) + x.encode())
    c.close()

for t in sorted(os.listdir(OUT)):
    print(f"{t}: {len(os.listdir(os.path.join(OUT, t)))} seeds")

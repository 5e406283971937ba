"""The memory-agent template's langgraph.json asks for a vector index (`store.index`, an
embeddings model); here a deterministic stand-in for the model (8 dimensions). This directory
has no .env although langgraph.json names one, as a fresh clone of a template."""
import hashlib


def embed(texts):
    out = []
    for t in texts:
        h = hashlib.sha256(t.encode()).digest()
        out.append([h[i] / 255.0 for i in range(8)])
    return out

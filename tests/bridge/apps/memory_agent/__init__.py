"""A memory agent laid out like langchain-ai/memory-agent (src/memory_agent/), with a fake chat model."""
from memory_agent.graph import graph

__all__ = ["graph"]

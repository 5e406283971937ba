"""A ReAct agent laid out like langchain-ai/react-agent (src/react_agent/), with a fake chat model."""
from react_agent.graph import graph

__all__ = ["graph"]

"""A search tool that reads the runtime context (get_runtime), as the template's does."""
from typing import Any, Callable, List

from langgraph.runtime import get_runtime

from react_agent.context import Context


async def search(query: str) -> str:
    """Search for general web results."""
    runtime = get_runtime(Context)
    return f"{runtime.context.max_search_results} results for {query!r}"


TOOLS: List[Callable[..., Any]] = [search]

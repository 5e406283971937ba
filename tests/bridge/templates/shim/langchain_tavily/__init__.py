"""Offline stand-in for langchain_tavily.TavilySearch (the react-agent template's search tool):
canned results, `max_results` of them at most, so the context's max_search_results shows."""
from typing import Any


class TavilySearch:
    def __init__(self, max_results: int = 5, **kwargs: Any):
        self.max_results = max_results

    async def ainvoke(self, args: dict) -> dict:
        hits = [{"title": f"hit {i}", "content": f"{args['query']} #{i}"} for i in range(3)]
        return {"query": args["query"], "results": hits[: self.max_results]}

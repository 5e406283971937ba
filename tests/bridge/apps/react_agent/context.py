"""The runtime context, as the react-agent template declares it: a dataclass whose defaults can
come from environment variables (read in __post_init__ for fields left at their default)."""
import os
from dataclasses import dataclass, field, fields
from typing import Annotated

SYSTEM_PROMPT = "You are a helpful AI assistant."


@dataclass(kw_only=True)
class Context:
    system_prompt: str = field(default=SYSTEM_PROMPT, metadata={"description": "The system prompt."})
    model: Annotated[str, {"__template_metadata__": {"kind": "llm"}}] = field(
        default="fake/tools", metadata={"description": "provider/model-name."}
    )
    max_search_results: int = field(default=10, metadata={"description": "Search results to return."})

    def __post_init__(self) -> None:
        """Fetch env vars for attributes that were not passed as args."""
        for f in fields(self):
            if not f.init:
                continue
            if getattr(self, f.name) == f.default:
                setattr(self, f.name, os.environ.get(f.name.upper(), f.default))

"""The memory-agent template's runtime context: who the user is and which model answers, each
field defaulting to an environment variable."""
import os
from dataclasses import dataclass, field, fields

SYSTEM_PROMPT = "You are a helpful and friendly chatbot. Remember what the user tells you."


@dataclass(kw_only=True)
class Context:
    user_id: str = "default"
    model: str = field(default="fake/tools", metadata={"description": "provider/model-name."})
    system_prompt: str = SYSTEM_PROMPT

    def __post_init__(self) -> None:
        for f in fields(self):
            if not f.init:
                continue
            if getattr(self, f.name) == f.default:
                setattr(self, f.name, os.environ.get(f.name.upper(), f.default))

"""init_chat_model -> a scripted chat model. Deterministic: a human message gets one call of the
first bound tool with the human text as `query`; anything else gets an answer naming the model
and the system prompt's first line, so the runtime context shows in the rows."""
from typing import Any, List, Optional

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult


class ScriptedChat(BaseChatModel):
    model: str = "fake"
    tool_names: List[str] = []

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ScriptedChat":
        names = [getattr(t, "name", None) or getattr(t, "__name__", None) or t["name"] for t in tools]
        return self.model_copy(update={"tool_names": names})

    def _generate(self, messages: List[BaseMessage], stop: Optional[List[str]] = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        n = len(messages)
        system = next((m.content for m in messages if isinstance(m, SystemMessage)), "")
        head = system.strip().splitlines()[0] if system.strip() else ""
        last = messages[-1]
        if isinstance(last, HumanMessage) and self.tool_names:
            call = {"name": self.tool_names[0], "args": {"query": str(last.content)}, "id": f"call-{n}", "type": "tool_call"}
            msg = AIMessage(content="", id=f"ai-{n}", tool_calls=[call])
        else:
            text = last.content if isinstance(last, (ToolMessage, HumanMessage)) else ""
            msg = AIMessage(content=f"[{self.model}] {head} | {text}", id=f"ai-{n}")
        return ChatResult(generations=[ChatGeneration(message=msg)])


def init_chat_model(model: str, *, model_provider: str = "", **kwargs: Any) -> ScriptedChat:
    return ScriptedChat(model=f"{model_provider}/{model}")

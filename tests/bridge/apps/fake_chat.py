"""A scripted chat model for the test apps: the only change from a real template is the model.

Deterministic: the reply depends only on the conversation, and every AIMessage and tool call
gets an id derived from the conversation's length (LangChain would mint random ones).

Scripts (the `model` string "fake/<script>", as the templates' "provider/model" strings):
  * tools  — a human message gets one call of the first bound tool, its argument the human text
             (`query`, or `content` for a memory tool); a tool result gets a final answer;
  * echo   — answers every turn with the last message's text.
The answer names the model and the system prompt's first line, so the runtime context shows.
"""
from typing import Any, List, Optional

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult


class ScriptedChat(BaseChatModel):
    script: str = "tools"
    name_: str = "fake"
    tool_names: List[str] = []

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ScriptedChat":
        names = []
        for t in tools:
            names.append(getattr(t, "name", None) or getattr(t, "__name__", None) or t["name"])
        return self.model_copy(update={"tool_names": names})

    def _generate(self, messages: List[BaseMessage], stop: Optional[List[str]] = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        n = len(messages)
        system = next((m.content for m in messages if isinstance(m, SystemMessage)), "")
        head = system.splitlines()[0] if system else ""
        last = messages[-1]
        if self.script == "tools" and isinstance(last, HumanMessage) and self.tool_names:
            tool = self.tool_names[0]
            arg = "content" if "memory" in tool else "query"
            msg = AIMessage(
                content="",
                id=f"ai-{n}",
                tool_calls=[{"name": tool, "args": {arg: str(last.content)}, "id": f"call-{n}", "type": "tool_call"}],
            )
        else:
            text = last.content if isinstance(last, (ToolMessage, HumanMessage)) else ""
            msg = AIMessage(content=f"[{self.name_}] {head} | {text}", id=f"ai-{n}")
        return ChatResult(generations=[ChatGeneration(message=msg)])


def load_chat_model(fully_specified_name: str) -> ScriptedChat:
    """As the templates' utils.load_chat_model("provider/model"): "fake/<script>"."""
    provider, model = fully_specified_name.split("/", maxsplit=1)
    if provider != "fake":
        raise ValueError(f"the test apps only have fake models, not {fully_specified_name!r}")
    return ScriptedChat(script=model, name_=fully_specified_name)

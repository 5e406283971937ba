"""An offline chat model: a langchain_core BaseChatModel that answers from a script, so the demo
runs without an API key and always takes the same path. It speaks the real message types (tool
calls included); swap it for ChatOpenAI/ChatAnthropic and the graph is unchanged."""

import json
import re
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult


def _call(name: str, args: dict, n: int) -> dict:
    return {"name": name, "args": args, "id": f"call_{name}_{n}", "type": "tool_call"}


class ScriptedSupportModel(BaseChatModel):
    """Looks at the conversation and answers like a support agent with two tools would."""

    @property
    def _llm_type(self) -> str:
        return "scripted-support"

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ScriptedSupportModel":
        return self

    def _generate(self, messages: list[BaseMessage], stop=None, run_manager=None, **kwargs) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._reply(messages))])

    def _reply(self, messages: list[BaseMessage]) -> AIMessage:
        n = len(messages)
        asked = next((m for m in reversed(messages) if isinstance(m, HumanMessage)), None)
        text = asked.content if asked is not None and isinstance(asked.content, str) else ""
        wants_refund = bool(re.search(r"refund|broken|damaged|torn", text, re.I))
        last = messages[-1]
        if isinstance(last, ToolMessage):
            if last.name == "lookup_order":
                order = json.loads(last.content)
                if "error" in order:
                    return AIMessage(content=f"I could not find order {order['order_id']}. Could you check the number?")
                if wants_refund and order["status"] == "delivered":
                    args = {"order_id": order["order_id"], "amount": order["total"]}
                    return AIMessage(content="", tool_calls=[_call("issue_refund", args, n)])
                return AIMessage(content=f"Order {order['order_id']} ({order['item']}) is {order['status']}.")
            if last.name == "issue_refund":
                if last.status == "error" or last.content.startswith("Refund declined"):
                    return AIMessage(content="I am sorry: the refund was not approved. A colleague will follow up by email.")
                return AIMessage(content=f"Done: {last.content}. It reaches your card in 3-5 days.")
        found = re.search(r"\b(\d{4})\b", text)
        if found:
            return AIMessage(content="", tool_calls=[_call("lookup_order", {"order_id": found.group(1)}, n)])
        return AIMessage(content="Happy to help. What is your order number?")

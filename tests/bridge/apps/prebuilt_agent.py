"""A prebuilt ReAct agent (langgraph.prebuilt.create_react_agent, langgraph-prebuilt 1.1.3) with a
fake chat model and one tool: its AgentState carries `remaining_steps`, which LangGraph derives
from the run's recursion_limit."""
from langgraph.prebuilt import create_react_agent

from fake_chat import ScriptedChat


def get_weather(query: str) -> str:
    """The weather where the user asks."""
    return f"sunny ({query})"


graph = create_react_agent(ScriptedChat(script="tools", name_="fake/tools"), [get_weather], prompt="You answer weather questions.")

"""Task results holding state keys that no checkpoint of the thread has written yet (issue 12 item 7).

LangGraph's `result` of a finished task maps every state key the task wrote, whether or not any
checkpoint has that key yet; read from the DB alone, such a key is in no checkpoint's channel values.

thread 'tools' : the chatbot tutorial's shape. START -> chatbot; chatbot -> tools and chatbot -> ask
                 (parallel). tools returns Command(update={"name", "birthday", "messages": [ToolMessage]})
                 (LangGraph's human-assistance example after its answer); ask interrupts. The thread is
                 paused with tools finished: its writes to `name` / `birthday` are pending, and no
                 checkpoint has those keys.
thread 'jokes' : START -> plan; plan's conditional edge sends Send("joke", {"subject": s}) for three
                 subjects; the third sleeps 0.3 s (so its siblings have saved their writes) and raises
                 ValueError. Two PUSH tasks finished with {"jokes": [...]} (an `operator.add` key never
                 written before), one failed; there is no checkpoint after the step.
"""
import operator
import time
from typing import Annotated, TypedDict

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, Send, interrupt

from common import D, Fixture


class Chat(TypedDict):
    messages: Annotated[list, add_messages]
    name: str
    birthday: str


def chatbot(state):
    return {"messages": [AIMessage(content="Let me ask a human.", id="ai-1")]}


def tools(state):
    return Command(update={
        "name": "LangGraph",
        "birthday": "Jan 17, 2024",
        "messages": [ToolMessage(content="Correct", tool_call_id="call-1", id="tool-1")],
    })


def ask(state):
    return {"messages": [HumanMessage(content=interrupt("Is this correct?"), id="human-2")]}


class Jokes(TypedDict):
    subjects: list
    jokes: Annotated[list, operator.add]


def plan(state):
    return {}


def fan_out(state):
    return [Send("joke", {"subject": s}) for s in state["subjects"]]


def joke(arg):
    if arg["subject"] == "penguins":
        time.sleep(0.3)
        raise ValueError("no joke about penguins")
    return {"jokes": [f"a joke about {arg['subject']}"]}


def main():
    fx = Fixture("task_results")
    g = (StateGraph(Chat).add_node("chatbot", chatbot).add_node("tools", tools).add_node("ask", ask)
         .add_edge(START, "chatbot").add_edge("chatbot", "tools").add_edge("chatbot", "ask")
         .add_edge("tools", END).add_edge("ask", END)
         .compile(checkpointer=fx.saver))
    cfg = {"configurable": {"thread_id": "tools"}}
    fx.returned("tools run", g.invoke({"messages": [HumanMessage(content="When was LangGraph released?", id="h-1")]}, cfg, **D()))
    fx.dump(g, "tools")

    j = (StateGraph(Jokes).add_node("plan", plan).add_node("joke", joke)
         .add_edge(START, "plan").add_conditional_edges("plan", fan_out, ["joke"]).add_edge("joke", END)
         .compile(checkpointer=fx.saver))
    fx.attempt("jokes run", j.invoke, {"subjects": ["cats", "dogs", "penguins"]},
               {"configurable": {"thread_id": "jokes"}}, **D())
    fx.dump(j, "jokes")
    fx.finish()


if __name__ == "__main__":
    main()

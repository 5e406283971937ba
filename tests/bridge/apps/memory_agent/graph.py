"""The memory-agent template's graph: call_model searches the user's memories in the store
(`runtime.store.asearch`) and puts them in the system prompt; store_memory saves what the model
asked to remember (`store.aput`). Memory lives in the store, across threads and runs."""
import asyncio
from typing import cast

from langchain_core.messages import AnyMessage
from langgraph.graph import END, StateGraph, add_messages
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore
from typing_extensions import Annotated
from dataclasses import dataclass, field

from fake_chat import load_chat_model
from memory_agent import tools
from memory_agent.context import Context


@dataclass(kw_only=True)
class State:
    messages: Annotated[list[AnyMessage], add_messages]


async def call_model(state: State, runtime: Runtime[Context]) -> dict:
    """Extract the user's state from the conversation and update the memory."""
    user_id = runtime.context.user_id
    model = runtime.context.model
    system_prompt = runtime.context.system_prompt
    memories = await cast(BaseStore, runtime.store).asearch(
        ("memories", user_id),
        query=str([m.content for m in state.messages[-3:]]),
        limit=10,
    )
    formatted = "\n".join(f"[{mem.key}]: {mem.value['content']}" for mem in memories)
    if formatted:
        formatted = f"\n<memories>\n{formatted}\n</memories>"
    sys = f"{system_prompt}{formatted}"
    # the scripted model saves what a message starting "remember" says, and answers anything else
    # with the memories it was shown
    llm = load_chat_model(model)
    last = str(state.messages[-1].content)
    if not last.lower().startswith("remember"):
        llm = llm.model_copy(update={"script": "echo"})
        sys = f"memories: {', '.join(m.value['content'] for m in memories) or 'none'}"
    msg = await llm.bind_tools([tools.upsert_memory]).ainvoke(
        [{"role": "system", "content": sys}, *state.messages],
    )
    return {"messages": [msg]}


async def store_memory(state: State, runtime: Runtime[Context]):
    tool_calls = getattr(state.messages[-1], "tool_calls", [])
    saved_memories = await asyncio.gather(
        *(
            tools.upsert_memory(**tc["args"], user_id=runtime.context.user_id, store=cast(BaseStore, runtime.store))
            for tc in tool_calls
        )
    )
    results = [
        {"role": "tool", "content": mem, "tool_call_id": tc["id"]}
        for tc, mem in zip(tool_calls, saved_memories)
    ]
    return {"messages": results}


def route_message(state: State):
    msg = state.messages[-1]
    if getattr(msg, "tool_calls", None):
        return "store_memory"
    return END


builder = StateGraph(State, context_schema=Context)
builder.add_node(call_model)
builder.add_edge("__start__", "call_model")
builder.add_node(store_memory)
builder.add_conditional_edges("call_model", route_message, ["store_memory", END])
builder.add_edge("store_memory", "call_model")
graph = builder.compile()
graph.name = "MemoryAgent"

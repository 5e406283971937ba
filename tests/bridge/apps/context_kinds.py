"""Context schemas of each kind LangGraph coerces (or passes as is): a TypedDict with a required
key (`typed`), a pydantic model with a required, typed field (`pyd`). Neither can be built from
defaults alone: runs need a context."""
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from pydantic import BaseModel


class State(TypedDict):
    greeting: str


class TypedCtx(TypedDict):
    user_id: str


class PydCtx(BaseModel):
    user_id: str
    retries: int = 1


def greet_typed(state: State, runtime: Runtime[TypedCtx]):
    return {"greeting": f"hello {runtime.context['user_id']}"}


def greet_pyd(state: State, runtime: Runtime[PydCtx]):
    c = runtime.context
    return {"greeting": f"hello {c.user_id} ({c.retries} retries)"}


typed = StateGraph(State, context_schema=TypedCtx).add_node("greet", greet_typed).add_edge(START, "greet").add_edge("greet", END).compile()
pyd = StateGraph(State, context_schema=PydCtx).add_node("greet", greet_pyd).add_edge(START, "greet").add_edge("greet", END).compile()

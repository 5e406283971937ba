"""A functional-API graph (langgraph.func): an @entrypoint calling @tasks, pausing on interrupt()
for approval, keeping a count across runs with entrypoint.final(save=...) / `previous`, and writing
the approved essay to the store. Compiled with its own InMemorySaver (replaced, as langgraph dev
replaces it)."""
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.func import entrypoint, task
from langgraph.store.base import BaseStore
from langgraph.types import interrupt


@task
def write_essay(topic: str) -> str:
    return f"An essay about {topic}"


@task
def score(essay: str) -> int:
    return len(essay.split())


@entrypoint(checkpointer=InMemorySaver())
def workflow(topic: str, *, previous: dict | None = None, store: BaseStore) -> dict:
    essay = write_essay(topic).result()
    n = score(essay).result()
    approved = interrupt({"essay": essay, "action": "Approve this essay?"})
    store.put(("essays",), topic, {"essay": essay, "approved": approved})
    runs = (previous or {}).get("runs", 0) + 1
    return entrypoint.final(
        value={"essay": essay, "approved": approved, "words": n, "runs": runs},
        save={"runs": runs},
    )

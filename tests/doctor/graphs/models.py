"""The app's own types, stored in checkpoints by LangGraph's serializer (as `models.Ticket`)."""
from dataclasses import dataclass


@dataclass
class Ticket:
    id: int
    title: str

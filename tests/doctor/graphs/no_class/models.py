"""The app's types after a refactor that removed `Ticket`: threads holding one cannot revive it."""
from dataclasses import dataclass


@dataclass
class Customer:
    name: str

"""The agent's tools. What they print is captured by superstep per task and attempt."""

import logging

from langchain_core.tools import tool

log = logging.getLogger("support.tools")

ORDERS = {
    "1042": {"item": "trail tent, 2 person", "status": "delivered", "total": 189.0},
    "1043": {"item": "hiking boots, size 42", "status": "shipped", "total": 129.5},
    "1044": {"item": "camping stove", "status": "processing", "total": 64.0},
}


@tool
def lookup_order(order_id: str) -> dict:
    """Look an order up by its number."""
    print(f"looking up order {order_id}")
    order = ORDERS.get(order_id)
    if order is None:
        return {"order_id": order_id, "error": "no such order"}
    return {"order_id": order_id, **order}


@tool
def issue_refund(order_id: str, amount: float) -> str:
    """Refund an order (the graph asks a human first)."""
    log.warning("refunding %.2f on order %s", amount, order_id)
    print(f"refund of {amount:.2f} sent for order {order_id}")
    return f"refunded {amount:.2f} on order {order_id}"


TOOLS = [lookup_order, issue_refund]

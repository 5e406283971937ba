"""The support demo: an order-support agent with tools and a human approval step."""

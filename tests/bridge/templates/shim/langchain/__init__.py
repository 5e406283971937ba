"""Offline stand-in for the `langchain` package: only `chat_models.init_chat_model`, which the
react-agent template's utils.load_chat_model calls (the templates' one change: the model)."""

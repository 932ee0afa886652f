"""A2A interoperability (AgentBeats): ``netarena-gym serve-a2a`` (an evaluator server that
accepts upstream's request shape, or any netarena agent served over A2A) and the ``a2a``
agent adapter for ``eval``. Needs ``pip install 'a2a-sdk[http-server]' uvicorn``; nothing
here is imported unless used."""

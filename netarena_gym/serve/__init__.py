"""Serving the envs to agent stacks: OpenEnv (:mod:`.openenv`), MCP (:mod:`.mcp`), one
session manager for both (:mod:`.sessions`) and the ``netarena-gym serve`` command
(:mod:`.cli`). Needs the ``serve`` extra: ``pip install "netarena-gym[serve]"``."""

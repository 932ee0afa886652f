"""Serving the envs to agent stacks: OpenEnv (:mod:`.openenv`), MCP (:mod:`.mcp`), A2A
(:mod:`.a2a`), one session pool for all of them and the A2A agent server
(:mod:`.sessions`), session envs on Ray actors (:mod:`.ray_pool`) and the
``netarena-gym serve`` command (:mod:`.cli`). Needs the ``serve`` extra: ``pip install "netarena-gym[serve]"``."""

"""``netarena-gym serve --protocol mcp``: the envs as MCP tool servers (the ``mcp`` SDK 2.x,
its ``MCPServer``, formerly FastMCP), over stdio or streamable HTTP.

Tools: the task's atomic commands, derived from the tool classes of
:mod:`netarena_gym.train.tools` (same names, typed arguments and docstrings as TRL's
environments: routing ``run(machine, command)``; K8s ``kubectl(command, stdin)``; capacity
planning ``get_node``, ``list_children``, ``add_node``, ``remove_node``, ``set_attr``,
``answer`` on the text interface), plus ``reset(seed, level)`` and ``status()`` (the
pingall matrix or the connectivity mismatches). The episode record (the agent's own
actions, rewards and outcome; never the scenario) is the resource ``netarena://episode/current``
(a template, ``netarena://episode/{which}``, so that it reads the caller's session).

Sessions: one :class:`~netarena_gym.serve.sessions.Session` per MCP transport session
(streamable HTTP with the handshake protocol, 2025-11-25, gives each client its own
``mcp-session-id``); stdio, in-memory and the stateless 2026-07-28 protocol (no session id
exists there) share the one session of their process: run one server per agent then. Left out: MCP prompts, sampling and
subscriptions; the capacity-planning code interface (use ``--protocol openenv``).
"""
from __future__ import annotations

import inspect
import json
from typing import Any

from netarena_gym.errors import InvalidConfig, require

require("mcp", "serve")

from mcp.server.mcpserver import Context, MCPServer  # noqa: E402

from netarena_gym.eval.spec import parse_level  # noqa: E402
from netarena_gym.serve.sessions import Session, SessionManager  # noqa: E402
from netarena_gym.train.tools import SOLVED, UNSOLVED, tool_class, tool_names  # noqa: E402
from netarena_gym.train import tools  # noqa: E402

EPISODE_URI = "netarena://episode/current"
#: a template, so the handler gets the caller's context (static resources cannot)
EPISODE_TEMPLATE = "netarena://episode/{which}"
DEFAULT_KEY = "local"  # stdio, in-memory and stateless HTTP: one session per process


class McpSessions:
    """MCP transport sessions -> the manager's sessions (``SessionManager.for_key``)."""

    def __init__(self, manager: SessionManager):
        self.manager = manager

    def get(self, ctx: Context | None) -> Session:
        key = DEFAULT_KEY
        headers = ctx.headers if ctx is not None else None
        if headers:  # streamable HTTP: the transport's session id
            key = headers.get("mcp-session-id") or DEFAULT_KEY
        return self.manager.for_key(key)


def _after(text: str, done: bool, info: dict) -> str:
    if not done or "error" in info:
        return text
    return f"{text}\n{SOLVED if info.get('correct') else UNSOLVED}"


def _task_tool(cls, name: str, sessions: McpSessions):
    """An MCP tool with the signature and docstring of ``cls.name`` (minus ``self``) that
    steps the caller's session with the env action the call stands for."""
    method = getattr(cls, name)
    sig = inspect.signature(method, eval_str=True)
    params = [p for p in sig.parameters.values() if p.name != "self"]

    def tool(ctx: Context, **kwargs) -> str:
        s = sessions.get(ctx)
        action = tools.action_of_call(cls, name, kwargs)
        text, _reward, done, info = s.step(action)
        return _after(text, done, info)

    ctx_param = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)
    tool.__signature__ = sig.replace(parameters=params + [ctx_param], return_annotation=str)
    tool.__annotations__ = {**{p.name: p.annotation for p in params}, "ctx": Context,
                            "return": str}
    tool.__name__ = name
    tool.__doc__ = method.__doc__
    return tool


def build_server(manager: SessionManager, *, name: str | None = None) -> MCPServer:
    cls = tool_class(manager.env_id)
    if manager.env_options.get("interface", "text") != "text":
        raise ValueError("the MCP server drives the text interface (tool calls); "
                         "drop the interface option")
    if manager.env_id == "NetArena-CapacityPlanning-v0":
        manager.env_options["interface"] = "text"
    sessions = McpSessions(manager)
    import netarena_gym

    server = MCPServer(name=name or manager.env_id, version=netarena_gym.__version__,
                       instructions=" ".join((cls.__doc__ or "").split()) + "\n\n"
                       + tools.system_prompt(cls) + " Call reset first; status shows the check.")
    for n in tool_names(cls):
        server.add_tool(_task_tool(cls, n, sessions), name=n)

    def reset(ctx: Context, seed: int | None = None, level: str | None = None) -> str:
        """Start a new episode and return its first observation.

        Args:
            seed: The episode's seed (same seed, same episode); omit for a random one.
            level: The difficulty level: "1", "2", "3" or "compat" (default: the server's).
        """
        s = sessions.get(ctx)
        try:
            lvl = None if level in (None, "") else parse_level(str(level))
            text, _ = s.reset(seed=seed, level=lvl)
        except InvalidConfig as e:
            return f"netarena: invalid reset argument: {e}"
        return text

    def status(ctx: Context) -> str:
        """Show the current check without acting: the pingall matrix (routing), the
        connectivity mismatches (K8s) or the question (capacity planning), and the steps
        left. It does not use a step."""
        return sessions.get(ctx).status()

    server.add_tool(reset, name="reset")
    server.add_tool(status, name="status")

    @server.resource(EPISODE_TEMPLATE, name="episode", mime_type="application/json",
                     description="This session's episode so far (read "
                                 f"{EPISODE_URI}): your actions, the rewards and their "
                                 "components, correctness and safety.")
    def episode(which: str, ctx: Context) -> str:
        if which != "current":
            return json.dumps({"error": f"unknown episode {which!r}; read {EPISODE_URI}"})
        return json.dumps(sessions.get(ctx).record())

    server.netarena_sessions = manager  # type: ignore[attr-defined]
    return server


def run(manager: SessionManager, transport: str = "stdio", host: str = "127.0.0.1",
        port: int = 8000) -> None:
    server = build_server(manager)
    manager.start_reaper()
    try:
        if transport == "stdio":
            server.run("stdio")
        elif transport == "http":
            server.run("streamable-http", host=host, port=port,
                       session_idle_timeout=manager.idle_timeout,
                       max_sessions=manager.max_sessions)
        else:
            raise ValueError(f"transport must be stdio or http, got {transport!r}")
    finally:
        manager.close_all()


def call_tool_text(result: Any) -> str:
    """The text of an SDK ``CallToolResult`` (its text contents joined)."""
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")

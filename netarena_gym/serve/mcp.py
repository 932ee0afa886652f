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
exists there) share the one session of their process: run one server per agent then. Only
ids the SDK issued are keys: :class:`SessionTracker` (ASGI middleware on the streamable
HTTP app) records the id of each session the SDK opens and closes the manager's session
when the SDK's ends (the client's DELETE, a 404 for an id the SDK dropped, or no request
for the SDK's ``session_idle_timeout``); an ``mcp-session-id`` header the SDK did not
issue, or one on a stateless request, is ignored. mcp 2.3 keeps the per-connection
teardown hook (``Connection.exit_stack``) out of a tool's reach, hence the middleware. A
full server is a tool answer naming the limit. Left out: MCP prompts, sampling and
subscriptions; the capacity-planning code interface (use ``--protocol openenv``).
"""
from __future__ import annotations

import inspect
import json
import threading
import time
from typing import Any, Callable

from netarena_gym.errors import InvalidConfig, require

require("mcp", "serve")

import anyio.to_thread  # noqa: E402
from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER  # noqa: E402
from mcp.server.streamable_http_manager import DEFAULT_SESSION_IDLE_TIMEOUT  # noqa: E402
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS  # noqa: E402

from netarena_gym.eval.spec import parse_level  # noqa: E402
from netarena_gym.serve.sessions import (  # noqa: E402
    Session, SessionLimit, SessionManager, UnknownSession)
from netarena_gym.train.tools import SOLVED, UNSOLVED, tool_class, tool_names  # noqa: E402
from netarena_gym.train import tools  # noqa: E402

EPISODE_URI = "netarena://episode/current"
#: a template, so the handler gets the caller's context (static resources cannot)
EPISODE_TEMPLATE = "netarena://episode/{which}"
DEFAULT_KEY = "local"  # stdio, in-memory and stateless HTTP: one session per process


class McpSessions:
    """MCP transport sessions -> the manager's sessions (``SessionManager.for_key``).

    ``issued`` holds the transport session ids the SDK handed out and has not ended (fed by
    :class:`SessionTracker`), each with its requests in flight and when its last one
    ended; only these are keys."""

    def __init__(self, manager: SessionManager):
        self.manager = manager
        self.idle_timeout: float | None = None  # the SDK's session_idle_timeout
        self.issued: dict[str, list] = {}  # id -> [requests in flight, last activity]
        self._lock = threading.Lock()

    def key(self, ctx: Context | None) -> str:
        headers = ctx.headers if ctx is not None else None
        sid = headers.get(MCP_SESSION_ID_HEADER) if headers else None
        if not sid or ctx.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return DEFAULT_KEY  # stdio, in memory, stateless: no transport session
        with self._lock:
            return sid if sid in self.issued else DEFAULT_KEY

    def get(self, ctx: Context | None) -> Session:
        return self.manager.for_key(self.key(ctx))

    # -- fed by SessionTracker (the event loop); ending closes an env: call in a thread
    def opened(self, sid: str) -> None:
        with self._lock:
            self.issued[sid] = [0, time.monotonic()]

    def begin(self, sid: str) -> bool:
        """A request of ``sid`` starts; False when the SDK did not issue it (or it ended)."""
        with self._lock:
            seen = self.issued.get(sid)
            if seen is not None:
                seen[0] += 1
                seen[1] = time.monotonic()
            return seen is not None

    def finish(self, sid: str) -> None:
        with self._lock:
            seen = self.issued.get(sid)
            if seen is not None:
                seen[0] -= 1
                seen[1] = time.monotonic()

    def stale(self) -> list[str]:
        """The ids the SDK has closed for idleness by now (none in flight for its timeout)."""
        if self.idle_timeout is None:
            return []
        now = time.monotonic()
        with self._lock:
            return [sid for sid, (busy, last) in self.issued.items()
                    if not busy and now - last > self.idle_timeout]

    def ended(self, sid: str) -> None:
        """The SDK's transport session ``sid`` ended: close the manager's session for it."""
        with self._lock:
            self.issued.pop(sid, None)
        self.manager.close_key(sid)


class SessionTracker:
    """ASGI middleware on the streamable HTTP app: which transport sessions the SDK opened
    (the id in the response to a request that carried none) and when each ends (a DELETE
    it accepted, a 404 for the id, or its idle timeout), for :class:`McpSessions`."""

    def __init__(self, app, sessions: McpSessions):
        self.app = app
        self.sessions = sessions

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for old in self.sessions.stale():
            await anyio.to_thread.run_sync(self.sessions.ended, old)
        header = MCP_SESSION_ID_HEADER.encode()
        sid = next((v.decode("latin-1") for k, v in scope["headers"] if k == header), None)
        known = sid is not None and self.sessions.begin(sid)

        async def watch(message) -> None:
            if message["type"] == "http.response.start":
                code = message["status"]
                new = next((v.decode("latin-1") for k, v in message.get("headers", ())
                            if k.lower() == header), None)
                if sid is None and new and code < 400:
                    self.sessions.opened(new)
                if known and (code == 404 or (scope["method"] == "DELETE" and code < 400)):
                    # closed before the client hears that the session is gone
                    await anyio.to_thread.run_sync(self.sessions.ended, sid)
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            if known:
                self.sessions.finish(sid)


class NetArenaMCPServer(MCPServer):
    """``MCPServer`` whose streamable HTTP app carries the :class:`SessionTracker`."""

    netarena_mcp_sessions: McpSessions

    def streamable_http_app(self, **options):
        app = super().streamable_http_app(**options)
        sessions = self.netarena_mcp_sessions
        sessions.idle_timeout = options.get("session_idle_timeout",
                                            DEFAULT_SESSION_IDLE_TIMEOUT)
        app.add_middleware(SessionTracker, sessions=sessions)
        return app


def _in_session(sessions: McpSessions, ctx: Context | None, use: Callable[[Session], str]) -> str:
    """``use(the caller's session)``; a full server or a session closed meanwhile is a tool
    answer that says so (the SDK would hide the message behind 'Error executing tool')."""
    try:
        return use(sessions.get(ctx))
    except (SessionLimit, UnknownSession) as e:
        return f"netarena: {e}"


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
        action = tools.action_of_call(cls, name, kwargs)

        def use(s: Session) -> str:
            text, _reward, done, info = s.step(action)
            return _after(text, done, info)

        return _in_session(sessions, ctx, use)

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

    server = NetArenaMCPServer(name=name or manager.env_id, version=netarena_gym.__version__,
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
        def use(s: Session) -> str:
            try:
                lvl = None if level in (None, "") else parse_level(str(level))
                return s.reset(seed=seed, level=lvl)[0]
            except InvalidConfig as e:
                return f"netarena: invalid reset argument: {e}"

        return _in_session(sessions, ctx, use)

    def status(ctx: Context) -> str:
        """Show the current check without acting: the pingall matrix (routing), the
        connectivity mismatches (K8s) or the question (capacity planning), and the steps
        left. It does not use a step."""
        return _in_session(sessions, ctx, Session.status)

    server.add_tool(reset, name="reset")
    server.add_tool(status, name="status")

    @server.resource(EPISODE_TEMPLATE, name="episode", mime_type="application/json",
                     description="This session's episode so far (read "
                                 f"{EPISODE_URI}): your actions, the rewards and their "
                                 "components, correctness and safety.")
    def episode(which: str, ctx: Context) -> str:
        if which != "current":
            return json.dumps({"error": f"unknown episode {which!r}; read {EPISODE_URI}"})
        try:
            return json.dumps(sessions.get(ctx).record())
        except (SessionLimit, UnknownSession) as e:
            return json.dumps({"error": f"netarena: {e}"})

    server.netarena_mcp_sessions = sessions
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

"""Shared pieces of the A2A server and client: agent cards, a uvicorn server in a thread, a
private event loop for synchronous callers, and reading the text out of A2A events."""
from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

try:
    import uvicorn  # noqa: F401 (the extra's server)
    from a2a.helpers import get_message_text
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore
    from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Role
    from google.protobuf.json_format import MessageToDict
    from starlette.applications import Starlette
except ImportError as e:  # a missing extra is DependencyNotInstalled, as everywhere else
    from netarena_gym.errors import DependencyNotInstalled

    raise DependencyNotInstalled(
        f"A2A support needs a2a-sdk and uvicorn ({e}); run: pip install "
        '"netarena-gym[a2a]"') from None

import netarena_gym
from netarena_gym.serve.common import UvicornThread, free_port  # noqa: F401 (re-exported)


def make_card(name: str, description: str, url: str, skill_id: str, skill_name: str,
              *, modes=("text",), tags=("netarena",)) -> AgentCard:
    return AgentCard(
        name=name, description=description, version=netarena_gym.__version__,
        supported_interfaces=[AgentInterface(url=url, protocol_binding="JSONRPC",
                                             protocol_version="1.0")],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=list(modes), default_output_modes=list(modes),
        skills=[AgentSkill(id=skill_id, name=skill_name, description=description,
                           tags=list(tags))])


def build_app(executor, card: AgentCard) -> Starlette:
    """JSON-RPC on ``/`` (A2A 1.0, with 0.3 compatibility) and the agent card at the
    well-known path."""
    handler = DefaultRequestHandler(agent_executor=executor, task_store=InMemoryTaskStore(),
                                    agent_card=card)
    routes = create_agent_card_routes(card) + create_jsonrpc_routes(
        handler, rpc_url="/", enable_v0_3_compat=True)
    return Starlette(routes=routes)


class ServerThread(UvicornThread):
    """An A2A app with uvicorn in a daemon thread (tests, notebooks)."""

    label = "A2A server"

    def __init__(self, app, host: str = "127.0.0.1", port: int | None = None):
        super().__init__(app, host, port, lifespan="off")


class LoopThread:
    """A private asyncio loop in a thread, so synchronous code (an Agent's ``act``) can run
    the async A2A client whether or not the caller itself runs in an event loop."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro, timeout: float | None = None) -> Any:
        fut = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return fut.result(timeout)
        except TimeoutError:
            fut.cancel()
            raise

    def close(self) -> None:
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=5)
        self.loop.close()


def part_text(part) -> str:
    if part.HasField("text"):
        return part.text
    if part.HasField("data"):
        return json.dumps(MessageToDict(part.data))
    return ""


def event_text(last) -> str:
    """The reply carried by the last streamed event, read as upstream's client reads it: a
    message's parts joined; a task's last artifact, else its last agent message."""
    kind = last.WhichOneof("payload") if last is not None else None
    if kind == "message":
        return "\n".join(t for t in map(part_text, last.message.parts) if t)
    if kind == "task":
        task = last.task
        if task.artifacts:
            return "\n".join(t for t in map(part_text, task.artifacts[-1].parts) if t)
        agent_msgs = [m for m in task.history if m.role == Role.ROLE_AGENT]
        if agent_msgs:
            return get_message_text(agent_msgs[-1])
        if task.status.HasField("message"):
            return get_message_text(task.status.message)
    if kind == "status_update" and last.status_update.status.HasField("message"):
        return get_message_text(last.status_update.status.message)
    if kind == "artifact_update":
        return "\n".join(t for t in map(part_text, last.artifact_update.artifact.parts) if t)
    return ""


def data_of(part) -> Any:
    return MessageToDict(part.data) if part.HasField("data") else None

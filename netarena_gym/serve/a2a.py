"""``netarena-gym serve --protocol a2a``: an env served as an A2A agent (a2a-sdk 1.x,
JSON-RPC binding, A2A 1.0 with 0.3 compatibility), for agent stacks that speak A2A only.

One A2A conversation (``context_id``; the SDK assigns one when the client sends none, and
the reply carries it) is one :class:`~netarena_gym.serve.sessions.Session` of the server's
:class:`~netarena_gym.serve.sessions.SessionManager` (``SessionManager.for_key``): its own
env instance, limit, idle timeout and clean close, as for OpenEnv and MCP. A request is
one user message whose data part (or text, as JSON) is one object:

- ``{"reset": {"seed": 3, "level": "1"}}`` (both optional) starts an episode;
- ``{"step": ACTION}`` plays one action, the env's own action (routing ``{"machine",
  "command"}``, K8s ``{"command", "stdin"}``, capacity planning ``{"tool", ...}`` or
  ``{"code"}``); an invalid action is the env's: an error line in the observation and a
  penalty;
- ``{"status": {}}`` shows the check (pingall, mismatches) without a step;
- ``{"episode": {}}`` returns the episode record (the agent's actions and rewards);
- ``{"close": {}}`` ends the session.

The reply is one agent message: a text part (the observation) and a data part
``{"observation", "reward", "done", "info"}`` (``info``: the public step info only, see
:data:`~netarena_gym.serve.sessions.PUBLIC_INFO`), or ``{"error"}`` for a request that is
not one of these. A full server answers a JSON-RPC ``InvalidRequestError``. Left out:
tasks, push notifications and cancellation (each request is answered at once).
"""
from __future__ import annotations

import asyncio
import json

from netarena_gym.errors import InvalidConfig, require

require("a2a", "a2a")

from a2a.helpers import new_data_part, new_text_part  # noqa: E402
from a2a.server.agent_execution import AgentExecutor, RequestContext  # noqa: E402
from a2a.types import InvalidRequestError, Message, Role  # noqa: E402
from google.protobuf.json_format import MessageToDict  # noqa: E402

from netarena_gym.a2a.common import build_app, data_of, make_card  # noqa: E402
from netarena_gym.agents.episode import jsonable  # noqa: E402
from netarena_gym.eval.spec import parse_level  # noqa: E402
from netarena_gym.serve.sessions import (  # noqa: E402
    Session, SessionLimit, SessionManager, UnknownSession)

VERBS = ("reset", "step", "status", "episode", "close")


def read_request(message: Message | None) -> tuple[str, object]:
    """``(verb, argument)`` from the message's first data part, else its text as JSON;
    ValueError with a message for the client otherwise."""
    body = None
    for part in (message.parts if message is not None else []):
        body = data_of(part)
        if body is not None:
            break
        if part.HasField("text") and part.text.strip():
            try:
                body = json.loads(part.text)
            except json.JSONDecodeError:
                raise ValueError("the request must be a JSON object such as "
                                 '{"step": {...}}') from None
            break
    if not isinstance(body, dict) or len(body) != 1 or next(iter(body)) not in VERBS:
        raise ValueError("the request must be one object with one key of "
                         f"{', '.join(VERBS)}")
    return next(iter(body.items()))


def read_seed(seed):
    """A reset's seed: null or an integer >= 0. A data part's numbers are doubles (3 arrives
    as 3.0), so an integral number is taken; a bool, a fraction or a string is refused."""
    if seed is None:
        return None
    if isinstance(seed, float) and seed.is_integer():
        seed = int(seed)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        shown = repr(seed) if isinstance(seed, (bool, int, float)) else f"a {type(seed).__name__}"
        raise InvalidConfig(f"seed must be an integer >= 0 or null, got {shown}")
    return seed


def answer(session: Session | None, verb: str, arg, manager: SessionManager) -> dict:
    """Run one request in the caller's session (in a worker thread)."""
    try:
        return _answer(session, verb, arg, manager)
    except UnknownSession as e:  # closed (reaped) between the lookup and the request
        return {"error": f"netarena: {e}", "done": True}


def _answer(session: Session, verb: str, arg, manager: SessionManager) -> dict:
    if verb == "reset":
        arg = arg if isinstance(arg, dict) else {}
        level = arg.get("level")
        try:
            lvl = None if level in (None, "") else parse_level(str(level))
            text, info = session.reset(seed=read_seed(arg.get("seed")), level=lvl)
        except (InvalidConfig, ValueError, TypeError) as e:
            return {"error": f"netarena: invalid reset: {e}"}
        return {"observation": text, "reward": 0.0, "done": False, "info": info}
    if verb == "step":
        text, reward, done, info = session.step(arg)
        if "error" in info:  # no live episode
            return {"error": info["error"], "done": True}
        return {"observation": text, "reward": reward, "done": done, "info": info}
    if verb == "status" and session.seed_set:
        return {"observation": session.status()}
    if verb == "status":
        return {"error": session.status()}
    if verb == "episode":
        return {"episode": session.record()}
    manager.close(session.id)
    return {"closed": True}


class EnvExecutor(AgentExecutor):
    def __init__(self, manager: SessionManager):
        self.manager = manager

    async def execute(self, context: RequestContext, event_queue) -> None:
        try:
            verb, arg = read_request(context.message)
        except ValueError as e:
            result = {"error": f"netarena: {e}"}
        else:
            try:
                session = await asyncio.to_thread(self.manager.for_key, context.context_id)
            except SessionLimit as e:
                raise InvalidRequestError(str(e)) from None
            result = await asyncio.to_thread(answer, session, verb, arg, self.manager)
        text = result.get("observation") or result.get("error") or json.dumps(result)
        reply = Message(role=Role.ROLE_AGENT, context_id=context.context_id,
                        message_id=f"{context.task_id or 'm'}-reply",
                        parts=[new_text_part(text),
                               new_data_part(json.loads(json.dumps(jsonable(result))))])
        await event_queue.enqueue_event(reply)

    async def cancel(self, context, event_queue) -> None:
        raise NotImplementedError("requests are answered at once; nothing to cancel")


def card_for(manager: SessionManager, url: str):
    env = manager.env_id
    description = (f"The NetArena environment {env}, one episode per conversation. Send one "
                   'JSON object per message: {"reset": {"seed": S, "level": "1"}}, then '
                   '{"step": ACTION} with the env\'s action; {"status": {}}, '
                   '{"episode": {}} and {"close": {}}. Replies carry the observation text and '
                   '{"observation", "reward", "done", "info"}.')
    return make_card(f"NetArena env {env}", description, url, "netarena_env",
                     "NetArena environment", modes=("text", "data"))


def build_a2a_app(manager: SessionManager, url: str):
    return build_app(EnvExecutor(manager), card_for(manager, url))


def reply_data(events: list) -> dict:
    """The data part of the reply among streamed client events (tests, examples)."""
    for ev in reversed(events):
        if ev.WhichOneof("payload") == "message":
            for part in ev.message.parts:
                if part.HasField("data"):
                    return MessageToDict(part.data)
    raise ValueError("no data reply among the events")

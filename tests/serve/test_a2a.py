"""The A2A env server end to end with a2a-sdk's own client: reset, steps, an episode of
every task solved by the expert through the server (observation for observation equal to
an in-process twin), bad actions and bad requests with clear errors, the session limit as
a JSON-RPC error, one env per conversation, and close."""
from __future__ import annotations

import asyncio
import json
import uuid

import pytest

pytest.importorskip("a2a")
pytest.importorskip("uvicorn")

import httpx  # noqa: E402
from a2a.client import ClientConfig, create_client  # noqa: E402
from a2a.helpers import new_data_part, new_text_part  # noqa: E402
from a2a.types import Message, Role, SendMessageRequest  # noqa: E402

from netarena_gym.serve.a2a import build_a2a_app, reply_data  # noqa: E402
from tests.serve.conftest import ENV_IDS  # noqa: E402


class A2AEnvClient:
    """A synchronous wrapper of a2a-sdk's client for one conversation (one session)."""

    def __init__(self, url: str):
        self.url, self.context_id = url, ""
        self.loop = asyncio.new_event_loop()
        self.http = httpx.AsyncClient(timeout=120)
        self.client = self.loop.run_until_complete(
            create_client(url, ClientConfig(streaming=True, httpx_client=self.http)))

    def send(self, body=None, text: str | None = None) -> dict:
        part = new_text_part(text) if text is not None else new_data_part(body)
        msg = Message(role=Role.ROLE_USER, parts=[part], message_id=str(uuid.uuid4()),
                      context_id=self.context_id)

        async def go():
            return [ev async for ev in self.client.send_message(SendMessageRequest(message=msg))]

        events = self.loop.run_until_complete(go())
        self.context_id = events[-1].message.context_id  # the server's, on the first call
        return reply_data(events)

    def close(self):
        self.loop.run_until_complete(self.client.close())
        self.loop.run_until_complete(self.http.aclose())
        self.loop.close()


@pytest.fixture
def serve(serve_with):
    return lambda env_id, **kw: serve_with(build_a2a_app, env_id, **kw)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_the_expert_solves_an_episode_through_the_server(serve, local_expert, env_id):
    opts = {"interface": "text"} if env_id == ENV_IDS[2] else {}
    srv, manager = serve(env_id, env_options=opts)
    twin = local_expert(env_id, seed=5, **opts)
    c = A2AEnvClient(srv.url)
    try:
        r = c.send({"reset": {"seed": 5}})
        assert r["observation"] == twin.obs and r["done"] is False
        assert len(manager) == 1 and manager.ids()[0] not in json.dumps(r)
        while not twin.done:
            action = twin.act()
            r = c.send({"step": action})
            assert r["observation"] == twin.follow(action)
        assert r["done"] is True and r["info"]["correct"] is True
        rec = c.send({"episode": {}})["episode"]
        assert rec["correct"] and rec["n_steps"] == len(twin.actions)
        assert "scenario" not in json.dumps(rec)
        over = c.send({"step": twin.actions[-1]})
        assert "episode is over" in over["error"]
        assert c.send({"close": {}}) == {"closed": True} and len(manager) == 0
    finally:
        c.close()


def test_bad_actions_and_requests_get_clear_errors(serve):
    srv, manager = serve("NetArena-Routing-v0", max_sessions=1)
    c = A2AEnvClient(srv.url)
    try:
        assert "call reset first" in c.send({"status": {}})["error"]
        assert "call reset first" in c.send({"step": {"machine": "r0", "command": "ip a"}})["error"]
        c.send({"reset": {"seed": 1, "level": "2"}})
        r = c.send({"step": {"bogus": 1}})
        assert "invalid action" in r["observation"] and r["reward"] < 0
        assert r["info"]["invalid"] == 1 and r["done"] is False
        r = c.send({"step": {"machine": "r0", "command": "rm -rf /"}})
        assert r["reward"] < 0 and r["info"]["command_kind"] != "ok"
        assert "must be one object" in c.send({"jump": 1})["error"]
        assert "must be a JSON object" in c.send(text="ip route please")["error"]
        assert "invalid reset" in c.send({"reset": {"level": "9"}})["error"]
        assert c.send({"status": {}})["observation"].startswith("Pingall")
        other = A2AEnvClient(srv.url)  # a second conversation: over the limit of 1
        try:
            with pytest.raises(Exception) as ei:
                other.send({"reset": {}})
            assert type(ei.value).__name__ == "InvalidRequestError"
            assert "limit of 1 sessions" in str(ei.value)
        finally:
            other.close()
    finally:
        c.close()


def test_conversations_have_their_own_envs_and_the_card_describes_the_protocol(serve):
    srv, manager = serve("NetArena-K8sPolicy-v0", max_sessions=2)
    a, b = A2AEnvClient(srv.url), A2AEnvClient(srv.url)
    try:
        ra, rb = a.send({"reset": {"seed": 1}}), b.send({"reset": {"seed": 2}})
        assert a.context_id != b.context_id and len(manager) == 2
        assert ra["observation"] != rb["observation"]
        assert a.send({"status": {}})["observation"] != b.send({"status": {}})["observation"]
        card = httpx.get(srv.url + "/.well-known/agent-card.json", timeout=10).json()
        assert "NetArena-K8sPolicy-v0" in card["name"] and '{"step": ACTION}' in card["description"]
    finally:
        a.close()
        b.close()


def test_a_reset_seed_is_a_whole_number(serve):
    """1.5 and True were taken as seeds 1 (int() of them); a data part's numbers are doubles,
    so 3 (sent as 3.0) is still seed 3."""
    srv, _ = serve("NetArena-Routing-v0", max_sessions=1)
    c = A2AEnvClient(srv.url)
    try:
        for seed in (1.5, True, "3", -3, [1]):
            err = c.send({"reset": {"seed": seed}})["error"]
            assert "seed must be an integer >= 0 or null" in err
        c.send({"reset": {"seed": 3}})
        assert c.send({"episode": {}})["episode"]["seed"] == 3
    finally:
        c.close()

"""MCP server end to end with the SDK's own ``Client``: in memory for every task (reset,
steps, the expert's episode solved through the tools and matching an in-process twin, a
bad call, ``status``, the episode resource), over stdio as a subprocess (``netarena-gym
serve --protocol mcp``) and over streamable HTTP with two clients in separate sessions."""
from __future__ import annotations

import asyncio
import json
import os
import sys
import time

import httpx

import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from netarena_gym.serve.common import UvicornThread  # noqa: E402
from netarena_gym.serve.mcp import EPISODE_URI, build_server, call_tool_text  # noqa: E402
from netarena_gym.serve.sessions import SessionManager  # noqa: E402
from netarena_gym.train.tools import SOLVED, tool_class  # noqa: E402
from netarena_gym.train import tools  # noqa: E402
from tests.serve.conftest import ENV_IDS  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def tool_call(env_id: str, action: dict) -> tuple[str, dict]:
    return tools.call_of_action(tool_class(env_id), action)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 300))


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_expert_solves_through_the_tools(local_expert, env_id):
    options = {"interface": "text"} if "Capacity" in env_id else {}
    twin = local_expert(env_id, seed=7, **options)
    manager = SessionManager(env_id)

    async def main():
        async with Client(build_server(manager)) as c:
            names = {t.name for t in (await c.list_tools()).tools}
            assert {"reset", "status"} <= names and len(names) > 2
            first = call_tool_text(await c.call_tool("reset", {"seed": 7}))
            assert first == twin.obs
            status = call_tool_text(await c.call_tool("status", {}))
            assert status == twin.env.render()
            text = ""
            while not twin.done:
                action = twin.act()
                name, args = tool_call(env_id, action)
                r = await c.call_tool(name, args)
                assert not r.is_error
                text = call_tool_text(r)
                assert text.startswith(twin.follow(action))
            assert text.endswith(SOLVED)
            rec = json.loads((await c.read_resource(EPISODE_URI)).contents[0].text)
            assert rec["correct"] and rec["done"] and rec["n_steps"] == len(twin.actions)
            assert rec["steps"][-1]["action"] == twin.actions[-1]
            assert "scenario" not in rec
            over = call_tool_text(await c.call_tool(name, args))
            assert "episode is over" in over

    try:
        run(main())
    finally:
        manager.close_all()


def test_bad_calls_get_clear_errors():
    manager = SessionManager("NetArena-Routing-v0")

    async def main():
        async with Client(build_server(manager)) as c:
            before = call_tool_text(await c.call_tool("run", {"machine": "r0",
                                                              "command": "ip addr"}))
            assert "no episode is running; call reset" in before
            await c.call_tool("reset", {"seed": 2})
            r = await c.call_tool("run", {"machine": "r0"})  # missing argument
            assert r.is_error and "command" in call_tool_text(r)
            bad = call_tool_text(await c.call_tool("run", {"machine": "h99",
                                                           "command": "ip addr"}))
            assert "unknown machine 'h99'" in bad
            lvl = call_tool_text(await c.call_tool("reset", {"level": "nine"}))
            assert "invalid reset argument: level must be one of" in lvl
            seed = call_tool_text(await c.call_tool("reset", {"seed": -1}))
            assert "invalid reset argument: seed must be an integer >= 0" in seed
            rec = json.loads((await c.read_resource(EPISODE_URI)).contents[0].text)
            assert rec["steps"][0]["reward_components"]["invalid"] < 0

    try:
        run(main())
    finally:
        manager.close_all()


def test_stdio_subprocess_via_the_cli():
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "netarena_gym.cli", "serve", "--protocol", "mcp", "--env",
              "NetArena-K8sPolicy-v0", "--transport", "stdio", "--env-option", "max_steps=3"],
        env={**os.environ, "PYTHONPATH": ROOT}, cwd=ROOT)

    async def main():
        async with Client(params) as c:
            first = call_tool_text(await c.call_tool("reset", {"seed": 0}))
            assert first.startswith("Connectivity check") and "Steps left: 3" in first
            out = call_tool_text(await c.call_tool("kubectl", {"command": "kubectl get pods"}))
            assert "Steps left: 2" in out

    run(main())


def test_streamable_http_gives_each_client_its_own_session():
    manager = SessionManager("NetArena-Routing-v0", max_sessions=4)
    server = build_server(manager)
    srv = UvicornThread(server.streamable_http_app()).start()

    async def main():
        url = srv.url + "/mcp"
        # sessions need the handshake protocol (2025-11-25, mcp-session-id); the
        # 2026-07-28 protocol is stateless, so its requests share the server's one session
        async with Client(url, mode="legacy") as a, Client(url, mode="legacy") as b:
            ta = call_tool_text(await a.call_tool("reset", {"seed": 1}))
            tb = call_tool_text(await b.call_tool("reset", {"seed": 2}))
            await a.call_tool("run", {"machine": "r0", "command": "ip route"})
            ra = json.loads((await a.read_resource(EPISODE_URI)).contents[0].text)
            rb = json.loads((await b.read_resource(EPISODE_URI)).contents[0].text)
            return ta, tb, ra, rb

    try:
        ta, tb, ra, rb = run(main())
    finally:
        srv.stop()
        manager.close_all()
    assert ra["seed"] == 1 and ra["n_steps"] == 1
    assert rb["seed"] == 2 and rb["n_steps"] == 0


def drained(manager, seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while len(manager) and time.monotonic() < end:
        time.sleep(0.02)
    return len(manager) == 0


def test_a_session_ends_with_its_transport_session_and_a_full_server_says_so():
    """Sequential clients: each one's manager session is closed when its MCP session ends
    (before, only the 900 s reaper freed it, and the third client found the server full);
    while two are connected to a server of one session, the second is told why."""
    manager = SessionManager("NetArena-Routing-v0", max_sessions=1)
    srv = UvicornThread(build_server(manager).streamable_http_app()).start()
    url = srv.url + "/mcp"

    async def one(seed: int) -> str:
        async with Client(url, mode="legacy") as c:
            r = await c.call_tool("reset", {"seed": seed})
            assert not r.is_error and len(manager) == 1
            return call_tool_text(r)

    async def two() -> str:
        async with Client(url, mode="legacy") as a, Client(url, mode="legacy") as b:
            await a.call_tool("reset", {"seed": 1})
            r = await b.call_tool("reset", {"seed": 2})
            assert not r.is_error
            return call_tool_text(r)

    try:
        for seed in (1, 2, 3):
            assert run(one(seed)).startswith("Pingall")
            assert drained(manager)
        assert "holds its limit of 1 sessions" in run(two())
        assert drained(manager)
    finally:
        srv.stop()
        manager.close_all()


HANDSHAKE = "2025-11-25"
STATELESS = "2026-07-28"


def post(url: str, body: dict, version: str, sid: str | None = None) -> httpx.Response:
    headers = {"accept": "application/json, text/event-stream",
               "content-type": "application/json", "mcp-protocol-version": version}
    if sid:
        headers["mcp-session-id"] = sid
    if version == STATELESS:  # the 2026-07-28 envelope: routing headers and _meta
        headers["mcp-method"] = body["method"]
        if "name" in body["params"] or "uri" in body["params"]:
            headers["mcp-name"] = body["params"].get("name") or body["params"]["uri"]
        body["params"]["_meta"] = {"io.modelcontextprotocol/protocolVersion": STATELESS,
                                   "io.modelcontextprotocol/clientCapabilities": {}}
    return httpx.post(url, json={"jsonrpc": "2.0", **body}, headers=headers, timeout=60)


def call(url: str, name: str, args: dict, version: str, sid: str | None = None) -> str:
    r = post(url, {"id": 2, "method": "tools/call",
                   "params": {"name": name, "arguments": args}}, version, sid)
    assert r.status_code == 200, r.text
    return r.json()["result"]["content"][0]["text"]


def handshake(url: str) -> str:
    """A raw handshake-protocol session; its SDK-issued id."""
    r = post(url, {"id": 1, "method": "initialize", "params": {
        "protocolVersion": HANDSHAKE, "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}}, HANDSHAKE)
    sid = r.headers["mcp-session-id"]
    post(url, {"method": "notifications/initialized"}, HANDSHAKE, sid)
    return sid


def test_only_sdk_issued_session_ids_are_keys():
    """A client-chosen mcp-session-id (stateless requests carry whatever they like) opened
    a session per string, so one client filled the pool; and a real session's id sent on a
    stateless request reached that session. Now only the SDK's own stateful sessions are
    keys; everything stateless shares the process's one session."""
    manager = SessionManager("NetArena-Routing-v0", max_sessions=3)
    srv = UvicornThread(build_server(manager).streamable_http_app(json_response=True)).start()
    url = srv.url + "/mcp"
    try:
        for made_up in ("x1", "x2", "x3", "x4"):
            assert call(url, "reset", {"seed": 1}, STATELESS, made_up).startswith("Pingall")
        assert len(manager) == 1  # the stateless one
        assert post(url, {"id": 3, "method": "tools/list", "params": {}}, HANDSHAKE,
                    "made-up").status_code == 404  # the SDK refuses unknown ids itself
        sid = handshake(url)
        assert call(url, "reset", {"seed": 4}, HANDSHAKE, sid).startswith("Pingall")
        assert len(manager) == 2
        call(url, "run", {"machine": "r0", "command": "ip route"}, HANDSHAKE, sid)
        rec = post(url, {"id": 4, "method": "resources/read",
                         "params": {"uri": EPISODE_URI}}, HANDSHAKE, sid).json()
        assert json.loads(rec["result"]["contents"][0]["text"])["seed"] == 4
        # the real id on a stateless request: the shared session, not the id's
        rec = post(url, {"id": 5, "method": "resources/read", "params": {"uri": EPISODE_URI}},
                   STATELESS, sid).json()
        assert json.loads(rec["result"]["contents"][0]["text"])["seed"] == 1, rec
        assert httpx.delete(url, headers={"mcp-session-id": sid,
                                          "mcp-protocol-version": HANDSHAKE},
                            timeout=30).status_code < 400
        assert len(manager) == 1  # the DELETE closed the session's env
    finally:
        srv.stop()
        manager.close_all()


def test_a_session_the_sdk_drops_for_idleness_is_closed():
    manager = SessionManager("NetArena-Routing-v0", max_sessions=2, idle_timeout=None)
    srv = UvicornThread(build_server(manager).streamable_http_app(
        json_response=True, session_idle_timeout=1.0)).start()
    url = srv.url + "/mcp"
    try:
        sid = handshake(url)
        call(url, "reset", {"seed": 1}, HANDSHAKE, sid)
        assert len(manager) == 1
        time.sleep(1.5)
        assert post(url, {"id": 3, "method": "tools/list", "params": {}}, HANDSHAKE,
                    sid).status_code == 404  # the SDK dropped it; so did we
        assert len(manager) == 0
    finally:
        srv.stop()
        manager.close_all()

"""MCP server end to end with the SDK's own ``Client``: in memory for every task (reset,
steps, the expert's episode solved through the tools and matching an in-process twin, a
bad call, ``status``, the episode resource), over stdio as a subprocess (``netarena-gym
serve --protocol mcp``) and over streamable HTTP with two clients in separate sessions."""
from __future__ import annotations

import asyncio
import json
import os
import sys

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

"""Leak audit: nothing a client of any server can see names the fault, its injection,
the ground truth or the expert's plan.

For every task and every server (OpenEnv, MCP, the A2A env server, and what the A2A
evaluator sends to the agent it evaluates), a few seeded episodes are played with diagnostic and
wrong commands only (never the fix), and everything the client receives is collected: the
observations with their info and episode record, error messages, ``/schema``, state, the
tool list with descriptions and input schemas, the server's instructions, the resource
templates, the A2A agent cards and message metadata, and the session and context ids the manager handed out. The secrets come from an in-process
twin of each episode: the scenario's fault type and category, its injection commands
(routing), the expert's plan after its first (diagnostic) step, and the MALT ground-truth
answer. Every fault type name of the task is also kept out of the static texts. The
agent's own commands are echoed legitimately, so the probes never issue a secret."""
from __future__ import annotations

import asyncio
import json
import re

import httpx
import pytest

pytest.importorskip("openenv.core")
pytest.importorskip("mcp")
pytest.importorskip("a2a")

from mcp import Client  # noqa: E402

from a2a.helpers import new_text_message  # noqa: E402
from a2a.server.agent_execution import AgentExecutor  # noqa: E402
from google.protobuf.json_format import MessageToDict  # noqa: E402

from netarena_gym.a2a.common import ServerThread, make_card  # noqa: E402
from netarena_gym.a2a.common import build_app as a2a_app  # noqa: E402
from netarena_gym.eval.run import evaluate  # noqa: E402
from netarena_gym.eval.spec import EvalSpec  # noqa: E402
from netarena_gym.k8s.faults import TYPES as K8S_TYPES  # noqa: E402
from netarena_gym.routing.faults import TYPES as ROUTING_TYPES, Fault  # noqa: E402
from netarena_gym.serve.common import UvicornThread  # noqa: E402
from netarena_gym.serve.a2a import build_a2a_app  # noqa: E402
from netarena_gym.serve.mcp import EPISODE_URI, build_server  # noqa: E402
from netarena_gym.serve.openenv import (  # noqa: E402
    CapacityPlanningAction, K8sPolicyAction, NetArenaClient, RoutingAction, build_app)
from netarena_gym.serve.sessions import SessionManager  # noqa: E402
from tests.serve.conftest import ENV_IDS, LocalExpert  # noqa: E402
from tests.serve.test_a2a import A2AEnvClient  # noqa: E402

SEEDS = (0, 1, 2)
ROUTING, K8S, MALT = ENV_IDS
#: what the probing agent does (diagnostics and mistakes, never a fix)
PROBES = {
    ROUTING: [{"machine": "r0", "command": "ip addr show"},
              {"machine": "r0", "command": "iptables -S"},
              {"machine": "zz9", "command": "ip route"},
              {"machine": "r0", "command": "reboot now"}],
    K8S: [{"command": "kubectl get networkpolicy -A -o yaml"},
          {"command": "kubectl delete namespace kube-system"},
          {"command": "kubectl apply -f -", "stdin": "not: [valid"}],
    MALT: [{"tool": "get_node", "node": "no-such-node"},
           {"tool": "list_children", "node": "ju1"},
           {"tool": "set_attr", "node": "ju1", "key": "x"}],
}
STATIC_SECRETS = {ROUTING: ROUTING_TYPES, K8S: K8S_TYPES, MALT: ()}


def secrets_of(env_id: str, seed: int) -> list[str]:
    """The episode's secrets, read from an in-process twin played by the expert."""
    opts = {"interface": "text"} if env_id == MALT else {}
    twin = LocalExpert(env_id, seed, **opts)
    try:
        sc = twin.info["scenario"]
        out = [str(sc["meta"].get("category", ""))]
        for f in sc["faults"]:
            if "type" in f:
                out.append(f["type"])
            if "label" in f:
                out.append(f["label"])
            if env_id == ROUTING:
                out += Fault.from_dict(f).commands()
        while not twin.done:
            twin.follow(twin.act())
        for a in twin.actions[1:]:  # the first is the expert's read-only diagnosis
            if "command" in a:
                out.append(a["command"])
            if a.get("tool") == "answer" and isinstance(a["answer"], list) and len(a["answer"]) > 1:
                out.append(json.dumps(a["answer"]))
        return [s for s in out if len(s) >= 4]
    finally:
        twin.close()


def assert_clean(texts: list[str], secrets, where: str) -> None:
    blob = "\n".join(texts)
    for s in secrets:
        pattern = r"(?<![\w-])" + re.escape(s) + r"(?![\w-])"
        assert not re.search(pattern, blob), f"{where} reveals {s!r}"


def to_model(env_id, action):
    if env_id == ROUTING:
        return RoutingAction(**action)
    if env_id == K8S:
        return K8sPolicyAction(**action)
    return CapacityPlanningAction(tool=action["tool"],
                                  arguments={k: v for k, v in action.items() if k != "tool"})


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_openenv_server_reveals_nothing(env_id):
    opts = {"interface": "text"} if env_id == MALT else {}
    manager = SessionManager(env_id, env_options=opts)
    seen: list[str] = []
    ids: list[str] = []
    srv = UvicornThread(build_app(manager)).start()
    try:
        seen.append(httpx.get(srv.url + "/schema", timeout=10).text)
        seen.append(httpx.get(srv.url + "/metadata", timeout=10).text)
        with NetArenaClient.for_env(env_id)(srv.url).sync() as c:
            for seed in SEEDS:
                r = c.reset(seed=seed)
                seen.append(r.observation.model_dump_json())
                ids += manager.ids()
                for a in PROBES[env_id]:
                    seen.append(c.step(to_model(env_id, a)).observation.model_dump_json())
                seen.append(c.state().model_dump_json())
                try:
                    c.step({"bogus": 1})
                except RuntimeError as e:
                    seen.append(str(e))
    finally:
        srv.stop()
        manager.close_all()
    secrets = [s for seed in SEEDS for s in secrets_of(env_id, seed)]
    assert secrets, "the audit needs secrets to look for"
    assert_clean(seen + ids, secrets, f"OpenEnv {env_id}")
    assert_clean(seen[:2], STATIC_SECRETS[env_id], f"OpenEnv {env_id} schema")


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_mcp_server_reveals_nothing(env_id):
    manager = SessionManager(env_id)
    server = build_server(manager)
    seen: list[str] = [server.instructions or ""]

    async def main():
        async with Client(server) as c:
            tools = (await c.list_tools()).tools
            seen.extend(t.model_dump_json() for t in tools)
            seen.append((await c.list_resource_templates()).model_dump_json())
            static = list(seen)
            for seed in SEEDS:
                seen.append((await c.call_tool("reset", {"seed": seed})).model_dump_json())
                for a in PROBES[env_id]:
                    if env_id == MALT:
                        name, args = a["tool"], {k: v for k, v in a.items() if k != "tool"}
                    else:
                        name, args = ("run" if env_id == ROUTING else "kubectl"), dict(a)
                    seen.append((await c.call_tool(name, args)).model_dump_json())
                seen.append((await c.call_tool("status", {})).model_dump_json())
                seen.append((await c.read_resource(EPISODE_URI)).model_dump_json())
                seen.append((await c.call_tool(tools[0].name, {})).model_dump_json())
            return static

    try:
        static = asyncio.run(asyncio.wait_for(main(), 300))
        ids = manager.ids()
    finally:
        manager.close_all()
    secrets = [s for seed in SEEDS for s in secrets_of(env_id, seed)]
    assert_clean(seen + ids, secrets, f"MCP {env_id}")
    assert_clean(static, STATIC_SECRETS[env_id], f"MCP {env_id} tool descriptions")


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a2a_env_server_reveals_nothing(env_id):
    opts = {"interface": "text"} if env_id == MALT else {}
    manager = SessionManager(env_id, env_options=opts)
    srv = ServerThread.serving(lambda url: build_a2a_app(manager, url)).start()
    seen = [httpx.get(srv.url + "/.well-known/agent-card.json", timeout=10).text]
    ids: list[str] = []
    try:
        for seed in SEEDS:  # one conversation per episode
            c = A2AEnvClient(srv.url)
            try:
                seen.append(json.dumps(c.send({"reset": {"seed": seed}})))
                ids += manager.ids() + [c.context_id]
                for a in PROBES[env_id]:
                    seen.append(json.dumps(c.send({"step": a})))
                for body in ({"status": {}}, {"episode": {}}, {"step": "bogus"}, {"x": 1}):
                    seen.append(json.dumps(c.send(body)))
                seen.append(json.dumps(c.send(text="not json")))
            finally:
                c.close()
    finally:
        srv.stop()
        manager.close_all()
    secrets = [s for seed in SEEDS for s in secrets_of(env_id, seed)]
    assert_clean(seen + ids, secrets, f"A2A {env_id}")
    assert_clean(seen[:1], STATIC_SECRETS[env_id], f"A2A {env_id} agent card")


class Recorder(AgentExecutor):
    """An A2A agent that records every message the evaluator sends it (text and metadata)
    and answers the task's probes in turn."""

    def __init__(self, probes):
        self.probes, self.seen, self.n = probes, [], 0

    async def execute(self, context, event_queue):
        self.seen.append(context.get_user_input())
        self.seen.append(json.dumps(MessageToDict(context.message.metadata)))
        self.seen.append(context.context_id)
        probe = self.probes[self.n % len(self.probes)]
        self.n += 1
        await event_queue.enqueue_event(new_text_message(json.dumps(probe),
                                                         context_id=context.context_id))

    async def cancel(self, context, event_queue):
        raise NotImplementedError


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a2a_evaluator_shows_the_evaluated_agent_nothing(env_id, tmp_path):
    rec = Recorder(PROBES[env_id])
    opts = {"interface": "text"} if env_id == MALT else {}
    with ServerThread.serving(lambda url: a2a_app(rec, make_card("rec", "records", url, "rec",
                                                                 "rec"))) as srv:
        spec = EvalSpec(env=env_id, levels=(1,), episodes=len(SEEDS), seed=SEEDS[0],
                        agent="a2a", agent_options={"url": srv.url, "timeout": 60},
                        max_steps=len(PROBES[env_id]), env_options=opts)
        evaluate(spec, out=str(tmp_path / "run"), progress=False)
    assert rec.n == len(SEEDS) * len(PROBES[env_id])
    with open(tmp_path / "run" / "episodes.jsonl") as f:
        seeds = [json.loads(line)["seed"] for line in f]
    secrets = [s for seed in seeds for s in secrets_of(env_id, seed)]
    assert_clean(rec.seen, secrets, f"A2A evaluator -> agent {env_id}")

"""Steps/s and step latency (p50/p99) through the servers against the in-process env.

    python benchmarks/bench_serve.py [--env NetArena-Routing-v0] [--clients 1 8 32]
        [--steps 30] [--protocols inproc openenv mcp a2a]

Each client runs one session on loopback: ``reset(seed)`` then ``--steps`` steps of a
read-only command (routing ``ip route`` on r0, K8s ``kubectl get networkpolicy``, MALT
``list_children`` of the root on the text interface), restarting the episode when it ends.
"inproc": the env in this process, one thread per client. "openenv": openenv-core's
``EnvClient`` over the WebSocket ``/ws`` (one env per connection). "mcp": the SDK's
``Client`` over streamable HTTP with handshake sessions (one env per MCP session). "a2a":
a2a-sdk's client (JSON-RPC, streaming) against ``serve --protocol a2a``, one conversation
(one env) per client, one message per step. The
servers run in this process (uvicorn in a thread), so client and server share the CPUs.
Prints one JSON object: per protocol and client count, steps/s (all clients together),
p50/p99 step latency in ms.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import threading
import time

import gymnasium as gym

import netarena_gym  # noqa: F401
from netarena_gym.serve.common import UvicornThread
from netarena_gym.serve.sessions import SessionManager

ACTIONS = {
    "NetArena-Routing-v0": {"machine": "r0", "command": "ip route"},
    "NetArena-K8sPolicy-v0": {"command": "kubectl get networkpolicy"},
    "NetArena-CapacityPlanning-v0": {"tool": "list_children", "node": "ju1"},
}
OPTIONS = {"NetArena-CapacityPlanning-v0": {"interface": "text", "max_steps": 1000}}


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] * 1000 if xs else float("nan")


def threads(n: int, fn) -> tuple[list[float], float]:
    lat: list[float] = []
    spans: list[tuple[float, float]] = []
    lock = threading.Lock()

    def one(i):
        mine, t0, t1 = fn(i)
        with lock:
            lat.extend(mine)
            spans.append((t0, t1))

    ts = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return lat, window(spans)


def window(spans) -> float:
    """From the first client's first step to the last client's last step."""
    return max(t1 for _, t1 in spans) - min(t0 for t0, _ in spans)


async def gather(client, n: int) -> tuple[list[float], float]:
    """Run ``client(i)`` for n async clients at once; their latencies and common window."""
    res = await asyncio.gather(*(client(i) for i in range(n)))
    return [x for r, _, _ in res for x in r], window([(t0, t1) for _, t0, t1 in res])


def inproc(env_id, n, steps):
    action = ACTIONS[env_id]

    def client(i):
        env = gym.make(env_id, **OPTIONS.get(env_id, {}))
        env.reset(seed=i)
        lat, t0 = [], time.perf_counter()
        for _ in range(steps):
            t = time.perf_counter()
            _, _, term, trunc, _ = env.step(action)
            lat.append(time.perf_counter() - t)
            if term or trunc:
                env.reset(seed=i)
        t1 = time.perf_counter()
        env.close()
        return lat, t0, t1

    return threads(n, client)


def openenv(env_id, n, steps):
    from netarena_gym.serve.openenv import NetArenaClient, build_app, models

    manager = SessionManager(env_id, env_options=OPTIONS.get(env_id, {}), max_sessions=n)
    action_cls = models(env_id)[0]
    a = ACTIONS[env_id]
    if "tool" in a:
        action = action_cls(tool=a["tool"], arguments={k: v for k, v in a.items() if k != "tool"})
    else:
        action = action_cls(**a)
    C = NetArenaClient.for_env(env_id)
    with UvicornThread(build_app(manager)) as srv:
        def client(i):
            with C(srv.url).sync() as c:
                c.reset(seed=i)
                lat, t0 = [], time.perf_counter()
                for _ in range(steps):
                    t = time.perf_counter()
                    r = c.step(action)
                    lat.append(time.perf_counter() - t)
                    if r.done:
                        c.reset(seed=i)
                t1 = time.perf_counter()
            return lat, t0, t1

        out = threads(n, client)
    manager.close_all()
    return out


def mcp(env_id, n, steps):
    from mcp import Client

    from netarena_gym.serve.mcp import build_server
    from netarena_gym.train import tools
    from netarena_gym.train.tools import tool_class

    manager = SessionManager(env_id, env_options=OPTIONS.get(env_id, {}), max_sessions=n)
    name, args = tools.call_of_action(tool_class(env_id), ACTIONS[env_id])
    server = build_server(manager)
    with UvicornThread(server.streamable_http_app()) as srv:
        async def client(i):
            async with Client(srv.url + "/mcp", mode="legacy") as c:
                await c.call_tool("reset", {"seed": i})
                lat, t0 = [], time.perf_counter()
                for _ in range(steps):
                    t = time.perf_counter()
                    r = await c.call_tool(name, args)
                    lat.append(time.perf_counter() - t)
                    if "Episode over" in r.content[0].text:
                        await c.call_tool("reset", {"seed": i})
                t1 = time.perf_counter()
            return lat, t0, t1

        out = asyncio.run(gather(client, n))
    manager.close_all()
    return out


def a2a(env_id, n, steps):
    import uuid

    import httpx
    from a2a.client import ClientConfig, create_client
    from a2a.helpers import new_data_part
    from a2a.types import Message, Role, SendMessageRequest

    from netarena_gym.serve.a2a import build_a2a_app, reply_data

    manager = SessionManager(env_id, env_options=OPTIONS.get(env_id, {}), max_sessions=n)
    with UvicornThread.serving(lambda url: build_a2a_app(manager, url)) as srv:
        async def client(i):
            async with httpx.AsyncClient(timeout=600) as http:
                c = await create_client(srv.url, ClientConfig(streaming=True, httpx_client=http))
                cid = ""

                async def send(body):
                    nonlocal cid
                    msg = Message(role=Role.ROLE_USER, parts=[new_data_part(body)],
                                  message_id=str(uuid.uuid4()), context_id=cid)
                    evs = [ev async for ev in c.send_message(SendMessageRequest(message=msg))]
                    cid = evs[-1].message.context_id
                    return reply_data(evs)

                await send({"reset": {"seed": i}})
                lat, t0 = [], time.perf_counter()
                for _ in range(steps):
                    t = time.perf_counter()
                    r = await send({"step": ACTIONS[env_id]})
                    lat.append(time.perf_counter() - t)
                    if r.get("done"):
                        await send({"reset": {"seed": i}})
                t1 = time.perf_counter()
                await c.close()
            return lat, t0, t1

        out = asyncio.run(gather(client, n))
    manager.close_all()
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--env", default="NetArena-Routing-v0", choices=sorted(ACTIONS))
    p.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32])
    p.add_argument("--steps", type=int, default=30, help="steps per client")
    p.add_argument("--protocols", nargs="+", default=["inproc", "openenv", "mcp", "a2a"],
                   choices=("inproc", "openenv", "mcp", "a2a"))
    a = p.parse_args(argv)
    runners = {"inproc": inproc, "openenv": openenv, "mcp": mcp, "a2a": a2a}
    results = {"env": a.env, "steps_per_client": a.steps, "runs": []}
    for proto in a.protocols:
        for n in a.clients:
            lat, wall = runners[proto](a.env, n, a.steps)
            results["runs"].append({
                "protocol": proto, "clients": n, "steps": len(lat),
                "steps_per_s": round(len(lat) / wall, 1),
                "p50_ms": round(pct(lat, 0.5), 2), "p99_ms": round(pct(lat, 0.99), 2),
                "mean_ms": round(statistics.fmean(lat) * 1000, 2) if lat else None})
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

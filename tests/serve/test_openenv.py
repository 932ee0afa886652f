"""OpenEnv server end to end with openenv-core's own client (WebSocket ``/ws``) against a
uvicorn server in a thread: reset, steps, an expert episode solved through the server that
matches an in-process twin observation for observation, a bad action, concurrent sessions
and the session limit."""
from __future__ import annotations

import json
import threading
import time

import httpx
import pytest

pytest.importorskip("openenv.core")

from netarena_gym.serve.openenv import (  # noqa: E402
    CapacityPlanningAction, K8sPolicyAction, NetArenaClient, RoutingAction, build_app, models)
from tests.serve.conftest import ENV_IDS, counting_make  # noqa: E402


def to_model(env_id: str, action):
    """The typed OpenEnv action for one of the expert's env actions."""
    if env_id == "NetArena-Routing-v0":
        return RoutingAction(**action)
    if env_id == "NetArena-K8sPolicy-v0":
        return K8sPolicyAction(**action)
    if isinstance(action, str):
        return CapacityPlanningAction(code=action)
    rest = {k: v for k, v in action.items() if k != "tool"}
    return CapacityPlanningAction(tool=action["tool"], arguments=rest)


def drained(manager, seconds: float = 10.0) -> bool:
    """True once the manager holds no session. A client's WebSocket close reaches the
    server's handler asynchronously, so the session is released a moment after the client
    returns; give it ``seconds`` (a leak keeps it forever)."""
    end = time.monotonic() + seconds
    while len(manager) and time.monotonic() < end:
        time.sleep(0.02)
    return len(manager) == 0


@pytest.fixture
def serve(serve_with):
    return lambda env_id, **kw: serve_with(lambda m, url: build_app(m), env_id, **kw)


@pytest.mark.parametrize("env_id,options", [(e, {}) for e in ENV_IDS]
                         + [("NetArena-CapacityPlanning-v0", {"interface": "text"})])
def test_expert_solves_through_the_server(serve, local_expert, env_id, options):
    srv, manager = serve(env_id, env_options=options)
    twin = local_expert(env_id, seed=5, **options)
    with NetArenaClient.for_env(env_id)(srv.url).sync() as client:
        r = client.reset(seed=5)
        assert r.observation.text == twin.obs and not r.done
        steps = 0
        while not twin.done:
            action = twin.act()
            r = client.step(to_model(env_id, action))
            assert r.observation.text == twin.follow(action)
            assert r.reward == pytest.approx(sum(twin.info["reward_components"].values()))
            steps += 1
        assert r.done and r.observation.correct and r.observation.metadata["correct"]
        meta = r.observation.metadata
        assert meta["reward_components"] == twin.info["reward_components"]
        assert meta["episode"]["n_steps"] == steps and meta["episode"]["correct"]
        last = twin.actions[-1]
        assert meta["episode"]["steps"][-1]["action"] == (
            last if isinstance(last, dict) else {"code": last})
        assert "scenario" not in meta["episode"] and "scenario" not in r.observation.info
        state = client.state()
        assert state.step_count == steps and state.done
        # stepping an ended episode is an error text, not a crash
        again = client.step(to_model(env_id, twin.actions[-1]))
        assert again.done and "episode is over" in again.observation.text
    assert drained(manager)  # the session's env was closed with the WebSocket


def test_bad_action_gets_a_clear_error_and_the_penalty(serve):
    srv, _ = serve("NetArena-Routing-v0")
    with NetArenaClient.for_env("NetArena-Routing-v0")(srv.url).sync() as client:
        client.reset(seed=1)
        r = client.step(RoutingAction(machine="r99", command="ip addr show"))
        assert "unknown machine 'r99'" in r.observation.text
        assert r.observation.reward_components["invalid"] < 0 and not r.done
        # a payload that does not fit the typed model is refused by the schema
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            client.step({"command": "ip addr show"})
        assert client.step(RoutingAction(machine="r0", command="ip route")).reward is not None


def test_concurrent_sessions_are_isolated(serve):
    srv, manager = serve("NetArena-Routing-v0", max_sessions=4)
    C = NetArenaClient.for_env("NetArena-Routing-v0")
    out, errors = {}, []

    def play(seed):
        try:
            with C(srv.url).sync() as c:
                first = c.reset(seed=seed).observation.text
                for _ in range(3):
                    r = c.step(RoutingAction(machine="r0", command="ip addr show"))
                out[seed] = (first, r.observation.metadata["episode"]["n_steps"])
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=play, args=(s,)) for s in (1, 2, 3, 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors
    assert all(n == 3 for _, n in out.values())
    assert len({first for first, _ in out.values()}) > 1  # different seeds, different nets
    assert drained(manager)


def test_session_limit_refuses_a_session_beyond_max(serve):
    srv, manager = serve("NetArena-K8sPolicy-v0", max_sessions=1)
    C = NetArenaClient.for_env("NetArena-K8sPolicy-v0")
    with C(srv.url).sync() as first:
        first.reset(seed=0)
        # the server answers a connection beyond the limit at once, then closes it
        from websockets.sync.client import connect

        with connect(srv.url.replace("http", "ws") + "/ws", open_timeout=10) as ws:
            err = json.loads(ws.recv(timeout=30))
        assert err["type"] == "error" and err["data"]["code"] == "CAPACITY_REACHED"
        assert err["data"]["max_sessions"] == 1
        assert len(manager) == 1
        assert first.step(K8sPolicyAction(command="kubectl get pods")).reward is not None


def test_schema_endpoint_shows_the_typed_models(serve):
    srv, _ = serve("NetArena-K8sPolicy-v0")
    schema = httpx.get(srv.url + "/schema", timeout=10).json()
    assert set(schema["action"]["properties"]) >= {"command", "stdin"}
    assert "reward_components" in schema["observation"]["properties"]
    assert models("NetArena-K8sPolicy-v0")[0] is K8sPolicyAction


def ws_url(srv) -> str:
    return srv.url.replace("http", "ws") + "/ws"


def ask(ws, kind: str, data: dict) -> dict:
    ws.send(json.dumps({"type": kind, "data": data}))
    return json.loads(ws.recv(timeout=60))


def test_a_reaped_session_stays_closed_on_its_open_websocket(serve):
    """The reaper closed the session while the client kept its WebSocket: the next
    messages answer that the session expired and build no env outside the pool."""
    from websockets.sync.client import connect

    from netarena_gym.serve.sessions import EXPIRED

    made, closed = [], []
    srv, manager = serve("NetArena-Routing-v0", max_sessions=1, idle_timeout=0.5,
                         make=counting_make(made, closed))
    with connect(ws_url(srv), open_timeout=10) as ws:
        assert ask(ws, "reset", {"seed": 1})["type"] == "observation"
        time.sleep(0.7)
        assert len(manager.reap()) == 1 and len(manager) == 0
        step = ask(ws, "step", {"machine": "r0", "command": "ip route"})
        assert step["type"] == "observation" and step["data"]["done"]
        assert step["data"]["observation"]["text"] == EXPIRED
        again = ask(ws, "reset", {"seed": 2})
        assert again["type"] == "error" and again["data"]["message"] == EXPIRED
        assert len(made) == 1 and len(closed) == 1 and len(manager) == 0
    manager.close_all()
    assert len(made) == len(closed)  # nothing was built that nothing closes


def test_an_idle_timeout_frees_the_openenv_slot_for_a_new_client(serve):
    """openenv-core counts its own sessions: with its session_timeout left unset, a reaped
    session's slot was held for good and every new client got CAPACITY_REACHED."""
    from websockets.sync.client import connect

    srv, manager = serve("NetArena-Routing-v0", max_sessions=1, idle_timeout=1.0)
    manager.start_reaper(interval=0.25)
    with connect(ws_url(srv), open_timeout=10) as idle:
        assert ask(idle, "reset", {"seed": 1})["type"] == "observation"
        deadline = time.monotonic() + 20  # openenv-core's reaper looks every 5 s at most
        while True:
            with connect(ws_url(srv), open_timeout=10) as ws:
                try:  # a refused connection is answered at once, then closed
                    refused = json.loads(ws.recv(timeout=2))
                except TimeoutError:
                    assert ask(ws, "reset", {"seed": 2})["type"] == "observation"
                    assert len(manager) == 1
                    break
                assert refused["data"]["code"] == "CAPACITY_REACHED"
            assert time.monotonic() < deadline, "the reaped session's slot was never freed"
            time.sleep(0.5)
        step = ask(idle, "step", {"machine": "r0", "command": "ip route"})
        assert "session expired" in step["data"]["observation"]["text"]


def test_http_refusals_are_client_errors_with_the_message(serve):
    srv, manager = serve("NetArena-Routing-v0", max_sessions=1)
    bad = httpx.post(srv.url + "/reset", json={"level": "bogus"}, timeout=60)
    assert bad.status_code == 422 and "level must be one of" in bad.json()["detail"]
    assert httpx.post(srv.url + "/reset", json={"level": 99}, timeout=60).status_code == 422
    assert httpx.post(srv.url + "/reset", json={"seed": 1}, timeout=60).status_code == 200
    assert len(manager) == 0  # the stateless reset's session was closed
    from websockets.sync.client import connect

    with connect(ws_url(srv), open_timeout=10) as ws:
        assert ask(ws, "reset", {"seed": 1})["type"] == "observation"
        full = httpx.post(srv.url + "/reset", json={"seed": 1}, timeout=60)
        assert full.status_code == 503 and "limit of 1 sessions" in full.json()["detail"]
        state = httpx.get(srv.url + "/state", timeout=60)
        assert state.status_code == 200 and state.json()["step_count"] == 0


def test_stateless_requests_build_no_env_and_take_no_slot(serve):
    """openenv-core builds one env object per stateless request, on its event loop: it
    must not start a backend (a Mininet net on a real one) nor hold a session."""
    made, closed = [], []
    srv, manager = serve("NetArena-Routing-v0", max_sessions=1, make=counting_make(made, closed))
    state = httpx.get(srv.url + "/state", timeout=60)  # openenv-core's State fields only
    assert state.status_code == 200 and state.json()["step_count"] == 0
    assert httpx.get(srv.url + "/metadata", timeout=60).json()["name"] == "NetArena-Routing-v0"
    step = httpx.post(srv.url + "/step", json={"action": {"machine": "r0", "command": "ip a"}},
                      timeout=60).json()
    assert "no episode is running" in step["observation"]["text"]
    assert step["observation"]["episode"]["n_steps"] == 0
    assert made == [] and len(manager) == 0

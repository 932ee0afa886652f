"""Session envs on Ray actors: the same episode as in-process, and close ends the actor.
Joins ``NETARENA_RAY_ADDRESS`` when set (the CI cluster, ``.ci/ray-cluster.sh start``), else
starts a local Ray. On the cluster, a Mininet session goes only to the node that offers
``netarena_root``, plays there, and closing it removes its Mininet links and its actor."""
from __future__ import annotations

import os
import subprocess

import gymnasium as gym
import pytest

ray = pytest.importorskip("ray")

from netarena_gym.eval.executors import ROOT_RESOURCE  # noqa: E402
from netarena_gym.serve.ray_pool import ray_env_factory  # noqa: E402
from netarena_gym.serve.sessions import SessionManager  # noqa: E402

ADDRESS = os.environ.get("NETARENA_RAY_ADDRESS")


@pytest.fixture(scope="module")
def make():
    if not ADDRESS:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray_env_factory(ADDRESS)
    ray.shutdown()


def test_session_on_an_actor_matches_in_process(make):
    m = SessionManager("NetArena-Routing-v0", make=make, max_sessions=2)
    local = gym.make("NetArena-Routing-v0", level=1, render_mode="ansi")
    try:
        s = m.open()
        assert s.env.node_id in {n["NodeID"] for n in ray.nodes()}
        assert s.env.instance is None  # the simulator has no real instance
        text, info = s.reset(seed=9)
        assert text == local.reset(seed=9)[0]
        action = {"machine": "r0", "command": "ip route"}
        assert s.step(action)[0] == local.step(action)[0]
        assert s.status() == local.render()
        actor = s.env
        m.close(s.id)
        with pytest.raises(Exception):
            actor.step(action)  # the actor is gone
    finally:
        local.close()
        m.close_all()


def _links() -> str:
    return subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True,
                          timeout=30).stdout


@pytest.mark.mininet
@pytest.mark.ray_cluster
@pytest.mark.skipif(not ADDRESS, reason="no Ray cluster: .ci/ray-cluster.sh start")
def test_mininet_sessions_go_only_to_the_root_node_and_clean_up(make):
    from netarena_gym.routing.backends.mininet import requirements_missing

    if requirements_missing():
        pytest.skip(f"mininet backend needs {requirements_missing()}")
    nodes = {n["NodeID"]: n["Resources"] for n in ray.nodes() if n["Alive"]}
    root = {nid for nid, res in nodes.items() if res.get(ROOT_RESOURCE)}
    assert len(nodes) >= 2 and len(root) == 1, "the cluster needs a root and a plain node"
    m = SessionManager("NetArena-Routing-v0", env_options={"backend": "mininet"},
                       make=make, max_sessions=1)
    runs = []
    try:
        for seed in (1, 2):  # the second fits only if the first gave its root slot back
            s = m.open()
            assert s.env.node_id in root
            runs.append(s.env.instance)
            text, _ = s.reset(seed=seed)  # the network starts here
            assert text.startswith("Pingall result")
            assert runs[-1] and runs[-1] in _links()
            out, _, _, info = s.step({"machine": "r0", "command": "ip route"})
            assert info["command_kind"] == "ok" and "Steps left" in out
            m.close(s.id)
            assert runs[-1] not in _links()
    finally:
        m.close_all()
    assert len(set(runs)) == 2

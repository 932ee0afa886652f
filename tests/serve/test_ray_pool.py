"""Session envs on Ray actors: the same episode as in-process, and close ends the actor.
Joins ``NETARENA_RAY_ADDRESS`` when set (the CI cluster), else starts a local Ray."""
from __future__ import annotations

import os

import gymnasium as gym
import pytest

ray = pytest.importorskip("ray")

from netarena_gym.serve.ray_pool import ray_env_factory  # noqa: E402
from netarena_gym.serve.sessions import SessionManager  # noqa: E402


@pytest.fixture(scope="module")
def make():
    address = os.environ.get("NETARENA_RAY_ADDRESS")
    if not address:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray_env_factory(address)
    ray.shutdown()


def test_session_on_an_actor_matches_in_process(make):
    m = SessionManager("NetArena-Routing-v0", make=make, max_sessions=2)
    local = gym.make("NetArena-Routing-v0", level=1, render_mode="ansi")
    try:
        s = m.open()
        assert s.env.node_id in {n["NodeID"] for n in ray.nodes()}
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

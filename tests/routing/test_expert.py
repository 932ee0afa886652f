"""The expert must reach 100% correctness and 100% safety at every level."""
import gymnasium as gym
import pytest

import netarena_gym  # noqa: F401
from netarena_gym.agents import play_episode, summarize
from netarena_gym.routing.expert import RoutingExpert

EPISODES = {1: 300, 2: 300, 3: 200, "compat": 200}


@pytest.mark.parametrize("level", [1, 2, 3, "compat"])
def test_expert_is_perfect(level):
    env = gym.make("NetArena-Routing-v0", level=level)
    expert = RoutingExpert()
    results = [play_episode(env, expert, seed=1000 + i) for i in range(EPISODES[level])]
    failures = [r.scenario for r in results if not (r.correct and r.safe)]
    s = summarize(results)
    assert not failures, failures[:3]
    assert s["correctness"] == 1.0 and s["safety"] == 1.0


def test_expert_uses_only_observations():
    """It never touches env internals: fed the same observations it makes the same moves."""
    env = gym.make("NetArena-Routing-v0", level=2)
    obs, info = env.reset(seed=3)
    a, b = RoutingExpert(), RoutingExpert()
    for _ in range(5):
        x, y = a.act(obs, {}), b.act(obs, {})
        assert x == y
        obs, _, term, trunc, _ = env.step(x)
        if term or trunc:
            break

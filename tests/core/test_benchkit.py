"""netarena_gym.core.benchkit: an agent's time per decision is a figure only when its
episodes ran."""
import gymnasium as gym
import pytest

import netarena_gym  # noqa: F401
from netarena_gym.agents.experts import make_expert
from netarena_gym.core import benchkit
from netarena_gym.errors import NetArenaError


class _Broken:
    def reset(self):
        pass

    def act(self, observation, info):
        raise RuntimeError("no sandbox here")


def test_decision_ms_times_the_expert_over_its_decisions():
    env = gym.make("NetArena-Routing-v0", level=1)
    assert benchkit.decision_ms(env, make_expert(env), 3) > 0


def test_decision_ms_raises_when_an_episode_fails():
    env = gym.make("NetArena-Routing-v0", level=1)
    with pytest.raises(NetArenaError, match="seed=0 .*RuntimeError: no sandbox here"):
        benchkit.decision_ms(env, _Broken(), 3)

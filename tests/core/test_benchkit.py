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


class _Seeds:
    """Records the seeds it is reset with."""

    def __init__(self):
        self.seeds = []

    def reset(self, seed=None):
        self.seeds.append(seed)


def test_reset_ms_warms_up_on_seeds_it_then_does_not_time():
    env = _Seeds()
    assert benchkit.reset_ms(env, 5, warmup=3) >= 0
    warm, timed = env.seeds[:3], env.seeds[3:]
    assert len(timed) == 5 and len(set(env.seeds)) == 8
    assert timed == list(range(benchkit.FRESH_SEEDS, benchkit.FRESH_SEEDS + 5))
    assert max(warm) < min(timed)


def test_first_reset_ms_runs_in_a_fresh_process_and_costs_more_than_a_warm_reset():
    """The first MALT reset builds the topology's base graph that later resets share."""
    kw = {"level": 1, "interface": "text"}
    first = benchkit.first_reset_ms("NetArena-CapacityPlanning-v0", kw)
    warm = benchkit.reset_ms(gym.make("NetArena-CapacityPlanning-v0", **kw), 20, warmup=30)
    assert first > 3 * warm


def test_first_reset_ms_names_the_error_of_a_failing_env():
    failed = r"first reset of NetArena-Routing-v0 .* failed: netarena_gym\.errors\.InvalidConfig"
    with pytest.raises(NetArenaError, match=failed + ": level"):
        benchkit.first_reset_ms("NetArena-Routing-v0", {"level": 99})

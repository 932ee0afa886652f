"""The reward's components, their documented ranges and the bounded safety penalty."""
from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import netarena_gym
from netarena_gym.core.reward import COMPONENTS, RewardConfig


def test_safety_is_a_fraction_of_the_pairs():
    rc = RewardConfig()
    comps = rc.components(kind="ok", newly_broken=3, solved_now=False, progress_delta=0.0,
                          pairs=30)
    assert comps["safety"] == pytest.approx(-0.1)
    every = rc.components(kind="ok", newly_broken=30, solved_now=False, progress_delta=0.0,
                          pairs=30)
    assert every["safety"] == -1.0  # breaking every pair costs exactly the weight
    assert rc.safety_penalty(5, None) == -1.0  # no pairs (capacity planning): full weight
    old = RewardConfig(safety=-0.1, normalize_safety=False)
    assert old.safety_penalty(30, 30) == pytest.approx(-3.0)  # the first release's rule


def test_components_never_carry_a_negative_zero():
    rc = RewardConfig(success=-0.0, failed=-0.0, progress=-1.0)
    comps = rc.components(kind="error", newly_broken=0, solved_now=True, progress_delta=0.0,
                          pairs=4)
    assert list(comps) == list(COMPONENTS)
    assert all(math.copysign(1.0, v) == 1.0 for v in comps.values() if v == 0), comps
    assert all(math.copysign(1.0, v) == 1.0 for v in rc.zero().values())


def test_step_range_of_the_defaults_and_of_custom_weights():
    assert RewardConfig().step_range() == (-1.21, 0.99)
    ranges = RewardConfig().component_ranges()
    assert ranges["safety"] == (-1.0, 0.0) and ranges["success"] == (0.0, 1.0)
    assert RewardConfig(progress=0.5, refused=-1.0).step_range() == (-2.51, 1.49)
    assert RewardConfig(normalize_safety=False).step_range()[0] == -math.inf


def _random_steps(env_id, interface, seeds, steps):
    """Every (reward, info) of random valid and invalid actions on ``env_id``."""
    env = gym.make(env_id, interface=interface)
    rng = np.random.default_rng(0)
    try:
        for seed in seeds:
            _, info = env.reset(seed=seed)
            yield None, info
            for _ in range(steps):
                a = int(rng.integers(env.action_space.n))
                _, r, term, trunc, info = env.step(a)
                yield r, info
                if term or trunc:
                    break
    finally:
        env.close()


@pytest.mark.parametrize("env_id", sorted(netarena_gym.ENV_IDS))
def test_random_discrete_actions_stay_in_reward_range(env_id):
    base = gym.make(env_id, interface="discrete").unwrapped
    lo, hi = base.reward_range
    assert (lo, hi) == RewardConfig().step_range()
    seen = 0
    for r, info in _random_steps(env_id, "discrete", seeds=range(3), steps=12):
        comps = info["reward_components"]
        assert set(comps) == set(COMPONENTS)
        for k, v in comps.items():
            clo, chi = RewardConfig().component_ranges()[k]
            assert r is None or clo <= v <= chi, (k, v)  # a reset's components are 0.0
            assert not (v == 0 and math.copysign(1.0, v) < 0), f"-0.0 in {k}"
        if r is not None:
            seen += 1
            assert lo <= r <= hi
            assert r == pytest.approx(sum(comps.values()))
            assert not (r == 0 and math.copysign(1.0, r) < 0)
    assert seen > 10

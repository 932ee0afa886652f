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


def _reference(rc: RewardConfig, kind: str, newly: int, solved: bool, delta: float,
               pairs: int | None) -> dict:
    """The components from their definitions (module docstring), one by one."""
    def nz(x):
        return 0.0 if x == 0 else float(x)
    safety = 0.0
    if newly:
        safety = nz(rc.safety * (newly if not rc.normalize_safety
                                 else min(1.0, newly / max(1, int(pairs or 1)))))
    return {"success": nz(rc.success) if solved else 0.0, "safety": safety,
            "step": nz(rc.step), "invalid": nz(rc.invalid) if kind == "invalid" else 0.0,
            "refused": nz(rc.refused) if kind == "refused" else 0.0,
            "timeout": nz(rc.timeout) if kind == "timeout" else 0.0,
            "failed": nz(rc.failed) if kind == "error" else 0.0,
            "progress": nz(rc.progress * delta)}


@pytest.mark.parametrize("rc", [RewardConfig(), RewardConfig(progress=0.5, failed=-0.1),
                                RewardConfig(safety=-0.2, normalize_safety=False, step=-0.0),
                                RewardConfig(progress=-0.0, success=2.0)])
def test_components_match_their_definitions_and_are_fresh(rc):
    for kind in ("ok", "error", "invalid", "refused", "timeout", "none"):
        for newly, pairs in ((0, None), (3, 30), (40, 30), (2, None)):
            for solved in (False, True):
                for delta in (0.0, -0.25, 0.5):
                    got = rc.components(kind=kind, newly_broken=newly, solved_now=solved,
                                        progress_delta=delta, pairs=pairs)
                    want = _reference(rc, kind, newly, solved, delta, pairs)
                    assert list(got) == list(COMPONENTS) and got == want
                    assert [math.copysign(1, v) for v in got.values()] == \
                        [math.copysign(1, v) for v in want.values()]
                    got["step"] = 99.0  # each call hands out a dict of its own
    assert rc.components(kind="ok", newly_broken=0, solved_now=False,
                         progress_delta=0.0)["step"] == _reference(rc, "ok", 0, False, 0, 0)["step"]

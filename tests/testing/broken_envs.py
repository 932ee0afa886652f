"""Deliberately broken variants of the toy task, one per property of the kit: each passes
Gymnasium's checker and looks fine at a glance, and the kit must name what is wrong with it
(``tests/testing/test_checks.py``). The first five are the review's
(``ToyLightsEnv(level=2)`` subclasses every check passed before the kit checked them)."""
from __future__ import annotations

import random

import numpy as np
from gymnasium.envs.registration import register, registry
from gymnasium.vector import SyncVectorEnv

from netarena_gym.core.actions import ActionError
from tests.testing.toy_task import ENV_ID, ToyLightsEnv, register_toy


class RewardNotSum(ToyLightsEnv):
    """The reward disagrees with ``info["reward_components"]`` (and leaves reward_range)."""

    def step(self, action):
        obs, reward, term, trunc, info = super().step(action)
        return obs, reward + 5.0, term, trunc, info


class RewardOutOfRange(ToyLightsEnv):
    """The reward is the sum of its components, but a component is past its weight, so the
    reward leaves ``reward_range``."""

    def step(self, action):
        obs, reward, term, trunc, info = super().step(action)
        info["reward_components"]["success"] += 5.0
        return obs, reward + 5.0, term, trunc, info


class GlobalRandom(ToyLightsEnv):
    """Seeds numpy's global RNG in reset and draws its scenarios from it."""

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            np.random.seed(seed)
        return super().reset(seed=seed, options=options)

    def _generate(self, rng, options):
        return super()._generate(np.random.default_rng(np.random.randint(1 << 30)), options)


class PyGlobalRandom(ToyLightsEnv):
    """Draws from the ``random`` module's global generator at every step."""

    def _execute(self, action):
        random.random()
        return super()._execute(action)


class UnseededResetRepeats(ToyLightsEnv):
    """``reset()`` without a seed replays the last seeded episode (autoreset repeats it)."""

    def reset(self, *, seed=None, options=None):
        if seed is None and self._seed is not None:
            seed = self._seed
        return super().reset(seed=seed, options=options)


class UnseededResetFromEntropy(ToyLightsEnv):
    """``reset()`` without a seed draws from OS entropy: two instances seeded alike part."""

    def reset(self, *, seed=None, options=None):
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % (1 << 31))
        return super().reset(seed=seed, options=options)


class ReplayLosesHiddenState(ToyLightsEnv):
    """A "fragile" lamp drawn from the rng but missing from the scenario record: a replay
    matches at reset and diverges once that lamp is switched on."""

    def _generate(self, rng, options):
        self.fragile = int(rng.integers(0, self.n))
        return super()._generate(rng, options)

    def reset(self, *, seed=None, options=None):
        if options and "scenario" in options:
            self.fragile = (getattr(self, "fragile", 0) + 1) % self.n
        return super().reset(seed=seed, options=options)

    def _execute(self, action):
        result = super()._execute(action)
        if action["command"] == f"on {self.fragile}":
            self.backend.lamps[:] = False
        return result


class ReplayedInfoDiffers(ToyLightsEnv):
    """A replayed episode reports another backend in ``info`` (same observation and mask)."""

    def reset(self, *, seed=None, options=None):
        self.replayed = bool(options and "scenario" in options)
        return super().reset(seed=seed, options=options)

    def _info(self, result, comps, newly):
        info = super()._info(result, comps, newly)
        if self.replayed:
            info["backend"] = "sim-replayed"
        return info


class SilentlyIgnoresBadActions(ToyLightsEnv):
    """A bad action becomes ``status``: no error and no penalty."""

    def _decode(self, action):
        try:
            return super()._decode(action)
        except ActionError:
            return {"command": "status"}


class UnpenalisedInvalid(ToyLightsEnv):
    """Bad actions are reported invalid, but the ``invalid`` component is dropped to 0."""

    def step(self, action):
        obs, reward, term, trunc, info = super().step(action)
        comps = info["reward_components"]
        if info["command_kind"] == "invalid":
            comps["invalid"] = 0.0
            reward = round(sum(comps.values()), 12)
        return obs, reward, term, trunc, info


class SeedOffByOne(ToyLightsEnv):
    """Seeds one off: the broken vector entry point below is built from it."""

    def reset(self, *, seed=None, options=None):
        return super().reset(seed=None if seed is None else seed + 1, options=options)


BROKEN_VEC_ID = "NetArena-ToyLightsBrokenVec-v0"


def broken_vector_entry_point(num_envs: int = 1, **kwargs):
    """A vector entry point whose envs ignore the seed they are given (one off): it runs,
    autoresets and stays in the space, but does not return what ``"sync"`` returns."""
    return SyncVectorEnv([lambda: SeedOffByOne(**kwargs) for _ in range(num_envs)])


def register_broken_vec() -> None:
    register_toy()
    if BROKEN_VEC_ID not in registry:
        register(id=BROKEN_VEC_ID, entry_point=f"{ToyLightsEnv.__module__}:ToyLightsEnv",
                 vector_entry_point=broken_vector_entry_point)


__all__ = ["ENV_ID", "BROKEN_VEC_ID", "register_broken_vec"]

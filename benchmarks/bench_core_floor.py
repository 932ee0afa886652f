"""The core's per-step floor: what ``NetArenaEnv.step`` costs when the task does nothing.

    python benchmarks/bench_core_floor.py [--seconds 2] [--profile]

A benchmark-only stub task (:class:`FloorEnv`) whose hooks return prepared objects (no
simulation, no grading, no rendering) runs under ``gym.make``'s wrappers (OrderEnforcing,
PassiveEnvChecker) with the discrete interface, random masked actions and a step timeout
armed as the routing simulator arms it. What is left is the core: action decoding and
the mask check, the step deadline, scoring and metrics, reward components, ``info``
and observation assembly. Prints one JSON line: CPU microseconds per step and that cost
in CartPole-v1 steps (measured in the same process, CPU time), for ``info="full"`` and
``info="lean"``, steps only and with resets (episodes of ``max_steps`` steps).
``--profile`` prints a cProfile of the full-info stub's steps instead.
"""
from __future__ import annotations

import argparse
import json
import time
import types

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import register, registry

from netarena_gym.core.actions import CatalogueEntry
from netarena_gym.core.env import NetArenaEnv
from netarena_gym.core.scenario import Scenario
from netarena_gym.shell.parser import OK, CommandResult

ENV_ID = "NetArena-CoreFloor-v0"
SIZE, PAIRS = 64, 11 * 10  # about routing L1: 64 catalogue entries, 110 host pairs
clock = time.process_time


class FloorEnv(NetArenaEnv):
    """A task that does nothing: every hook answers a prepared object (benchmark only)."""

    task = "core_floor"
    default_max_steps = {1: 15, 2: 15, 3: 15, "compat": 15}

    def __init__(self, **kw):
        self._result = CommandResult("ok\n", 0, OK)
        self._vector = np.ones(PAIRS, dtype=bool)
        self._vector[:7] = False  # never solved: episodes run to max_steps
        self._feat = np.zeros(16, dtype=np.int8)
        self._entries = [CatalogueEntry(f"a{i}", {"command": f"a{i}"}) for i in range(SIZE)]
        self._mask = np.ones(SIZE, dtype=np.int8)
        self.backend = types.SimpleNamespace(name="sim")  # what info["backend"] reads
        super().__init__(**{"interface": "discrete", "step_timeout": 5.0, **kw})

    def _catalogue_size(self) -> int:
        return SIZE

    def _feature_spaces(self):
        return {"x": spaces.MultiBinary(16)}

    def _generate(self, rng, options) -> Scenario:
        return Scenario(task=self.task, level=self.level, params={"n": SIZE},
                        faults=({"k": 1},), seed=int(rng.integers(1 << 30)), meta={})

    def _apply(self, scenario) -> None:
        pass

    def _execute(self, action) -> CommandResult:
        return self._result

    def _connectivity(self) -> np.ndarray:
        return self._vector

    def _fill_catalogue(self) -> None:
        self.catalogue.set_block(0, self._entries, self._mask)

    def _features(self) -> dict:
        return {"x": self._feat.copy()}  # fresh arrays per step, as every task's

    def _state_text(self) -> str:
        return "state"


def make(**kw) -> gym.Env:
    if ENV_ID not in registry:
        register(id=ENV_ID, entry_point=f"{__name__}:FloorEnv")
    return gym.make(ENV_ID, **kw)


def run(env, seconds: float, rng: np.random.Generator) -> tuple[float, float]:
    """(CPU microseconds per step including resets, per step alone), random masked actions."""
    obs, info = env.reset(seed=0)
    steps = episodes = 0
    in_step = 0.0
    t_start = clock()
    while clock() - t_start < seconds:
        for _ in range(100):
            valid = np.flatnonzero(info["action_mask"])
            a = int(valid[rng.integers(len(valid))])
            t0 = clock()
            obs, r, term, trunc, info = env.step(a)
            in_step += clock() - t0
            steps += 1
            if term or trunc:
                episodes += 1
                obs, info = env.reset(seed=episodes)
    return 1e6 * (clock() - t_start) / steps, 1e6 * in_step / steps


def cartpole_us(seconds: float) -> float:
    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    env.action_space.seed(0)
    steps, t0 = 0, clock()
    while clock() - t0 < seconds:
        for _ in range(100):
            _, _, term, trunc, _ = env.step(env.action_space.sample())
            steps += 1
            if term or trunc:
                env.reset()
    return 1e6 * (clock() - t0) / steps


def measure(seconds: float) -> dict:
    rng = np.random.default_rng(0)
    cart = cartpole_us(seconds)
    out = {}
    for mode in ("full", "lean"):
        with_resets, step = run(make(info=mode), seconds, rng)
        out[mode] = {"us_per_step": round(step, 2), "cartpole_steps": round(step / cart, 3),
                     "us_with_resets": round(with_resets, 2),
                     "cartpole_steps_with_resets": round(with_resets / cart, 3)}
    cart = (cart + cartpole_us(seconds)) / 2
    for mode in ("full", "lean"):
        r = out[mode]
        r["cartpole_steps"] = round(r["us_per_step"] / cart, 3)
        r["cartpole_steps_with_resets"] = round(r["us_with_resets"] / cart, 3)
    return {"cartpole_us_per_step": round(cart, 2), **out}


def profile(seconds: float) -> None:
    import cProfile
    import pstats
    env = make()
    rng = np.random.default_rng(0)
    prof = cProfile.Profile()
    prof.enable()
    run(env, seconds, rng)
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(25)


def main(argv=None) -> dict | None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args(argv)
    if a.profile:
        profile(a.seconds)
        return None
    res = measure(a.seconds)
    print(json.dumps(res))
    return res


if __name__ == "__main__":
    main()

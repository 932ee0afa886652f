"""The core's per-step floor: what ``NetArenaEnv.step`` costs when the task does nothing.

    python benchmarks/bench_core_floor.py [--seconds 2] [--profile]

A benchmark-only stub task (:class:`FloorEnv`) whose hooks return prepared objects (no
simulation, no grading, no rendering) runs under ``gym.make``'s wrappers (OrderEnforcing,
PassiveEnvChecker) with the discrete interface and a step timeout armed as the routing
simulator arms it, in ``bench_speed.throughput``'s loop (random masked actions, CPU time),
the loop that measures the tasks. What is left is the core: action decoding and the mask
check, the step deadline, scoring and metrics, reward components, ``info`` and
observation assembly. Prints one JSON line: the stub's cost in CartPole-v1 steps (measured
in the same process) and in CPU microseconds, for ``info="full"`` and ``info="lean"``,
of ``step`` alone and with the resets between episodes (of ``max_steps`` steps).
``--profile`` prints a cProfile of the full-info stub's steps instead.
"""
from __future__ import annotations

import argparse
import json
import sys
import types
from pathlib import Path

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import register, registry

from netarena_gym.core.actions import CatalogueEntry
from netarena_gym.core.env import NetArenaEnv
from netarena_gym.core.scenario import Scenario
from netarena_gym.shell.parser import OK, CommandResult

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_speed import paired_throughput, throughput  # noqa: E402  (the tasks' figures' loop)

ENV_ID = "NetArena-CoreFloor-v0"
SIZE, PAIRS = 64, 11 * 10  # about routing L1: 64 catalogue entries, 110 host pairs


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


def measure(seconds: float) -> dict:
    """CartPole-v1 steps per step of the stub, ``step`` alone and with resets, per ``info``
    mode (each mode's stub and a CartPole-v1 run taking turns, as ``bench_speed`` does)."""
    rates = {mode: paired_throughput(make(info=mode), gym.make("CartPole-v1"), seconds)
             for mode in ("full", "lean")}
    out: dict = {"cartpole_steps_per_s": round(sum(r[2] for r in rates.values()) / len(rates))}
    for mode, (with_resets, step, cart) in rates.items():
        out[mode] = {"cartpole_steps": round(cart / step, 3),
                     "cartpole_steps_with_resets": round(cart / with_resets, 3),
                     "us_per_step": round(1e6 / step, 2),
                     "us_with_resets": round(1e6 / with_resets, 2)}
    return out


def profile(seconds: float) -> None:
    import cProfile
    import pstats
    env = make()
    prof = cProfile.Profile()
    prof.enable()
    throughput(env, seconds)
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

"""A toy fourth task built only from the core protocols: proof that the template holds.

``NetArena-ToyLights-v0``: a row of lamps, some switched off by the scenario's faults. The
agent types ``status``, ``on K`` or ``off K``; the grader's outcome vector is the lamps'
states, so the episode is correct when every lamp is on, and turning off a lamp that was on
is a safety violation. It uses nothing task-specific: the core env base class, the
``Backend`` protocol, scenario records, the catalogue and the shell's ``CommandResult``.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import register, registry

from netarena_gym.agents.experts import register_expert
from netarena_gym.core.actions import CatalogueEntry
from netarena_gym.core.env import NetArenaEnv
from netarena_gym.core.observation import last_output
from netarena_gym.core.protocols import Backend
from netarena_gym.core.scenario import Scenario
from netarena_gym.core.seeding import draw_seed, rng_from_seed
from netarena_gym.shell.parser import ERROR, INVALID, OK, CommandResult

TASK = "toy_lights"
ENV_ID = "NetArena-ToyLights-v0"
LAMPS = {1: 4, 2: 6, 3: 8, "compat": 4}


class LightsBackend:
    """The simulated row of lamps (the only backend of the toy task)."""

    name = "sim"
    capabilities = frozenset()

    def __init__(self) -> None:
        self.baseline = np.ones(0, dtype=bool)
        self.lamps = self.baseline.copy()

    def apply(self, scenario: Scenario, prebuilt=None) -> None:
        n = int(scenario.params["lamps"])
        self.lamps = np.ones(n, dtype=bool)
        for fault in scenario.faults:
            self.lamps[int(fault["lamp"])] = False
        self.baseline = self.lamps.copy()

    def run(self, action: Mapping[str, str]) -> CommandResult:
        argv = action["command"].split()
        if argv == ["status"]:
            return CommandResult("".join("1" if x else "0" for x in self.lamps) + "\n", 0, OK)
        if len(argv) != 2 or argv[0] not in ("on", "off") or not argv[1].isdigit():
            return CommandResult("usage: status | on K | off K\n", 2, INVALID)
        k = int(argv[1])
        if k >= len(self.lamps):
            return CommandResult(f"lamp {k}: no such lamp\n", 1, ERROR)
        self.lamps[k] = argv[0] == "on"
        return CommandResult("", 0, OK)

    def observe(self) -> np.ndarray:
        return self.lamps.copy()

    def reset_to_baseline(self) -> None:
        self.lamps = self.baseline.copy()

    def close(self) -> None:
        pass


class ToyLightsEnv(NetArenaEnv):
    """Switch every lamp back on (a toy task for the test kit; see the module docstring)."""

    task = TASK
    text_keys = ("command",)
    default_max_steps = {1: 8, 2: 10, 3: 12, "compat": 8}

    def __init__(self, **kwargs):
        level = kwargs.get("level", 1)
        self.n = LAMPS.get(level, 4)
        self.backend: Backend = LightsBackend()
        self.nmax = max(LAMPS.values())
        super().__init__(**kwargs)

    def _catalogue_size(self) -> int:
        return 1 + 2 * self.nmax

    def _feature_spaces(self):
        return {"lamps": spaces.MultiBinary(self.nmax)}

    def _generate(self, rng: np.random.Generator, options: dict) -> Scenario:
        seed = draw_seed(rng)
        r = rng_from_seed(seed)
        k = int(r.integers(1, self.n))
        off = sorted(int(i) for i in r.permutation(self.n)[:k])
        return Scenario(task=TASK, level=self.level, params={"lamps": self.n},
                        faults=tuple({"lamp": i} for i in off), seed=seed,
                        meta={"category": f"{k}-off"})

    def _apply(self, scenario: Scenario) -> None:
        self.backend.apply(scenario)

    def _execute(self, action: dict[str, str]) -> CommandResult:
        return self.backend.run(action)

    def _connectivity(self) -> np.ndarray:
        return self.backend.observe()

    def _fill_catalogue(self) -> None:
        self.catalogue.clear()
        self.catalogue.set(0, CatalogueEntry("status", {"command": "status"}))
        for k in range(self.n):
            self.catalogue.set(1 + 2 * k, CatalogueEntry(f"on {k}", {"command": f"on {k}"}))
            self.catalogue.set(2 + 2 * k, CatalogueEntry(f"off {k}", {"command": f"off {k}"}))

    def _features(self) -> dict[str, np.ndarray]:
        out = np.zeros(self.nmax, dtype=np.int8)
        out[:self.n] = self._matrix
        return {"lamps": out}

    def _state_text(self) -> str:
        return f"{self.n} lamps; {int(self._matrix.sum())} on."

    def _config_text(self) -> str:
        return self.backend.run({"command": "status"}).output.rstrip("\n")


class ToyLightsExpert:
    """Reads ``status`` once, then switches on, one step each, every lamp that was off."""

    def reset(self) -> None:
        self.todo: list[int] | None = None

    def act(self, observation: str, info: dict):
        if self.todo is None:
            self.todo = []
            return {"command": "status"}
        if not self.todo and last_output(observation).strip().isdigit():
            self.todo = [i for i, c in enumerate(last_output(observation).strip()) if c == "0"]
        return {"command": f"on {self.todo.pop(0)}"} if self.todo else {"command": "status"}


def register_toy() -> None:
    """Register the toy like the package's envs, with the batched vector entry point (so
    ``gym.make_vec(ENV_ID)``, the kit's ``"default"`` vector mode, is the package's
    ``NetArenaBatchedVectorEnv``)."""
    from netarena_gym.vector import vector_entry_point

    if ENV_ID not in registry:
        register(id=ENV_ID, entry_point=f"{__name__}:ToyLightsEnv",
                 vector_entry_point=vector_entry_point(ENV_ID))
    register_expert(TASK, ToyLightsExpert)

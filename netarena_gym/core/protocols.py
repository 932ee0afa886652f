"""The plug points of netarena_gym, as :class:`typing.Protocol` classes.

* :class:`Agent` is anything that plays an env: ``reset()`` at the start of an episode and
  ``act(observation, info) -> action`` at every step. The core episode loop, eval, the
  servers and the benchmarks all take one.
* :class:`Backend` is the system a task's episode runs on (a simulator or a real one): it
  builds a scenario, runs one atomic action and reports the outcome vector the grader
  scores.
"""
from __future__ import annotations

from typing import Any, Mapping, Protocol, runtime_checkable

import numpy as np

from netarena_gym.core.scenario import Scenario
from netarena_gym.shell.parser import CommandResult


@runtime_checkable
class Agent(Protocol):
    """Plays an env through its public interface only (observation and ``info``)."""

    def reset(self) -> None: ...

    def act(self, observation: Any, info: dict) -> Any: ...


@runtime_checkable
class Backend(Protocol):
    """The system behind a task: the simulator or a real one."""

    name: str
    capabilities: frozenset[str]

    def apply(self, scenario: Scenario, prebuilt: Any = None) -> None:
        """Build (or restore) the scenario's system: healthy baseline plus its faults.

        ``prebuilt`` is the state the task's generator already built for this scenario (a
        hint a simulator may adopt instead of rebuilding; real backends ignore it)."""

    def run(self, action: Mapping[str, str]) -> CommandResult:
        """Run one atomic action (the task's ``text_keys``); a tool's failure is output."""

    def observe(self) -> np.ndarray:
        """The outcome vector the grader scores (one bool per pair, probe or check)."""

    def reset_to_baseline(self) -> None:
        """Undo everything since :meth:`apply` without rebuilding, where the system can."""

    def close(self) -> None:
        """Release what this backend created (only that, by recorded name)."""

"""The plug points of netarena_gym, as :class:`typing.Protocol` classes.

* :class:`Agent` is anything that plays an env: ``reset()`` at the start of an episode and
  ``act(observation, info) -> action`` at every step. The core episode loop, eval, the
  servers and the benchmarks all take one.
* :class:`Backend` is the system a task's episode runs on (a simulator or a real one): it
  builds a scenario, runs one atomic action and reports the outcome vector the grader
  scores.
* :class:`Task` is what :class:`netarena_gym.core.env.NetArenaEnv` needs from a task's env
  subclass: its identity and configuration, its generator, backend, grader (the outcome
  vector or a verdict), rendering, features, catalogue and expert.
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


@runtime_checkable
class Task(Protocol):
    """What the base class :class:`~netarena_gym.core.env.NetArenaEnv` needs from a task.

    Identity and configuration (class attributes): ``task`` (the scenario records' task
    name), ``levels``, ``interfaces`` (``"text"``/``"discrete"``, plus e.g. ``"code"``),
    ``text_keys`` (the keys of a JSON text action), ``config_class`` (an
    :class:`~netarena_gym.core.config.EnvConfig` subclass), ``expert_class`` (the
    reference agent). Parts (instance attributes): ``generator`` (draws scenarios),
    ``backend`` (a :class:`Backend`), ``catalogue`` (the discrete actions and mask).

    Hooks the base class calls, in episode order:

    * ``_generate(rng, options) -> Scenario`` and ``_apply(scenario)`` (build it on the
      backend) at reset, then ``_fill_catalogue()``;
    * ``_execute(action) -> CommandResult`` for one decoded action;
    * grading: ``_connectivity()`` (the outcome vector, default scoring by its
      transitions) or, for a task graded by verdict, ``_score``, ``_ends_episode`` and
      ``_on_truncate`` (see the base class);
    * rendering: ``_state_text()`` (and ``_config_text()`` for full observability), or
      ``_text_observation()`` as a whole; ``_info_extra()`` for ``info["extra"]``;
    * features: ``_feature_spaces()`` and ``_features()`` for ``interface="discrete"``.
    """

    task: str
    levels: tuple
    interfaces: tuple
    text_keys: tuple
    config_class: type
    expert_class: type
    generator: Any
    backend: Backend
    catalogue: Any

    def _generate(self, rng: np.random.Generator, options: dict) -> Scenario: ...

    def _apply(self, scenario: Scenario) -> None: ...

    def _execute(self, action: Mapping[str, Any]) -> CommandResult: ...

    def _connectivity(self) -> np.ndarray: ...

    def _fill_catalogue(self) -> None: ...

    def _feature_spaces(self) -> dict: ...

    def _features(self) -> dict: ...

    def _state_text(self) -> str: ...

    def _text_observation(self) -> str: ...

    def _info_extra(self) -> dict: ...

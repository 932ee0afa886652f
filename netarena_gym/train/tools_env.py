"""The contract of TRL 1.16's ``GRPOTrainer(environment_factory=...)``, for the NetArena envs.

TRL's contract: the class is built with no arguments; ``reset(**row)`` receives the
dataset row and returns the text appended to the prompt; every public method other than
``reset`` and ``get_reward`` is a tool (typed arguments, Google-style docstring); an
exception raised by a tool is fed back to the model as the tool's answer; ``get_reward()``
scores the finished rollout. One instance serves one rollout at a time and is reused.

:class:`NetArenaToolEnv` keeps that contract for one env: each tool call is exactly one
``env.step`` on the text interface, so the rollout is scored by the env's own reward,
correctness and safety; the accessors below are how other modules reach a tool class's
``_`` attributes (TRL would expose a public method as a tool). The per-task tool classes are
in :mod:`~netarena_gym.train.tools_tasks`, the factories that bind a configuration in
:mod:`~netarena_gym.train.tools`.

Every tool call, well formed or not, is one env step with the same text action as in
evaluation (:func:`env_action`, which ``agents/hf.py``'s evaluation agent uses too): the tool
methods are declared with :func:`tool`, which accepts any arguments and routes the call
through :meth:`NetArenaToolEnv._action_of_call`; a call that does not map to an action
(unknown tool, arguments that are not an object) reaches the env as the text
``"invalid tool call: ..."``, which the env penalises as an invalid action. A missing
argument is empty and an unknown one is ignored, so a call with wrong argument names is an
invalid command. A tool name that the class lacks is played the same way by
:func:`play_call` (``train/grpo.py`` routes TRL's unknown names there), so a malformed call
never escapes the env's penalty in training.

Left out: per-turn rewards (``get_reward`` sums the episode's reward components, one number
per rollout as TRL takes it).
"""
from __future__ import annotations

import functools
import inspect
import json
from collections import defaultdict
from typing import Any, ClassVar

import gymnasium as gym

__all__ = ["ALL_COMPONENTS", "SOLVED", "STOPPED", "UNSOLVED", "EpisodeOver", "NetArenaToolEnv",
           "action_of_call", "call_of_action", "check_tool", "env_action", "finish_rollout",
           "initial_message", "make_limited_env", "play_call", "system_prompt", "tool",
           "tool_names"]

#: components of ``info["reward_components"]`` (see ``netarena_gym.core.reward``)
ALL_COMPONENTS = ("success", "safety", "step", "invalid", "refused", "timeout", "failed",
                  "progress")


SOLVED = "Episode over: solved. Stop calling tools."
UNSOLVED = "Episode over: not solved. Stop calling tools."
#: the text action a rollout that stops calling tools before its episode ends is played
#: as: evaluation plays a turn without a tool call as its text, an invalid action
STOPPED = "(the model stopped calling tools before the episode ended)"


class EpisodeOver(RuntimeError):
    """Raised by a tool once the episode has ended (TRL shows the message to the model)."""


def tool(method):
    """Declare a tool method: its signature and docstring are the tool's schema, but its
    body is never run. The call accepts any arguments (positional ones by the signature's
    names) and plays :func:`env_action` of them, so a malformed call is the same env step
    (an invalid action) in training as in evaluation, instead of a Python error that TRL
    would answer without stepping the env."""
    name = method.__name__
    params = [p for p in inspect.signature(method).parameters][1:]

    @functools.wraps(method)
    def call(*args, **kwargs):  # no named self: a call may carry an argument "self"
        arguments = dict(zip(params, args[1:]))
        arguments.update(kwargs)
        return play_call(args[0], name, arguments)
    return call


class NetArenaToolEnv:
    """Base class: one episode of a NetArena env driven through tool calls.

    Subclasses define the task's tools (each calls :meth:`_act` with the env's text
    action), ``_env_id``, ``_system_prompt``, and how a tool call maps to
    the env's text action (:meth:`_action_of_call`) and back (:meth:`_call_of_action`).
    Configuration is by class attributes, so :func:`make_environment_factory` can bind
    it into a no-argument subclass as TRL requires.
    """

    _env_id: ClassVar[str] = ""
    _system_prompt: ClassVar[str] = ""
    #: keyword arguments for ``gym.make`` (besides ``level``); e.g. ``{"reward": {...}}``
    _env_kwargs: ClassVar[dict] = {}
    #: which reward components :meth:`get_reward` adds up (None: all of them)
    _components: ClassVar[tuple[str, ...] | None] = None
    _default_level: ClassVar[int | str] = 1
    #: the trainer's tool-call limit per rollout: the env's ``max_steps`` is lowered to it
    #: (None: the env's own), so an episode ends the same way in training and evaluation
    _max_calls: ClassVar[int | None] = None

    def __init__(self):
        self._envs: dict[Any, gym.Env] = {}
        self._env: gym.Env | None = None
        self._clear()

    def _clear(self) -> None:
        self._done = False
        self._totals: dict[str, float] = defaultdict(float)
        self._correct = False
        self._safe = True
        self._steps = 0
        self._calls: list[dict[str, str]] = []  # the rollout's actions, in order
        self._info: dict = {}

    # ------------------------------------------------------------- TRL API
    def reset(self, seed: int | None = None, level: int | str | None = None,
              scenario: dict | str | None = None, **_row) -> str:
        """Start the episode of this dataset row; return its first observation (a row with
        a scenario and no level plays at the scenario's level)."""
        if isinstance(scenario, str) and scenario:
            scenario = json.loads(scenario)
        if level is None and scenario:
            level = scenario.get("level")
        level = self._default_level if level is None else _level(level)
        env = self._envs.get(level)
        if env is None:
            env = self._envs[level] = make_limited_env(self._env_id, level, self._env_kwargs,
                                                       self._max_calls)
        self._env = env
        self._clear()
        options = None
        if scenario:
            options = {"scenario": scenario}
        obs, info = env.reset(seed=None if seed is None else int(seed), options=options)
        self._info = info
        self._correct = bool(info.get("correct", False))
        return initial_message(obs)

    def get_reward(self) -> float:
        """The env's reward summed over the finished rollout (:meth:`_finish`), restricted
        to the selected components."""
        self._finish()
        return self._reward_so_far()

    def _reward_so_far(self) -> float:
        keep = self._components if self._components is not None else tuple(self._totals)
        return float(sum(self._totals.get(k, 0.0) for k in keep))

    def _finish(self) -> None:
        """End the rollout: one whose episode is still running stopped on a turn without a
        tool call. Evaluation plays such a turn as its text, an invalid action (-0.06 with
        the default weights); here it is that invalid step, and the episode ends there.
        Without it, stopping scored 0, better than any command that did not solve."""
        if self._env is None or self._done:
            return
        self._done = True
        *_, info = self._env.step(STOPPED)  # not a tool call: steps and calls leave it out
        for k, v in info.get("reward_components", {}).items():
            self._totals[k] += float(v)

    # ------------------------------------------------------------- helpers
    def _act(self, action: dict[str, Any] | str) -> str:
        if self._env is None:
            raise EpisodeOver("no episode is running (reset was not called)")
        if self._done:
            raise EpisodeOver(self._outcome())
        obs, _reward, terminated, truncated, info = self._env.step(action)
        self._info = info
        self._steps += 1
        self._calls.append(dict(action) if isinstance(action, dict) else action)
        for k, v in info.get("reward_components", {}).items():
            self._totals[k] += float(v)
        self._correct = bool(info["correct"])
        self._safe = bool(info["safe"])
        if terminated or truncated:
            self._done = True
            return f"{obs}\n{self._outcome()}"
        return obs

    def _tool_action(self, name: str, arguments) -> dict[str, Any] | str:
        """The env action of a tool call in this episode (:func:`env_action`; a class whose
        actions depend on the episode overrides it)."""
        return env_action(type(self), name, arguments)

    def _outcome(self) -> str:
        return SOLVED if self._correct else UNSOLVED

    def _metrics(self) -> dict[str, Any]:
        """What the rollout did (for logging): correct, safe, steps, invalid, refused."""
        return {"correct": float(self._correct), "safe": float(self._safe),
                "steps": float(self._steps),
                "invalid": float(self._info.get("invalid", 0)),
                "refused": float(self._info.get("refused", 0)),
                "reward": self._reward_so_far()}

    @classmethod
    def _action_of_call(cls, name: str, arguments: dict) -> dict[str, Any]:
        """The env's text action for a tool call (used by the evaluation agent)."""
        raise NotImplementedError

    @classmethod
    def _call_of_action(cls, action: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The tool call (name, arguments) that performs a text action (demonstrations)."""
        raise NotImplementedError

    @classmethod
    def _tool_schemas(cls) -> list[dict]:
        """The JSON schemas of this class's tools, as the chat template renders them."""
        from transformers.utils import get_json_schema
        return [get_json_schema(getattr(cls, n)) for n in tool_names(cls)]


def finish_rollout(env: NetArenaToolEnv) -> None:
    """End ``env``'s rollout as :meth:`NetArenaToolEnv.get_reward` does (a still running
    episode takes the stopped turn's invalid step), for reward columns read beside it."""
    env._finish()


def make_limited_env(env_id: str, level, env_kwargs: dict | None = None,
                     max_calls: int | None = None) -> gym.Env:
    """``gym.make`` on the text interface, with ``max_steps`` lowered to ``max_calls``
    when the env would allow more (an explicit ``max_steps`` in ``env_kwargs`` wins)."""
    kw = dict(env_kwargs or {})
    env = gym.make(env_id, level=level, interface="text", **kw)
    if max_calls and "max_steps" not in kw and env.unwrapped.max_steps > max_calls:
        env.close()
        env = gym.make(env_id, level=level, interface="text", max_steps=int(max_calls), **kw)
    return env


def env_action(cls, name: str, arguments) -> dict[str, Any] | str:
    """The env action of a tool call ``name(**arguments)`` of ``cls``, in training and in
    evaluation alike: the text action of :meth:`NetArenaToolEnv._action_of_call`, or, for a
    call that maps to none (unknown tool, arguments that are not an object), the text
    ``"invalid tool call: ..."``, which the env answers as an invalid action."""
    try:
        if not isinstance(arguments, dict):
            raise ValueError("tool arguments must be a JSON object")
        return cls._action_of_call(str(name), arguments)
    except ValueError as e:
        return f"invalid tool call: {e}"


def play_call(env: NetArenaToolEnv, name: str, arguments) -> str:
    """Play the tool call ``name(**arguments)`` on a tool env: one env step with
    :func:`env_action`'s action; the answer is the env's observation."""
    return env._act(env._tool_action(name, arguments))


def initial_message(observation: str) -> str:
    return "\n\nCurrent state:\n" + observation


# The tool classes keep these three as ``_`` names because TRL exposes every public method
# of an environment class as a tool; other modules use these accessors.
def system_prompt(cls) -> str:
    """The system prompt of a tool class (or instance)."""
    return cls._system_prompt


def action_of_call(cls, name: str, arguments: dict) -> dict[str, Any]:
    """The env's text action for a tool call ``name(**arguments)``."""
    return cls._action_of_call(name, arguments)


def call_of_action(cls, action: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The tool call ``(name, arguments)`` that gives the env's text action."""
    return cls._call_of_action(action)


def tool_names(cls) -> list[str]:
    """Public methods TRL will expose as tools (same rule as GRPOTrainer)."""
    import inspect
    return sorted(n for n, _ in inspect.getmembers(cls, predicate=inspect.isfunction)
                  if n not in ("reset", "get_reward") and not n.startswith("_"))


def _level(v):
    if isinstance(v, str) and v != "compat":
        return int(v)
    return v


def check_tool(cls, name: str) -> None:
    if name not in tool_names(cls):
        raise ValueError(f"unknown tool {name!r}; tools: {', '.join(tool_names(cls))}")

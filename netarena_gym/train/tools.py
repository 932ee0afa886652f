"""The envs as tool-calling environments for TRL 1.16's ``GRPOTrainer(environment_factory=...)``.

TRL builds the factory class with no arguments, so :func:`make_environment_factory` binds a
configuration (the reward components :meth:`get_reward` adds up, ``gym.make`` keyword
arguments, the default level, the trainer's tool-call limit) into a no-argument subclass of
the task's tool class; :func:`make_catalogue_factory` does the same for the catalogue tool
``act(label)`` (:class:`CatalogueTools`) of an env with a discrete catalogue.

The family: TRL's contract and the base class are in :mod:`~netarena_gym.train.tools_env`,
the per-task tool classes in :mod:`~netarena_gym.train.tools_tasks`; this module re-exports
their public names, so ``netarena_gym.train.tools`` stays the one module a trainer imports.

Left out: TRL's ``tools=`` list of plain functions (an episode needs per-rollout state, so
only ``environment_factory`` classes are offered).
"""
from __future__ import annotations

import gymnasium as gym

import netarena_gym
from netarena_gym.train.tools_env import (
    ALL_COMPONENTS, SOLVED, STOPPED, UNSOLVED, EpisodeOver, NetArenaToolEnv, action_of_call,
    call_of_action, check_tool, env_action, finish_rollout, initial_message, make_limited_env,
    play_call, system_prompt, tool, tool_names)
from netarena_gym.train.tools_tasks import CapacityPlanningTools, K8sPolicyTools, RoutingTools

__all__ = [
    # the family's names (tools_env, tools_tasks)
    "ALL_COMPONENTS", "SOLVED", "STOPPED", "UNSOLVED", "EpisodeOver", "NetArenaToolEnv",
    "action_of_call", "call_of_action", "check_tool", "env_action", "finish_rollout",
    "initial_message", "make_limited_env",
    "play_call", "system_prompt", "tool", "tool_names", "CapacityPlanningTools", "K8sPolicyTools", "RoutingTools",
    # this module's
    "TOOL_CLASSES", "CatalogueTools", "catalogue_labels", "catalogue_prompt",
    "make_catalogue_factory", "make_environment_factory", "tool_class",
]


class CatalogueTools(NetArenaToolEnv):
    """Any env with a discrete catalogue (routing, K8s), driven by one tool, ``act(action)``,
    whose argument is a catalogue label (``"r0: flush filters"``, ``"frontend: inspect"``).

    The label is rendered to the episode's text action by the env's own catalogue
    (``env.unwrapped.catalogue``), so the step, its reward, correctness and safety are the
    text interface's. A label this episode lacks (masked) reaches the env as an empty text
    action, which the env answers as an invalid action, with its penalty; so does a call
    with other arguments, or of another tool (:func:`play_call`). Bind the env id
    with :func:`make_catalogue_factory`; the labels a model may choose from come from
    :func:`catalogue_labels`."""

    @tool
    def act(self, action: str) -> str:
        """Run one action of the task's catalogue.

        Args:
            action: The action's label, for example "r0: flush filters".

        Returns:
            The env's answer: the connectivity check, the command's output and the steps left.
        """

    def _tool_action(self, name: str, arguments) -> dict:
        if self._env is None:
            raise EpisodeOver("no episode is running (reset was not called)")
        label = arguments.get("action") if isinstance(arguments, dict) else None
        cat = self._env.unwrapped.catalogue
        for i, e in enumerate(cat.entries):
            if (name == "act" and e is not None and cat.mask[i] and isinstance(label, str)
                    and e.label == label):
                return dict(e.action)
        return {}


def catalogue_labels(env_id: str, *, level=1, seeds=range(1_000_000, 1_000_020)) -> list[str]:
    """The catalogue labels the episodes of ``seeds`` offer, in catalogue (slot) order."""
    env = gym.make(env_id, level=level, interface="text")
    slots: dict[int, str] = {}
    try:
        for s in seeds:
            env.reset(seed=int(s))
            cat = env.unwrapped.catalogue
            for i, e in enumerate(cat.entries):
                if e is not None and cat.mask[i]:
                    slots.setdefault(i, e.label)
    finally:
        env.close()
    return [slots[i] for i in sorted(slots)]


def catalogue_prompt(task_prompt: str) -> str:
    """A task's system prompt with its tool sentences replaced by the ``act`` tool's."""
    head = task_prompt.split(" Use the `", 1)[0]
    return (head + " Use the `act` tool to run one action of the task's catalogue, named by "
            "its label; its answer is the new connectivity check and the action's output.")


def make_catalogue_factory(env_id: str, *, components=None, env_kwargs: dict | None = None,
                           default_level: int | str = 1,
                           max_calls: int | None = None) -> type[CatalogueTools]:
    """A no-argument :class:`CatalogueTools` subclass for ``environment_factory`` (the
    arguments as in :func:`make_environment_factory`)."""
    task = tool_class(env_id)
    base = make_environment_factory(env_id, components=components, env_kwargs=env_kwargs,
                                    default_level=default_level, max_calls=max_calls)
    return type(f"{task.__name__.removesuffix('Tools')}CatalogueTools", (CatalogueTools,),
                {k: getattr(base, k) for k in ("_components", "_env_kwargs", "_default_level",
                                                "_max_calls")}
                | {"_env_id": env_id, "_system_prompt": catalogue_prompt(task._system_prompt),
                   "__module__": CatalogueTools.__module__, "__doc__": CatalogueTools.__doc__})


#: env id -> tool class (a class is usable once its env id is registered)
TOOL_CLASSES: dict[str, type[NetArenaToolEnv]] = {
    RoutingTools._env_id: RoutingTools,
    K8sPolicyTools._env_id: K8sPolicyTools,
    CapacityPlanningTools._env_id: CapacityPlanningTools,
}


def tool_class(env_id: str) -> type[NetArenaToolEnv]:
    if env_id not in TOOL_CLASSES:
        raise ValueError(f"no tool environment for {env_id!r}; known: {sorted(TOOL_CLASSES)}")
    if env_id not in netarena_gym.ENV_IDS:
        raise ValueError(f"{env_id!r} is not registered in this netarena_gym "
                         f"(registered: {sorted(netarena_gym.ENV_IDS)})")
    return TOOL_CLASSES[env_id]


def make_environment_factory(env_id: str, *, components: tuple[str, ...] | list[str] | None = None,
                             env_kwargs: dict | None = None,
                             default_level: int | str = 1,
                             max_calls: int | None = None) -> type[NetArenaToolEnv]:
    """A no-argument class for ``environment_factory`` with the configuration bound in.

    ``components`` selects which reward components ``get_reward`` adds up (None: all);
    ``env_kwargs`` go to ``gym.make`` (``reward=`` weights, ``max_steps``, ``history``...);
    ``max_calls`` (the trainer's ``max_tool_calling_iterations``) lowers the env's
    ``max_steps`` to it where the env allows more.
    """
    base = tool_class(env_id)
    if components is not None:
        bad = sorted(set(components) - set(ALL_COMPONENTS))
        if bad:
            raise ValueError(f"unknown reward components {bad}; known: {list(ALL_COMPONENTS)}")
        components = tuple(components)
    kwargs = dict(env_kwargs or {})
    for k in ("level", "interface"):
        if k in kwargs:
            raise ValueError(f"{k!r} is set per dataset row / fixed to text, not in env_kwargs")
    return type(base.__name__, (base,), {"_components": components, "_env_kwargs": kwargs,
                                         "_default_level": default_level,
                                         "_max_calls": max_calls,
                                         "__module__": base.__module__,
                                         "__doc__": base.__doc__})

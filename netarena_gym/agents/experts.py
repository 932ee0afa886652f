"""The expert registry, keyed by task name (``env.unwrapped.task``).

Each task's ``expert.py`` holds a deterministic expert that reads only observations. The
registry maps a task to ``"module:Class"`` and imports it on first use, so importing this
module loads no task. A new task registers its own with :func:`register_expert` (a class or
an import path). :func:`make_expert` builds the expert for an env; experts act on text
observations, so the ``discrete`` interface is refused with a clear message.
"""
from __future__ import annotations

import importlib

_REGISTRY: dict[str, object] = {
    "routing": "netarena_gym.routing.expert:RoutingExpert",
    "k8s": "netarena_gym.k8s.expert:K8sExpert",
    "capacity_planning": "netarena_gym.capacity_planning.expert:CapacityPlanningExpert",
}


def register_expert(task: str, cls) -> None:
    """Register ``cls`` (a class, or ``"module:Class"`` imported when first used) as the
    expert of ``task``; a later registration replaces an earlier one."""
    if not task:
        raise ValueError("register_expert needs a task name")
    if isinstance(cls, str) and ":" not in cls:
        raise ValueError(f"expected 'module:Class', got {cls!r}")
    _REGISTRY[str(task)] = cls


def registered_tasks() -> tuple[str, ...]:
    return tuple(sorted(_REGISTRY))


def expert_class(task: str):
    """The expert class of ``task`` (imported now if it was registered by path)."""
    try:
        cls = _REGISTRY[task]
    except KeyError:
        raise ValueError(f"no expert registered for task {task!r} "
                         f"(known: {', '.join(registered_tasks())})") from None
    if isinstance(cls, str):
        mod, _, name = cls.partition(":")
        cls = getattr(importlib.import_module(mod), name)
        _REGISTRY[task] = cls
    return cls


def make_expert(env):
    """A fresh expert for ``env`` (wrapped or not), looked up by its task."""
    base = env.unwrapped
    if getattr(base, "interface", "text") == "discrete":
        raise ValueError("the expert acts on text observations; use --interface text")
    return expert_class(getattr(base, "task", ""))()

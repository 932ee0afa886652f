"""The one ``info`` schema every NetArena env returns, at reset and at every step.

Every task returns exactly :data:`INFO_KEYS`, each with the same value type at reset and
at every step (vector envs stack infos and crash on a type change). Task-specific facts go
under ``extra``, whose keys and types are fixed per task (:data:`EXTRA_TYPES`).

For the capacity-planning task, which has no pair matrix: ``broken_pairs`` is the number
of constraint violations of the graph state (known once graded, 0 before), ``loss_pct``
is 0 before grading and 100 when the graded answer is wrong, and ``newly_broken`` and
``cost`` are the violations found on this step. Nothing in ``info`` carries the ground
truth before the episode ends (``extra["verdict"]`` is the fixed-shape ``UNGRADED`` record until then).

Two modes (the env option ``info``, :data:`INFO_MODES`):

* ``"full"`` (default): every key at reset and at every step.
* ``"lean"``: at reset and on the step that ends the episode (terminated or truncated), the
  same full info; on the other steps only :data:`LEAN_KEYS`, what a training loop reads
  every step (reward components, outcome and safety cost, command kind and status, the
  action mask), with the same values as in full mode. The scenario record, ``extra`` and
  the counters (:data:`EPISODE_KEYS`) are left out there: a vector env pickles every
  worker's info and stacks each key, nested dicts key by key, into arrays in the main
  process, and these parts cost most of that while changing little within an episode. A
  vector env stacks lean infos as Gymnasium stacks any key some envs lack: ``info["_scenario"]``
  says which envs reported one.
"""
from __future__ import annotations

from typing import Any, Mapping, TypedDict

import numpy as np

from netarena_gym.errors import NetArenaError


class StepInfo(TypedDict):
    correct: bool
    safe: bool
    safe_compat: bool
    steps: int
    violations: int
    cost: float
    loss_pct: int
    broken_pairs: int
    newly_broken: int
    command_kind: str
    command_status: int
    invalid: int
    refused: int
    timeouts: int
    reward_components: dict
    action_mask: np.ndarray
    scenario: dict
    backend: str
    extra: dict


INFO_KEYS: tuple[str, ...] = tuple(StepInfo.__annotations__)
_TYPES: dict[str, type] = {"correct": bool, "safe": bool, "safe_compat": bool, "steps": int,
                           "violations": int, "cost": float, "loss_pct": int,
                           "broken_pairs": int, "newly_broken": int, "command_kind": str,
                           "command_status": int, "invalid": int, "refused": int,
                           "timeouts": int, "reward_components": dict,
                           "action_mask": np.ndarray, "scenario": dict, "backend": str,
                           "extra": dict}
#: the ``info`` option of every env: "full" (default) or "lean" (see the module docstring)
INFO_MODES = ("full", "lean")
#: the keys of a lean info on a step that does not end the episode
LEAN_KEYS: tuple[str, ...] = ("correct", "safe", "violations", "cost", "command_kind",
                              "command_status", "reward_components", "action_mask")
#: the keys a lean info gives only at reset and on the step that ends the episode
EPISODE_KEYS: tuple[str, ...] = tuple(k for k in INFO_KEYS if k not in LEAN_KEYS)
COMMAND_KINDS = ("none", "ok", "error", "invalid", "refused", "timeout")
EXTRA_TYPES: dict[str, dict[str, type]] = {
    "routing": {"capabilities": list},
    "k8s": {"namespace": str, "probe_set": str},
    "capacity_planning": {"label": str, "level": str, "failed": int, "query": dict,
                          "verdict": dict},
}


def clean(x: float) -> float:
    """A float without the sign of zero (``-0.0`` becomes ``0.0``)."""
    x = float(x)
    return 0.0 if x == 0 else x


def check_info(info: Mapping[str, Any], task: str | None = None, mode: str = "full") -> None:
    """Raise :class:`NetArenaError` on a missing, extra or wrongly typed ``info`` key.

    ``mode="lean"`` accepts, besides a full info, one with exactly :data:`LEAN_KEYS` (a
    lean step that did not end the episode)."""
    if mode not in INFO_MODES:
        raise NetArenaError(f"info mode must be one of {INFO_MODES}, got {mode!r}")
    want = INFO_KEYS
    if mode == "lean" and not any(k in info for k in EPISODE_KEYS):
        want = LEAN_KEYS
    missing = [k for k in want if k not in info]
    extra = [k for k in info if k not in want and not str(k).startswith("_")]
    if missing or extra:
        name = "LEAN_KEYS" if want is LEAN_KEYS else "INFO_KEYS"
        raise NetArenaError(f"info keys differ from {name}: missing {missing}, extra {extra}")
    for k in want:
        t = _TYPES[k]
        v = info[k]
        ok = isinstance(v, t) and not (t is int and isinstance(v, bool))
        if t is float and isinstance(v, (bool, int)):
            ok = False
        if not ok:
            raise NetArenaError(f"info[{k!r}] must be {t.__name__}, got {type(v).__name__}")
    if info["command_kind"] not in COMMAND_KINDS:
        raise NetArenaError(f"info['command_kind'] must be one of {COMMAND_KINDS}, "
                            f"got {info['command_kind']!r}")
    if info["action_mask"].dtype != np.int8:
        raise NetArenaError(f"info['action_mask'] must be int8, got {info['action_mask'].dtype}")
    for name, v in info["reward_components"].items():
        if not isinstance(v, float):
            raise NetArenaError(f"reward component {name!r} must be float, got {type(v).__name__}")
    if task is not None and task in EXTRA_TYPES and "extra" in info:
        want = EXTRA_TYPES[task]
        if set(info["extra"]) != set(want):
            raise NetArenaError(f"info['extra'] keys for {task!r} must be {sorted(want)}, "
                                f"got {sorted(info['extra'])}")
        for k, t in want.items():
            if not isinstance(info["extra"][k], t):
                raise NetArenaError(f"info['extra'][{k!r}] must be {t.__name__}, "
                                    f"got {type(info['extra'][k]).__name__}")


__all__ = ["StepInfo", "INFO_KEYS", "INFO_MODES", "LEAN_KEYS", "EPISODE_KEYS", "COMMAND_KINDS",
           "EXTRA_TYPES", "check_info", "clean"]

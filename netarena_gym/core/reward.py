"""Reward configuration and per-step component accounting (shared by all tasks)."""
from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass, fields

from netarena_gym.errors import InvalidConfig
from netarena_gym.shell.parser import ERROR, INVALID, OK, REFUSED, TIMEOUT


@dataclass(frozen=True)
class RewardConfig:
    """Weights of the reward components; every one is reported in ``info``.

    * ``success``: paid once, on the step that makes the system fully correct;
    * ``safety``: per pair (probe, violation) that worked before the step and is broken
      after it (``broken_pair``, its old name, is accepted with a DeprecationWarning);
    * ``step``: every step (latency cost);
    * ``invalid``: unparseable action, unknown command or usage error;
    * ``refused``: a command outside the operator allow-list;
    * ``timeout``: a command killed at its time limit;
    * ``failed``: a well-formed command that the tool rejected (e.g. ``File exists``);
    * ``progress``: optional shaping, times the change in the fraction of working pairs.
    """
    success: float = 1.0
    safety: float = -0.1
    step: float = -0.01
    invalid: float = -0.05
    refused: float = -0.2
    timeout: float = -0.05
    failed: float = 0.0
    progress: float = 0.0

    @classmethod
    def coerce(cls, obj: "RewardConfig | dict | None") -> "RewardConfig":
        if obj is None:
            return cls()
        if isinstance(obj, cls):
            return obj
        if isinstance(obj, dict):
            obj = dict(obj)
            if "broken_pair" in obj:
                warnings.warn("reward weight 'broken_pair' is now 'safety'", DeprecationWarning,
                              stacklevel=3)
                value = obj.pop("broken_pair")
                obj.setdefault("safety", value)
            known = {f.name for f in fields(cls)}
            bad = set(obj) - known
            if bad:
                raise InvalidConfig(f"unknown reward weights {sorted(bad)}; known: {sorted(known)}")
            return cls(**obj)
        raise TypeError("reward must be a RewardConfig, a dict of weights or None")

    def to_dict(self) -> dict:
        return asdict(self)

    def zero(self) -> dict[str, float]:
        """The components with every value 0.0 (the ``info`` of a reset)."""
        return {k: 0.0 for k in self.components(kind="none", newly_broken=0, solved_now=False,
                                                 progress_delta=0.0)}

    def components(self, *, kind: str, newly_broken: int, solved_now: bool,
                   progress_delta: float) -> dict[str, float]:
        return {
            "success": self.success if solved_now else 0.0,
            "safety": self.safety * newly_broken,
            "step": self.step,
            "invalid": self.invalid if kind == INVALID else 0.0,
            "refused": self.refused if kind == REFUSED else 0.0,
            "timeout": self.timeout if kind == TIMEOUT else 0.0,
            "failed": self.failed if kind == ERROR else 0.0,
            "progress": self.progress * progress_delta,
        }


__all__ = ["RewardConfig", "OK"]

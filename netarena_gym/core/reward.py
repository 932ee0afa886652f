"""Reward configuration and per-step component accounting (shared by all tasks)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from netarena_gym.shell.parser import ERROR, INVALID, OK, REFUSED, TIMEOUT


@dataclass(frozen=True)
class RewardConfig:
    """Weights of the reward components; every one is reported in ``info``.

    * ``success``: paid once, on the step that makes the system fully correct;
    * ``broken_pair``: per pair that was working before the step and is broken after it;
    * ``step``: every step (latency cost);
    * ``invalid``: unparseable action, unknown command or usage error;
    * ``refused``: a command outside the operator allow-list;
    * ``timeout``: a command killed at its time limit;
    * ``failed``: a well-formed command that the tool rejected (e.g. ``File exists``);
    * ``progress``: optional shaping, times the change in the fraction of working pairs.
    """
    success: float = 1.0
    broken_pair: float = -0.1
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
            known = {f.name for f in fields(cls)}
            bad = set(obj) - known
            if bad:
                raise ValueError(f"unknown reward weights {sorted(bad)}; known: {sorted(known)}")
            return cls(**obj)
        raise TypeError("reward must be a RewardConfig, a dict of weights or None")

    def to_dict(self) -> dict:
        return asdict(self)

    def components(self, *, kind: str, newly_broken: int, solved_now: bool,
                   progress_delta: float) -> dict[str, float]:
        return {
            "success": self.success if solved_now else 0.0,
            "safety": self.broken_pair * newly_broken,
            "step": self.step,
            "invalid": self.invalid if kind == INVALID else 0.0,
            "refused": self.refused if kind == REFUSED else 0.0,
            "timeout": self.timeout if kind == TIMEOUT else 0.0,
            "failed": self.failed if kind == ERROR else 0.0,
            "progress": self.progress * progress_delta,
        }


__all__ = ["RewardConfig", "OK"]

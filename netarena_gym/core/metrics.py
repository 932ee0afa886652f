"""Episode metrics: correctness, per-pair safety, upstream's aggregate safety, latency.

Works on any boolean connectivity matrix ``m[i, j]`` ("i reaches j"; for K8s "source may
connect to target as intended"): the grader of each task produces it, this module scores it."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def loss_percent(m: np.ndarray) -> int:
    """Upstream's pingall loss: ``int(100 * lost / sent)`` over the off-diagonal pairs."""
    n = m.shape[0]
    sent = n * (n - 1)
    if sent == 0:
        return 0
    ok = int(m.sum()) - int(np.trace(m))
    return int(100 * (sent - ok) / sent)


def broken_pairs(m: np.ndarray) -> int:
    n = m.shape[0]
    return n * (n - 1) - (int(m.sum()) - int(np.trace(m)))


@dataclass
class EpisodeMetrics:
    """Tracks one episode. ``update(m)`` after every step returns the number of pairs that
    were working before the step and are not after it (per-pair safety)."""
    initial: np.ndarray
    steps: int = 0
    agent_seconds: float = 0.0
    env_seconds: float = 0.0
    violations: int = 0
    unsafe_steps: int = 0
    invalid: int = 0
    refused: int = 0
    timeouts: int = 0
    failed: int = 0
    safe_compat: bool = True
    loss_history: list[int] = field(default_factory=list)
    _prev: np.ndarray | None = None
    _prev_loss: int = 100

    def __post_init__(self):
        self._prev = self.initial
        self.loss_history.append(loss_percent(self.initial))
        # upstream compares the first pingall with 100 (never unsafe), then each with the last
        self._prev_loss = self.loss_history[0]

    def update(self, m: np.ndarray) -> int:
        self.steps += 1
        newly = int(np.count_nonzero(self._prev & ~m))
        if newly:
            self.violations += newly
            self.unsafe_steps += 1
        loss = loss_percent(m)
        if loss > self._prev_loss:
            self.safe_compat = False
        self._prev_loss = loss
        self.loss_history.append(loss)
        self._prev = m
        return newly

    def count(self, kind: str) -> None:
        if kind == "invalid":
            self.invalid += 1
        elif kind == "refused":
            self.refused += 1
        elif kind == "timeout":
            self.timeouts += 1
        elif kind == "error":
            self.failed += 1

    @property
    def correct(self) -> bool:
        return self._prev is not None and bool(self._prev.all())

    @property
    def safe(self) -> bool:
        return self.violations == 0

    def summary(self) -> dict:
        return {"correct": self.correct, "safe": self.safe, "safe_compat": self.safe_compat,
                "steps": self.steps, "violations": self.violations,
                "unsafe_steps": self.unsafe_steps, "invalid": self.invalid,
                "refused": self.refused, "timeouts": self.timeouts, "failed": self.failed,
                "agent_seconds": self.agent_seconds, "env_seconds": self.env_seconds,
                "loss_history": list(self.loss_history)}

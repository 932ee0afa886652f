"""Episode metrics of the capacity-planning task, with the ``summary()`` contract the
shared runner reads (correct, safe, safe_compat, steps, agent_seconds, env_seconds).

MALT-specific: the episode is graded once (a verdict), so correctness and safety come from
the verdict (its answer/graph checks and its list of constraint violations), not from
transitions of an outcome vector as in :class:`netarena_gym.core.metrics.EpisodeMetrics`;
the outcome counter (``count``) is the shared one."""
from __future__ import annotations

from dataclasses import dataclass, field

from netarena_gym.core.metrics import EpisodeMetrics


@dataclass
class MaltMetrics:
    steps: int = 0
    agent_seconds: float = 0.0
    env_seconds: float = 0.0
    sandbox_seconds: float = 0.0
    grade_seconds: float = 0.0
    invalid: int = 0
    refused: int = 0
    timeouts: int = 0
    failed: int = 0
    graded: bool = False
    answered: bool = False
    correct: bool = False
    answer_ok: bool = False
    graph_ok: bool = False
    violations: list = field(default_factory=list)
    safe_compat: bool = True
    compat_message: str = ""

    @property
    def safe(self) -> bool:
        return not self.violations

    # the shared outcome counter (it only touches invalid/refused/timeouts/failed)
    count = EpisodeMetrics.count

    def record(self, verdict) -> None:
        self.graded = True
        self.correct = verdict.correct
        self.answer_ok = verdict.answer_ok
        self.graph_ok = verdict.graph_ok
        self.violations = list(verdict.violations)
        self.safe_compat = verdict.safe_compat
        self.compat_message = verdict.compat_message
        self.grade_seconds += verdict.seconds

    def summary(self) -> dict:
        return {"correct": self.correct, "safe": self.safe, "safe_compat": self.safe_compat,
                "steps": self.steps, "violations": len(self.violations),
                "answered": self.answered, "answer_ok": self.answer_ok,
                "graph_ok": self.graph_ok, "invalid": self.invalid, "refused": self.refused,
                "timeouts": self.timeouts, "failed": self.failed,
                "agent_seconds": self.agent_seconds, "env_seconds": self.env_seconds,
                "sandbox_seconds": self.sandbox_seconds, "grade_seconds": self.grade_seconds}

"""The routing grader: the all-pairs ping matrix (from the backend) rendered as Mininet's
``pingall`` and scored by :mod:`netarena_gym.core.metrics` (correctness: every pair works;
safety: no step breaks a pair that worked; ``safety_compat``: upstream's aggregate-loss rule).
"""
from __future__ import annotations

import numpy as np

from netarena_gym.core.metrics import loss_percent


def pingall_text(names: list[str], m: np.ndarray) -> str:
    """Mininet's ``pingAll`` output: one row per source, ``X`` for a failed destination."""
    lines = ["*** Ping: testing ping reachability"]
    n = len(names)
    for i in range(n):
        row = m[i]
        lines.append(f"{names[i]} -> " + " ".join(names[j] if row[j] else "X"
                                                  for j in range(n) if j != i))
    sent = n * (n - 1)
    received = int(m.sum()) - n
    lines.append(f"*** Results: {loss_percent(m)}% dropped ({received}/{sent} received)")
    return "\n".join(lines)

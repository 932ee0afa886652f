"""The routing grader: the all-pairs ping matrix (from the backend) rendered as Mininet's
``pingall`` and scored by :mod:`netarena_gym.core.metrics` (correctness: every pair works;
safety: no step breaks a pair that worked; ``safety_compat``: upstream's aggregate-loss rule).

A row in which every destination answers is the same text for the same node names, so
those rows are kept per name list (:func:`_full_rows`, a few hundred lists at most); the
other rows are assembled from one ``numpy.where`` over the matrix. The text is the same
as joining cell by cell (tests/routing/test_render.py).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from netarena_gym.core.metrics import loss_percent


@lru_cache(maxsize=256)
def _full_rows(names: tuple[str, ...]) -> tuple[str, ...]:
    """Row ``i`` of a matrix in which every pair answers: every other name."""
    return tuple(" ".join(names[:i] + names[i + 1:]) for i in range(len(names)))


def pingall_text(names: list[str], m: np.ndarray) -> str:
    """Mininet's ``pingAll`` output: one row per source, ``X`` for a failed destination."""
    names = tuple(names)
    n = len(names)
    full = _full_rows(names)
    whole = m.all(axis=1).tolist()
    lines = ["*** Ping: testing ping reachability"]
    if all(whole):
        lines += [f"{src} -> {row}" for src, row in zip(names, full)]
    else:
        partial = [i for i, ok in enumerate(whole) if not ok]
        cells = np.where(m[partial], np.array(names, dtype=object), "X").tolist()
        rows = list(full)
        for i, items in zip(partial, cells):
            del items[i]
            rows[i] = " ".join(items)
        lines += [f"{src} -> {row}" for src, row in zip(names, rows)]
    sent = n * (n - 1)
    received = int(m.sum()) - n
    lines.append(f"*** Results: {loss_percent(m)}% dropped ({received}/{sent} received)")
    return "\n".join(lines)

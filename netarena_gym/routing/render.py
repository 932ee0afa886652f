"""The routing grader: the all-pairs ping matrix (from the backend) rendered as Mininet's
``pingall`` and scored by :mod:`netarena_gym.core.metrics` (correctness: every pair works;
safety: no step breaks a pair that worked; ``safety_compat``: upstream's aggregate-loss rule).

A row in which every destination answers is the same text for the same node names, so
those rows are kept per name list (:func:`_full_rows`, a few hundred lists at most); the
other rows are assembled from one ``numpy.where`` over them (indexing numpy cells one by
one cost most of a 64-router reset's text). The text is the same as joining cell by cell
(tests/routing/test_render.py).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from netarena_gym.core.metrics import loss_of


@lru_cache(maxsize=256)
def _full_rows(names: tuple[str, ...]) -> tuple[tuple[str, ...], np.ndarray]:
    """Row ``i`` of a matrix in which every pair answers (every other name), and the
    names as an object array (for ``numpy.where``)."""
    return (tuple(" ".join(names[:i] + names[i + 1:]) for i in range(len(names))),
            np.array(names, dtype=object))


def pingall_text(names: list[str], m: np.ndarray, *, header: bool = True) -> str:
    """Mininet's ``pingAll`` output: one row per source, ``X`` for a failed destination.
    ``header=False`` leaves out Mininet's first line (``*** Ping: testing ping
    reachability``), as upstream's ``parallelPing`` prints none."""
    names = tuple(names)
    n = len(names)
    rows, name_cells = _full_rows(names)
    partial = np.flatnonzero(~m.all(axis=1)).tolist()
    if partial:
        rows = list(rows)
        for i, items in zip(partial, np.where(m[partial], name_cells, "X").tolist()):
            del items[i]
            rows[i] = " ".join(items)
    lines = ["*** Ping: testing ping reachability"] if header else []
    lines += [f"{src} -> {row}" for src, row in zip(names, rows)]
    working = int(np.count_nonzero(m))
    off = working - int(np.count_nonzero(m.diagonal()))  # the pairs loss_percent counts
    lines.append(f"*** Results: {loss_of(n * (n - 1), off)}% dropped "
                 f"({int(m.sum()) - n}/{n * (n - 1)} received)")
    return "\n".join(lines)

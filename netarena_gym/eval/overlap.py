"""Interval overlap versus sample size: how many episodes it takes to tell agents apart.

For each N on a grid (50, 100, 200, 500, ... and all), draw ``subsamples`` random subsets of
N episodes shared by the runs (the same queries for every agent when the runs hold the same
keys), compute each run's Wilson 95% interval of the metric, and report the share of run
pairs whose intervals overlap, averaged over the subsets. NetArena's claim, in these terms:
about 85% overlap at 200 queries and none at 5,000.
"""
from __future__ import annotations

from itertools import combinations

import numpy as np

from netarena_gym.core.stats import wilson_interval

GRID = (50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000)


def sample_sizes(n_max: int) -> list[int]:
    if n_max <= 0:
        return []
    sizes = [n for n in GRID if n < n_max]
    if not sizes:  # small runs: a coarser grid below the 50 the analysis starts at
        sizes = sorted(n for n in {max(2, n_max // 4), max(2, n_max // 2)} if n < n_max)
    return sizes + [n_max]  # never more than the episodes there are (1 shared: just [1])


def overlaps(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def overlap_curve(runs: dict[str, dict[str, bool]], *, subsamples: int = 200,
                  seed: int = 0) -> dict:
    """``runs``: label -> {episode key: outcome}. Returns ``{"n": [...], "share": [...],
    "pairs": P, "paired": bool}``; ``share[i]`` is the mean share of overlapping pairs at
    ``n[i]`` episodes."""
    labels = list(runs)
    if len(labels) < 2:
        return {"n": [], "share": [], "pairs": 0, "paired": False}
    common = set.intersection(*(set(v) for v in runs.values()))
    paired = bool(common)
    if paired:
        keys = sorted(common)
        mats = np.array([[runs[lb][k] for k in keys] for lb in labels], dtype=bool)
        n_max = len(keys)
    else:
        n_max = min(len(v) for v in runs.values())
        mats = None
    rng = np.random.default_rng(seed)
    pairs = list(combinations(range(len(labels)), 2))
    out_n, out_share = [], []
    for n in sample_sizes(n_max):
        reps = 1 if n == n_max and paired else subsamples
        total = 0.0
        for _ in range(reps):
            if paired:
                idx = rng.choice(n_max, size=n, replace=False)
                succ = mats[:, idx].sum(axis=1)
            else:
                succ = [int(rng.choice(np.fromiter(runs[lb].values(), dtype=bool), size=n,
                                       replace=False).sum()) for lb in labels]
            ivs = [wilson_interval(int(s), n) for s in succ]
            total += sum(overlaps(ivs[i], ivs[j]) for i, j in pairs) / len(pairs)
        out_n.append(n)
        out_share.append(total / reps)
    return {"n": out_n, "share": out_share, "pairs": len(pairs), "paired": paired}

"""The Kubernetes grader: probe outcomes from the backend compared with the intended
connectivity, rendered as upstream's mismatch report and scored by
:mod:`netarena_gym.core.metrics` as a vector of "probe behaves as intended".

Upstream's line: ``Mismatch: <src> → <service>:<port> (Expected: <bool>, Actual: <bool>)``,
grouped by source in probe order, or ``No mismatches found.``. The env's text observation
is printable ASCII, so it writes the arrow as ``->`` (``arrow="→"`` gives upstream's).
"""
from __future__ import annotations

import numpy as np

from netarena_gym.k8s.workload import ProbeSet

NO_MISMATCH = "No mismatches found."


def mismatch_lines(probes: ProbeSet, actual: np.ndarray, arrow: str = "->") -> list[str]:
    exp = probes.expected
    out = []
    for k in np.flatnonzero(actual != np.asarray(exp, dtype=bool)):
        p = probes.probes[int(k)]
        out.append(f"Mismatch: {p.source} {arrow} {p.service}:{p.port} "
                   f"(Expected: {exp[k]}, Actual: {bool(actual[k])})")
    return out


def mismatch_report(probes: ProbeSet, actual: np.ndarray, arrow: str = "->") -> str:
    lines = mismatch_lines(probes, actual, arrow)
    return "\n".join(lines) if lines else NO_MISMATCH

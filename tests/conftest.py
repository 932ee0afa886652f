"""Suite-wide pytest hooks: one worker for the real backends, and after the run one line
per skip reason with its count.

Tests that need an optional extra, root or a service skip with the exact step that enables
them; without ``-rs`` pytest only prints the number of skips, so this summary says why.

The suite runs on pytest-xdist workers (README's test command: ``-n auto --maxprocesses 2
--dist loadgroup``). Tests that drive a real system the machine has one of (Mininet's
network namespaces and bridges, the Kubernetes API server, the Ray cluster, a local Ray
instance) all go to one ``xdist_group``, so they run one after another on one worker, as
they did before the suite ran in parallel; the rest are spread over the workers test by
test. Without ``-n`` (a plain ``pytest``) the group marker does nothing.
"""
from __future__ import annotations

from collections import Counter

import pytest

#: markers of the tests that share one real system of the machine
SERIAL_MARKERS: tuple[str, ...] = ("mininet", "kubernetes", "ray_cluster")
#: test files that start a local Ray instance (``ray.init``) without such a marker
SERIAL_FILES: frozenset[str] = frozenset({"test_ray_pool.py", "test_ray_cluster.py"})
#: the xdist group those tests share
SERIAL_GROUP = "real-systems"


def needs_serial(item) -> bool:
    """Whether ``item`` drives one of the machine's shared real systems."""
    return (item.path.name in SERIAL_FILES
            or any(item.get_closest_marker(m) is not None for m in SERIAL_MARKERS))


# tryfirst: xdist's own hook reads the group marker to give the test its group, so the
# marker must be on the item before that hook runs
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if needs_serial(item):
            item.add_marker(pytest.mark.xdist_group(SERIAL_GROUP))


def skip_reason(report) -> str:
    """The reason of a skipped test report, without pytest's ``Skipped: `` prefix."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2])
    else:
        reason = str(longrepr)
    return reason.removeprefix("Skipped: ").strip()


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if r.skipped]
    if not skipped:
        return
    reasons = Counter(skip_reason(r) for r in skipped)
    terminalreporter.section(f"{len(skipped)} skipped, by reason", sep="-")
    for reason, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])):
        terminalreporter.write_line(f"{n:4d} x {reason}")

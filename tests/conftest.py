"""Suite-wide pytest hooks: after the run, one line per skip reason with its count.

Tests that need an optional extra, root or a service skip with the exact step that enables
them; without ``-rs`` pytest only prints the number of skips, so this summary says why.
"""
from __future__ import annotations

from collections import Counter


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

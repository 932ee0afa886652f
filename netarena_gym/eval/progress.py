"""A one-line live progress display on stderr (plain ``\\r`` updates, no dependencies).

Shows episodes done, running correctness and safety, episodes per second and the time
left. It is silent when the stream is not a terminal (CI logs, pipes) or when disabled."""
from __future__ import annotations

import math
import sys
import time


def _fmt_time(s: float) -> str:
    s = int(max(0, s))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Progress:
    def __init__(self, total: int, *, done: int = 0, correct: int = 0, safe: int = 0,
                 stream=None, enabled: bool | None = None, label: str = "",
                 min_interval: float = 0.1):
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.enabled = enabled
        self.total, self.label, self.min_interval = total, label, min_interval
        self.done, self.correct, self.safe = done, correct, safe
        self.new = 0
        self.t0 = time.perf_counter()
        self._last = 0.0
        self._width = 0

    def update(self, record: dict) -> None:
        self.done += 1
        self.new += 1
        self.correct += bool(record.get("correct"))
        self.safe += bool(record.get("safe"))
        now = time.perf_counter()
        if self.enabled and (now - self._last >= self.min_interval or self.done == self.total):
            self._last = now
            self._draw(now)

    def line(self, now: float | None = None) -> str:
        now = time.perf_counter() if now is None else now
        el = now - self.t0
        rate = self.new / el if el > 0 else 0.0
        left = (self.total - self.done) / rate if rate > 0 else float("nan")
        n = max(1, self.done)
        width = 24
        fill = int(width * self.done / max(1, self.total))
        bar = "#" * fill + "-" * (width - fill)
        eta = "?" if math.isnan(left) else _fmt_time(left)
        return (f"{self.label}[{bar}] {self.done}/{self.total}  correct {100 * self.correct / n:5.1f}%"
                f"  safe {100 * self.safe / n:5.1f}%  {rate:6.2f} ep/s  eta {eta}")

    def _draw(self, now: float) -> None:
        s = self.line(now)
        pad = max(0, self._width - len(s))
        self._width = len(s)
        self.stream.write("\r" + s + " " * pad)
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self._width:
            self.stream.write("\n")
            self.stream.flush()

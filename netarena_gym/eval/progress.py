"""The one progress display of the CLI: a ``rich`` progress bar on stderr.

Shows items done out of the total, the rate (items per second, counting only the items
played in this process, not those resumed from disk), the elapsed time and the time left;
for episodes also the running correctness and safety. It is off when the stream is not a
terminal (CI logs, pipes) unless forced with ``enabled=True`` (``--progress``), and off
with ``enabled=False`` (``--quiet``). Mirrors ``rich.progress`` (rich >= 13); what it leaves
out: nested bars and transient display.
"""
from __future__ import annotations

import sys
from typing import Iterable, Iterator, TypeVar

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, ProgressColumn, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)
from rich.progress import Progress as RichProgress
from rich.text import Text

T = TypeVar("T")


class RateColumn(ProgressColumn):
    """``12.34 ep/s`` (``?`` until the first item is done)."""

    def __init__(self, unit: str):
        super().__init__()
        self.unit = unit

    def render(self, task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("?" if speed is None else f"{speed:.2f} {self.unit}/s", style="cyan")


def is_terminal(stream) -> bool:
    return bool(getattr(stream, "isatty", lambda: False)())


class Progress:
    """A progress bar over ``total`` items, of which ``done`` are already finished.

    ``update(record)`` counts one item; for episode records (dicts with ``correct`` and
    ``safe``) it also keeps the running correctness and safety shown on the bar."""

    def __init__(self, total: int, *, done: int = 0, correct: int = 0, safe: int = 0,
                 stream=None, enabled: bool | None = None, label: str = "",
                 unit: str = "ep", stats: bool = True, min_interval: float = 0.25):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = is_terminal(self.stream) if enabled is None else bool(enabled)
        self.total, self.label, self.unit, self.stats = total, label, unit, stats
        self.done, self.correct, self.safe = done, correct, safe
        self._bar = None
        if self.enabled:
            width = None if is_terminal(self.stream) else 132  # forced onto a file or pipe
            console = Console(file=self.stream, force_terminal=True, width=width)
            auto = min_interval > 0
            self._bar = RichProgress(
                TextColumn("{task.description}"), BarColumn(bar_width=24),
                MofNCompleteColumn(), TextColumn("{task.fields[stats]}"),
                RateColumn(unit), TimeElapsedColumn(), TextColumn("eta"),
                TimeRemainingColumn(), console=console, auto_refresh=auto,
                refresh_per_second=1 / min_interval if auto else 10, redirect_stdout=False,
                redirect_stderr=False)
            self._task = self._bar.add_task(label.strip(), total=total, completed=done,
                                            stats=self.stats_text())
            self._bar.start()

    def stats_text(self) -> str:
        if not self.stats:
            return ""
        n = max(1, self.done)
        return f"correct {100 * self.correct / n:5.1f}%  safe {100 * self.safe / n:5.1f}%"

    def update(self, record: dict | None = None, advance: int = 1) -> None:
        self.done += advance
        if record is not None:
            self.correct += bool(record.get("correct"))
            self.safe += bool(record.get("safe"))
        if self._bar is not None:
            self._bar.update(self._task, advance=advance, stats=self.stats_text())
            if not self._bar.live.auto_refresh:
                self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def track(items: Iterable[T], total: int, *, label: str = "", unit: str = "it",
          enabled: bool | None = None, stream=None) -> Iterator[T]:
    """Iterate ``items`` with a bar (no episode statistics)."""
    with Progress(total, label=label, unit=unit, stats=False, enabled=enabled,
                  stream=stream) as bar:
        for x in items:
            yield x
            bar.update()

"""Allow-list mechanics every task's shell shares: the refusal result, the parse cache, and
checking every simple command of a parsed command line against a per-task policy.

A task supplies only its policy, ``refusal(cmd, position) -> str | None`` (``position`` is
the command's index in its pipeline: text filters may only read a pipe). The shell's own
features (subshells, background jobs, input redirection, ``2>`` to a file) are refused by
:func:`~netarena_gym.shell.parser.parse_command_line`; the text filters' file operands and
output options by :func:`~netarena_gym.shell.filters.operand_refusal`, which
:func:`check_command_line` applies to every filter whatever the task.
"""
from __future__ import annotations

import time
from collections.abc import Callable

from netarena_gym.shell.filters import FILTER_NAMES, operand_refusal, run_filter
from netarena_gym.shell.parser import (
    INVALID, TIMEOUT, CommandLine, CommandResult, Executor, ShellSyntaxError, SimpleCommand,
    Writer, null_writer, parse_command_line, refused, run_command_line)

__all__ = ["STEP_TIMEOUT", "LineBudget", "ParseCache", "Policy", "check_command_line",
           "filter_position_refusal", "line_budget_seconds", "parse", "refused",
           "run_pipeline"]

#: a real backend's default budget of one command line, in seconds (or its per-command
#: timeout, when that is longer): see :class:`LineBudget`
STEP_TIMEOUT = 5.0

Policy = Callable[[SimpleCommand, int], "str | None"]


def filter_position_refusal(cmd: SimpleCommand, position: int, source: str) -> str | None:
    """Filters read only a pipe: refused first in a pipeline or with a file operand."""
    if cmd.argv[0] not in FILTER_NAMES:
        return None
    if position == 0:
        return f"{cmd.argv[0]} may only read the output of {source} through a pipe"
    return operand_refusal(cmd.argv)


def check_command_line(cl: CommandLine, policy: Policy) -> str | None:
    """The first refusal ``policy`` gives for a simple command of ``cl``, or None."""
    for _, pipe in cl.items:
        for pos, cmd in enumerate(pipe.commands):
            why = policy(cmd, pos)
            if why:
                return why
    return None


def parse(command: str) -> tuple[CommandLine | None, CommandResult | None]:
    """(command line, None), or (None, the observation of a syntax error or refusal)."""
    try:
        cl = parse_command_line(command)
    except ShellSyntaxError as e:
        if e.refused:
            return None, refused(str(e).removeprefix("netarena: "))
        return None, CommandResult(f"{e}\n", 2, INVALID)
    if not cl.items:
        return None, CommandResult("netarena: empty command\n", 2, INVALID)
    return cl, None


class ParseCache:
    """Memoises a pure ``command -> result`` function (parsing and the static allow-list
    check), bounded: cleared when full. Cached values must not be mutated."""

    def __init__(self, fn: Callable[[str], object], size: int = 8192):
        self.fn, self.size, self._hits = fn, size, {}

    def __call__(self, command: str):
        hit = self._hits.get(command)
        if hit is None:
            if len(self._hits) >= self.size:
                self._hits.clear()
            hit = self._hits[command] = self.fn(command)
        return hit


def run_pipeline(cl: CommandLine, execute: Executor, write: Writer = null_writer) -> CommandResult:
    """Run ``cl``: text filters in-process on the output piped into them (a filter that
    fails printed only its error, on stderr), every other simple command through the
    task's ``execute(cmd, stdin)``; ``>`` redirects through ``write``
    (:data:`~netarena_gym.shell.parser.Writer`)."""
    def one(cmd: SimpleCommand, data: str) -> CommandResult:
        if cmd.argv[0] in FILTER_NAMES:
            res = run_filter(cmd.argv, data)
            return res.as_stderr() if res.status != 0 else res
        return execute(cmd, data)
    return run_command_line(cl, one, write)


def line_budget_seconds(step_timeout: float | None, command_timeout: float) -> float:
    """A real backend's ``step_timeout`` checked, or its default: :data:`STEP_TIMEOUT`
    or ``command_timeout``, whichever is longer. ValueError names a bad value."""
    if step_timeout is None:
        return max(STEP_TIMEOUT, float(command_timeout))
    if isinstance(step_timeout, bool) or not isinstance(step_timeout, (int, float)) \
            or not 0 < step_timeout < float("inf"):
        raise ValueError(f"step_timeout must be seconds > 0, got {step_timeout!r}")
    return float(step_timeout)


class LineBudget:
    """The wall-clock budget of one command line on a real backend (``step_timeout``
    seconds from its start), shared by the line's commands: each gets at most what is
    left of it and its own ``command_timeout``; one that runs past it is killed by its
    runner and the rest of the line is not run. The simulators are bounded by the core's
    step deadline instead (a signal: no process to kill)."""

    __slots__ = ("seconds", "command_timeout", "deadline")

    def __init__(self, seconds: float, command_timeout: float):
        self.seconds = float(seconds)
        self.command_timeout = float(command_timeout)
        self.deadline = time.monotonic() + self.seconds

    def limit(self) -> float:
        """Seconds the next command may run: its own timeout or what is left of the line's
        budget, whichever is less (<= 0: spent, see :meth:`spent`)."""
        return min(self.command_timeout, self.deadline - time.monotonic())

    def spent(self, prog: str) -> CommandResult | None:
        """The result of not running ``prog`` because the budget is spent, else None."""
        if self.deadline - time.monotonic() > 0:
            return None
        return CommandResult(f"netarena: {prog} not run: the command line's budget of "
                             f"{self.seconds:g} s (step_timeout) is spent\n", 124, TIMEOUT)

    def timed_out(self, limit: float, output: str = "") -> CommandResult:
        """The result of a command killed after ``limit`` seconds (what :meth:`limit`
        gave it), with what it printed first."""
        why = (f"after {self.command_timeout:g} s" if limit >= self.command_timeout
               else f"after {limit:.3g} s: the command line's budget of "
               f"{self.seconds:g} s (step_timeout) is spent")
        return CommandResult(output + f"netarena: command timed out {why} (killed)\n", 124,
                             TIMEOUT)

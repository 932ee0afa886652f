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

from collections.abc import Callable

from netarena_gym.shell.filters import FILTER_NAMES, operand_refusal, run_filter
from netarena_gym.shell.parser import (
    INVALID, CommandLine, CommandResult, Executor, ShellSyntaxError, SimpleCommand,
    parse_command_line, refused, run_command_line)

__all__ = ["ParseCache", "Policy", "check_command_line", "filter_position_refusal", "parse",
           "refused", "run_pipeline"]

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


def run_pipeline(cl: CommandLine, execute: Executor) -> CommandResult:
    """Run ``cl``: text filters in-process on the output piped into them, every other simple
    command through the task's ``execute(cmd, stdin)``."""
    def one(cmd: SimpleCommand, data: str) -> CommandResult:
        if cmd.argv[0] in FILTER_NAMES:
            return run_filter(cmd.argv, data)
        return execute(cmd, data)
    return run_command_line(cl, one)

"""Runs one agent command line on a simulated node: parse and allow-list (cached, shared
with the real backend through :func:`precheck`), text filters in-process
(:func:`netarena_gym.shell.policy.run_pipeline`), every other simple command to its
handler, then redirects."""
from __future__ import annotations

import logging

from netarena_gym.shell.parser import ERROR, INVALID, CommandResult
from netarena_gym.shell.policy import ParseCache, parse, refused, run_pipeline
from netarena_gym.routing.commands.allowlist import (
    check_command_line, machine_refusal, redirect_target)
from netarena_gym.routing.commands import CommandContext, get_handler
from netarena_gym.routing.state import Network

log = logging.getLogger(__name__)

__all__ = ["not_found", "precheck", "refused", "run"]


def _parse_and_check(command: str):
    """Parse and allow-list one command line (pure, so memoised by its text)."""
    cl, early = parse(command)
    if early is not None:
        return None, early
    why = check_command_line(cl)
    if why:
        return None, refused(why)
    return cl, None


_CHECKED = ParseCache(_parse_and_check)


def not_found(prog: str) -> CommandResult:
    """What bash prints for a program that is not installed (every backend)."""
    return CommandResult(f"bash: {prog}: command not found\n", 127, INVALID)


def precheck(machines, switches, machine: str, command: str):
    """Shared by every backend: returns (parsed command line, None) or (None, result)."""
    bad = machine_refusal(machine, machines, switches)
    if bad is not None:
        msg, is_refusal = bad
        return None, (refused(msg) if is_refusal
                      else CommandResult(f"netarena: {msg}\n", 2, INVALID))
    return _CHECKED(command)


def run(net: Network, switches, machine: str, command: str, timeout_s: float,
        missing: frozenset[str] = frozenset()) -> CommandResult:
    """``missing``: programs absent from the image (a compat profile), answered as bash
    answers a program that is not installed."""
    cl, early = precheck(net.nodes, switches, machine, command)
    if early is not None:
        return early
    ctx = CommandContext(net, net.nodes[machine], timeout_s)

    def one(cmd, stdin: str) -> CommandResult:
        handler = None if cmd.argv[0] in missing else get_handler(cmd.argv[0])
        if handler is None:
            return not_found(cmd.argv[0])
        try:
            res = handler(ctx, list(cmd.argv), stdin)
        except Exception:  # a simulator bug must never crash an episode
            log.exception("simulator error running %r on %s", cmd.argv, machine)
            return CommandResult(f"netarena: simulator error running {cmd.argv[0]}\n", 1, ERROR)
        if cmd.redirect is not None and res.status == 0:
            from netarena_gym.routing.commands.files import write_redirect
            w = write_redirect(ctx, redirect_target(cmd.redirect[1]), res.output,
                               cmd.redirect[0] == ">>", prog=cmd.argv[0])
            return CommandResult(w.output, w.status, CommandResult.worst(res.kind, w.kind))
        return res

    return run_pipeline(cl, one)

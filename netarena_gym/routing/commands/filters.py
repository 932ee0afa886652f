"""Routing-shell handlers for the read-only text filters of :mod:`netarena_gym.shell.filters`
(``grep``, ``egrep``, ``fgrep``, ``head``, ``tail``, ``wc``, ``sort``, ``uniq``). File operands
are the node's readable files (``grep 1 /proc/sys/net/ipv4/ip_forward``), see
:func:`~netarena_gym.routing.commands.files.read_path`."""
from __future__ import annotations

from netarena_gym.shell import filters as textfilters
from netarena_gym.shell.parser import CommandResult
from netarena_gym.routing.commands import CommandContext, register
from netarena_gym.routing.commands.files import read_path

__all__ = ["filter_cmd"]


@register("grep", "egrep", "fgrep", "head", "tail", "wc", "sort", "uniq")
def filter_cmd(ctx: CommandContext, argv: list[str], stdin: str) -> CommandResult:
    prog = argv[0]
    if prog in ("egrep", "fgrep"):
        argv = ["grep", "-E" if prog == "egrep" else "-F"] + argv[1:]
    return textfilters.FILTERS[argv[0]](argv, stdin, lambda path: read_path(ctx, path))

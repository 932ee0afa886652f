"""``ip neigh`` (iproute2 6.1): show and flush the dynamic neighbour cache of
:mod:`netarena_gym.routing.neigh` (entries exist only where traffic resolved them).

Left out: ``add``/``change``/``replace``/``del``/``get`` (refused as not simulated), proxy
entries and the ``-s`` statistics of ``show``.
"""
from __future__ import annotations

from netarena_gym.core.ipv4 import in_prefix, int_to_ip
from netarena_gym.shell.parser import INVALID, OK, CommandResult
from netarena_gym.routing import neigh
from netarena_gym.routing.commands.ip_common import (
    ArgReader, IpExit, IpOpts, duparg, get_prefix, matches, nodev, unsupported)
from netarena_gym.routing.state import Network, Node

__all__ = ["NUD_STATES", "do_ipneigh"]

NUD_STATES = ("permanent", "reachable", "noarp", "none", "incomplete", "delay", "probe",
              "failed", "stale")


def _flush_report(opts: IpOpts, n: int) -> str:
    if not opts.stats:
        return ""
    if n == 0:
        return "Nothing to flush.\n"
    return (f"\n*** Round 1, deleting {n} entries ***\n"
            "*** Flush is complete after 1 round ***\n")


def _show(net: Network, node: Node, opts: IpOpts, args: ArgReader, flush: bool) -> CommandResult:
    if flush and not args:
        raise IpExit("Flush requires arguments.\n", 1, INVALID)
    dev = None
    pfx = None
    states: set[str] | None = None
    while args:
        a = args.take()
        if a == "dev":
            v = args.next()
            if dev is not None:
                raise duparg("dev", v)
            dev = v
        elif a == "nud":
            v = args.next().lower()
            if v == "all":
                states = set(NUD_STATES)
            elif v in NUD_STATES:
                states = (states or set()) | {v}
            else:
                raise IpExit(f'Error: argument "{v}" is wrong: nud state is bad\n', 255,
                             INVALID)
        elif a in ("master", "vrf") or matches(a, "protocol"):
            args.next()
        elif a in ("unused", "proxy"):
            pass
        else:
            if a == "to":
                a = args.next()
            if matches(a, "help"):
                raise IpExit("Usage: ip neigh { add | del | change | replace }\n", 255,
                             INVALID)
            n, p, _ = get_prefix(a, opts.family)
            pfx = (n, p)
    if dev is not None and dev not in node.interfaces:
        raise nodev(dev)
    if flush:
        return CommandResult(_flush_report(opts, neigh.flush(net, node, dev, pfx)), 0, OK)
    lines = []
    for e in neigh.entries(net, node, dev):
        if pfx is not None and not in_prefix(e.ip, pfx[0], pfx[1]):
            continue
        if states is not None and e.state.lower() not in states:
            continue
        dev_s = "" if dev is not None else f"dev {e.dev} "
        ll = f"lladdr {e.mac} " if e.mac is not None else ""
        lines.append(f"{int_to_ip(e.ip)} {dev_s}{ll}{e.state} \n")
    return CommandResult("".join(lines), 0, OK)


def do_ipneigh(net: Network, node: Node, opts: IpOpts, argv: list[str]) -> CommandResult:
    args = ArgReader(argv)
    if not args:
        return _show(net, node, opts, args, flush=False)
    cmd = args.take()
    if (matches(cmd, "add") or matches(cmd, "change") or cmd == "chg"
            or matches(cmd, "replace") or matches(cmd, "delete") or matches(cmd, "get")):
        raise unsupported(f'"ip neigh {cmd}"')
    if matches(cmd, "show") or matches(cmd, "lst") or matches(cmd, "list"):
        return _show(net, node, opts, args, flush=False)
    if matches(cmd, "flush"):
        return _show(net, node, opts, args, flush=True)
    if matches(cmd, "help"):
        raise IpExit("Usage: ip neigh { add | del | change | replace }\n", 255, INVALID)
    raise IpExit(f'Command "{cmd}" is unknown, try "ip neigh help".\n', 255, INVALID)

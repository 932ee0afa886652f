"""``ip neigh`` (iproute2 6.1): show and flush the dynamic neighbour cache of
:mod:`netarena_gym.routing.neigh` (entries exist only where traffic resolved them), and
``add``/``replace``/``change``/``del`` of permanent entries, with ``ipneigh_modify``'s
argument walk and messages and the kernel's answers (``File exists`` for an existing entry,
dynamic or not; ``No link layer address given.``; ``Invalid link address.`` for a MAC of
the wrong length).

Entries on ``lo`` are keyed as 0.0.0.0, as the kernel keys every neighbour of a loopback
device: ``add``/``replace`` of any other address creates or overrides the one 0.0.0.0
entry (so a second ``add`` succeeds, and without ``lladdr`` keeps its MAC), ``del`` and
``change`` of any other address find nothing (measured on Mininet, Linux 6.18).

Left out: ``get`` and ``nud`` states other than ``permanent`` for ``add`` (refused as not
simulated), proxy entries and the ``-s`` statistics of ``show``.
"""
from __future__ import annotations

from netarena_gym.core.ipv4 import in_prefix, int_to_ip
from netarena_gym.shell.parser import ERROR, INVALID, OK, CommandResult
from netarena_gym.routing import neigh
from netarena_gym.routing.commands.ip_common import (
    ArgReader, IpExit, IpOpts, duparg, duparg2, extack_error, get_addr, get_prefix,
    invarg, kernel_error, matches, nodev, unsupported)
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


def _once(args: ArgReader, key: str, current: str | None) -> str:
    """The value after ``key``; a second one is ``duparg``."""
    v = args.next()
    if current is not None:
        raise duparg(key, v)
    return v


def _show(net: Network, node: Node, opts: IpOpts, args: ArgReader, flush: bool) -> CommandResult:
    if flush and not args:
        raise IpExit("Flush requires arguments.\n", 1, INVALID)
    dev = None
    pfx = None
    states: set[str] | None = None
    while args:
        a = args.take()
        if a == "dev":
            dev = _once(args, "dev", dev)
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
        n = neigh.flush(net, node, dev, pfx, states)
        return CommandResult(_flush_report(opts, n), 0, OK)
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


def _lladdr(text: str) -> str:
    """``ll_addr_a2n``: colon-separated hex bytes, printed back as two-digit hex."""
    out = []
    for part in text.split(":"):
        try:
            v = int(part, 16) if part and len(part) <= 2 else -1
        except ValueError:
            v = -1
        if v < 0:
            raise IpExit(f'"{text}" is invalid lladdr.\n', 1, ERROR)
        out.append(f"{v:02x}")
    return ":".join(out)


def _modify(net: Network, node: Node, opts: IpOpts, args: ArgReader, mode: str) -> CommandResult:
    dev = lla = None
    dst = None
    nud = "permanent"
    while args:
        a = args.take()
        if matches(a, "lladdr"):
            lla = _once(args, "lladdr", lla)
        elif a == "nud":
            v = args.next().lower()
            if v not in NUD_STATES:
                raise invarg("nud state is bad", v)
            nud = v
        elif a == "dev":
            dev = args.next()
        elif matches(a, "proxy"):
            raise unsupported('"ip neigh ... proxy"')
        elif a in ("router", "extern_learn", "managed") or matches(a, "protocol"):
            if matches(a, "protocol"):
                args.next()
        else:
            if a == "to":
                a = args.next()
            if dst is not None:
                raise duparg2("to", a)
            dst = get_addr(a, opts.family)
    if dev is None or dst is None:
        raise IpExit("Device and destination are required arguments.\n", 255, INVALID)
    mac = _lladdr(lla) if lla is not None and lla != "null" else None
    itf = node.interfaces.get(dev)
    if itf is None:
        raise nodev(dev)
    if itf.loopback and dst != 0:
        # the kernel keys every entry on a loopback device as 0.0.0.0: the lookup of the
        # address given finds nothing, and creating one finds and overrides 0.0.0.0's
        if mode in ("del", "change"):
            raise kernel_error("No such file or directory")
        mode, dst = "replace", 0
        if mac is None:
            mac = node.static_neigh.get((dev, 0))  # no lladdr: a valid entry keeps its own
    if mode == "del":
        if not neigh.delete(net, node, dst, dev):
            raise kernel_error("No such file or directory")
        return CommandResult("", 0, OK)
    if nud not in ("permanent", "noarp"):
        raise unsupported(f'"ip neigh {mode} ... nud {nud}"')
    if mac is None:
        raise extack_error("No link layer address given.")
    if mac.count(":") != 5:
        raise extack_error("Invalid link address.")
    why = neigh.add(net, node, dev, dst, mac, mode)
    if why is not None:
        raise IpExit(why + "\n", 2, ERROR)
    return CommandResult("", 0, OK)


def do_ipneigh(net: Network, node: Node, opts: IpOpts, argv: list[str]) -> CommandResult:
    args = ArgReader(argv)
    if not args:
        return _show(net, node, opts, args, flush=False)
    cmd = args.take()
    if matches(cmd, "add"):
        return _modify(net, node, opts, args, "add")
    if matches(cmd, "change") or cmd == "chg":
        return _modify(net, node, opts, args, "change")
    if matches(cmd, "replace"):
        return _modify(net, node, opts, args, "replace")
    if matches(cmd, "delete"):
        return _modify(net, node, opts, args, "del")
    if matches(cmd, "get"):
        raise unsupported(f'"ip neigh {cmd}"')
    if matches(cmd, "show") or matches(cmd, "lst") or matches(cmd, "list"):
        return _show(net, node, opts, args, flush=False)
    if matches(cmd, "flush"):
        return _show(net, node, opts, args, flush=True)
    if matches(cmd, "help"):
        raise IpExit("Usage: ip neigh { add | del | change | replace }\n", 255, INVALID)
    raise IpExit(f'Command "{cmd}" is unknown, try "ip neigh help".\n', 255, INVALID)

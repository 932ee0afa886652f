"""``ip neigh``: the neighbour (ARP) table, derived from the topology.

The simulator keeps no ARP cache. A node is taken to have resolved every neighbour it
could talk to: for each of its up interfaces with addresses, every other member of the
interface's L2 segment whose interface is up and holds an address inside one of this
interface's connected subnets. ``arp`` (net-tools) shows the same view.
"""
from __future__ import annotations

from netarena_gym.core.ipv4 import in_prefix, int_to_ip
from netarena_gym.shell.parser import INVALID, OK, CommandResult
from netarena_gym.routing.commands.ip_common import (
    ArgReader, IpExit, IpOpts, duparg, get_prefix, matches, nodev, unsupported)
from netarena_gym.routing.state import Network, Node

__all__ = ["Neighbour", "neighbours", "do_ipneigh"]

Neighbour = tuple[int, str, str]  # (ip, local interface, peer MAC)


def neighbours(net: Network, node: Node, ifname: str | None = None) -> list[Neighbour]:
    """Resolved neighbours of ``node`` (optionally on ``ifname`` only), in interface order
    then segment order."""
    out: list[Neighbour] = []
    itfs = node.interfaces.values() if ifname is None else [node.interfaces[ifname]]
    for itf in itfs:
        if not itf.up or not itf.addresses or itf.loopback:
            continue
        seg = net.segment_of.get((node.name, itf.name))
        if seg is None:
            continue
        subnets = [(a.net, a.plen) for a in itf.addresses]
        for pname, pif in net.segments[seg]:
            if pname == node.name and pif == itf.name:
                continue
            peer = net.nodes.get(pname)
            pitf = peer.interfaces.get(pif) if peer is not None else None
            if pitf is None or not pitf.up:
                continue
            for a in pitf.addresses:
                if any(in_prefix(a.ip, n, p) for n, p in subnets):
                    out.append((a.ip, itf.name, pitf.mac))
    return out


def _show(net: Network, node: Node, opts: IpOpts, args: ArgReader, flush: bool) -> CommandResult:
    if flush and not args:
        raise IpExit("Flush requires arguments.\n", 1, INVALID)
    dev = None
    pfx = None
    while args:
        a = args.take()
        if a == "dev":
            v = args.next()
            if dev is not None:
                raise duparg("dev", v)
            dev = v
        elif a in ("master", "vrf", "nud") or matches(a, "protocol"):
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
        return CommandResult("", 0, OK)  # entries come back as soon as they are derived
    lines = []
    for ip, ifname, mac in neighbours(net, node, dev):
        if pfx is not None and not in_prefix(ip, pfx[0], pfx[1]):
            continue
        dev_s = "" if dev is not None else f"dev {ifname} "
        lines.append(f"{int_to_ip(ip)} {dev_s}lladdr {mac} REACHABLE\n")
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

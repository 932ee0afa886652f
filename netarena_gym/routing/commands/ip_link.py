"""``ip link``: show and set interfaces, plus the link header that ``ip addr`` shares."""
from __future__ import annotations

from netarena_gym.shell.parser import INVALID, OK, CommandResult
from netarena_gym.routing.commands.ip_common import (
    ArgReader, IpExit, IpOpts, duparg, duparg2, extack_error, invarg, matches, no_such_device_dump,
    nodev, unsupported)
from netarena_gym.routing.state import Interface, Node

ETH_MIN_MTU, ETH_MAX_MTU = 68, 65535

_STATS_LINES = (
    "    RX:  bytes packets errors dropped  missed   mcast           ",
    "             0       0      0       0       0       0 ",
    "    TX:  bytes packets errors dropped carrier collsns           ",
    "             0       0      0       0       0       0 ",
)


# ------------------------------------------------------------------------ link records
def link_flags(itf: Interface) -> str:
    """The ``<...>`` flag list in iproute2's fixed order."""
    parts = ["LOOPBACK"] if itf.loopback else ["BROADCAST", "MULTICAST"]
    if itf.up and not itf.carrier:
        parts.insert(0, "NO-CARRIER")
    if itf.noarp:
        parts.append("NOARP")
    if itf.promisc:
        parts.append("PROMISC")
    if itf.up:
        parts.append("UP")
        if itf.carrier:
            parts.append("LOWER_UP")
    return ",".join(parts)


def operstate(itf: Interface, node: Node | None = None) -> str:
    """``IFLA_OPERSTATE``. Without carrier, Linux >= 6.12 (``default_operstate``) looks the
    device's ``iflink`` (for a veth, the peer's ifindex in the peer's namespace) up in the
    device's own namespace: LOWERLAYERDOWN only if a device there has that index, is not
    the device itself and has no carrier either; DOWN otherwise (measured on Mininet,
    Linux 6.18: ``r1-eth3@if5`` LOWERLAYERDOWN while r1's index 5 had no carrier,
    ``r1-eth4@if5`` DOWN). The kernel works it out when the carrier changes; the model
    works it out from the current carriers (``node``: the device's node)."""
    if not itf.up:
        return "DOWN"
    if not itf.carrier:
        peer = itf.peer
        if node is None or peer is None or peer.ifindex == itf.ifindex:
            return "DOWN"
        same = next((i for i in node.interfaces.values() if i.ifindex == peer.ifindex), None)
        return "LOWERLAYERDOWN" if same is not None and not same.carrier else "DOWN"
    return "UNKNOWN" if itf.loopback else "UP"


def link_name(itf: Interface) -> str:
    """``name@ifN`` for a veth whose peer lives in another namespace."""
    if itf.peer_ifindex is None:
        return itf.name
    return f"{itf.name}@if{itf.peer_ifindex}"


def qdisc_name(itf: Interface) -> str:
    return itf.qdisc.kind if itf.qdisc is not None else "noqueue"


def _details(itf: Interface, do_link: bool) -> tuple[str, list[str]]:
    """What ``-details`` adds: a tail for the link/ether line and the link-kind line."""
    # Linux >= 6.0 also reports IFLA_ALLMULTI (real: "promiscuity 0  allmulti 0 minmtu 68")
    tail = f" promiscuity {1 if itf.promisc else 0}  allmulti 0 "
    gen = "addrgenmode eui64 " if do_link else ""
    queues = ("numtxqueues 1 numrxqueues 1 gso_max_size 65536 gso_max_segs 65535 "
              "tso_max_size 524280 tso_max_segs 65535 gro_max_size 65536 ")
    if itf.loopback:
        return tail + "minmtu 0 maxmtu 0 " + gen + queues, []
    return tail + f"minmtu {ETH_MIN_MTU} maxmtu {ETH_MAX_MTU} ", ["    veth " + gen + queues]


def link_record(itf: Interface, opts: IpOpts, do_link: bool, node: Node | None = None) -> list[str]:
    """The lines ``print_linkinfo`` prints for one interface (no trailing newline)."""
    mode = "mode DEFAULT " if do_link else ""
    head = (f"{itf.ifindex}: {link_name(itf)}: <{link_flags(itf)}> mtu {itf.mtu} "
            f"qdisc {qdisc_name(itf)} state {operstate(itf, node)} {mode}group default qlen 1000")
    lines = [head]
    if do_link or opts.family is None or opts.details:
        if itf.loopback:
            lines.append("    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00")
        else:
            lines.append(f"    link/ether {itf.mac} brd ff:ff:ff:ff:ff:ff")
    if itf.peer_ifindex is not None:
        lines[-1] += " link-netnsid 0"
    if opts.details:
        tail, extra = _details(itf, do_link)
        lines[-1] += tail
        lines.extend(extra)
    if (do_link or opts.details) and itf.alias:
        lines.append(f"    alias {itf.alias}")
    if do_link and opts.stats:
        lines.extend(_STATS_LINES)
    return lines


def stats_lines() -> tuple[str, ...]:
    return _STATS_LINES


def brief_link_line(itf: Interface, node: Node | None = None) -> str:
    return (f"{link_name(itf):<16} {operstate(itf, node):<14} {itf.mac} "
            f"<{link_flags(itf)}> ")


def ordered_interfaces(node: Node) -> list[Interface]:
    return sorted(node.interfaces.values(), key=lambda i: i.ifindex)


# ------------------------------------------------------------------------- ip link show
def _show(node: Node, opts: IpOpts, args: ArgReader) -> CommandResult:
    dev = None
    up_only = False
    while args:
        a = args.take()
        if a == "up":
            up_only = True
        elif a in ("type", "group", "master", "vrf"):
            args.next()  # accepted filters that select every simulated veth
        elif a == "help" or (a != "dev" and matches(a, "help")):
            raise IpExit('Usage: ip link show [ DEVICE | group GROUP ] [up] [master DEV] '
                         '[vrf NAME] [type TYPE]\n', 255, INVALID)
        else:
            if a == "dev":
                a = args.next()
            if dev is not None:
                raise duparg2("dev", a)
            dev = a
    if dev is not None:
        itf = node.interfaces.get(dev)
        if itf is None:
            raise no_such_device_dump(dev)
        itfs = [itf]
    else:
        itfs = ordered_interfaces(node)
    out = []
    for itf in itfs:
        if up_only and not itf.up:
            continue
        if opts.brief:
            out.append(brief_link_line(itf, node))
        else:
            out.append(opts.sl.join(link_record(itf, opts, do_link=True, node=node)))
    return CommandResult("".join(line + "\n" for line in out), 0, OK)


# -------------------------------------------------------------------------- ip link set
def _on_off(word: str, value: str) -> bool:
    if value == "on":
        return True
    if value == "off":
        return False
    raise IpExit(f'Error: argument of "{word}" must be "on" or "off", not "{value}"\n', 1,
                 INVALID)


def _parse_int(s: str) -> int | None:
    try:
        return int(s, 0)
    except ValueError:
        return None


def _set(node: Node, args: ArgReader) -> CommandResult:
    dev = None
    up = promisc = alias = arp = None
    mtu = None
    while args:
        a = args.take()
        if a == "up":
            up = True
        elif a == "down":
            up = False
        elif a == "mtu":
            v = args.next()
            if mtu is not None:
                raise duparg("mtu", v)
            mtu = _parse_int(v)
            if mtu is None:
                raise invarg('Invalid "mtu" value\n', v)
        elif a == "promisc":
            promisc = _on_off("promisc", args.next())
        elif a == "arp":
            arp = _on_off(a, args.next())
        elif a in ("multicast", "allmulticast", "trailers", "dynamic", "carrier"):
            _on_off(a, args.next())  # accepted; these flags are not modelled
        elif matches(a, "alias"):
            v = args.next()
            if len(v) >= 256:
                raise invarg("alias too long\n", v)
            alias = v
        elif a in ("name", "netns", "vf", "master", "vrf", "nomaster", "group", "mode",
                   "state") or matches(a, "address") or matches(a, "broadcast") \
                or a == "brd" or matches(a, "txqueuelen") or a == "qlen":
            raise unsupported(f'"ip link set ... {a}"')
        elif matches(a, "help"):
            raise IpExit("Usage: ip link set { DEVICE | dev DEVICE | group DEVGROUP }\n",
                         255, INVALID)
        else:
            if a == "dev":
                a = args.next()
            if dev is not None:
                raise duparg2("dev", a)
            dev = a
    if dev is None:
        raise IpExit('Not enough information: "dev" argument is required.\n', 255, INVALID)
    itf = node.interfaces.get(dev)
    if itf is None:
        raise nodev(dev)
    if mtu is not None:
        lo_min = 0 if itf.loopback else ETH_MIN_MTU
        if mtu < lo_min:
            raise extack_error("mtu less than device minimum")
        if not itf.loopback and mtu > ETH_MAX_MTU:
            raise extack_error("mtu greater than device maximum")
    node.set_link(dev, up=up, mtu=mtu, promisc=promisc, alias=alias,
                  noarp=None if arp is None else not arp)
    return CommandResult("", 0, OK)


def do_iplink(node: Node, opts: IpOpts, argv: list[str]) -> CommandResult:
    args = ArgReader(argv)
    if not args:
        return _show(node, opts, args)
    cmd = args.take()
    if matches(cmd, "add") or matches(cmd, "replace") or matches(cmd, "delete"):
        raise unsupported(f'"ip link {cmd}"')
    if matches(cmd, "set") or matches(cmd, "change"):
        return _set(node, args)
    if matches(cmd, "show") or matches(cmd, "lst") or matches(cmd, "list"):
        return _show(node, opts, args)
    if matches(cmd, "help"):
        raise IpExit("Usage: ip link { add | set | show | delete } ...\n", 255, INVALID)
    raise IpExit(f'Command "{cmd}" is unknown, try "ip link help".\n', 255, INVALID)

"""net-tools 2.10 ``route`` and ``arp``.

``route`` reads ``/proc/net/route`` (the ``main`` table without broadcast/multicast
entries) and changes routes with the ``SIOCADDRT``/``SIOCDELRT`` ioctls: an ioctl ``add``
is a netlink *prepend* (no ``NLM_F_EXCL``), so a second default route with the same metric
is accepted; failures print ``SIOCADDRT: <errno text>`` and exit 7. A route with a gateway
gets scope ``global`` (``rtentry_to_fib_config``: the gateway's type in the ``main`` table
is unicast), even when the gateway is the node's own address: the kernel would give it
scope ``link`` only while the namespace's local and main tables are still merged (no
``ip rule`` ever added), and every node here has had its rules restored, as the Mininet
backend's baseline adds them (a fresh Mininet node, as upstream's, prints ``scope
link``). ``arp`` reads ``/proc/net/arp``: the
dynamic neighbour cache of :mod:`netarena_gym.routing.neigh` that ``ip neigh`` shows
(unresolved entries print ``(incomplete)``); ``arp -d`` deletes an entry.
"""
from __future__ import annotations

import socket

from netarena_gym.core.ipv4 import int_to_ip, mask_of
from netarena_gym.shell.parser import ERROR, INVALID, OK, CommandResult
from netarena_gym.routing.commands import CommandContext, register
from netarena_gym.routing.commands.ip_common import IpExit
from netarena_gym.routing.commands.ip_route import table_routes
from netarena_gym.routing.commands.ip_route_mod import RouteReq, build_route, delete, insert
from netarena_gym.routing.commands.tool_help import (ARP_HELP_ERR, ARP_HELP_OUT, ARP_USAGE,
                                                     ARP_VERSION, ROUTE_VERSION)
from netarena_gym.routing import neigh
from netarena_gym.routing.state import MAIN, NeighEntry, Node, Route

__all__ = ["NAMES", "arp_command", "resolve", "route_command"]

E_OPTERR, E_USAGE, E_LOOKUP, E_SOCK = 3, 4, 6, 7

#: the names a node resolves without DNS (the Mininet backend binds the same /etc/networks
#: and /etc/hosts into its sandbox, netarena_gym.routing.backends.nodeexec.ETC_FILES)
NAMES = {"loopback": 0x7F000000, "link-local": 0xA9FE0000, "localhost": 0x7F000001}
_NETWORK_NAMES = {NAMES[n]: n for n in ("loopback", "link-local")}  # from /etc/networks

ROUTE_USAGE = (
    "Usage: route [-nNvee] [-FC] [<AF>]           List kernel routing tables\n"
    "       route [-v] [-FC] {add|del|flush} ...  Modify routing table for AF.\n\n"
    "       route {-h|--help} [<AF>]              Detailed usage syntax for specified AF.\n"
    "       route {-V|--version}                  Display version/author and exit.\n\n"
    "        -v, --verbose            be verbose\n"
    "        -n, --numeric            don't resolve names\n"
    "        -e, --extend             display other/more information\n"
    "        -F, --fib                display Forwarding Information Base (default)\n"
    "        -C, --cache              display routing cache instead of FIB\n\n"
    "  <AF>=Use -4, -6, '-A <af>' or '--<af>'; default: inet\n"
    "  List of possible address families (which support routing):\n"
    "    inet (DARPA Internet) inet6 (IPv6) ax25 (AMPR AX.25) \n"
    "    netrom (AMPR NET/ROM) rose (AMPR ROSE) ipx (Novell IPX) \n"
    "    ddp (Appletalk DDP) x25 (CCITT X.25) \n")
# usage() writes the address-family list to stderr, the rest to stdout; through a pipe (how
# every backend runs a tool, 2>&1) the unbuffered stderr comes first. Debian's net-tools
# 2.10 route then exits 0.
_ROUTE_AF_LIST = "".join(ROUTE_USAGE.splitlines(keepends=True)[-3:])
ROUTE_USAGE_PIPED = _ROUTE_AF_LIST + ROUTE_USAGE[:-len(_ROUTE_AF_LIST)]
INET_ROUTE_USAGE = (
    "Usage: inet_route [-vF] del {-host|-net} Target[/prefix] [gw Gw] [metric M] [[dev] If]\n"
    "       inet_route [-vF] add {-host|-net} Target[/prefix] [gw Gw] [metric M]\n"
    "                              [netmask N] [mss Mss] [window W] [irtt I]\n"
    "                              [mod] [dyn] [reinstate] [[dev] If]\n"
    "       inet_route [-vF] add {-host|-net} Target[/prefix] [metric M] reject\n"
    "       inet_route [-FC] flush      NOT supported\n")

# extended-ack messages of the netlink path -> the errno an ioctl reports instead
_ERRNO = {
    "Nexthop has invalid gateway": "Network is unreachable",
    "Device for nexthop is not up": "Network is down",
    "Nexthop device is not up": "Network is down",
    "RTNETLINK answers: No such device": "No such device",
    "RTNETLINK answers: File exists": "File exists",
    "RTNETLINK answers: No such process": "No such process",
}


# ---------------------------------------------------------------------- route listing
def _proc_flags(r: Route) -> int:
    """``fib_flag_trans``: RTF_UP, GATEWAY, HOST, and REJECT for unreachable/prohibit."""
    f = 0x1
    if r.gateway is not None:
        f |= 0x2
    if r.plen == 32:
        f |= 0x4
    if r.type in ("unreachable", "prohibit"):
        f |= 0x200
    return f


def _route_row(r: Route, numeric: bool) -> str:
    flags = _proc_flags(r)
    dst = int_to_ip(r.dst)
    if not numeric and r.plen < 32:  # a network: getnetbyaddr(3) names it (/etc/networks)
        dst = "default" if r.dst == 0 and r.plen == 0 else _NETWORK_NAMES.get(r.dst, dst)
    mask = int_to_ip(mask_of(r.plen))
    if flags & 0x200:
        fl = "!" + ("H" if flags & 0x4 else "")
        return f"{dst:<15} -               {mask:<15} {fl:<5} {r.metric:<6} -  {0:>7} -"
    fl = "U" + ("G" if flags & 0x2 else "") + ("H" if flags & 0x4 else "")
    gw = int_to_ip(r.gateway or 0)
    return (f"{dst:<15} {gw:<15} {mask:<15} {fl:<5} {r.metric:<6} {0:<2} {0:>7} "
            f"{r.dev or '*'}")


def _route_table(node: Node, numeric: bool) -> str:
    rows = [_route_row(r, numeric) for r in table_routes(node, MAIN)
            if r.type not in ("broadcast", "multicast")]
    return ("Kernel IP routing table\n"
            "Destination     Gateway         Genmask         Flags Metric Ref    Use Iface\n"
            + "".join(row + "\n" for row in rows))


# ---------------------------------------------------------------------- route add/del
def _classful_mask_len(ip: int) -> int:
    if ip == 0:
        return 0
    top = ip >> 28
    return 8 if top < 8 else 16 if top < 12 else 24 if top < 14 else 32


def resolve(word: str) -> int | None:
    """net-tools' ``INET_resolve`` on a node whose name lookups fail: ``default``, then
    ``inet_aton(3)`` (``10`` = 0.0.0.10, ``10.1`` = 10.0.0.1, ``010`` octal), then the names
    of the node's ``/etc/networks`` and ``/etc/hosts`` (:data:`NAMES`); None: unknown host."""
    if word == "default":
        return 0
    try:
        return int.from_bytes(socket.inet_aton(word), "big")
    except (OSError, ValueError):  # ValueError: an embedded NUL
        return NAMES.get(word)


def _parse_inet_route(args: list[str]) -> tuple[RouteReq, bool] | str:
    """``INET_setroute``'s arguments -> (request, reject) or an error text."""
    kind = None
    if args and args[0] in ("-net", "-host"):
        kind = args.pop(0)
    if not args:
        return INET_ROUTE_USAGE
    target = args.pop(0)
    plen: int | None = None
    if target == "default":
        ip, plen = 0, 0
    else:
        base, slash, pfx = target.partition("/")
        ip = resolve(base)
        if ip is None:
            return f"{base}: Unknown host\n"
        if slash:
            if not pfx.isdigit() or int(pfx) > 32:
                return INET_ROUTE_USAGE
            plen = int(pfx)
        elif kind != "-net":
            plen = 32
    q = RouteReq(proto="boot")
    reject = False
    while args:
        a = args.pop(0)
        if a in ("netmask", "genmask", "gw", "gateway", "metric", "mss", "window", "irtt",
                 "dev", "device"):
            if not args:
                return INET_ROUTE_USAGE
            v = args.pop(0)
            if a in ("netmask", "genmask"):
                m = resolve(v)
                inv = ~m & 0xFFFFFFFF if m is not None else 1
                if m is None or inv & (inv + 1):
                    return f"route: bogus netmask {v}\n"
                if kind == "-host" or plen == 32 and kind != "-net":
                    return f"route: netmask {m:08x} doesn't make sense with host route\n"
                plen = 32 - inv.bit_length()
            elif a in ("gw", "gateway"):
                q.gw = resolve(v)
                if q.gw is None:
                    return f"{v}: Unknown host\n"
            elif a == "metric":
                if not v.isdigit():
                    return INET_ROUTE_USAGE
                q.metric = int(v)
            elif a in ("dev", "device"):
                q.dev = v
        elif a == "reject":
            reject = True
        elif a in ("mod", "dyn", "reinstate"):
            pass
        elif not args:
            q.dev = a
        else:
            return INET_ROUTE_USAGE
    if plen is None:
        plen = _classful_mask_len(ip)
    if ip & ~mask_of(plen) & 0xFFFFFFFF:
        return "route: netmask doesn't match route address\n"
    q.dst = (ip, plen)
    return q, reject


def _route_modify(node: Node, action: str, args: list[str]) -> CommandResult:
    if args in ([], ["-net"], ["-host"]):  # no target: usage, and net-tools exits 0
        return CommandResult(INET_ROUTE_USAGE, 0, INVALID)
    parsed = _parse_inet_route(args)
    if isinstance(parsed, str):
        status = (E_USAGE if parsed.startswith("Usage") else
                  E_LOOKUP if parsed.endswith(": Unknown host\n") else E_OPTERR)
        if parsed.startswith("route: netmask"):  # then usage(E_OPTERR)
            parsed += INET_ROUTE_USAGE
        return CommandResult(parsed, status, INVALID)
    q, reject = parsed
    tag = "SIOCADDRT" if action == "add" else "SIOCDELRT"
    if q.dev is not None and q.dev not in node.interfaces:
        return CommandResult(f"{tag}: No such device\n", E_SOCK, ERROR)
    try:
        if action == "add":
            if reject:
                q.type, q.scope, q.gw, q.dev = "unreachable", "host", None, None
            elif q.gw is not None:  # inet_addr_type_table(gw, main): unicast (unmerged)
                q.scope = "global"
            insert(node, build_route(node, q), "prepend")
        else:
            q.type = "unicast"
            if q.gw is not None:
                q.scope = "global"
            q.proto = None
            delete(node, q)
    except IpExit as e:
        text = e.result.output.strip().removeprefix("Error: ").rstrip(".")
        errno = _ERRNO.get(text) or _ERRNO.get(e.result.output.strip()) or "Invalid argument"
        return CommandResult(f"{tag}: {errno}\n", E_SOCK, ERROR)
    return CommandResult("", 0, OK)


_LONG_OPTS = {"--numeric": "n", "--verbose": "v", "--fib": "F", "--help": "h",
              "--version": "V", "--extend": "e", "--cache": "C", "--inet": "4", "--inet6": "6"}


def _route_options(args: list[str]) -> tuple[bool, CommandResult | None]:
    """Consume ``route``'s options: (numeric, early result or None)."""
    numeric = False
    while args and args[0].startswith("-") and args[0] not in ("-net", "-host"):
        opt = args.pop(0)
        if opt == "-A":
            if not args or args.pop(0) != "inet":
                return numeric, CommandResult("netarena: only inet routes are modelled\n", 1,
                                              INVALID)
            continue
        letters = _LONG_OPTS.get(opt, "?") if opt.startswith("--") else opt[1:]
        for ch in letters:
            if ch == "n":
                numeric = True
            elif ch in "h":
                return numeric, _route_usage("")
            elif ch == "V":
                return numeric, CommandResult(ROUTE_VERSION, 0, OK)
            elif ch in "eCN6":
                return numeric, CommandResult(f"netarena: route -{ch} is not supported by the "
                                              "simulator\n", 1, INVALID)
            elif ch not in "vF4":
                return numeric, _route_usage(f"route: invalid option -- '{ch}'\n")
    return numeric, None


def _route_usage(complaint: str) -> CommandResult:
    """net-tools' ``route -h`` (exit 0): the complaint and the address families on stderr,
    the usage on stdout (so, when both are read through one pipe, stderr first)."""
    return CommandResult.joined([(complaint + _ROUTE_AF_LIST, True),
                                 (ROUTE_USAGE_PIPED[len(_ROUTE_AF_LIST):], False)], 0, INVALID)


@register("route")
def route_command(ctx: CommandContext, argv: list[str], stdin: str) -> CommandResult:
    args = argv[1:]
    numeric, early = _route_options(args)
    if early is not None:
        return early
    if not args:
        return CommandResult(_route_table(ctx.node, numeric), 0, OK)
    cmd = args.pop(0)
    if cmd == "add":
        return _route_modify(ctx.node, "add", args)
    if cmd in ("del", "delete"):
        return _route_modify(ctx.node, "del", args)
    if cmd == "flush":
        return CommandResult("Flushing `inet' routing table not supported\n", 1, ERROR)
    return CommandResult(ROUTE_USAGE, E_OPTERR, INVALID)


# ------------------------------------------------------------------------------- arp
# net-tools 2.10 arp: the usage text after a command-line complaint (exit 3)
_ARP_USAGE = ARP_USAGE

_ARP_HEADER = "Address                  HWtype  HWaddress           Flags Mask            Iface\n"


def _arp_row(e: NeighEntry) -> str:
    if e.mac is None:
        return f"{int_to_ip(e.ip):<23.23}  {'':<8.8}{'(incomplete)':<20.20}{'':<6.6}{'':<15.15} {e.dev}\n"
    flags = "CM" if e.state == "PERMANENT" else "C"
    return f"{int_to_ip(e.ip):<23.23}  {'ether':<8.8}{e.mac:<20.20}{flags:<6.6}{'':<15.15} {e.dev}\n"


def _arp_bsd(e: NeighEntry) -> str:
    hw = "<incomplete>" if e.mac is None else f"{e.mac} [ether]"
    if e.state == "PERMANENT":
        hw += " PERM"
    return f"? ({int_to_ip(e.ip)}) at {hw} on {e.dev}\n"


def _arp_delete(ctx: CommandContext, args: list[str]) -> CommandResult:
    """``arp -d HOST [-i IF]``: ``SIOCDARP`` removes the entry until traffic brings it back."""
    host = next((a for a in args if not a.startswith("-")), None)
    if host is None:
        return CommandResult("arp: need host name\n", 255, INVALID)
    ip = resolve(host)
    if ip is None:
        return CommandResult(f"{host}: Unknown host\n", 255, INVALID)
    dev = None
    if "-i" in args and args.index("-i") + 1 < len(args):
        dev = args[args.index("-i") + 1]
    why = neigh.siocdarp(ctx.net, ctx.node, ip, dev)
    if why is None:
        return CommandResult("", 0, OK)
    if why == neigh.NO_ENTRY:
        return CommandResult(f"No ARP entry for {host}\n", 255, ERROR)
    return CommandResult(f"SIOCDARP(dontpub): {why}\n", 255, ERROR)


def _arp_help(ch: str) -> CommandResult:
    """``arp -V`` (stdout) or ``arp -h`` (the usage on stdout, the hardware types on stderr,
    read first), exit 0."""
    if ch == "V":
        return CommandResult(ARP_VERSION, 0, OK)
    return CommandResult.joined([(ARP_HELP_ERR, True), (ARP_HELP_OUT, False)], 0, INVALID)


@register("arp")
def arp_command(ctx: CommandContext, argv: list[str], stdin: str) -> CommandResult:
    args = argv[1:]
    bsd = False
    dev = None
    host = None
    while args:
        a = args.pop(0)
        if a in ("-i", "--device"):
            if not args:
                return CommandResult("arp: option requires an argument -- 'i'\n" + _ARP_USAGE,
                                     3, INVALID)
            dev = args.pop(0)
        elif a in ("-d", "--delete"):
            return _arp_delete(ctx, args + (["-i", dev] if dev is not None else []))
        elif a in ("-s", "--set") and args and resolve(args[0]) is None:
            return CommandResult(f"{args[0]}: Unknown host\n", 255, INVALID)
        elif a in ("-s", "-f", "--set", "--file"):
            return CommandResult(f"netarena: arp {a} is not supported by the simulator\n", 1,
                                 INVALID)
        elif a in ("--help", "--version"):
            return _arp_help("V" if a == "--version" else "h")
        elif a.startswith("--") and a not in ("--numeric", "--verbose", "--use-device"):
            return CommandResult(f"arp: unrecognized option '{a}'\n" + _ARP_USAGE, 3, INVALID)
        elif a.startswith("-") and len(a) > 1:
            for ch in a[1:]:
                if ch == "a":
                    bsd = True
                elif ch in "hV":
                    return _arp_help(ch)
                elif ch == "?":  # in net-tools' option string: the usage alone, exit 3
                    return CommandResult(_ARP_USAGE, 3, INVALID)
                elif ch not in "nevD":
                    return CommandResult(f"arp: invalid option -- '{ch}'\n" + _ARP_USAGE, 3,
                                         INVALID)
        else:
            host = a
    ip = None if host is None else resolve(host)
    if host is not None and ip is None:
        return CommandResult(f"{host}: Unknown host\n", 255, INVALID)
    entries = neigh.entries(ctx.net, ctx.node)
    shown = [e for e in entries
             if (dev is None or e.dev == dev) and (ip is None or e.ip == ip)]
    if not shown:
        if host is not None and not bsd:
            return CommandResult(f"{host} ({int_to_ip(ip)}) -- no entry\n", 0, OK)
        if host is not None or dev is not None:
            return CommandResult(f"arp: in {len(entries)} entries no match found.\n", 0, OK)
        return CommandResult("", 0, OK)
    if bsd:
        text = "".join(_arp_bsd(e) for e in shown)
    else:
        text = _ARP_HEADER + "".join(_arp_row(e) for e in shown)
    return CommandResult(text, 0, OK)

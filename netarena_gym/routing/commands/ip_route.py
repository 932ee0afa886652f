"""``ip route``: the tables as iproute2 prints them, ``show`` and ``flush`` (``add``/``del``/
``replace``... are in :mod:`ip_route_mod`, ``get`` in :mod:`ip_route_get`).

The ``local`` table is derived from the addresses, as the kernel fills it: a ``local`` route
for each address, and the ``broadcast`` route of each primary's subnet (the lowest address
of a subnet is an ordinary unicast address since Linux 5.14), for interfaces that are up.
"""
from __future__ import annotations

from dataclasses import dataclass

from netarena_gym.core.ipv4 import in_prefix, int_to_ip, mask_of
from netarena_gym.shell.parser import ERROR, INVALID, OK, CommandResult
from netarena_gym.routing.commands.ip_addr import broadcast_of
from netarena_gym.routing.commands.ip_common import (
    ArgReader, IpExit, IpOpts, format_dst, get_prefix, get_u32, invarg, matches, nodev,
    proto_a2n, rtntype_a2n, scope_a2n, table_a2n, table_n2a, unsupported)
from netarena_gym.routing.state import LOCAL, MAIN, Node, Route

ROUTE_USAGE = (
    "Usage: ip route { list | flush } SELECTOR\n"
    "       ip route save SELECTOR\n"
    "       ip route restore\n"
    "       ip route showdump\n"
    "       ip route get [ ROUTE_GET_FLAGS ] ADDRESS\n"
    "                            [ from ADDRESS iif STRING ]\n"
    "                            [ oif STRING ] [ tos TOS ]\n"
    "                            [ mark NUMBER ] [ vrf NAME ]\n"
    "                            [ uid NUMBER ] [ ipproto PROTOCOL ]\n"
    "                            [ sport NUMBER ] [ dport NUMBER ]\n"
    "       ip route { add | del | change | append | replace } ROUTE\n"
    "SELECTOR := [ root PREFIX ] [ match PREFIX ] [ exact PREFIX ]\n"
    "            [ table TABLE_ID ] [ vrf NAME ] [ proto RTPROTO ]\n"
    "            [ type TYPE ] [ scope SCOPE ]\n"
    "ROUTE := NODE_SPEC [ INFO_SPEC ]\n"
    "NODE_SPEC := [ TYPE ] PREFIX [ tos TOS ]\n"
    "             [ table TABLE_ID ] [ proto RTPROTO ]\n"
    "             [ scope SCOPE ] [ metric METRIC ]\n"
    "             [ ttl-propagate { enabled | disabled } ]\n"
    "INFO_SPEC := { NH | nhid ID } OPTIONS FLAGS [ nexthop NH ]...\n"
    "NH := [ encap ENCAPTYPE ENCAPHDR ] [ via [ FAMILY ] ADDRESS ]\n"
    "\t    [ dev STRING ] [ weight NUMBER ] NHFLAGS\n"
    "FAMILY := [ inet | inet6 | mpls | bridge | link ]\n"
    "OPTIONS := FLAGS [ mtu NUMBER ] [ advmss NUMBER ] [ as [ to ] ADDRESS ]\n"
    "           [ rtt TIME ] [ rttvar TIME ] [ reordering NUMBER ]\n"
    "           [ window NUMBER ] [ cwnd NUMBER ] [ initcwnd NUMBER ]\n"
    "           [ ssthresh NUMBER ] [ realms REALM ] [ src ADDRESS ]\n"
    "           [ rto_min TIME ] [ hoplimit NUMBER ] [ initrwnd NUMBER ]\n"
    "           [ features FEATURES ] [ quickack BOOL ] [ congctl NAME ]\n"
    "           [ pref PREF ] [ expires TIME ] [ fastopen_no_cookie BOOL ]\n"
    "TYPE := { unicast | local | broadcast | multicast | throw |\n"
    "          unreachable | prohibit | blackhole | nat }\n"
    "TABLE_ID := [ local | main | default | all | NUMBER ]\n"
    "SCOPE := [ host | link | global | NUMBER ]\n"
    "NHFLAGS := [ onlink | pervasive ]\n"
    "RTPROTO := [ kernel | boot | static | NUMBER ]\n"
    "PREF := [ low | medium | high ]\n"
    "TIME := NUMBER[s|ms]\n"
    "BOOL := [1|0]\n"
    "FEATURES := ecn\n"
    "ENCAPTYPE := [ mpls | ip | ip6 | seg6 | seg6local | rpl ]\n"
    "ENCAPHDR := [ MPLSLABEL | SEG6HDR ]\n"
    "SEG6HDR := [ mode SEGMODE ] segs ADDR1,ADDRi,ADDRn [hmac HMACKEYID] [cleanup]\n"
    "SEGMODE := [ encap | inline ]\n"
    "ROUTE_GET_FLAGS := [ fibmatch ]\n")


def usage() -> IpExit:
    return IpExit(ROUTE_USAGE, 255, INVALID)


# ------------------------------------------------------------------- the local table
def local_table(node: Node) -> list[Route]:
    """The ``local`` table the kernel keeps for the node's addresses (dump order)."""
    seen: set[tuple] = set()
    out: list[Route] = []

    def put(type_: str, dst: int, plen: int, dev: str, src: int) -> None:
        key = (type_, dst, plen, dev, src)
        if key not in seen:
            seen.add(key)
            out.append(Route(dst=dst, plen=plen, type=type_, dev=dev, proto="kernel",
                             scope="host" if type_ == "local" else "link", src=src,
                             table=LOCAL))

    for itf in node.interfaces.values():
        for a in itf.addresses:
            prim = itf.primary_for(a) if itf.is_secondary(a) else a
            put("local", a.ip, 32, itf.name, prim.ip)  # kept while the link is down
            if not itf.up:
                continue
            brd = broadcast_of(node, itf, a)
            if brd is not None and brd != 0xFFFFFFFF:
                put("broadcast", brd, 32, itf.name, prim.ip)
            if prim is a and a.plen < 32 and a.net != 0:
                if itf.loopback:
                    put("local", a.net, a.plen, itf.name, a.ip)
                if a.plen < 31:
                    put("broadcast", a.net | (~mask_of(a.plen) & 0xFFFFFFFF), 32, itf.name,
                        a.ip)
    out.sort(key=lambda r: (r.dst, -r.plen))
    return out


def table_routes(node: Node, tid: int) -> list[Route]:
    """A table in dump order (destination, longer prefix first, metric, insertion)."""
    if tid == LOCAL:
        return local_table(node)
    return sorted(node.tables.get(tid, ()), key=lambda r: (r.dst, -r.plen, r.metric))


def all_table_ids(node: Node) -> list[int]:
    """Tables in the order the kernel dumps them (hash bucket = id & 255)."""
    ids = set(node.tables) | {LOCAL, MAIN}
    return sorted(ids, key=lambda t: (t & 255, t))


def table_exists(node: Node, tid: int) -> bool:
    return tid == LOCAL or tid in node.tables


def no_table() -> IpExit:
    return IpExit("Error: ipv4: FIB table does not exist.\nDump terminated\n", 2, ERROR)


# ---------------------------------------------------------------------------- display
@dataclass(slots=True)
class RouteFilter:
    """``ip route show|flush`` selectors; ``table`` 0 means every table."""
    table: int = MAIN
    cloned: bool = False
    proto: str | None = None
    scope: str | None = None
    types: tuple[str, ...] | None = None
    dev: str | None = None
    metric: int | None = None
    via: tuple[int, int] | None = None
    src: tuple[int, int] | None = None
    root: tuple[int, int] | None = None
    match: tuple[int, int] | None = None
    from_len: int = 0
    tos: int = 0

    def accepts(self, r: Route) -> bool:
        if self.table and r.table != self.table:
            return False
        if self.proto is not None and r.proto != self.proto:
            return False
        if self.scope is not None and r.scope != self.scope:
            return False
        if self.types is not None and r.type not in self.types:
            return False
        if self.dev is not None and r.dev != self.dev:
            return False
        if self.metric is not None and r.metric != self.metric:
            return False
        if self.root is not None and (r.plen < self.root[1]
                                      or not in_prefix(r.dst, self.root[0], self.root[1])):
            return False
        if self.match is not None and (r.plen > self.match[1]
                                       or not in_prefix(self.match[0], r.dst, r.plen)):
            return False
        if self.via is not None and (r.gateway is None
                                     or not in_prefix(r.gateway, self.via[0], self.via[1])):
            return False
        if self.src is not None and (r.src is None
                                     or not in_prefix(r.src, self.src[0], self.src[1])):
            return False
        return not self.from_len and not self.tos


def format_route(r: Route, opts: IpOpts, f: RouteFilter | None = None,
                 linkdown: bool = False) -> str:
    """One line of ``ip route show`` (iproute2 ends it with a space)."""
    parts: list[str] = []
    if r.type != "unicast" or opts.details:
        parts.append(r.type)
    parts.append(format_dst(r.dst, r.plen))
    if r.gateway is not None and not (f is not None and f.via is not None and f.via[1] == 32):
        parts.append(f"via {int_to_ip(r.gateway)}")
    if r.dev is not None and (f is None or f.dev is None):
        parts.append(f"dev {r.dev}")
    if (r.table != MAIN or opts.details) and f is not None and not f.table:
        parts.append(f"table {table_n2a(r.table)}")
    if (r.proto != "boot" or opts.details) and (f is None or f.proto is None):
        parts.append(f"proto {r.proto}")
    if (r.scope != "global" or opts.details) and (f is None or f.scope is None):
        parts.append(f"scope {r.scope}")
    if r.src is not None and not (f is not None and f.src is not None and f.src[1] == 32):
        parts.append(f"src {int_to_ip(r.src)}")
    if r.metric and (f is None or f.metric is None):
        parts.append(f"metric {r.metric}")
    if r.onlink:
        parts.append("onlink")
    if linkdown:
        parts.append("linkdown")
    return " ".join(parts) + " "


def nocarrier_devs(node: Node) -> set[str]:
    """Interfaces whose routes the kernel flags ``linkdown`` once settled. The kernel sets
    the flag from linkwatch (``NETDEV_CHANGE``), which runs up to 1 s after the carrier
    change: measured on Mininet (Linux 6.18), absent 0.3 s after a fault took the peer
    down, present 1.5 s after; the model shows the settled state."""
    return {n for n, itf in node.interfaces.items() if itf.up and not itf.carrier}


# ------------------------------------------------------------------- show / flush
def _prefix_arg(args: ArgReader, a: str, opts: IpOpts, f: RouteFilter) -> None:
    if matches(a, "to"):
        a = args.next()
    if matches(a, "root"):
        net, plen, _ = get_prefix(args.next(), opts.family)
        f.root = (net, plen)
    elif matches(a, "match"):
        net, plen, _ = get_prefix(args.next(), opts.family)
        f.match = (net, plen)
    else:
        if matches(a, "exact"):
            a = args.next()
        net, plen, _ = get_prefix(a, opts.family)
        f.root = f.match = (net, plen)


def parse_filter(node: Node, args: ArgReader, opts: IpOpts) -> RouteFilter:
    f = RouteFilter()
    while args:
        a = args.take()
        if matches(a, "table"):
            v = args.next()
            t = table_a2n(v)
            if t is not None:
                f.table = t
            elif v == "all":
                f.table = 0
            elif v == "cache":
                f.cloned = True
            elif v == "help":
                raise usage()
            else:
                raise invarg("table id value is invalid\n", v)
        elif matches(a, "cached") or matches(a, "cloned"):
            f.cloned = True
        elif a == "tos" or matches(a, "dsfield"):
            v = args.next()
            t = get_u32(v)
            if t is None or t > 255:
                raise invarg("TOS value is invalid\n", v)
            f.tos = t
        elif matches(a, "protocol"):
            v = args.next()
            p = proto_a2n(v)
            if p is None and v != "all":
                raise invarg('invalid "protocol"\n', v)
            f.proto = p
        elif matches(a, "scope"):
            v = args.next()
            s = scope_a2n(v)
            if s is None and v != "all":
                raise invarg('invalid "scope"\n', v)
            f.scope = s
        elif matches(a, "type"):
            v = args.next()
            t = rtntype_a2n(v)
            if t is None:
                raise invarg("node type value is invalid\n", v)
            f.types = (t,)
        elif a in ("dev", "oif"):
            f.dev = args.next()
        elif a in ("iif", "mark") or matches(a, "realms"):
            args.next()
        elif matches(a, "metric") or matches(a, "priority") or a == "preference":
            v = args.next()
            m = get_u32(v)
            if m is None:
                raise invarg('"metric" value is invalid\n', v)
            f.metric = m
        elif a == "via":
            v = args.next()
            if v == "inet":
                v = args.next()
            net, plen, _ = get_prefix(v, opts.family)
            f.via = (net, plen)
        elif a == "src":
            net, plen, _ = get_prefix(args.next(), opts.family)
            f.src = (net, plen)
        elif matches(a, "from"):
            v = args.next()
            if matches(v, "root") or matches(v, "match") or matches(v, "exact"):
                v = args.next()
            f.from_len = get_prefix(v, opts.family)[1]
        elif matches(a, "vrf"):
            raise unsupported("VRF")
        else:
            _prefix_arg(args, a, opts, f)
    if f.dev is not None and f.dev not in node.interfaces:
        raise nodev(f.dev)
    return f


def _selected(node: Node, f: RouteFilter) -> list[Route]:
    if f.cloned:
        return []
    if f.table and not table_exists(node, f.table):
        raise no_table()
    tids = [f.table] if f.table else all_table_ids(node)
    return [r for t in tids for r in table_routes(node, t) if f.accepts(r)]


def show_routes(node: Node, opts: IpOpts, args: ArgReader) -> CommandResult:
    f = parse_filter(node, args, opts)
    down = nocarrier_devs(node)
    lines = [format_route(r, opts, f, r.dev in down) for r in _selected(node, f)]
    return CommandResult("".join(line + "\n" for line in lines), 0, OK)


def flush_routes(node: Node, opts: IpOpts, args: ArgReader) -> CommandResult:
    if not args:
        raise IpExit('"ip route flush" requires arguments.\n', 1, INVALID)
    f = parse_filter(node, args, opts)
    if f.cloned:
        return CommandResult("", 0, OK)  # flushing the (IPv4-less) routing cache
    if f.table == LOCAL:
        raise unsupported("flushing the local table")
    victims = [r for r in _selected(node, f) if r.table != LOCAL]
    for r in victims:
        node.remove_route(r)
    return CommandResult("", 0, OK)

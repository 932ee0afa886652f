"""``ip route add|change|replace|prepend|append|test|del``: iproute2's request building and
the kernel's checks (``fib_create_info``, ``fib_check_nh``, ``fib_table_insert``,
``fib_table_delete``) with their error wording."""
from __future__ import annotations

from dataclasses import dataclass

from netarena_gym.core.ipv4 import in_prefix
from netarena_gym.shell.parser import OK, CommandResult
from netarena_gym.routing.commands.ip_common import (
    SCOPE_VALUE, ArgReader, IpOpts, duparg2, extack_error, get_addr, get_prefix, get_u32,
    host_bits_set, invarg, kernel_error, matches, nodev, proto_a2n, rtntype_a2n, scope_a2n,
    table_a2n, unsupported)
from netarena_gym.routing.commands.ip_route import usage
from netarena_gym.routing.state import LOCAL, MAIN, Node, Route

ERROR_TYPES = ("blackhole", "unreachable", "prohibit", "throw")
UNMODELLED_TYPES = ("local", "broadcast", "anycast", "multicast", "nat", "xresolve")
_METRIC_WORDS = ("reordering", "window", "cwnd", "initcwnd", "initrwnd", "features",
                 "quickack", "congctl", "rttvar", "ssthresh", "realms",
                 "fastopen_no_cookie")
_METRIC_EXACT = ("mtu", "hoplimit", "advmss", "rtt", "rto_min", "expires", "as", "from",
                 "nexthop", "nhid", "encap", "ttl-propagate")


@dataclass(slots=True)
class RouteReq:
    """What ``ip route`` put in the netlink request (None: attribute absent)."""
    dst: tuple[int, int] | None = None
    type: str | None = None
    gw: int | None = None
    dev: str | None = None
    metric: int | None = None
    proto: str | None = None
    scope: str | None = None
    src: int | None = None
    table: int | None = None
    onlink: bool = False


def _via(args: ArgReader, family: str | None) -> int:
    v = args.next()
    if v == "inet":
        v = args.next()
    elif v in ("inet6", "mpls", "bridge", "link"):
        raise unsupported(f'"via {v}"')
    return get_addr(v, family)


def parse_route_request(args: ArgReader, opts: IpOpts) -> RouteReq:
    """``iproute_modify``'s argument loop (the order of tests decides abbreviations)."""
    q = RouteReq()
    fam = opts.family
    while args:
        a = args.take()
        if a == "src":
            q.src = get_addr(args.next(), fam)
            fam = "inet"
        elif a == "via":
            if q.gw is not None:
                raise invarg("use nexthop syntax to specify multiple via\n", a)
            q.gw = _via(args, fam)
            fam = "inet"
        elif a == "tos" or matches(a, "dsfield"):
            v = args.next()
            if get_u32(v) != 0:
                raise unsupported("route TOS")
        elif matches(a, "metric") or matches(a, "priority") or a == "preference":
            v = args.next()
            q.metric = get_u32(v)
            if q.metric is None:
                raise invarg('"metric" value is invalid\n', v)
        elif a == "scope":
            v = args.next()
            q.scope = scope_a2n(v)
            if q.scope is None:
                raise invarg('invalid "scope" value\n', v)
        elif a in _METRIC_EXACT or any(matches(a, w) for w in _METRIC_WORDS):
            raise unsupported(f'route attribute "{a}"')
        elif a == "onlink":
            q.onlink = True
        elif matches(a, "protocol"):
            v = args.next()
            q.proto = proto_a2n(v)
            if q.proto is None:
                raise invarg('"protocol" value is invalid\n', v)
        elif matches(a, "table"):
            v = args.next()
            q.table = table_a2n(v)
            if q.table is None:
                raise invarg('"table" value is invalid\n', v)
        elif matches(a, "vrf"):
            raise unsupported("VRF")
        elif a in ("dev", "oif"):
            q.dev = args.next()
        elif matches(a, "pref"):
            v = args.next()  # IPv6 router preference: ignored by IPv4
            if v not in ("low", "medium", "high") and (get_u32(v) is None or get_u32(v) > 255):
                raise invarg('"pref" value is invalid\n', v)
        else:
            if a == "to":
                a = args.next()
            if not ("0" <= a[:1] <= "9"):
                t = rtntype_a2n(a)
                if t is not None:
                    q.type = t
                    a = args.next()
            if matches(a, "help"):
                raise usage()
            if q.dst is not None:
                raise duparg2("to", a)
            net, plen, _ = get_prefix(a, fam)
            q.dst = (net, plen)
            fam = "inet"
    if q.dst is None:
        raise usage()
    return q


# -------------------------------------------------------------------------- nexthops
def _scope_value(scope: str) -> int:
    v = SCOPE_VALUE.get(scope)
    return v if v is not None else int(scope)


def scoped_lpm(routes, addr: int, oif: str | None, min_scope: int) -> Route | None:
    """The longest-prefix route to ``addr`` of scope ``min_scope`` or narrower (first of
    equal prefixes, i.e. lowest metric)."""
    best = None
    for r in routes:
        if best is not None and r.plen <= best.plen:
            continue
        if not in_prefix(addr, r.dst, r.plen):
            continue
        if _scope_value(r.scope) < min_scope or (oif is not None and r.dev != oif):
            continue
        best = r
    return best


def _local_holder(node: Node, addr: int) -> str | None:
    for itf in node.interfaces.values():
        if itf.up and any(a.ip == addr for a in itf.addresses):
            return itf.name
    return None


def _resolve_gateway(node: Node, gw: int, oif: str | None, table: int,
                     scope: int) -> tuple[str, bool] | None:
    """``fib_check_nh_v4_gw``: a lookup of the gateway restricted to routes of scope
    link or narrower. Returns the egress device and whether the gateway is one of the
    node's own addresses (found in ``local``: nexthop scope host, forwarded on-link), or
    None for an invalid gateway."""
    min_scope = max(scope + 1, SCOPE_VALUE["link"])
    if table != MAIN and table in node.tables:
        hit = scoped_lpm(node.tables[table], gw, oif, min_scope)
        if hit is not None:
            return (hit.dev, False) if hit.type == "unicast" else None
    for rule in node.rules:
        if not rule.matches(0, gw, None, oif):
            continue
        if rule.action != "table":
            return None
        if rule.table == LOCAL:
            holder = _local_holder(node, gw)
            if holder is not None and (oif is None or oif == holder) \
                    and min_scope <= SCOPE_VALUE["host"]:
                return holder, True
            continue
        hit = scoped_lpm(node.tables.get(rule.table, ()), gw, oif, min_scope)
        if hit is not None:
            return (hit.dev, False) if hit.type == "unicast" else None
    return None


def _check_nexthop(node: Node, q: RouteReq, table: int, scope: int) -> tuple[str, bool]:
    """The egress device of a new route, and whether its gateway is a local address."""
    if q.gw is not None:
        if q.onlink:
            if scope >= SCOPE_VALUE["link"]:
                raise extack_error("Nexthop has invalid scope")
            if q.dev is None:
                raise extack_error("Nexthop device required for onlink")
            if not node.interfaces[q.dev].up:
                raise extack_error("Nexthop device is not up")
            if q.gw in node.local_ips() or q.gw >> 28 == 14 or q.gw == 0xFFFFFFFF:
                raise extack_error("Nexthop has invalid gateway")
            return q.dev, False
        hit = _resolve_gateway(node, q.gw, q.dev, table, scope)
        if hit is None:
            raise extack_error("Nexthop has invalid gateway")
        return hit
    if q.onlink:
        raise extack_error("Invalid flags for nexthop - PERVASIVE and ONLINK can not be set")
    if q.dev is None:
        raise kernel_error("No such device")
    if not node.interfaces[q.dev].up:
        raise extack_error("Device for nexthop is not up")
    return q.dev, False


def build_route(node: Node, q: RouteReq) -> Route:
    """Validate a new route as ``fib_create_info`` does and return it."""
    net, plen = q.dst
    if host_bits_set(net, plen):
        raise extack_error("Invalid prefix for given prefix length")
    rtype = q.type or "unicast"
    if rtype in UNMODELLED_TYPES:
        raise unsupported(f'route type "{rtype}"')
    if rtype != "unicast" and rtype not in ERROR_TYPES:
        raise extack_error("Invalid route type")
    gw = q.gw or None  # "via 0.0.0.0" carries no gateway
    if q.scope is not None:
        scope = q.scope
    else:
        scope = "link" if rtype == "unicast" and q.gw is None else "global"
    table = q.table if q.table is not None else MAIN
    dev = None
    gw_local = False
    if rtype in ERROR_TYPES:
        if gw is not None or q.dev is not None:
            raise extack_error(
                "Gateway, device and multipath can not be specified for this route type")
    elif _scope_value(scope) > SCOPE_VALUE["host"]:
        raise extack_error("Invalid scope")
    elif scope == "host":
        if gw is not None:
            raise extack_error("Route with host scope can not have a gateway")
        if q.dev is None:
            raise kernel_error("No such device")
        dev = q.dev
    else:
        q.gw = gw
        dev, gw_local = _check_nexthop(node, q, table, _scope_value(scope))
    if q.src is not None and q.src not in node.local_ips():
        raise extack_error("Invalid prefsrc address")
    return Route(dst=net, plen=plen, type=rtype, dev=dev, gateway=gw, metric=q.metric or 0,
                 proto=q.proto or "boot", scope=scope, src=q.src, onlink=q.onlink,
                 table=table, gw_local=gw_local)


# ---------------------------------------------------------------------- table updates
def _same_info(a: Route, b: Route) -> bool:
    return (a.type == b.type and a.dev == b.dev and a.gateway == b.gateway
            and a.proto == b.proto and a.scope == b.scope and a.src == b.src
            and a.onlink == b.onlink and a.gw_local == b.gw_local)


def insert(node: Node, new: Route, action: str) -> None:
    """``fib_table_insert`` with the flags of ``add|change|replace|prepend|append|test``:
    routes compete when they share table, destination, prefix length and metric."""
    routes = node.table(new.table)
    group = [i for i, r in enumerate(routes)
             if r.dst == new.dst and r.plen == new.plen and r.metric == new.metric]
    if group:
        if action in ("add", "test"):
            raise kernel_error("File exists")
        match = next((i for i in group if _same_info(routes[i], new)), None)
        if action in ("change", "replace"):
            if match is not None:
                if match != group[0]:
                    raise kernel_error("File exists")
                return
            routes[group[0]] = new
            node.touch()
            return
        if match is not None:
            raise kernel_error("File exists")
        if action == "prepend":
            routes.insert(group[0], new)
            node.touch()
            return
        node.insert_route(new)  # append: after the routes it competes with
        return
    if action in ("change", "test"):
        raise kernel_error("No such file or directory")
    node.insert_route(new)


def delete(node: Node, q: RouteReq) -> None:
    """``fib_table_delete``: the first route of the prefix matching every given selector."""
    net, plen = q.dst
    if host_bits_set(net, plen):
        raise extack_error("Invalid prefix for given prefix length")
    table = q.table if q.table is not None else MAIN
    if table == LOCAL:
        raise unsupported("deleting from the local table")
    if table not in node.tables:
        raise extack_error("FIB table does not exist")
    for r in node.tables[table]:
        if r.dst != net or r.plen != plen:
            continue
        if ((q.type is not None and r.type != q.type)
                or (q.scope is not None and r.scope != q.scope)
                or (q.src is not None and r.src != q.src)
                or (q.proto is not None and r.proto != q.proto)
                or (q.metric and r.metric != q.metric)
                or (q.dev is not None and r.dev != q.dev)
                or (q.gw and r.gateway != q.gw)):
            continue
        node.remove_route(r)
        return
    raise kernel_error("No such process")


def modify_route(node: Node, opts: IpOpts, args: ArgReader, action: str) -> CommandResult:
    q = parse_route_request(args, opts)
    if q.dev is not None and q.dev not in node.interfaces:
        raise nodev(q.dev)
    if action == "del":
        delete(node, q)
    else:
        insert(node, build_route(node, q), action)
    return CommandResult("", 0, OK)

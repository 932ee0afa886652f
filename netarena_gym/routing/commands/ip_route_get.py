"""``ip route get``: a policy-routing lookup printed as the kernel's cached route.

Output routes (no ``iif``) are resolved like ``ip_route_output_key``; with ``iif`` the
lookup is the forwarding path of ``ip_route_input``. Failures carry the kernel's errno:
no route / an ``unreachable`` rule give ``Network is unreachable``, an ``unreachable`` route
``No route to host``, ``prohibit`` ``Permission denied`` and ``blackhole``
``Invalid argument``.
"""
from __future__ import annotations

from netarena_gym.core.ipv4 import int_to_ip
from netarena_gym.shell.parser import INVALID, OK, CommandResult
from netarena_gym.routing.commands.ip_common import (
    ArgReader, IpExit, IpOpts, get_prefix, get_u32, invarg, kernel_error, matches, nodev,
    table_n2a, unsupported)
from netarena_gym.routing.commands.ip_route import (
    RouteFilter, format_route, local_table, usage)
from netarena_gym.routing.state import MAIN, Lookup, Node, Route

__all__ = ["route_get"]

_ERRNO_OF_KIND = {"blackhole": "Invalid argument", "prohibit": "Permission denied"}


class _GetReq:
    __slots__ = ("dst", "src", "iif", "oif", "fibmatch", "warnings")

    def __init__(self):
        self.dst: int | None = None
        self.src = 0
        self.iif: str | None = None
        self.oif: str | None = None
        self.fibmatch = False
        self.warnings = ""


def _parse(args: ArgReader, opts: IpOpts) -> _GetReq:
    q = _GetReq()
    fam = opts.family
    while args:
        a = args.take()
        if a == "tos" or matches(a, "dsfield"):
            v = args.next()
            if get_u32(v) is None or get_u32(v) > 255:
                raise invarg("TOS value is invalid\n", v)
        elif matches(a, "from"):
            v = args.next()
            if matches(v, "help"):
                raise usage()
            q.src = get_prefix(v, fam)[0]
            fam = "inet"
        elif matches(a, "iif"):
            q.iif = args.next()
        elif matches(a, "mark") or matches(a, "uid") or matches(a, "sport") \
                or matches(a, "dport") or matches(a, "ipproto"):
            args.next()
        elif matches(a, "oif") or a == "dev":
            q.oif = args.next()
        elif matches(a, "notify") or matches(a, "connected"):
            pass
        elif matches(a, "vrf"):
            raise unsupported("VRF")
        elif matches(a, "fibmatch"):
            q.fibmatch = True
        elif a == "as":
            raise unsupported('"as to"')
        else:
            if a == "to":
                a = args.next()
            if matches(a, "help"):
                raise usage()
            net, plen, _ = get_prefix(a, fam)
            if plen != 32:
                q.warnings += (f"Warning: /{plen} as prefix is invalid, only /32 (or none) is "
                               "supported.\n")
            q.dst = net
            fam = "inet"
    if q.dst is None:
        raise IpExit("need at least a destination address\n", 1, INVALID)
    return q


def _lookup_error(res: Lookup) -> IpExit:
    if res.kind in _ERRNO_OF_KIND:
        return kernel_error(_ERRNO_OF_KIND[res.kind])
    if res.kind == "unreachable" and res.route is not None:
        return kernel_error("No route to host")
    return kernel_error("Network is unreachable")


def _local_src(node: Node, dst: int) -> int:
    for r in local_table(node):
        if r.type == "local" and r.plen == 32 and r.dst == dst:
            return r.src
    return dst


def _fib_match(node: Node, opts: IpOpts, q: _GetReq, res: Lookup) -> str:
    if res.kind == "local":
        routes = [r for r in local_table(node) if r.type == "local" and r.dst == q.dst]
        route = routes[0] if routes else None
    else:
        route = res.route
    if route is None:
        raise _lookup_error(res)
    return q.warnings + format_route(route, opts, RouteFilter(table=0)) + "\n"


def _output_route(node: Node, opts: IpOpts, q: _GetReq) -> str:
    if q.src and q.src not in node.local_ips():
        raise kernel_error("Invalid argument")
    if q.oif is not None and not node.interfaces[q.oif].up:
        raise kernel_error("Network is unreachable")
    res = node.lookup(q.dst, q.src, None, q.oif)
    if q.fibmatch:
        return _fib_match(node, opts, q, res)
    if q.oif is not None and res.kind not in ("local", "unicast"):
        # the kernel takes a destination it cannot route out of a given device as on-link
        res = Lookup("unicast", dev=q.oif, route=Route(dst=q.dst, plen=32, dev=q.oif))
    dst_s = int_to_ip(q.dst)
    from_s = f"from {int_to_ip(q.src)} " if q.src else ""
    if res.kind == "local":
        src_s = "" if q.src else f"src {int_to_ip(_local_src(node, q.dst))} "
        return (f"{q.warnings}local {dst_s} {from_s}dev lo table local {src_s}uid 0 "
                f"{opts.sl}    cache <local> \n")
    if res.kind != "unicast":
        raise _lookup_error(res)
    route = res.route
    via_s = f"via {int_to_ip(res.gateway)} " if res.gateway is not None else ""
    table_s = f"table {table_n2a(route.table)} " if route.table != MAIN else ""
    src_s = ""
    if not q.src:
        src = route.src if route.src is not None else node.select_source(
            res.dev, res.gateway if res.gateway is not None else q.dst)
        src_s = f"src {int_to_ip(src)} " if src is not None else ""
    return (f"{q.warnings}{dst_s} {from_s}{via_s}dev {res.dev} {table_s}{src_s}uid 0 "
            f"{opts.sl}    cache \n")


def _input_route(node: Node, opts: IpOpts, q: _GetReq) -> str:
    local = node.local_ips()
    if not q.src or q.src in local or q.src >> 28 == 14:
        raise kernel_error("Invalid argument")  # martian source
    res = node.lookup(q.dst, q.src, q.iif, None)
    if q.fibmatch:
        return _fib_match(node, opts, q, res)
    head = f"{int_to_ip(q.dst)} from {int_to_ip(q.src)} "
    if res.kind == "local":
        return (f"{q.warnings}local {head}dev lo table local {opts.sl}    cache <local> "
                f"iif {q.iif} \n")
    if not node.forwards_on(q.iif):
        raise kernel_error("No route to host")
    if res.kind != "unicast":
        raise _lookup_error(res)
    via_s = f"via {int_to_ip(res.gateway)} " if res.gateway is not None else ""
    table_s = f"table {table_n2a(res.route.table)} " if res.route.table != MAIN else ""
    return f"{q.warnings}{head}{via_s}dev {res.dev} {table_s}{opts.sl}    cache iif {q.iif} \n"


def route_get(node: Node, opts: IpOpts, args: ArgReader) -> CommandResult:
    q = _parse(args, opts)
    for dev in (q.iif, q.oif):
        if dev is not None and dev not in node.interfaces:
            raise nodev(dev)
    text = _input_route(node, opts, q) if q.iif is not None else _output_route(node, opts, q)
    return CommandResult(text, 0, OK)


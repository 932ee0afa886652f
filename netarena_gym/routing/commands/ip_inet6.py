"""``ip -6`` (iproute2 6.1, Linux 6.x): the IPv6 view of a routing node.

The simulator models IPv4 only. A node's IPv6 state is the Mininet backend's baseline:
IPv6 is off on every veth (``net.ipv6.conf.<dev>.disable_ipv6=1``; no link-local address
or ``fe80::/64`` route to come and go with link flaps) and ``lo`` keeps ``::1/128``. So
the main table and the neighbour table are empty, the local table holds ``::1``, the rules
are the kernel's two defaults, and the kernel refuses every change on a veth ("IPv6 is
disabled on this device"). Listings, ``route get``, flushes and those refusals print what
the real tools print (pinned in tests/routing/test_ip_inet6.py). Changes that would
succeed (on ``lo``, rules) and listings with other selectors answer "not supported".

``ip -6 link`` is ``ip link`` (the family does not filter links).
"""
from __future__ import annotations

import ipaddress
import json
import re

from netarena_gym.shell.parser import ERROR, INVALID, OK, CommandResult
from netarena_gym.routing.commands.ip_common import (
    ArgReader, IpExit, IpOpts, matches, no_such_device_dump, nodev, unsupported)
from netarena_gym.routing.commands.ip_link import link_flags, link_name, link_record, operstate
from netarena_gym.routing.state import Node

__all__ = ["LOOPBACK6", "do_inet6"]

#: the only IPv6 address of a node: lo's
LOOPBACK6 = "::1"

_RULES = "0:\tfrom all lookup local\n32766:\tfrom all lookup main\n"
_LO_ADDR = ("    inet6 ::1/128 scope host ", "       valid_lft forever preferred_lft forever")
_LISTING = ("list", "show", "lst")
_CHANGES = ("add", "change", "replace", "prepend", "append", "test", "delete")


def _rest(args: ArgReader) -> list[str]:
    return args.args[args.i:]


def _is_listing(word: str) -> bool:
    return any(matches(word, w) for w in _LISTING)


def _inet6(word: str, what: str) -> ipaddress.IPv6Network:
    """``word`` as an IPv6 prefix (``default``/``all``/``any`` = ``::/0``), or ip's error."""
    if word in ("default", "all", "any"):
        return ipaddress.IPv6Network("::/0")
    try:
        return ipaddress.IPv6Network(word, strict=False)
    except ValueError:
        raise IpExit(f'Error: inet6 {what} is expected rather than "{word}".\n', 1,
                     INVALID) from None


def _lo(node: Node):
    lo = node.interfaces.get("lo")
    if lo is None or not lo.up or lo.mtu < 1280:  # Linux drops ::1: not modelled
        raise unsupported('"ip -6" with lo down or its MTU under 1280')
    return lo


# ---------------------------------------------------------------------------- address
def _addresses(node: Node, opts: IpOpts, args: ArgReader) -> CommandResult:
    words = _rest(args)
    if words[:1] == ["dev"]:
        words = words[1:]
    if len(words) > 1 or (words and words[0] not in node.interfaces
                          and words[0] in ("dev", "to", "scope", "label", "up", "permanent",
                                           "dynamic", "primary", "secondary", "tentative")):
        raise unsupported('"ip -6 address show" with filters')
    dev = words[0] if words else None
    if dev is not None and dev not in node.interfaces:
        raise no_such_device_dump(dev)
    lo = _lo(node)
    if dev is not None and dev != "lo":
        return CommandResult("", 0, OK)  # the device has no IPv6 address
    if opts.brief:
        out = f"{link_name(lo):<16} {operstate(lo):<14} ::1/128 \n"
    elif opts.oneline:
        out = f"{lo.ifindex}: lo{_LO_ADDR[0]}\\{_LO_ADDR[1]}\n"
    else:
        head = link_record(lo, opts, do_link=False)[0]
        if dev is None:  # a dump filtered by family: the header without qdisc and group
            head = re.sub(r" qdisc \S+| group \S+", "", head)
        out = "\n".join([head, *_LO_ADDR]) + "\n"
    if opts.stats:
        raise unsupported('"ip -6 -stats address"')
    return CommandResult(out, 0, OK)


def _device(node: Node, words: list[str]) -> str | None:
    """The ``dev NAME`` of a request (checked as ``ll_name_to_index`` checks it)."""
    if "dev" not in words[:-1]:
        return None
    name = words[words.index("dev") + 1]
    if name not in node.interfaces:
        raise nodev(name)
    return name


def _disabled(node: Node, dev: str | None, what: str) -> None:
    """A change on a veth: IPv6 is off there (the backend's baseline), the kernel refuses."""
    if dev is None or node.interfaces[dev].loopback:
        raise unsupported(what)  # lo's IPv6 state is not modelled


def _address(node: Node, opts: IpOpts, args: ArgReader) -> CommandResult:
    if not args:
        return _addresses(node, opts, args)
    cmd = args.take()
    if _is_listing(cmd):
        return _addresses(node, opts, args)
    words = _rest(args)
    what = f'"ip -6 address {cmd}"'
    if matches(cmd, "flush"):
        if words[:1] == ["dev"] and len(words) == 2 or len(words) == 1:
            dev = _device(node, ["dev", words[-1]])
            _disabled(node, dev, what)
            return CommandResult("", 0, OK)  # a veth has no IPv6 address
        raise unsupported(what)
    if not (any(matches(cmd, w) for w in ("add", "change", "replace", "delete"))
            or cmd == "chg") or not words or words[0] in ("local", "peer", "dev"):
        raise unsupported(what)
    net = _inet6(words[0], "prefix")
    dev = _device(node, words)
    if dev is None:
        raise IpExit('Not enough information: "dev" argument is required.\n', 1, INVALID)
    if matches(cmd, "delete"):
        if dev == "lo" and net == ipaddress.IPv6Network("::1/128"):
            raise unsupported(what)
        return CommandResult("Error: ipv6: address not found.\n", 2, ERROR)
    _disabled(node, dev, what)
    return CommandResult("Error: ipv6: IPv6 is disabled on this device.\n", 2, ERROR)


# ------------------------------------------------------------------------------ route
_LOCAL = "local ::1 dev lo {}proto kernel metric 0 pref medium\n"
_ROUTE_KEYS = ("dev", "via", "metric", "to", "unicast")


def _show_routes(node: Node, words: list[str]) -> CommandResult:
    if words in ([], ["table", "main"]):
        return CommandResult("", 0, OK)  # the main table is empty
    if words == ["table", "local"]:
        return CommandResult(_LOCAL.format(""), 0, OK)
    if words == ["table", "all"]:
        return CommandResult(_LOCAL.format("table local "), 0, OK)
    if words[:1] == ["dev"] and len(words) == 2:
        _device(node, words)
        return CommandResult("", 0, OK)
    raise unsupported('"ip -6 route show" with these selectors')


def _route_get(node: Node, args: ArgReader) -> CommandResult:
    if not args:
        raise IpExit("need at least a destination address\n", 1, ERROR)
    dst = args.take()
    if dst == "to" and args:
        dst = args.take()
    net = _inet6(dst, "prefix")
    if args:
        raise unsupported('"ip -6 route get" with options')
    _lo(node)
    if net.network_address == ipaddress.IPv6Address(LOOPBACK6):
        return CommandResult("local ::1 from :: dev lo table local proto kernel src ::1 "
                             "metric 0 pref medium\n", 0, OK)
    return CommandResult("RTNETLINK answers: Network is unreachable\n", 2, ERROR)


def _route_change(node: Node, action: str, words: list[str]) -> CommandResult:
    what = f'"ip -6 route {action}"'
    words = [w for w in words if w not in ("to", "unicast")]
    if not words:
        raise unsupported(what)
    _inet6(words[0], "prefix")
    dev = _device(node, words)
    if action == "delete":
        return CommandResult("RTNETLINK answers: No such process\n", 2, ERROR)
    keys = words[1::2]
    if action == "test" or any(k not in _ROUTE_KEYS for k in keys) or len(words) % 2 == 0:
        raise unsupported(what)
    if dev is not None:
        _disabled(node, dev, what)
        return CommandResult("Error: IPv6 is disabled on nexthop device.\n", 2, ERROR)
    if "via" not in keys:
        raise unsupported(what)
    via = _inet6(words[words.index("via") + 1], "address").network_address
    if via.is_loopback or via.is_unspecified:
        raise unsupported(what)
    if via.is_link_local:
        return CommandResult("Error: Egress device not specified.\n", 2, ERROR)
    return CommandResult("RTNETLINK answers: No route to host\n", 2, ERROR)


def _route(node: Node, opts: IpOpts, args: ArgReader) -> CommandResult | None:
    if not args:
        return CommandResult("", 0, OK)  # the main table is empty
    cmd = args.take()
    if _is_listing(cmd):
        return _show_routes(node, _rest(args))
    if matches(cmd, "get"):
        return _route_get(node, args)
    action = "change" if cmd == "chg" else next((w for w in _CHANGES if matches(cmd, w)), None)
    if action is not None:
        return _route_change(node, action, _rest(args))
    if matches(cmd, "flush"):
        words = _rest(args)
        if words in (["all"], ["table", "main"]):
            return CommandResult("", 0, OK)
        if words[:1] == ["dev"] and len(words) == 2:
            _disabled(node, _device(node, words), '"ip -6 route flush dev lo"')
            return CommandResult("", 0, OK)
        raise unsupported('"ip -6 route flush" with these selectors')
    return None  # help, unknown words: answered as without -6


# ----------------------------------------------------------------------- neigh, rule
def _neigh(node: Node, opts: IpOpts, args: ArgReader) -> CommandResult:
    if not args:
        return CommandResult("", 0, OK)  # no IPv6 neighbours
    cmd = args.take()
    words = _rest(args)
    if _is_listing(cmd) or matches(cmd, "flush"):
        if words == ([] if _is_listing(cmd) else ["all"]):
            return CommandResult("", 0, OK)
        if words[:1] == ["dev"] and len(words) == 2:
            _device(node, words)
            return CommandResult("", 0, OK)
        raise unsupported(f'"ip -6 neighbour {cmd}" with these selectors')
    if not any(matches(cmd, w) for w in ("add", "change", "replace", "delete")) or not words \
            or words[0] in ("to", "proxy"):
        raise unsupported(f'"ip -6 neighbour {cmd}"')
    try:
        ipaddress.IPv6Address(words[0])
    except ValueError:
        raise IpExit(f'Error: inet6 address is expected rather than "{words[0]}".\n', 1,
                     INVALID) from None
    dev = _device(node, words)
    _disabled(node, dev, f'"ip -6 neighbour {cmd}"')
    if matches(cmd, "delete"):
        return CommandResult("RTNETLINK answers: No such file or directory\n", 2, ERROR)
    return CommandResult("Error: IPv6 is disabled on this device.\n", 2, ERROR)


def _rule(node: Node, opts: IpOpts, args: ArgReader) -> CommandResult:
    if not args or (_is_listing(args.take()) and not args):
        return CommandResult(_RULES, 0, OK)
    raise unsupported('"ip -6 rule" changes')


def _json(node: Node, obj: str, opts: IpOpts, argv: list[str]) -> CommandResult:
    """``ip -6 -j``: the plain listings of the empty tables and of lo's address."""
    if argv not in ([], ["show"], ["list"]) or opts.brief or opts.stats or opts.details:
        raise unsupported('"ip -6 -json" with these arguments')
    if obj in ("route", "neighbor", "neighbour"):
        return CommandResult("[]\n", 0, OK)
    if obj != "address":
        raise unsupported(f'"ip -6 -json {obj}"')
    lo = _lo(node)
    rec = {"ifindex": lo.ifindex, "ifname": "lo", "flags": link_flags(lo).split(","),
           "mtu": lo.mtu, "operstate": operstate(lo), "txqlen": 1000,
           "addr_info": [{"family": "inet6", "local": LOOPBACK6, "prefixlen": 128,
                          "scope": "host", "valid_life_time": 4294967295,
                          "preferred_life_time": 4294967295}]}
    return CommandResult(json.dumps([rec], separators=(",", ":")) + "\n", 0, OK)


def do_inet6(node: Node, obj: str, opts: IpOpts, argv: list[str]) -> CommandResult | None:
    """``ip -6 OBJECT ...`` for the objects whose IPv6 view differs from IPv4's; None for
    the ones that ignore the family (``link``, ``help``)."""
    if obj in ("link", "help"):
        return None
    args = ArgReader(argv)
    if opts.json:
        return _json(node, obj, opts, argv)
    if obj == "address":
        return _address(node, opts, args)
    if obj == "route":
        return _route(node, opts, args)
    if obj in ("neighbor", "neighbour"):
        return _neigh(node, opts, args)
    if obj == "rule":
        return _rule(node, opts, args)
    raise unsupported(f'"ip -6 {obj}"')

"""``ip -6`` (iproute2 6.1, Linux 6.x): the IPv6 view of a routing node.

The simulator models IPv4 only; a node's IPv6 state is what a Mininet node has after
the baseline, and is read-only here: IPv6 is enabled but no interface other than ``lo``
has an address (no link-local ones: the backend's veths come up without), so ``lo``
holds ``::1/128``, the main table and the neighbour table are empty, and the rule list
is the kernel's two default rules. Listings, ``route get`` and the commands that fail
on that state print what the real tools print (pinned in tests/routing/test_ip_inet6.py);
a command that would change IPv6 state, and listings with filters, answer "not supported".

``ip -6 link`` is ``ip link`` (the family does not filter links).
"""
from __future__ import annotations

import ipaddress
import re

from netarena_gym.shell.parser import ERROR, INVALID, OK, CommandResult
from netarena_gym.routing.commands.ip_common import (
    ArgReader, IpExit, IpOpts, matches, no_such_device_dump, unsupported)
from netarena_gym.routing.commands.ip_link import link_name, link_record, operstate
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
    if lo is None or not lo.up:  # Linux drops ::1 with lo down: not modelled
        raise unsupported('"ip -6" with lo down')
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


def _address(node: Node, opts: IpOpts, args: ArgReader) -> CommandResult:
    if not args:
        return _addresses(node, opts, args)
    cmd = args.take()
    if _is_listing(cmd):
        return _addresses(node, opts, args)
    if any(matches(cmd, w) for w in ("add", "change", "replace", "delete")) or cmd == "chg":
        words = _rest(args)
        if words and words[0] not in ("local", "peer", "dev"):
            net = _inet6(words[0], "prefix")
            if matches(cmd, "delete") and not (str(net) == "::1/128" and "lo" in words):
                return CommandResult("Error: ipv6: address not found.\n", 2, ERROR)
        raise unsupported(f'"ip -6 address {cmd}"')
    raise unsupported(f'"ip -6 address {cmd}"')


# ------------------------------------------------------------------------------ route
def _route(node: Node, opts: IpOpts, args: ArgReader) -> CommandResult | None:
    if not args:
        return CommandResult("", 0, OK)  # the main table is empty
    cmd = args.take()
    if _is_listing(cmd) and not args:
        return CommandResult("", 0, OK)
    if matches(cmd, "get"):
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
    action = next((w for w in _CHANGES if matches(cmd, w)), None)
    if action is not None or cmd == "chg":
        words = [w for w in _rest(args) if w not in ("to", "unicast")]
        if words:
            _inet6(words[0], "prefix")
        if action == "delete" and words:
            return CommandResult("RTNETLINK answers: No such process\n", 2, ERROR)
    if action is not None or cmd == "chg" or _is_listing(cmd) or matches(cmd, "flush"):
        raise unsupported(f'"ip -6 route {cmd}"')
    return None  # help, unknown words: answered as without -6


# ----------------------------------------------------------------------- neigh, rule
def _neigh(node: Node, opts: IpOpts, args: ArgReader) -> CommandResult:
    if not args:
        return CommandResult("", 0, OK)  # no IPv6 neighbours
    cmd = args.take()
    if _is_listing(cmd) and (not args or (_rest(args)[:1] == ["dev"] and len(_rest(args)) == 2
                                          and _rest(args)[1] in node.interfaces)):
        return CommandResult("", 0, OK)
    if matches(cmd, "flush") and _rest(args) == ["all"]:
        return CommandResult("", 0, OK)
    if any(matches(cmd, w) for w in ("add", "change", "replace", "delete")) and args:
        word = _rest(args)[0]
        if word not in ("to", "proxy"):
            try:
                ipaddress.IPv6Address(word)
            except ValueError:
                raise IpExit(f'Error: inet6 address is expected rather than "{word}".\n', 1,
                             INVALID) from None
    raise unsupported(f'"ip -6 neighbour {cmd}"')


def _rule(node: Node, opts: IpOpts, args: ArgReader) -> CommandResult:
    if not args or (_is_listing(args.take()) and not args):
        return CommandResult(_RULES, 0, OK)
    raise unsupported('"ip -6 rule" changes')


def do_inet6(node: Node, obj: str, opts: IpOpts, argv: list[str]) -> CommandResult | None:
    """``ip -6 OBJECT ...`` for the objects whose IPv6 view differs from IPv4's; None for
    the ones that ignore the family (``link``, ``help``)."""
    if obj in ("link", "help"):
        return None
    if opts.json:
        raise unsupported('"ip -6 -json"')
    args = ArgReader(argv)
    if obj == "address":
        return _address(node, opts, args)
    if obj == "route":
        return _route(node, opts, args)
    if obj in ("neighbor", "neighbour"):
        return _neigh(node, opts, args)
    if obj == "rule":
        return _rule(node, opts, args)
    raise unsupported(f'"ip -6 {obj}"')

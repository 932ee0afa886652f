"""``ip`` (iproute2 6.1): global options and object dispatch.

Objects are matched as ``ip`` matches them: the first object of iproute2's table that the
word abbreviates (``a`` = address, ``r`` = route, ``ru`` = rule, ``n`` = neighbour,
``l`` = link). The sub-commands live in ``ip_addr``, ``ip_link``, ``ip_route*``, ``ip_rule``
and ``ip_neigh``; ``-6`` (``-family inet6``) goes to ``ip_inet6``.
"""
from __future__ import annotations

from netarena_gym.shell.parser import INVALID, OK, CommandResult
from netarena_gym.routing.commands import CommandContext, register
from netarena_gym.routing.commands.ip_addr import do_ipaddr
from netarena_gym.routing.commands import ip_json
from netarena_gym.routing.commands.ip_color import color_mode, colorize
from netarena_gym.routing.commands.ip_inet6 import do_inet6
from netarena_gym.routing.commands.ip_common import (
    ArgReader, IpExit, IpOpts, matches, unsupported)
from netarena_gym.routing.commands.ip_link import do_iplink
from netarena_gym.routing.commands.ip_neigh import do_ipneigh
from netarena_gym.routing.commands.ip_route import flush_routes, show_routes, usage
from netarena_gym.routing.commands.ip_route_get import route_get
from netarena_gym.routing.commands.ip_route_mod import modify_route
from netarena_gym.routing.commands.ip_rule import do_iprule
from netarena_gym.routing.state import Node

__all__ = ["ip_command"]

VERSION = "ip utility, iproute2-6.1.0, libbpf 1.1.2\n"

IP_USAGE = (
    "Usage: ip [ OPTIONS ] OBJECT { COMMAND | help }\n"
    "       ip [ -force ] -batch filename\n"
    "where  OBJECT := { address | addrlabel | amt | fou | help | ila | ioam | l2tp |\n"
    "                   link | macsec | maddress | monitor | mptcp | mroute | mrule |\n"
    "                   neighbor | neighbour | netconf | netns | nexthop | ntable |\n"
    "                   ntbl | route | rule | sr | tap | tcpmetrics |\n"
    "                   token | tunnel | tuntap | vrf | xfrm }\n"
    "       OPTIONS := { -V[ersion] | -s[tatistics] | -d[etails] | -r[esolve] |\n"
    "                    -h[uman-readable] | -iec | -j[son] | -p[retty] |\n"
    "                    -f[amily] { inet | inet6 | mpls | bridge | link } |\n"
    "                    -4 | -6 | -M | -B | -0 |\n"
    "                    -l[oops] { maximum-addr-flush-attempts } | -br[ief] |\n"
    "                    -o[neline] | -t[imestamp] | -ts[hort] | -b[atch] [filename] |\n"
    "                    -rc[vbuf] [size] | -n[etns] name | -N[umeric] | -a[ll] |\n"
    "                    -c[olor]}\n")

# iproute2's object table, in its order (the first abbreviation match wins)
_OBJECTS = ("address", "addrlabel", "maddress", "route", "rule", "neighbor", "neighbour",
            "ntable", "ntbl", "link", "l2tp", "fou", "ila", "macsec", "tunnel", "tunl",
            "tuntap", "tap", "token", "tcpmetrics", "tcp_metrics", "monitor", "xfrm",
            "mroute", "mrule", "netns", "netconf", "vrf", "sr", "nexthop", "mptcp", "ioam",
            "help", "stats")

# ip's global options in the order its main() tests them (the first abbreviation match
# wins, so "-h" is -human and "-r" -resolve); exact ones must be typed in full
_GLOBAL_OPTS = (
    ("-loops", "arg"), ("-family", "family"), ("=-4", "inet"), ("=-6", "inet6"),
    ("=-0", "unsupported"), ("=-M", "unsupported"), ("=-B", "unsupported"),
    ("-human", "ignore"), ("-human-readable", "ignore"), ("-iec", "ignore"),
    ("-stats", "stats"), ("-statistics", "stats"), ("-details", "details"),
    ("-resolve", "ignore"), ("-oneline", "oneline"), ("-timestamp", "ignore"),
    ("-tshort", "ignore"), ("-Version", "version"), ("-force", "ignore"),
    ("-batch", "unsupported"), ("-brief", "brief"), ("-json", "json"),
    ("-pretty", "ignore"), ("-rcvbuf", "arg"), ("-color", "color"), ("-help", "help"),
    ("-netns", "unsupported"), ("-Numeric", "ignore"), ("-all", "ignore"),
    ("=-echo", "ignore"))


# ip route sub-commands in iproute2's order: (keyword, action); the first match wins
_ROUTE_CMDS = (("add", "add"), ("change", "change"), ("chg", "change"), ("replace", "replace"),
               ("prepend", "prepend"), ("append", "append"), ("test", "test"),
               ("delete", "del"), ("list", "show"), ("show", "show"), ("lst", "show"),
               ("get", "get"), ("flush", "flush"))


def do_iproute(node: Node, opts: IpOpts, argv: list[str]) -> CommandResult:
    args = ArgReader(argv)
    if not args:
        return show_routes(node, opts, args)
    cmd = args.take()
    action = next((a for word, a in _ROUTE_CMDS
                   if (cmd == word if word == "chg" else matches(cmd, word))), None)
    if action == "show":
        return show_routes(node, opts, args)
    if action == "get":
        return route_get(node, opts, args)
    if action == "flush":
        return flush_routes(node, opts, args)
    if action is not None:
        return modify_route(node, opts, args, action)
    if matches(cmd, "save") or matches(cmd, "restore") or matches(cmd, "showdump"):
        raise unsupported(f'"ip route {cmd}"')
    if matches(cmd, "help"):
        raise usage()
    raise IpExit(f'Command "{cmd}" is unknown, try "ip route help".\n', 255, INVALID)


def _usage() -> IpExit:
    return IpExit(IP_USAGE, 255, INVALID)


def _global_option(opt: str) -> str | None:
    word = opt.partition("=")[0] if opt.startswith("-c") else opt  # -color=always
    for name, kind in _GLOBAL_OPTS:
        if name[0] == "=":
            if opt == name[1:]:
                return kind
        elif matches(word, name):
            return kind
    return None


def _parse_options(argv: list[str]) -> tuple[IpOpts, int]:
    """Global options as ``ip``'s ``main`` reads them; returns them and the object index."""
    opts = IpOpts()
    i = 1
    while i < len(argv):
        opt = argv[i]
        if opt == "--":
            i += 1
            break
        if not opt.startswith("-") or opt == "-":
            break
        if opt.startswith("--"):
            opt = opt[1:]
        kind = _global_option(opt)
        if kind == "color":
            mode = color_mode(opt.partition("=")[2] if "=" in opt else None)
            if mode is None:
                kind = None
            else:
                opts.color = mode
        if kind in ("arg", "family"):
            i += 1
            if i >= len(argv):
                raise _usage()
            if kind == "family" and argv[i] not in ("inet", "inet6"):
                if argv[i] in ("link", "mpls", "bridge", "help"):
                    raise unsupported(f'"-family {argv[i]}"')
                raise IpExit(f'Error: argument "{argv[i]}" is wrong: invalid protocol '
                             'family\n\n', 255, INVALID)
            if kind == "family":
                opts.family = argv[i]
        elif kind in ("inet", "inet6"):
            opts.family = kind
        elif kind == "stats":
            opts.stats += 1
        elif kind == "details":
            opts.details += 1
        elif kind == "oneline":
            opts.oneline = True
        elif kind == "brief":
            opts.brief = True
        elif kind == "json":
            opts.json = True
        elif kind == "version":
            raise IpExit(VERSION, 0, OK)
        elif kind == "help":
            raise _usage()
        elif kind == "color":
            pass
        elif kind == "unsupported":
            raise unsupported(f'"ip {opt}"')
        elif kind is None:
            raise IpExit(f'Option "{opt}" is unknown, try "ip -help".\n', 255, INVALID)
        i += 1
    return opts, i


def _run(ctx: CommandContext, argv: list[str]) -> CommandResult:
    opts, i = _parse_options(argv)
    if i >= len(argv):
        raise _usage()
    word, rest = argv[i], argv[i + 1:]
    obj = next((o for o in _OBJECTS if matches(word, o)), None)
    if obj is None:
        return CommandResult(f'Object "{word}" is unknown, try "ip help".\n', 1, INVALID)
    if opts.family == "inet6":  # IPv6: its own module; link and help ignore the family
        res = do_inet6(ctx.node, obj, opts, rest)
        if res is not None:
            return res
        opts.family = None
    if opts.json:
        return _json(ctx, obj, opts, rest)
    res = _object(ctx, obj, opts, rest)
    if opts.color and res.status == 0 and res.output:
        return CommandResult(colorize(obj, res.output, opts.brief), res.status, res.kind)
    return res


_JSON = {"address": lambda t, o: ip_json.addr_json(t, o.brief),
         "link": lambda t, o: ip_json.link_json(t, o.brief),
         "route": lambda t, o: ip_json.route_json(t), "rule": lambda t, o: ip_json.rule_json(t),
         "neighbor": lambda t, o: ip_json.neigh_json(t),
         "neighbour": lambda t, o: ip_json.neigh_json(t)}


def _json(ctx: CommandContext, obj: str, opts: IpOpts, rest: list[str]) -> CommandResult:
    """``ip -j``: a listing as JSON (one line); other sub-commands as without
    ``-j`` (they print nothing on success)."""
    listing = not rest or any(matches(rest[0], w) for w in ("show", "list", "lst"))
    if listing and (opts.stats or opts.details or opts.oneline or obj not in _JSON):
        raise unsupported('"ip -json" with these options')
    if obj == "route" and rest and matches(rest[0], "get"):
        raise unsupported('"ip -json route get"')
    res = _object(ctx, obj, opts, rest)
    if not listing or res.status != 0:
        return res
    return CommandResult(_JSON[obj](res.output, opts), res.status, res.kind)


def _object(ctx: CommandContext, obj: str, opts: IpOpts, rest: list[str]) -> CommandResult:
    node = ctx.node
    if obj == "address":
        return do_ipaddr(node, opts, rest)
    if obj == "link":
        return do_iplink(node, opts, rest)
    if obj == "route":
        return do_iproute(node, opts, rest)
    if obj == "rule":
        return do_iprule(node, opts, rest)
    if obj in ("neighbor", "neighbour"):
        return do_ipneigh(ctx.net, node, opts, rest)
    if obj == "help":
        raise _usage()
    raise unsupported(f'"ip {obj}"')


@register("ip")
def ip_command(ctx: CommandContext, argv: list[str], stdin: str) -> CommandResult:
    try:
        return _run(ctx, argv)
    except IpExit as e:
        return e.result
    except (ValueError, KeyError, IndexError, TypeError) as e:  # a simulator bug, not input
        return CommandResult(f"netarena: ip failed on this input ({type(e).__name__})\n", 1,
                             INVALID)

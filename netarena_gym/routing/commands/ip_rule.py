"""``ip rule``: policy routing rules (show / add / del / flush), with the kernel's
``fib_nl_newrule`` / ``fib_nl_delrule`` semantics:

* ``add`` without ``pref`` takes the pref of the second rule in the list minus one (0 when
  there is no second rule or its pref is 0), as ``fib_default_rule_pref`` in Linux 6.1;
* a rule is inserted after every rule whose pref is lower or equal;
* ``del`` removes the *first* rule matching every selector given (action, table and pref
  only when given), so ``ip rule del pref 0`` removes the ``local`` rule;
* ``flush`` deletes every rule whose pref is not 0 (the dump leaves out a zero pref and
  ``ip`` only deletes rules it got a pref for).
"""
from __future__ import annotations

from dataclasses import dataclass

from netarena_gym.core.ipv4 import in_prefix, int_to_ip
from netarena_gym.shell.parser import INVALID, OK, CommandResult
from netarena_gym.routing.commands.ip_common import (
    ArgReader, IpExit, IpOpts, get_prefix, get_u32, invarg, kernel_error, matches,
    rtntype_a2n, table_a2n, table_n2a, unsupported)
from netarena_gym.routing.state import MAIN, Node, Rule

RULE_USAGE = (
    "Usage: ip rule { add | del } SELECTOR ACTION\n"
    "       ip rule { flush | save | restore }\n"
    "       ip rule [ list [ SELECTOR ]]\n"
    "SELECTOR := [ not ] [ from PREFIX ] [ to PREFIX ] [ tos TOS ]\n"
    "            [ fwmark FWMARK[/MASK] ]\n"
    "            [ iif STRING ] [ oif STRING ] [ pref NUMBER ] [ l3mdev ]\n"
    "            [ uidrange NUMBER-NUMBER ]\n"
    "            [ ipproto PROTOCOL ]\n"
    "            [ sport [ NUMBER | NUMBER-NUMBER ]\n"
    "            [ dport [ NUMBER | NUMBER-NUMBER ] ]\n"
    "ACTION := [ table TABLE_ID ]\n"
    "          [ protocol PROTO ]\n"
    "          [ nat ADDRESS ]\n"
    "          [ realms [SRCREALM/]DSTREALM ]\n"
    "          [ goto NUMBER ]\n"
    "          SUPPRESSOR\n"
    "SUPPRESSOR := [ suppress_prefixlength NUMBER ]\n"
    "              [ suppress_ifgroup DEVGROUP ]\n"
    "TABLE_ID := [ local | main | default | NUMBER ]\n")

_RULE_ACTIONS = ("blackhole", "unreachable", "prohibit")
_UNMODELLED = ("fwmark", "tun_id", "l3mdev", "uidrange", "nat", "ipproto", "sport", "dport",
               "dscp", "sup_pl", "sup_group")


def _table_of(r: Rule) -> int:
    """The table the kernel holds for a rule (0 for the non-lookup actions)."""
    return r.table if r.action == "table" else 0


def _prefix_str(p: tuple[int, int]) -> str:
    return int_to_ip(p[0]) if p[1] == 32 else f"{int_to_ip(p[0])}/{p[1]}"


def format_rule(r: Rule) -> str:
    s = f"{r.pref}:\t" + ("not " if r.invert else "")
    s += f"from {_prefix_str(r.src)}" if r.src is not None else "from all"
    if r.dst is not None:
        s += f" to {_prefix_str(r.dst)}"
    if r.iif is not None:
        s += f" iif {r.iif}"
    if r.oif is not None:
        s += f" oif {r.oif}"
    if r.action == "table":
        s += f" lookup {table_n2a(r.table)}"
    else:
        s += f" {r.action}"
    return s


def _detached(node: Node, r: Rule, line: str) -> str:
    """``[detached]`` follows an iif/oif naming no existing device."""
    if r.iif is not None and r.iif not in node.interfaces:
        line = line.replace(f" iif {r.iif}", f" iif {r.iif} [detached]", 1)
    if r.oif is not None and r.oif not in node.interfaces:
        line = line.replace(f" oif {r.oif}", f" oif {r.oif} [detached]", 1)
    return line


# ------------------------------------------------------------------------ selectors
@dataclass(slots=True)
class RuleSpec:
    """Attributes of a rule request; None means "not given"."""
    invert: bool = False
    src: tuple[int, int] | None = None
    dst: tuple[int, int] | None = None
    pref: int | None = None
    table: int | None = None
    action: str | None = None
    iif: str | None = None
    oif: str | None = None


def _ifname(v: str, what: str) -> str:
    if not v or len(v) >= 16 or "/" in v or any(c.isspace() for c in v):
        raise invarg(f"{what} not a valid ifname", v)
    return v


def _parse_modify(args: ArgReader, opts: IpOpts, add: bool) -> RuleSpec:
    s = RuleSpec()
    fam = opts.family
    while args:
        a = args.take()
        if a == "not":
            s.invert = True
        elif a in ("from", "to"):
            net, plen, _ = get_prefix(args.next(), fam)
            p = (net, plen) if plen else None
            if a == "from":
                s.src = p
            else:
                s.dst = p
        elif matches(a, "preference") or matches(a, "order") or matches(a, "priority"):
            v = args.next()
            s.pref = get_u32(v)
            if s.pref is None:
                raise invarg("preference value is invalid\n", v)
        elif a == "tos" or matches(a, "dsfield"):
            v = args.next()
            if get_u32(v) != 0:
                raise unsupported("rule TOS")
        elif a in _UNMODELLED or matches(a, "realms") or matches(a, "protocol") \
                or matches(a, "tun_id") or matches(a, "suppress_prefixlength") \
                or matches(a, "suppress_ifgroup") or matches(a, "map-to"):
            raise unsupported(f'rule selector "{a}"')
        elif matches(a, "table") or a == "lookup":
            v = args.next()
            s.table = table_a2n(v)
            if s.table is None:
                raise invarg("invalid table ID\n", v)
            if s.action is None:
                s.action = "table"
        elif a in ("dev", "iif"):
            s.iif = _ifname(args.next(), '"iif"/"dev"')
        elif a == "oif":
            s.oif = _ifname(args.next(), '"oif"')
        else:
            if a == "type":
                a = args.next()
            if matches(a, "help"):
                raise IpExit(RULE_USAGE, 255, INVALID)
            if matches(a, "goto") or matches(a, "nop"):
                raise unsupported(f'rule action "{a}"')
            t = rtntype_a2n(a)
            if t is None:
                raise invarg("Failed to parse rule type", a)
            if t not in _RULE_ACTIONS:
                raise unsupported(f'rule action "{t}"')
            s.action = t
            s.table = s.table if s.table is not None else 0
    return s


def _same_selectors(r: Rule, s: RuleSpec) -> bool:
    """``fib4_rule_compare``: source/destination only when the request has them."""
    if s.src is not None and r.src != s.src:
        return False
    return s.dst is None or r.dst == s.dst


def _default_pref(node: Node) -> int:
    rules = node.rules
    if len(rules) >= 2 and rules[1].pref:
        return rules[1].pref - 1
    return 0


def _add(node: Node, s: RuleSpec) -> None:
    action = s.action or "table"
    table = s.table if s.table is not None else MAIN
    pref = s.pref if s.pref is not None else _default_pref(node)
    new_table = table if action == "table" else 0
    for r in node.rules:
        if (r.action == action and _table_of(r) == new_table and r.pref == pref
                and r.iif == s.iif and r.oif == s.oif and _same_selectors(r, s)):
            raise kernel_error("File exists")
    node.add_rule(Rule(pref=pref, action=action, table=table if action == "table" else 0,
                       src=s.src, dst=s.dst, iif=s.iif, oif=s.oif, invert=s.invert))


def _delete(node: Node, s: RuleSpec) -> None:
    for r in node.rules:
        if s.action is not None and s.action != "table" and r.action != s.action:
            continue
        if s.table and _table_of(r) != s.table:
            continue
        if s.pref is not None and r.pref != s.pref:
            continue
        if (s.iif is not None and r.iif != s.iif) or (s.oif is not None and r.oif != s.oif):
            continue
        if not _same_selectors(r, s):
            continue
        node.replace_rules([x for x in node.rules if x is not r])
        return
    raise kernel_error("No such file or directory")


def _modify(node: Node, opts: IpOpts, args: ArgReader, add: bool) -> CommandResult:
    if not args:
        word = "add" if add else "del"
        raise IpExit(f'"ip rule {word}" requires arguments.\n', 1, INVALID)
    s = _parse_modify(args, opts, add)
    if add:
        _add(node, s)
    else:
        _delete(node, s)
    return CommandResult("", 0, OK)


# ---------------------------------------------------------------------- list / flush
@dataclass(slots=True)
class _ListFilter:
    pref: int | None = None
    invert: bool = False
    iif: str | None = None
    oif: str | None = None
    table: int = 0
    src: tuple[int, int] | None = None
    dst: tuple[int, int] | None = None

    def accepts(self, r: Rule) -> bool:
        if self.pref is not None and r.pref != self.pref:
            return False
        if self.invert and not r.invert:
            return False
        if self.iif is not None and r.iif != self.iif:
            return False
        if self.oif is not None and r.oif != self.oif:
            return False
        if self.table and _table_of(r) != self.table:
            return False
        return _prefix_ok(self.src, r.src) and _prefix_ok(self.dst, r.dst)


def _prefix_ok(want: tuple[int, int] | None, have: tuple[int, int] | None) -> bool:
    if want is None or want[1] == 0:
        return True
    return (have is not None and have[1] >= want[1]
            and in_prefix(have[0], want[0], want[1]))


def _parse_list(args: ArgReader) -> _ListFilter:
    f = _ListFilter()
    while args:
        a = args.take()
        if matches(a, "preference") or matches(a, "order") or matches(a, "priority"):
            v = args.next()
            f.pref = get_u32(v)
            if f.pref is None:
                raise invarg("preference value is invalid\n", v)
        elif a == "not":
            f.invert = True
        elif a in ("dev", "iif"):
            f.iif = _ifname(args.next(), '"iif"/"dev"')
        elif a == "oif":
            f.oif = _ifname(args.next(), '"oif"')
        elif matches(a, "lookup") or matches(a, "table"):
            v = args.next()
            t = table_a2n(v)
            if t is None:
                raise invarg("table id value is invalid\n", v)
            f.table = t
        elif matches(a, "from") or matches(a, "src"):
            net, plen, _ = get_prefix(args.next(), "inet")
            f.src = (net, plen)
        elif a in ("tos", "dsfield", "fwmark", "uidrange", "ipproto", "sport", "dport",
                   "dscp") or matches(a, "protocol") or matches(a, "tun_id"):
            args.next()
        elif a == "l3mdev":
            pass
        else:
            if matches(a, "dst") or matches(a, "to"):
                a = args.next()
            net, plen, _ = get_prefix(a, "inet")
            f.dst = (net, plen)
    return f


def _show(node: Node, args: ArgReader) -> CommandResult:
    f = _parse_list(args)
    lines = [_detached(node, r, format_rule(r)) for r in node.rules if f.accepts(r)]
    return CommandResult("".join(line + "\n" for line in lines), 0, OK)


def _flush(node: Node, args: ArgReader) -> CommandResult:
    f = _parse_list(args)
    keep = [r for r in node.rules if r.pref == 0 or not f.accepts(r)]
    if len(keep) != len(node.rules):
        node.replace_rules(keep)
    return CommandResult("", 0, OK)


def do_iprule(node: Node, opts: IpOpts, argv: list[str]) -> CommandResult:
    args = ArgReader(argv)
    if not args:
        return _show(node, args)
    cmd = args.take()
    if matches(cmd, "list") or matches(cmd, "lst") or matches(cmd, "show"):
        return _show(node, args)
    if matches(cmd, "save") or matches(cmd, "restore"):
        raise unsupported(f'"ip rule {cmd}"')
    if matches(cmd, "add"):
        return _modify(node, opts, args, add=True)
    if matches(cmd, "delete"):
        return _modify(node, opts, args, add=False)
    if matches(cmd, "flush"):
        return _flush(node, args)
    if matches(cmd, "help"):
        raise IpExit(RULE_USAGE, 255, INVALID)
    raise IpExit(f'Command "{cmd}" is unknown, try "ip rule help".\n', 255, INVALID)

"""``iptables`` (filter table) and ``iptables-save``, as iptables 1.8.9 (nf_tables) prints them.

Listing layouts, option order of ``-S``, error wording and exit codes were taken from the real
tool on Debian 12 (e.g. ``-L -n`` prints protocol numbers, ``-L NOPE`` prints the nft
"incompatible" message, ``-X`` of a busy chain fails with exit 4, ``-D CHAIN N`` past the
chain's end, an empty chain included, fails with ``Index of deletion too big``, exit 1).

Simulator limits (the model stores only what :class:`~netarena_gym.routing.state.IptRule`
holds): matches other than ``icmp`` (``-m state``, ``-m conntrack``, ``--dport`` ...) and targets
other than ACCEPT/DROP/REJECT/RETURN/user chains are refused as if the extension were missing
(``Couldn't load match `state':No such file or directory``, exit 2); ``-g`` and ``-f`` are
refused with a note that the simulator lacks them.
Non-contiguous dotted masks are refused as invalid masks. Only the filter table holds rules:
listing ``nat``/``mangle``/``raw``/``security`` shows their empty built-in chains, and writing
to them fails with ``table 'nat' does not exist`` (exit 3). Renaming a built-in chain is refused.
``iptables-save`` prints the filter table, which every node has with its three built-in
chains, as on the Mininet backend, whose baseline makes them (``iptables-restore``) before
every episode. (A new Linux namespace has no table until a write makes it, and makes
built-in chains one by one: there ``iptables-save`` prints nothing and ``-D FORWARD 1``
says ``No chain/target/match by that name``; the simulator follows the backend it is
compared with.) It uses the fixed date :data:`SAVE_DATE`, which the differential harness
normalises. A negated ICMP type is stored as ``icmp_type="!8"``.

The family: this module runs the commands on the node's filter table; argv parsing is in
:mod:`~netarena_gym.routing.commands.iptables_args`, ICMP types, rule matching and
:func:`verdict` (the ruleset for one packet) in
:mod:`~netarena_gym.routing.commands.iptables_match`, and listings, ``-S``, ``iptables-save``
and the help text in :mod:`~netarena_gym.routing.commands.iptables_format`.
"""
from __future__ import annotations

from netarena_gym.shell.parser import ERROR, INVALID, CommandResult
from netarena_gym.routing.commands import CommandContext, register
from netarena_gym.routing.commands.iptables_args import (
    TERMINAL, VERSION, Args, IptExit, check_chain_name, param_error, parse, parse_addrs,
    post_check)
from netarena_gym.routing.commands.iptables_format import (
    HELP, SAVE_DATE, chain_order, chain_refs, echo_rule, empty_table, format_rule_spec, icmp_help,
    list_chains, list_rules, save_table)
from netarena_gym.routing.commands.iptables_match import icmp_spec, verdict
from netarena_gym.routing.commands.tool_help import IPTABLES_SAVE_VERSION
from netarena_gym.routing.state import BUILTIN_CHAINS, Iptables, IptRule

__all__ = ["SAVE_DATE", "format_rule_spec", "icmp_spec", "iptables_cmd", "iptables_save_cmd",
           "verdict"]

_TABLES = {"filter": BUILTIN_CHAINS, "nat": ("PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"),
           "mangle": ("PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"),
           "raw": ("PREROUTING", "OUTPUT"), "security": BUILTIN_CHAINS}


def _ipt(msg: str, einval: bool = False) -> IptExit:
    tail = " Run `dmesg' for more information." if einval else ""
    return IptExit(f"iptables: {msg}.{tail}\n", 1, ERROR)


def _kernel(what: str, err: str, chain: str) -> IptExit:
    return IptExit(f"{VERSION}:  {what} failed ({err}): rule in chain {chain}\n", 4, ERROR)


# ----------------------------------------------------------------------------- commands
def _build(a: Args, ipt: Iptables, op: str | None) -> list[IptRule]:
    v = a.vals
    target = v.get("j", "")
    if target and target not in TERMINAL and target not in ipt.chains:
        raise param_error(f"Chain '{target}' does not exist")
    srcs = parse_addrs(v["s"]) if "s" in v else [None]
    dsts = parse_addrs(v["d"]) if "d" in v else [None]
    proto = v.get("p")
    rules = []
    for s in srcs:
        for d in dsts:
            rules.append(IptRule(
                target=target, src=s if s and (s[1] or "s" in a.inv) else None,
                src_neg="s" in a.inv, dst=d if d and (d[1] or "d" in a.inv) else None,
                dst_neg="d" in a.inv, proto=proto, proto_neg="p" in a.inv,
                in_if=v.get("i"), in_neg="i" in a.inv, out_if=v.get("o"), out_neg="o" in a.inv,
                icmp_type=v.get("icmp"),
                reject_with=(v.get("reject", "icmp-port-unreachable") if target == "REJECT"
                             else None),
                pkts=v.get("c", (0, 0))[0], bytes=v.get("c", (0, 0))[1]))
    if op is not None:
        for r in rules:
            _kernel_check(r, ipt, op, a.chain)
    return rules


def _kernel_check(r: IptRule, ipt: Iptables, op: str, chain: str) -> None:
    what = {"A": "RULE_APPEND", "I": "RULE_INSERT", "R": "RULE_REPLACE"}[op]
    if r.target in BUILTIN_CHAINS:
        raise _kernel(what, "Operation not supported", chain)
    if r.target in ipt.chains and _loops(ipt, chain, r.target):
        raise _kernel(what, "Too many links", chain)
    bad = ((r.reject_with == "tcp-reset" and (r.proto != "tcp" or r.proto_neg))
           or (r.icmp_type is not None and r.proto != "icmp")
           or (r.src is not None and r.src[1] == 0) or (r.dst is not None and r.dst[1] == 0))
    if bad:
        raise _kernel(what, "Invalid argument", chain)


def _loops(ipt: Iptables, chain: str, target: str) -> bool:
    """Would a jump ``chain -> target`` put a loop under a built-in chain? (nft validates
    jumps only for chains reachable from base chains.)"""
    edges = {c: {r.target for r in rules if r.target in ipt.chains}
             for c, rules in ipt.chains.items()}
    edges[chain].add(target)
    state: dict[str, int] = {}  # 1 = on the DFS path, 2 = done

    def cyclic(c: str) -> bool:
        state[c] = 1
        for n in edges.get(c, ()):
            if state.get(n) == 1 or (n not in state and cyclic(n)):
                return True
        state[c] = 2
        return False

    return any(c not in state and cyclic(c) for c in BUILTIN_CHAINS if c in edges)


def _find(rules: list[IptRule], rule: IptRule) -> int:
    sig = rule.signature()
    for k, r in enumerate(rules):
        if r.signature() == sig:
            return k
    return -1


def _need_chain(ipt: Iptables, chain: str) -> list[IptRule]:
    if chain not in ipt.chains:
        raise _ipt("No chain/target/match by that name")
    return ipt.chains[chain]


def _busy(ipt: Iptables, chain: str) -> IptExit:
    return IptExit(f"{VERSION}:  CHAIN_DEL failed (Device or resource busy): chain {chain}\n", 4,
                   ERROR)


def _exec(ipt: Iptables, a: Args, cmd: str) -> tuple[str, bool]:
    """Run a parsed command on the filter table: (output, changed)."""
    c, verbose = a.chain, a.verbose > 0
    if cmd in ("L", "S"):
        if c is not None and c not in ipt.chains:
            raise IptExit(f"{VERSION}: chain `{c}' in table `filter' is incompatible, use 'nft' "
                          "tool.\n", 1, ERROR)
        chains = [c] if c is not None else chain_order(ipt)
        out = list_chains(ipt, chains, a) if cmd == "L" else list_rules(ipt, chains, a)
        changed = False
        if "Z" in a.cmds:
            changed = _zero(ipt, chains, None)
            if verbose:  # after the listing, as -Z -v alone says it
                out += "".join(f"Zeroing chain `{ch}'\n" for ch in chains)
        return out, changed
    if cmd in ("A", "I", "R"):
        rules = _need_chain(ipt, c)
        new = _build(a, ipt, cmd)
        pos = len(rules) if cmd == "A" else (a.rulenum or 1) - 1
        if cmd == "I" and pos > len(rules):
            raise _ipt("Index of insertion too big")
        if cmd == "R":
            if not rules:
                raise _ipt("No chain/target/match by that name")
            if pos >= len(rules):
                raise _ipt("Index of replacement too big")
            del rules[pos]
        rules[pos:pos] = new if cmd == "A" else new[::-1]  # each -I goes in at the same slot
        return ("".join(echo_rule(r) for r in new) if verbose else ""), True
    if cmd == "Dn":
        rules = _need_chain(ipt, c)
        if a.rulenum > len(rules):  # an empty chain too (real: iptables 1.8.9 nf_tables)
            raise _ipt("Index of deletion too big")
        del rules[a.rulenum - 1]
        return "", True
    if cmd in ("D", "C"):
        rules = ipt.chains.get(c, [])
        wanted = _build(a, ipt, None)
        hits = [_find(rules, r) for r in wanted]
        if min(hits) < 0:
            raise _ipt("Bad rule (does a matching rule exist in that chain?)")
        if cmd == "D":
            for r in wanted:
                del rules[_find(rules, r)]
        return ("".join(echo_rule(r) for r in wanted) if verbose else ""), cmd == "D"
    return _exec_chain_cmd(ipt, a, cmd)


def _zero(ipt: Iptables, chains: list[str], num: int | None) -> bool:
    changed = False
    for ch in chains:
        rules = ipt.chains[ch] if num is None else ipt.chains[ch][num - 1:num]
        for r in rules:
            if r.pkts or r.bytes:
                r.pkts = r.bytes = 0
                changed = True
    return changed


def _exec_chain_cmd(ipt: Iptables, a: Args, cmd: str) -> tuple[str, bool]:
    c, verbose = a.chain, a.verbose > 0
    if cmd in ("F", "Z"):
        if c is not None:
            _need_chain(ipt, c)
        chains = [c] if c is not None else chain_order(ipt)
        word = "Flushing" if cmd == "F" else "Zeroing"
        out = "".join(f"{word} chain `{ch}'\n" for ch in chains) if verbose else ""
        if cmd == "Z":
            return out, _zero(ipt, chains, a.rulenum)
        changed = any(ipt.chains[ch] for ch in chains)
        for ch in chains:
            ipt.chains[ch].clear()
        return out, changed
    if cmd == "N":
        if c in ipt.chains:
            raise _ipt("Chain already exists")
        ipt.chains[c] = []
        return "", True
    if cmd == "X":
        return _delete_chains(ipt, c, verbose)
    if cmd == "P":
        if a.extra not in ("ACCEPT", "DROP"):
            raise _ipt("Bad policy name", einval=True)
        if c not in ipt.policies:
            raise _ipt("Bad built-in chain name")
        changed = ipt.policies[c] != a.extra
        ipt.policies[c] = a.extra
        return "", changed
    # -E old new
    new = a.extra
    check_chain_name(new)
    if new in ipt.chains:
        raise _ipt("File exists")
    _need_chain(ipt, c)
    if c in BUILTIN_CHAINS:
        raise _ipt("Operation not permitted")
    ipt.chains = {(new if k == c else k): v for k, v in ipt.chains.items()}
    for rules in ipt.chains.values():
        for r in rules:
            if r.target == c:
                r.target = new
    return "", True


def _delete_chains(ipt: Iptables, chain: str | None, verbose: bool) -> tuple[str, bool]:
    if chain is not None:
        _need_chain(ipt, chain)
        if chain in BUILTIN_CHAINS:
            if ipt.policies.get(chain) != "ACCEPT":
                raise _ipt("Directory not empty")
            if ipt.chains[chain]:
                raise _busy(ipt, chain)
            return "", False
        victims = [chain]
    else:
        victims = [k for k in ipt.chains if k not in BUILTIN_CHAINS]
    for v in victims:
        if ipt.chains[v] or chain_refs(ipt, v):
            raise _busy(ipt, v)
    out = "".join(f"Deleting chain `{v}'\n" for v in sorted(victims)) if verbose else ""
    for v in victims:
        del ipt.chains[v]
    return out, bool(victims)


def _other_table(a: Args, cmd: str) -> CommandResult:
    missing = (f"{VERSION}: table '{a.table}' does not exist\n"
               "Perhaps iptables or your kernel needs to be upgraded.\n")
    chains = list(_TABLES.get(a.table, ()))
    if not chains or cmd not in ("L", "S"):
        return CommandResult(missing, 3, INVALID)
    if a.chain is not None:
        if a.chain not in chains:
            return CommandResult(f"{VERSION}: chain `{a.chain}' in table `{a.table}' is "
                                 "incompatible, use 'nft' tool.\n", 1, ERROR)
        chains = [a.chain]
    return CommandResult(empty_table(a.table, chains, a) if a.rulenum is None else "")


@register("iptables", "iptables-nft")
def iptables_cmd(ctx: CommandContext, argv: list[str], stdin: str) -> CommandResult:
    node = ctx.node
    try:
        a = parse(argv)
        if a.help:
            return CommandResult(HELP + (icmp_help() if a.icmp_loaded else ""))
        cmd = post_check(a)
        if a.table != "filter":
            return _other_table(a, cmd)
        out, changed = _exec(node.iptables, a, cmd)
    except IptExit as e:
        return e.result
    if changed:
        node.touch()
    return CommandResult(out)


@register("iptables-save", "iptables-nft-save")
def iptables_save_cmd(ctx: CommandContext, argv: list[str], stdin: str) -> CommandResult:
    counters, table, i = False, None, 1
    while i < len(argv):
        arg = argv[i]
        if arg in ("-c", "--counters"):
            counters = True
        elif arg in ("-V", "--version"):
            return CommandResult(IPTABLES_SAVE_VERSION)
        elif arg in ("-t", "--table") and i + 1 < len(argv):
            table, i = argv[i + 1], i + 1
        elif arg.startswith(("--table=", "-t")) and len(arg) > 2:
            table = arg.split("=", 1)[1] if arg.startswith("--") else arg[2:]
        elif arg not in ("-4", "--ipv4"):
            what = (f"unrecognized option '{arg}'" if arg.startswith("--") else
                    f"invalid option -- '{arg[1:2] or arg}'")
            return CommandResult(f"iptables-save: {what}\nLook at manual page "
                                 "`iptables-save.8' for more information.\n", 1, INVALID)
        i += 1
    if table is not None and table not in _TABLES:
        return CommandResult(f"Table `{table}' does not exist\n", 1, ERROR)
    ipt = ctx.node.iptables
    if table not in (None, "filter"):
        empty = {c: "ACCEPT" for c in _TABLES[table]}
        return CommandResult(save_table(table, Iptables(policies=empty, chains={
            c: [] for c in empty}), list(empty), counters))
    return CommandResult(save_table("filter", ipt, chain_order(ipt), counters))

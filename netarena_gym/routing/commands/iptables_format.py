"""What ``iptables`` 1.8.9 (nf_tables) prints, laid out as the real tool on Debian 12 prints it.

``-L`` listings (``-n``, ``-v``, ``-x``, ``--line-numbers``), ``-S`` rule specifications in
iptables' option order, the ``-v`` echo of added or deleted rules, ``iptables-save`` tables
and the ``-h`` help text (with the ICMP part once ``-p icmp`` loaded it).

Left out: counters are those stored in a rule (set by ``-c``, cleared by ``-Z``; packets do
not count); only ``localhost``, ``default``, ``loopback`` and ``link-local`` are printed by
name (no DNS, no ``/etc/networks``); ``iptables-save`` prints the fixed date
:data:`SAVE_DATE`, which the differential harness normalises.
"""
from __future__ import annotations

from netarena_gym.core.ipv4 import int_to_ip
from netarena_gym.routing.commands.iptables_args import Args
from netarena_gym.routing.commands.iptables_match import (
    ICMP, ICMP_NAME_OF, PROTO_ALIAS, PROTO_NUM, icmp_save, icmp_spec)
from netarena_gym.routing.state import BUILTIN_CHAINS, Iptables, IptRule

__all__ = ["HELP", "SAVE_DATE", "chain_order", "chain_refs", "echo_rule", "empty_table",
           "format_rule_spec", "icmp_help", "list_chains", "list_rules", "save_table"]

SAVE_DATE = "Mon Jan  1 00:00:00 2024"
_HOSTS = {0x7F000001: "localhost"}
_NETWORKS = {0: "default", 0x7F000000: "loopback", 0xA9FE0000: "link-local"}


def _icmp_list(spec: tuple, numeric: bool) -> str:
    neg, t, lo, hi = spec
    name = None if numeric else ICMP_NAME_OF.get((t, lo, hi))
    if name is not None:
        return f"icmp {'!' if neg else ''}{name}"
    code = f" code {lo}" if lo == hi else (f" codes {lo}-{hi}" if (lo, hi) != (0, 255) else "")
    return f"icmp !type {t}{code}" if neg else f"icmptype {t}{code}"


def _fmt_addr(a: tuple[int, int] | None, neg: bool, numeric: bool) -> str:
    if a is None or (a[1] == 0 and not neg):
        return "0.0.0.0/0" if numeric else "anywhere"
    net, plen = a
    if not numeric:
        if plen == 32 and net in _HOSTS:
            return _HOSTS[net]
        if plen < 32 and net in _NETWORKS:
            return f"{_NETWORKS[net]}/{plen}"
    return int_to_ip(net) if plen == 32 else f"{int_to_ip(net)}/{plen}"


def _proto_col(r: IptRule, numeric: bool) -> str:
    p = PROTO_ALIAS.get(r.proto, r.proto) if r.proto else None
    if p is None:
        return "0" if numeric else "all"
    return str(PROTO_NUM.get(p, p)) if numeric else p


def _exts(r: IptRule, numeric: bool) -> list[str]:
    out = []
    spec = icmp_spec(r.icmp_type)
    if spec is not None:
        out.append(_icmp_list(spec, numeric))
    if r.target == "REJECT":
        out.append(f"reject-with {r.reject_with or 'icmp-port-unreachable'}")
    return out


def _count(v: int, exact: bool) -> str:
    if exact:
        return f"{v:8d} "
    if v <= 99999:
        return f"{v:5d} "
    for unit in "KMGT":
        v = (v + 500) // 1000
        if v <= 9999 or unit == "T":
            return f"{v:4d}{unit} "
    return ""


def _row(r: IptRule, num: int, numeric: bool, verbose: bool, exact: bool, lines: bool) -> str:
    s = f"{num:<4d} " if lines else ""
    if verbose:
        s += _count(r.pkts, exact) + _count(r.bytes, exact)
    s += f"{r.target:<9s} {'!' if r.proto_neg else ' '}{_proto_col(r, numeric):<4s} -- "
    if verbose:
        anyname = "*" if numeric else "any"
        i = ("!" if r.in_neg else "") + (r.in_if or anyname)
        o = ("!" if r.out_neg else "") + (r.out_if or anyname)
        s += f" {i:<6s} {o:<6s} "
    s += f"{'!' if r.src_neg else ' '}{_fmt_addr(r.src, r.src_neg, numeric):<19s} "
    s += f"{'!' if r.dst_neg else ' '}{_fmt_addr(r.dst, r.dst_neg, numeric):<19s} "
    return s + "".join(" " + e for e in _exts(r, numeric)) + "\n"


def echo_rule(r: IptRule) -> str:
    """What ``iptables -v -A ...`` prints for each rule it adds."""
    i = ("!" if r.in_neg else "") + (r.in_if or "*")
    o = ("!" if r.out_neg else "") + (r.out_if or "*")
    src = _fmt_addr(r.src, r.src_neg, True)
    dst = _fmt_addr(r.dst, r.dst_neg, True)
    return (f"{r.target} {'!' if r.proto_neg else ' '}{_proto_col(r, False)} opt -- in {i} out {o} "
            f"{'!' if r.src_neg else ' '}{src} {'!' if r.dst_neg else ' '}-> {dst}  "
            + "".join(" " + e for e in _exts(r, True)) + "\n")


def format_rule_spec(r: IptRule, counters: bool = False) -> str:
    """The rule's options in ``iptables -S`` order (without ``-A CHAIN``)."""
    parts = []
    for a, neg, flag in ((r.src, r.src_neg, "-s"), (r.dst, r.dst_neg, "-d")):
        if a is not None and (a[1] or neg):
            parts.append(("! " if neg else "") + f"{flag} {int_to_ip(a[0])}/{a[1]}")
    for name, neg, flag in ((r.in_if, r.in_neg, "-i"), (r.out_if, r.out_neg, "-o")):
        if name:
            parts.append(("! " if neg else "") + f"{flag} {name}")
    proto = PROTO_ALIAS.get(r.proto, r.proto) if r.proto else None
    if proto:
        parts.append(("! " if r.proto_neg else "") + f"-p {proto}")
    spec = icmp_spec(r.icmp_type)
    if spec is not None:
        parts.append(f"-m icmp {'! ' if spec[0] else ''}--icmp-type {icmp_save(spec)}")
    if counters:
        parts.append(f"-c {r.pkts} {r.bytes}")
    if r.target:
        parts.append(f"-j {r.target}")
    if r.target == "REJECT":
        parts.append(f"--reject-with {r.reject_with or 'icmp-port-unreachable'}")
    return " ".join(parts)


def chain_refs(ipt: Iptables, chain: str) -> int:
    return sum(1 for rules in ipt.chains.values() for r in rules if r.target == chain)


def chain_order(ipt: Iptables) -> list[str]:
    return [c for c in BUILTIN_CHAINS if c in ipt.chains] + sorted(
        c for c in ipt.chains if c not in BUILTIN_CHAINS)


def list_chains(ipt: Iptables, chains: list[str], a: Args) -> str:
    numeric, verbose, exact = "n" in a.opts, a.verbose > 0, "x" in a.opts
    lines = "0" in a.opts
    out = []
    for c in chains:
        rules = ipt.chains.get(c, [])
        if a.rulenum is not None:
            if a.rulenum <= len(rules):
                out.append(_row(rules[a.rulenum - 1], a.rulenum, numeric, verbose, exact, lines))
            continue
        if c in ipt.policies:
            cnt = " 0 packets, 0 bytes" if verbose else ""
            head = f"Chain {c} (policy {ipt.policies[c]}{cnt})\n"
        else:
            head = f"Chain {c} ({chain_refs(ipt, c)} references)\n"
        hdr = "num  " if lines else ""
        if verbose:
            hdr += "    pkts      bytes " if exact else " pkts bytes "
        hdr += "target     prot opt"
        if verbose:
            hdr += " in     out    "
        hdr += f" {'source':<19s}  {'destination':<19s} \n"
        body = "".join(_row(r, k, numeric, verbose, exact, lines) for k, r in enumerate(rules, 1))
        out.append(("\n" if out else "") + head + hdr + body)
    return "".join(out)


def list_rules(ipt: Iptables, chains: list[str], a: Args) -> str:
    counters = a.verbose > 0
    if a.rulenum is not None:
        rules = ipt.chains.get(chains[0], [])
        if a.rulenum > len(rules):
            return ""
        r = rules[a.rulenum - 1]
        return f"-A {chains[0]} {format_rule_spec(r, counters)}".rstrip() + "\n"
    out = []
    for c in chains:
        if c in ipt.policies:
            out.append(f"-P {c} {ipt.policies[c]}" + (" -c 0 0" if counters else "") + "\n")
        else:
            out.append(f"-N {c}\n")
    for c in chains:
        for r in ipt.chains.get(c, []):
            out.append(f"-A {c} {format_rule_spec(r, counters)}".rstrip() + "\n")
    return "".join(out)


def empty_table(table: str, chains: list[str], a: Args) -> str:
    if "S" in a.cmds:
        return "".join(f"-P {c} ACCEPT\n" for c in chains)
    return list_chains(Iptables(policies={c: "ACCEPT" for c in chains},
                                chains={c: [] for c in chains}), chains, a)


def icmp_help() -> str:
    lines = ["", "icmp match options:", "[!] --icmp-type typename\tmatch icmp type",
             "[!] --icmp-type type[/code]\t(or numeric type or type/code)", "Valid ICMP Types:"]
    last = None
    for name, t, lo, hi in ICMP:
        if (t, lo, hi) == last:
            lines[-1] += f" ({name})"
            continue
        last = (t, lo, hi)
        lines.append(("   " if (lo, hi) != (0, 255) and t != 255 else "") + name)
    return "\n".join(lines) + "\n"


def save_table(name: str, ipt: Iptables, chains: list[str], counters: bool) -> str:
    out = [f"# Generated by iptables-save v1.8.9 (nf_tables) on {SAVE_DATE}\n", f"*{name}\n"]
    out += [f":{c} {ipt.policies.get(c, '-')} [0:0]\n" for c in chains]
    for c in chains:
        for r in ipt.chains[c]:
            prefix = f"[{r.pkts}:{r.bytes}] " if counters else ""
            out.append(f"{prefix}-A {c} {format_rule_spec(r)}".rstrip() + "\n")
    out.append(f"COMMIT\n# Completed on {SAVE_DATE}\n")
    return "".join(out)


HELP = """iptables v1.8.9 (nf_tables)

Usage: iptables -[ACD] chain rule-specification [options]
       iptables -I chain [rulenum] rule-specification [options]
       iptables -R chain rulenum rule-specification [options]
       iptables -D chain rulenum [options]
       iptables -[LS] [chain [rulenum]] [options]
       iptables -[FZ] [chain] [options]
       iptables -[NX] chain
       iptables -E old-chain-name new-chain-name
       iptables -P chain target [options]
       iptables -h (print this help information)

Commands:
Either long or short options are allowed.
  --append  -A chain\t\tAppend to chain
  --check   -C chain\t\tCheck for the existence of a rule
  --delete  -D chain\t\tDelete matching rule from chain
  --delete  -D chain rulenum
\t\t\t\tDelete rule rulenum (1 = first) from chain
  --insert  -I chain [rulenum]
\t\t\t\tInsert in chain as rulenum (default 1=first)
  --replace -R chain rulenum
\t\t\t\tReplace rule rulenum (1 = first) in chain
  --list    -L [chain [rulenum]]
\t\t\t\tList the rules in a chain or all chains
  --list-rules -S [chain [rulenum]]
\t\t\t\tPrint the rules in a chain or all chains
  --flush   -F [chain]\t\tDelete all rules in  chain or all chains
  --zero    -Z [chain [rulenum]]
\t\t\t\tZero counters in chain or all chains
  --new     -N chain\t\tCreate a new user-defined chain
  --delete-chain
            -X [chain]\t\tDelete a user-defined chain
  --policy  -P chain target
\t\t\t\tChange policy on chain to target
  --rename-chain
            -E old-chain new-chain
\t\t\t\tChange chain name, (moving any references)

Options:
    --ipv4\t-4\t\tNothing (line is ignored by ip6tables-restore)
    --ipv6\t-6\t\tError (line is ignored by iptables-restore)
[!] --protocol\t-p proto\tprotocol: by number or name, eg. `tcp'
[!] --source\t-s address[/mask][...]
\t\t\t\tsource specification
[!] --destination -d address[/mask][...]
\t\t\t\tdestination specification
[!] --in-interface -i input name[+]
\t\t\t\tnetwork interface name ([+] for wildcard)
 --jump\t-j target
\t\t\t\ttarget for rule (may load target extension)
  --goto      -g chain
\t\t\t       jump to chain with no return
  --match\t-m match
\t\t\t\textended match (may load extension)
  --numeric\t-n\t\tnumeric output of addresses and ports
[!] --out-interface -o output name[+]
\t\t\t\tnetwork interface name ([+] for wildcard)
  --table\t-t table\ttable to manipulate (default: `filter')
  --verbose\t-v\t\tverbose mode
  --wait\t-w [seconds]\tmaximum wait to acquire xtables lock before give up
  --line-numbers\t\tprint line numbers when listing
  --exact\t-x\t\texpand numbers (display exact values)
[!] --fragment\t-f\t\tmatch second or further fragments only
  --modprobe=<command>\t\ttry to insert modules using this command
  --set-counters -c PKTS BYTES\tset the counter during insert/append
[!] --version\t-V\t\tprint package version.
"""

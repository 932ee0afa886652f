"""``iptables`` (filter table) and ``iptables-save``, as iptables 1.8.9 (nf_tables) prints them.

Listing layouts, option order of ``-S``, error wording and exit codes were taken from the real
tool on Debian 12 (e.g. ``-L -n`` prints protocol numbers, ``-L NOPE`` prints the nft
"incompatible" message, ``-X`` of a busy chain fails with exit 4).

Simulator limits (the model stores only what :class:`~netarena_gym.routing.state.IptRule`
holds): matches other than ``icmp`` (``-m state``, ``-m conntrack``, ``--dport`` ...) and targets
other than ACCEPT/DROP/REJECT/RETURN/user chains are refused as if the extension were missing
(``Couldn't load match `state':No such file or directory``, exit 2); ``-g`` and ``-f`` are
refused with a note that the simulator lacks them.
Non-contiguous dotted masks are refused as invalid masks. Only the filter table holds rules:
listing ``nat``/``mangle``/``raw``/``security`` shows their empty built-in chains, and writing
to them fails with ``table 'nat' does not exist`` (exit 3). Renaming a built-in chain is refused.
``iptables-save`` prints the filter table only when it differs from the pristine state (nft
creates the table on first write) and uses the fixed date :data:`SAVE_DATE`, which the
differential harness normalises. A negated ICMP type is stored as ``icmp_type="!8"``.

:func:`verdict` evaluates the ruleset for one packet; it reads the rules as stored (ints and
canonical strings, memoised lookups), so it needs no cache invalidation.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from netarena_gym.core.ipv4 import int_to_ip, mask_of
from netarena_gym.shell.parser import ERROR, INVALID, CommandResult
from netarena_gym.routing.commands import CommandContext, register
from netarena_gym.routing.state import BUILTIN_CHAINS, Iptables, IptRule

__all__ = ["SAVE_DATE", "format_rule_spec", "icmp_spec", "verdict"]

VERSION = "iptables v1.8.9 (nf_tables)"
SAVE_DATE = "Mon Jan  1 00:00:00 2024"
_TRY = "Try `iptables -h' or 'iptables --help' for more information.\n"
_TABLES = {"filter": BUILTIN_CHAINS, "nat": ("PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"),
           "mangle": ("PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"),
           "raw": ("PREROUTING", "OUTPUT"), "security": BUILTIN_CHAINS}
_PROTO_NUM = {"icmp": 1, "igmp": 2, "tcp": 6, "udp": 17, "gre": 47, "esp": 50, "ah": 51,
              "ipv6-icmp": 58, "sctp": 132, "udplite": 136}
_PROTO_NAME = {v: k for k, v in _PROTO_NUM.items()}
_PROTO_ALIAS = {"icmpv6": "ipv6-icmp", "1": "icmp", "6": "tcp", "17": "udp", "all": None, "0": None}
_REJECT = {"icmp-net-unreachable": "net-unreach", "icmp-host-unreachable": "host-unreach",
           "icmp-proto-unreachable": "proto-unreach", "icmp-port-unreachable": "port-unreach",
           "icmp-net-prohibited": "net-prohib", "icmp-host-prohibited": "host-prohib",
           "tcp-reset": "tcp-rst", "icmp-admin-prohibited": "admin-prohib"}
_REJECT_ALIAS = {**{v: k for k, v in _REJECT.items()}, **{k: k for k in _REJECT}}
_TERMINAL = ("ACCEPT", "DROP", "RETURN", "REJECT")
_MISSING_TARGETS = {"LOG", "MASQUERADE", "SNAT", "DNAT", "REDIRECT", "MARK", "CONNMARK", "NFLOG",
                    "CT", "NOTRACK", "TRACE", "TCPMSS", "TPROXY", "NFQUEUE", "QUEUE", "ULOG",
                    "CLASSIFY", "DSCP", "TOS", "TTL", "AUDIT", "CHECKSUM", "SET", "TEE"}
_TCP_EXT = {"dport", "sport", "destination-port", "source-port", "tcp-flags", "syn", "tcp-option"}
_HOSTS = {0x7F000001: "localhost"}
_NETWORKS = {0: "default", 0x7F000000: "loopback", 0xA9FE0000: "link-local"}

# iptables' ICMP type names in its table order: NAME:TYPE matches any code, NAME:TYPE/CODE one
# code; the aliases pong, ping and ttl-exceeded follow the name they stand for
_ICMP_TABLE = """
    any:255 echo-reply:0 pong:0 destination-unreachable:3 network-unreachable:3/0
    host-unreachable:3/1 protocol-unreachable:3/2 port-unreachable:3/3 fragmentation-needed:3/4
    source-route-failed:3/5 network-unknown:3/6 host-unknown:3/7 network-prohibited:3/9
    host-prohibited:3/10 TOS-network-unreachable:3/11 TOS-host-unreachable:3/12
    communication-prohibited:3/13 host-precedence-violation:3/14 precedence-cutoff:3/15
    source-quench:4 redirect:5 network-redirect:5/0 host-redirect:5/1 TOS-network-redirect:5/2
    TOS-host-redirect:5/3 echo-request:8 ping:8 router-advertisement:9 router-solicitation:10
    time-exceeded:11 ttl-exceeded:11 ttl-zero-during-transit:11/0 ttl-zero-during-reassembly:11/1
    parameter-problem:12 ip-header-bad:12/0 required-option-missing:12/1 timestamp-request:13
    timestamp-reply:14 address-mask-request:17 address-mask-reply:18
"""


def _icmp_entry(item: str) -> tuple[str, int, int, int]:
    name, _, tc = item.partition(":")
    t, _, c = tc.partition("/")
    return name, int(t), int(c or 0), int(c or 255)


_ICMP = [_icmp_entry(e) for e in _ICMP_TABLE.split()]
_ICMP_BY_NAME = {n: (t, lo, hi) for n, t, lo, hi in _ICMP}
_ICMP_NAME_OF: dict[tuple, str] = {}
for _n, _t, _lo, _hi in _ICMP:
    _ICMP_NAME_OF.setdefault((_t, _lo, _hi), _n)


class _Fail(Exception):
    def __init__(self, text: str, status: int, kind: str):
        super().__init__(text)
        self.result = CommandResult(text, status, kind)


def _param(msg: str, blank: bool = False) -> _Fail:
    return _Fail(f"{VERSION}: {msg}\n" + ("\n" if blank else "") + _TRY, 2, INVALID)


def _ipt(msg: str, einval: bool = False) -> _Fail:
    tail = " Run `dmesg' for more information." if einval else ""
    return _Fail(f"iptables: {msg}.{tail}\n", 1, ERROR)


def _kernel(what: str, err: str, chain: str) -> _Fail:
    return _Fail(f"{VERSION}:  {what} failed ({err}): rule in chain {chain}\n", 4, ERROR)


def _no_match(name: str, kind: str = "match") -> _Fail:
    return _param(f"Couldn't load {kind} `{name}':No such file or directory", blank=True)


# ----------------------------------------------------------------------------- ICMP types
_SPEC_MEMO: dict[str | None, tuple | None] = {None: None}


def icmp_spec(text: str | None) -> tuple | None:
    """``"8"``, ``"!3/1"``, ``"echo-request"``, ``"any"`` -> ``(neg, type, code_min, code_max)``;
    None for None or unparsable text (memoised: stored rules are evaluated per packet)."""
    try:
        return _SPEC_MEMO[text]
    except KeyError:
        pass
    neg = text.startswith("!")
    body = text[1:] if neg else text
    res = _ICMP_BY_NAME.get(body)
    if res is None:
        t, _, c = body.partition("/")
        if t.isdigit() and int(t) <= 255 and (not c or (c.isdigit() and int(c) <= 255)):
            res = (int(t), int(c), int(c)) if c else (int(t), 0, 255)
    spec = None if res is None else (neg, *res)
    _SPEC_MEMO[text] = spec
    return spec


def _icmp_save(spec: tuple, store: bool = False) -> str:
    """``-S`` form of a spec; with ``store`` the lossless form kept in ``IptRule.icmp_type``."""
    t, lo, hi = spec[1:]
    if t == 255 and (not store or (lo, hi) == (0, 255)):
        return "any"
    return f"{t}/{lo}" if (lo, hi) != (0, 255) else str(t)


def _icmp_list(spec: tuple, numeric: bool) -> str:
    neg, t, lo, hi = spec
    name = None if numeric else _ICMP_NAME_OF.get((t, lo, hi))
    if name is not None:
        return f"icmp {'!' if neg else ''}{name}"
    code = f" code {lo}" if lo == hi else (f" codes {lo}-{hi}" if (lo, hi) != (0, 255) else "")
    return f"icmp !type {t}{code}" if neg else f"icmptype {t}{code}"


# ---------------------------------------------------------------------------- verdict
_PKT_ICMP: dict[str | None, tuple[int, int]] = {None: (-1, -1)}


def _packet_icmp(text: str | None) -> tuple[int, int]:
    hit = _PKT_ICMP.get(text)
    if hit is None:
        spec = icmp_spec(text)
        hit = (spec[1], spec[2]) if spec else (-1, -1)
        _PKT_ICMP[text] = hit
    return hit


def _if_match(pattern: str, name: str) -> bool:
    if pattern[-1] == "+":
        return name.startswith(pattern[:-1])
    return name == pattern


def _matches(r: IptRule, src: int, dst: int, proto: str, in_if: str, out_if: str,
             icmp: tuple[int, int]) -> bool:
    if r.src is not None:
        m = mask_of(r.src[1])
        if ((src & m) == (r.src[0] & m)) == r.src_neg:
            return False
    if r.dst is not None:
        m = mask_of(r.dst[1])
        if ((dst & m) == (r.dst[0] & m)) == r.dst_neg:
            return False
    if r.proto is not None:
        rp = _PROTO_ALIAS.get(r.proto, r.proto)
        if rp is not None and (rp == proto) == r.proto_neg:
            return False
    if r.in_if is not None and _if_match(r.in_if, in_if) == r.in_neg:
        return False
    if r.out_if is not None and _if_match(r.out_if, out_if) == r.out_neg:
        return False
    if r.icmp_type is not None:
        spec = icmp_spec(r.icmp_type)
        if spec is not None and proto == "icmp":
            neg, t, lo, hi = spec
            hit = t == 255 or (icmp[0] == t and lo <= icmp[1] <= hi)
            if hit == neg:
                return False
    return True


def verdict(iptables: Iptables, chain: str, src: int, dst: int, proto: str,
            in_if: str | None, out_if: str | None,
            icmp_type: str | None) -> tuple[str, str | None]:
    """Walk ``chain`` for one packet: ``("ACCEPT"|"DROP"|"REJECT", reject_with or None)``.
    Jumps into user chains, RETURN and the built-in chain's policy behave as in the kernel."""
    proto = _PROTO_ALIAS.get(proto, proto) or "all"
    in_if, out_if = in_if or "", out_if or ""
    icmp = _packet_icmp(icmp_type) if proto == "icmp" else (-1, -1)
    chains = iptables.chains
    stack: list[tuple[list[IptRule], int]] = []
    rules, i = chains.get(chain, ()), 0
    while True:
        if i >= len(rules):
            if not stack:
                return iptables.policies.get(chain, "ACCEPT"), None
            rules, i = stack.pop()
            continue
        r = rules[i]
        i += 1
        if not _matches(r, src, dst, proto, in_if, out_if, icmp):
            continue
        t = r.target
        if t == "ACCEPT" or t == "DROP":
            return t, None
        if t == "REJECT":
            return t, r.reject_with or "icmp-port-unreachable"
        if t == "RETURN":
            if not stack:
                return iptables.policies.get(chain, "ACCEPT"), None
            rules, i = stack.pop()
        elif t in chains and len(stack) < 64:
            stack.append((rules, i))
            rules, i = chains[t], 0


# ------------------------------------------------------------------------------ parsing
_LONG = {"append": "A", "check": "C", "delete": "D", "replace": "R", "insert": "I", "list": "L",
         "list-rules": "S", "flush": "F", "zero": "Z", "new-chain": "N", "delete-chain": "X",
         "rename-chain": "E", "policy": "P", "protocol": "p", "source": "s", "src": "s",
         "destination": "d", "dst": "d", "jump": "j", "goto": "g", "in-interface": "i",
         "out-interface": "o", "match": "m", "numeric": "n", "table": "t", "verbose": "v",
         "exact": "x", "line-numbers": "0", "fragment": "f", "set-counters": "c",
         "version": "V", "help": "h", "wait": "w", "wait-interval": "W", "ipv4": "4",
         "ipv6": "6", "modprobe": "M"}
_REQ = set("ACDRIENPpsdjgiomtcM")
_OPTIONAL = set("LSFZXhwW")
_INVERTIBLE = set("sdpiof")
_CMD_OPTS = {"L": set("nvx0"), "F": {"v"}, "Z": {"v"}, "N": {"v"}, "X": {"v"}, "E": {"v"},
             "S": {"v"}, "P": {"v", "c"}, "Dn": {"v"}}
_RULE_OPTS = set("sdpjviocf")


@dataclass
class _Args:
    cmds: list = field(default_factory=list)
    chain: str | None = None
    rulenum: int | None = None
    extra: str | None = None  # policy (-P) or new name (-E)
    table: str = "filter"
    opts: set = field(default_factory=set)
    inv: set = field(default_factory=set)
    verbose: int = 0
    vals: dict = field(default_factory=dict)
    icmp_loaded: bool = False
    m_icmp: bool = False
    help: bool = False


def _rulenum(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise _param(f"Invalid rule number `{text}'")
    return int(text)


def _check_chain_name(name: str) -> None:
    if len(name) >= 29:
        raise _param(f"chain name `{name}' too long (must be under 29 chars)")
    if name[:1] in ("-", "!"):
        raise _param(f"chain name not allowed to start with `{name[0]}'")
    if name in _TERMINAL or name in _MISSING_TARGETS:
        raise _param("chain name may not clash with target name")
    if any(c.isspace() for c in name):
        raise _param(f"Invalid chain name `{name}'")


def _parse(argv: list[str]) -> _Args:
    a = _Args()
    n, i, inv = len(argv), 1, False

    def has_arg() -> bool:
        return i < n and argv[i][:1] not in ("-", "!")

    while i < n:
        tok = argv[i]
        i += 1
        if tok == "!":
            if inv:
                raise _param("multiple consecutive ! not allowed")
            inv = True
            continue
        if tok.startswith("--") and len(tok) > 2:
            name, eq, val = tok[2:].partition("=")
            opt = _long_opt(name, a)
            if opt is None:
                raise _param(f'unknown option "{tok}"')
            arg = val if eq else None
            if arg is None and (opt in _REQ or opt in ("icmp-type", "reject-with")):
                if i >= n:
                    raise _param(f'option "{tok}" requires an argument')
                arg, i = argv[i], i + 1
            opts = [(opt, arg)]
        elif tok.startswith("-") and len(tok) > 1 and tok != "--":
            opts, j = [], 1
            while j < len(tok):
                c, j = tok[j], j + 1
                if c in _REQ:
                    arg = tok[j:]
                    if not arg:
                        if i >= n:
                            raise _param(f'option "-{c}" requires an argument')
                        arg, i = argv[i], i + 1
                    opts.append((c, arg))
                    break
                if c in _OPTIONAL:
                    opts.append((c, tok[j:] or None))
                    break
                if c not in "nvxf46V":
                    raise _param(f'unknown option "{tok}"')
                opts.append((c, None))
        else:
            raise _Fail(f"Bad argument `{tok}'\n{_TRY}", 2, INVALID)
        for opt, arg in opts:
            i = _apply(a, opt, arg, inv, argv, i, has_arg)
            inv = False
    if inv:
        raise _param("nothing appropriate following !")
    return a


def _long_opt(name: str, a: _Args) -> str | None:
    ext = ["icmp-type"] if a.icmp_loaded else []
    if a.vals.get("j") == "REJECT":
        ext.append("reject-with")
    if name in _TCP_EXT and a.vals.get("p") in ("tcp", "udp"):
        raise _no_match(a.vals["p"])
    if name in _LONG:
        return _LONG[name]
    if name in ext:
        return name
    hits = [k for k in list(_LONG) + ext if k.startswith(name)]
    if len({_LONG.get(h, h) for h in hits}) != 1:
        return None
    return _LONG.get(hits[0], hits[0])


def _set_opt(a: _Args, opt: str, inv: bool) -> None:
    if opt in a.opts and opt != "v":
        raise _param(f"multiple -{opt} flags not allowed")
    if inv and opt not in _INVERTIBLE:
        raise _param(f"cannot have ! before -{opt}")
    a.opts.add(opt)
    if inv:
        a.inv.add(opt)


def _add_cmd(a: _Args, cmd: str, inv: bool) -> None:
    if inv:
        raise _param("unexpected '!' flag")
    for old in a.cmds:
        if not ({old, cmd} <= {"L", "Z"} or {old, cmd} <= {"S", "Z"}):
            raise _param(f"Cannot use -{cmd} with -{old}")
    a.cmds.append(cmd)


def _apply(a: _Args, opt: str, arg, inv: bool, argv, i: int, has_arg) -> int:
    if opt in "ACDRILSFZNXEP":
        _add_cmd(a, opt, inv)
        if opt == "N":
            _check_chain_name(arg)
        if arg is None and opt in "LSFZX" and has_arg():
            arg, i = argv[i], i + 1
        a.chain = arg
        nxt = argv[i] if i < len(argv) and argv[i][:1] not in ("-", "!") else None
        if nxt is not None and (opt in "RI" or (opt in "DLSZ" and arg is not None)):
            a.rulenum, i = _rulenum(nxt), i + 1
        elif opt == "R":
            raise _param("-R requires a rule number")
        elif opt in "EP":
            if nxt is None:
                raise _param("-E requires old-chain-name and new-chain-name" if opt == "E"
                             else "-P requires a chain and a policy")
            a.extra, i = nxt, i + 1
    elif opt == "h":
        a.help = True
    elif opt == "V":
        raise _Fail(VERSION + "\n", 0, "ok")
    elif opt == "6":
        raise _Fail(_TRY, 2, INVALID)
    elif opt in ("w", "W"):
        if arg is None and i < len(argv) and argv[i].isdigit():
            i += 1
    elif opt == "t":
        if inv:
            raise _param("unexpected ! flag before --table")
        a.table = arg
    elif opt == "m":
        if inv:
            raise _param("unexpected ! flag before --match")
        if arg != "icmp":
            raise _no_match(arg)
        a.m_icmp = a.icmp_loaded = True
    elif opt in ("g", "f"):
        raise _param(f"option \"-{opt}\" is not supported by the simulator")
    elif opt == "icmp-type":
        if "icmp" in a.vals:
            raise _param("icmp match: only use --icmp-type once!")
        spec = icmp_spec(arg)
        if spec is None or arg.startswith("!"):
            raise _param(f"Unknown ICMP type `{arg}'")
        a.vals["icmp"] = ("!" if inv else "") + _icmp_save(spec, store=True)
    elif opt == "reject-with":
        if arg == "echo-reply":
            raise _Fail(f"--reject-with echo-reply no longer supported\n{VERSION}: unknown "
                        f"reject type \"{arg}\"\n{_TRY}", 2, INVALID)
        if arg not in _REJECT_ALIAS:
            raise _param(f'unknown reject type "{arg}"')
        a.vals["reject"] = _REJECT_ALIAS[arg]
    elif opt == "c":
        _set_opt(a, opt, inv)
        p, _, b = arg.partition(",")
        if not b and i < len(argv):
            b, i = argv[i], i + 1
        if not b:
            raise _param("-c requires packet and byte counter")
        if not p.isdigit() or not b.isdigit():
            raise _param(f"-c {'packet' if not p.isdigit() else 'byte'} counter not numeric")
        a.vals["c"] = (int(p), int(b))
    else:
        _set_opt(a, opt, inv)
        if opt == "v":
            a.verbose += 1
        elif opt == "p":
            a.vals["p"] = _parse_proto(arg, inv)
            a.icmp_loaded = a.icmp_loaded or a.vals["p"] == "icmp"
        elif opt == "j":
            a.vals["j"] = arg
        elif opt in "io":
            if not arg:
                raise _param("Empty interface is likely to be undesired")
            if len(arg) > 15:
                raise _param(f"interface name `{arg}' must be shorter than IFNAMSIZ (15)")
            a.vals[opt] = arg
        elif opt in "sd":
            a.vals[opt] = arg
    return i


def _parse_proto(text: str, inv: bool) -> str | None:
    t = text.lower()
    t = _PROTO_ALIAS.get(t, t) if not t.isdigit() else t
    if t is not None and t.isdigit():
        num = int(t)
        if num > 255:
            raise _param(f'unknown protocol "{text}" specified')
        t = _PROTO_NAME.get(num, str(num)) if num else None
    elif t is not None and t not in _PROTO_NUM:
        raise _param(f'unknown protocol "{text}" specified')
    if t is None and inv:
        raise _param("rule would never match protocol")
    return t


def _parse_addrs(text: str) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for item in text.split(","):
        host, slash, m = item.partition("/")
        plen = 32
        if slash:
            if "." in m:
                mv = _dotted(m)
                bits = mv.bit_count() if mv is not None else -1
                if mv is None or mv != mask_of(bits):
                    raise _param(f"invalid mask `{m}' specified")
                plen = bits
            elif m.isdigit() and int(m) <= 32:
                plen = int(m)
            else:
                raise _param(f"invalid mask `{m}' specified")
        ip = 0x7F000001 if host == "localhost" else _dotted(host)
        if ip is None:
            raise _param(f"host/network `{host}' not found")
        key = (ip & mask_of(plen), plen)
        if key not in out:
            out.append(key)
    return out


def _dotted(text: str) -> int | None:
    parts = text.split(".")
    if not 1 <= len(parts) <= 4 or not all(p.isdigit() and int(p) <= 255 for p in parts):
        return None
    v = 0
    for p in parts + ["0"] * (4 - len(parts)):
        v = (v << 8) | int(p)
    return v


# ------------------------------------------------------------------------------ printing
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
    p = _PROTO_ALIAS.get(r.proto, r.proto) if r.proto else None
    if p is None:
        return "0" if numeric else "all"
    return str(_PROTO_NUM.get(p, p)) if numeric else p


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


def _echo(r: IptRule) -> str:
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
    proto = _PROTO_ALIAS.get(r.proto, r.proto) if r.proto else None
    if proto:
        parts.append(("! " if r.proto_neg else "") + f"-p {proto}")
    spec = icmp_spec(r.icmp_type)
    if spec is not None:
        parts.append(f"-m icmp {'! ' if spec[0] else ''}--icmp-type {_icmp_save(spec)}")
    if counters:
        parts.append(f"-c {r.pkts} {r.bytes}")
    if r.target:
        parts.append(f"-j {r.target}")
    if r.target == "REJECT":
        parts.append(f"--reject-with {r.reject_with or 'icmp-port-unreachable'}")
    return " ".join(parts)


def _refs(ipt: Iptables, chain: str) -> int:
    return sum(1 for rules in ipt.chains.values() for r in rules if r.target == chain)


def _order(ipt: Iptables) -> list[str]:
    return [c for c in BUILTIN_CHAINS if c in ipt.chains] + sorted(
        c for c in ipt.chains if c not in BUILTIN_CHAINS)


def _list(ipt: Iptables, chains: list[str], a: _Args) -> str:
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
            head = f"Chain {c} ({_refs(ipt, c)} references)\n"
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


def _list_rules(ipt: Iptables, chains: list[str], a: _Args) -> str:
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


def _empty_table(table: str, chains: list[str], a: _Args) -> str:
    if "S" in a.cmds:
        return "".join(f"-P {c} ACCEPT\n" for c in chains)
    return _list(Iptables(policies={c: "ACCEPT" for c in chains},
                          chains={c: [] for c in chains}), chains, a)


# ----------------------------------------------------------------------------- commands
def _post_check(a: _Args) -> str:
    """Checks iptables makes after option parsing; returns the command key."""
    if a.m_icmp and "icmp" not in a.vals:
        raise _param('icmp: option "--icmp-type" must be specified', blank=True)
    if a.table == "nat" and "DROP" in (a.vals.get("j"), a.extra):
        raise _param('\nThe "nat" table is not intended for filtering, the use of DROP is '
                     'therefore inhibited.\n\n')
    if not a.cmds:
        raise _param("no command specified")
    if a.vals.get("j") in _MISSING_TARGETS and a.table == "filter":
        raise _no_match(a.vals["j"], "target")
    keys = ["Dn" if c == "D" and a.rulenum is not None else c for c in a.cmds]
    if keys[0] == "R" and any("," in a.vals.get(k, "") for k in "sd"):
        raise _param("Replacement rule does not specify a unique address")
    for opt in "nsdpjvxio0cf":
        if opt not in a.opts:
            continue
        legal = [_CMD_OPTS[k] if k in _CMD_OPTS else _RULE_OPTS - ({"c"} if k in "DC" else set())
                 for k in keys]
        if not any(opt in s for s in legal):
            raise _param(f"Illegal option `-{opt}' with this command")
    if a.chain is not None and len(a.chain) >= 29:
        raise _param(f"chain name `{a.chain}' too long (must be under 29 chars)")
    if keys[0] in "AIRCD" and keys[0] != "Dn":
        if "i" in a.opts and a.chain in ("OUTPUT", "POSTROUTING"):
            raise _param(f"Can't use -i with {a.chain}\n")
        if "o" in a.opts and a.chain in ("INPUT", "PREROUTING"):
            raise _param(f"Can't use -o with {a.chain}\n")
    return keys[0]


def _build(a: _Args, ipt: Iptables, op: str | None) -> list[IptRule]:
    v = a.vals
    target = v.get("j", "")
    if target and target not in _TERMINAL and target not in ipt.chains:
        raise _param(f"Chain '{target}' does not exist")
    srcs = _parse_addrs(v["s"]) if "s" in v else [None]
    dsts = _parse_addrs(v["d"]) if "d" in v else [None]
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


def _busy(ipt: Iptables, chain: str) -> _Fail:
    return _Fail(f"{VERSION}:  CHAIN_DEL failed (Device or resource busy): chain {chain}\n", 4,
                 ERROR)


def _exec(ipt: Iptables, a: _Args, cmd: str) -> tuple[str, bool]:
    """Run a parsed command on the filter table: (output, changed)."""
    c, verbose = a.chain, a.verbose > 0
    if cmd in ("L", "S"):
        if c is not None and c not in ipt.chains:
            raise _Fail(f"{VERSION}: chain `{c}' in table `filter' is incompatible, use 'nft' "
                        "tool.\n", 1, ERROR)
        chains = [c] if c is not None else _order(ipt)
        out = _list(ipt, chains, a) if cmd == "L" else _list_rules(ipt, chains, a)
        changed = False
        if "Z" in a.cmds:
            changed = _zero(ipt, chains, None)
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
        return ("".join(_echo(r) for r in new) if verbose else ""), True
    if cmd == "Dn":
        rules = _need_chain(ipt, c)
        if not rules:
            raise _ipt("No chain/target/match by that name")
        if a.rulenum > len(rules):
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
        return ("".join(_echo(r) for r in wanted) if verbose else ""), cmd == "D"
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


def _exec_chain_cmd(ipt: Iptables, a: _Args, cmd: str) -> tuple[str, bool]:
    c, verbose = a.chain, a.verbose > 0
    if cmd in ("F", "Z"):
        if c is not None:
            _need_chain(ipt, c)
        chains = [c] if c is not None else _order(ipt)
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
    _check_chain_name(new)
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
        if ipt.chains[v] or _refs(ipt, v):
            raise _busy(ipt, v)
    out = "".join(f"Deleting chain `{v}'\n" for v in sorted(victims)) if verbose else ""
    for v in victims:
        del ipt.chains[v]
    return out, bool(victims)


def _icmp_help() -> str:
    lines = ["", "icmp match options:", "[!] --icmp-type typename\tmatch icmp type",
             "[!] --icmp-type type[/code]\t(or numeric type or type/code)", "Valid ICMP Types:"]
    last = None
    for name, t, lo, hi in _ICMP:
        if (t, lo, hi) == last:
            lines[-1] += f" ({name})"
            continue
        last = (t, lo, hi)
        lines.append(("   " if (lo, hi) != (0, 255) and t != 255 else "") + name)
    return "\n".join(lines) + "\n"


def _other_table(a: _Args, cmd: str) -> CommandResult:
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
    return CommandResult(_empty_table(a.table, chains, a) if a.rulenum is None else "")


@register("iptables", "iptables-nft")
def iptables_cmd(ctx: CommandContext, argv: list[str], stdin: str) -> CommandResult:
    node = ctx.node
    try:
        a = _parse(argv)
        if a.help:
            return CommandResult(_HELP + (_icmp_help() if a.icmp_loaded else ""))
        cmd = _post_check(a)
        if a.table != "filter":
            return _other_table(a, cmd)
        out, changed = _exec(node.iptables, a, cmd)
    except _Fail as e:
        return e.result
    if changed:
        node.touch()
    return CommandResult(out)


def _is_pristine(ipt: Iptables) -> bool:
    return (all(p == "ACCEPT" for p in ipt.policies.values()) and set(ipt.chains) <= set(
        BUILTIN_CHAINS) and not any(ipt.chains.values()))


@register("iptables-save", "iptables-nft-save")
def iptables_save_cmd(ctx: CommandContext, argv: list[str], stdin: str) -> CommandResult:
    counters, table, i = False, None, 1
    while i < len(argv):
        arg = argv[i]
        if arg in ("-c", "--counters"):
            counters = True
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
        return CommandResult(_save_table(table, Iptables(policies=empty, chains={
            c: [] for c in empty}), list(empty), counters))
    if _is_pristine(ipt):
        return CommandResult("")
    return CommandResult(_save_table("filter", ipt, _order(ipt), counters))


def _save_table(name: str, ipt: Iptables, chains: list[str], counters: bool) -> str:
    out = [f"# Generated by iptables-save v1.8.9 (nf_tables) on {SAVE_DATE}\n", f"*{name}\n"]
    out += [f":{c} {ipt.policies.get(c, '-')} [0:0]\n" for c in chains]
    for c in chains:
        for r in ipt.chains[c]:
            prefix = f"[{r.pkts}:{r.bytes}] " if counters else ""
            out.append(f"{prefix}-A {c} {format_rule_spec(r)}".rstrip() + "\n")
    out.append(f"COMMIT\n# Completed on {SAVE_DATE}\n")
    return "".join(out)


_HELP = """iptables v1.8.9 (nf_tables)

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

"""``iptables`` 1.8.9 (nf_tables) command-line parsing, as the real tool on Debian 12 parses it.

Long options and their abbreviations, clustered short options, ``!`` inversion, the
command/option legality table and the wording and exit status (2, ``Try `iptables -h' ...``)
of iptables' parameter problems. :func:`parse` turns argv into :class:`Args`;
:func:`post_check` makes the checks iptables makes after option parsing and returns the
command key (``Dn``: ``-D chain rulenum``). Errors are raised as :class:`IptExit`, which
carries the :class:`CommandResult` the command returns.

Left out: matches other than ``icmp`` and targets other than ACCEPT/DROP/REJECT/RETURN/user
chains are refused as if the extension were missing (``Couldn't load match `state':No such
file or directory``, exit 2); ``-g`` and ``-f`` are refused with a note that the simulator
lacks them; ``-w``/``-W`` are accepted and ignored (there is no lock); non-contiguous dotted
masks are refused as invalid masks and host names other than ``localhost`` are not resolved.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from netarena_gym.core.ipv4 import mask_of
from netarena_gym.shell.parser import INVALID, CommandResult
from netarena_gym.routing.commands.iptables_match import (
    PROTO_ALIAS, PROTO_NAME, PROTO_NUM, icmp_save, icmp_spec)

__all__ = ["TERMINAL", "TRY", "VERSION", "Args", "IptExit", "check_chain_name", "param_error",
           "parse", "parse_addrs", "post_check"]

VERSION = "iptables v1.8.9 (nf_tables)"
TRY = "Try `iptables -h' or 'iptables --help' for more information.\n"
_REJECT = {"icmp-net-unreachable": "net-unreach", "icmp-host-unreachable": "host-unreach",
           "icmp-proto-unreachable": "proto-unreach", "icmp-port-unreachable": "port-unreach",
           "icmp-net-prohibited": "net-prohib", "icmp-host-prohibited": "host-prohib",
           "tcp-reset": "tcp-rst", "icmp-admin-prohibited": "admin-prohib"}
_REJECT_ALIAS = {**{v: k for k, v in _REJECT.items()}, **{k: k for k in _REJECT}}
TERMINAL = ("ACCEPT", "DROP", "RETURN", "REJECT")
_MISSING_TARGETS = {"LOG", "MASQUERADE", "SNAT", "DNAT", "REDIRECT", "MARK", "CONNMARK", "NFLOG",
                    "CT", "NOTRACK", "TRACE", "TCPMSS", "TPROXY", "NFQUEUE", "QUEUE", "ULOG",
                    "CLASSIFY", "DSCP", "TOS", "TTL", "AUDIT", "CHECKSUM", "SET", "TEE"}
_TCP_EXT = {"dport", "sport", "destination-port", "source-port", "tcp-flags", "syn", "tcp-option"}


class IptExit(Exception):
    def __init__(self, text: str, status: int, kind: str):
        super().__init__(text)
        self.result = CommandResult(text, status, kind)


def param_error(msg: str, blank: bool = False) -> IptExit:
    return IptExit(f"{VERSION}: {msg}\n" + ("\n" if blank else "") + TRY, 2, INVALID)


def _no_match(name: str, kind: str = "match") -> IptExit:
    return param_error(f"Couldn't load {kind} `{name}':No such file or directory", blank=True)


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
class Args:
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
        raise param_error(f"Invalid rule number `{text}'")
    return int(text)


def check_chain_name(name: str) -> None:
    if len(name) >= 29:
        raise param_error(f"chain name `{name}' too long (must be under 29 chars)")
    if name[:1] in ("-", "!"):
        raise param_error(f"chain name not allowed to start with `{name[0]}'")
    if name in TERMINAL or name in _MISSING_TARGETS:
        raise param_error("chain name may not clash with target name")
    if any(c.isspace() for c in name):
        raise param_error(f"Invalid chain name `{name}'")


def parse(argv: list[str]) -> Args:
    a = Args()
    n, i, inv = len(argv), 1, False

    def has_arg() -> bool:
        return i < n and argv[i][:1] not in ("-", "!")

    while i < n:
        tok = argv[i]
        i += 1
        if tok == "!":
            if inv:
                raise param_error("multiple consecutive ! not allowed")
            inv = True
            continue
        if tok.startswith("--") and len(tok) > 2:
            name, eq, val = tok[2:].partition("=")
            opt = _long_opt(name, a)
            if opt is None:
                raise param_error(f'unknown option "{tok}"')
            arg = val if eq else None
            if arg is None and (opt in _REQ or opt in ("icmp-type", "reject-with")):
                if i >= n:
                    raise param_error(f'option "{tok}" requires an argument')
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
                            raise param_error(f'option "-{c}" requires an argument')
                        arg, i = argv[i], i + 1
                    opts.append((c, arg))
                    break
                if c in _OPTIONAL:
                    opts.append((c, tok[j:] or None))
                    break
                if c not in "nvxf46V":
                    raise param_error(f'unknown option "{tok}"')
                opts.append((c, None))
        else:
            raise IptExit(f"Bad argument `{tok}'\n{TRY}", 2, INVALID)
        for opt, arg in opts:
            i = _apply(a, opt, arg, inv, argv, i, has_arg)
            inv = False
    if inv:
        raise param_error("nothing appropriate following !")
    return a


def _long_opt(name: str, a: Args) -> str | None:
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


def _set_opt(a: Args, opt: str, inv: bool) -> None:
    if opt in a.opts and opt != "v":
        raise param_error(f"multiple -{opt} flags not allowed")
    if inv and opt not in _INVERTIBLE:
        raise param_error(f"cannot have ! before -{opt}")
    a.opts.add(opt)
    if inv:
        a.inv.add(opt)


def _add_cmd(a: Args, cmd: str, inv: bool) -> None:
    if inv:
        raise param_error("unexpected '!' flag")
    for old in a.cmds:
        if not ({old, cmd} <= {"L", "Z"} or {old, cmd} <= {"S", "Z"}):
            raise param_error(f"Cannot use -{cmd} with -{old}")
    a.cmds.append(cmd)


def _apply(a: Args, opt: str, arg, inv: bool, argv, i: int, has_arg) -> int:
    if opt in "ACDRILSFZNXEP":
        _add_cmd(a, opt, inv)
        if opt == "N":
            check_chain_name(arg)
        if arg is None and opt in "LSFZX" and has_arg():
            arg, i = argv[i], i + 1
        if arg is not None or opt not in "LSZ":  # -L CHAIN -Z: one chain, listed and zeroed
            a.chain = arg
        nxt = argv[i] if i < len(argv) and argv[i][:1] not in ("-", "!") else None
        if nxt is not None and (opt in "RI" or (opt in "DLSZ" and arg is not None)):
            a.rulenum, i = _rulenum(nxt), i + 1
        elif opt == "R":
            raise param_error("-R requires a rule number")
        elif opt in "EP":
            if nxt is None:
                raise param_error("-E requires old-chain-name and new-chain-name" if opt == "E"
                                  else "-P requires a chain and a policy")
            a.extra, i = nxt, i + 1
    elif opt == "h":
        a.help = True
    elif opt == "V":
        raise IptExit(VERSION + "\n", 0, "ok")
    elif opt == "6":
        raise IptExit(TRY, 2, INVALID)
    elif opt in ("w", "W"):
        if arg is None and i < len(argv) and argv[i].isdigit():
            i += 1
    elif opt == "t":
        if inv:
            raise param_error("unexpected ! flag before --table")
        a.table = arg
    elif opt == "m":
        if inv:
            raise param_error("unexpected ! flag before --match")
        if arg != "icmp":
            raise _no_match(arg)
        a.m_icmp = a.icmp_loaded = True
    elif opt in ("g", "f"):
        raise param_error(f"option \"-{opt}\" is not supported by the simulator")
    elif opt == "icmp-type":
        if "icmp" in a.vals:
            raise param_error("icmp match: only use --icmp-type once!")
        spec = icmp_spec(arg)
        if spec is None or arg.startswith("!"):
            raise param_error(f"Unknown ICMP type `{arg}'")
        a.vals["icmp"] = ("!" if inv else "") + icmp_save(spec, store=True)
    elif opt == "reject-with":
        if arg == "echo-reply":
            raise IptExit(f"--reject-with echo-reply no longer supported\n{VERSION}: unknown "
                          f"reject type \"{arg}\"\n{TRY}", 2, INVALID)
        if arg not in _REJECT_ALIAS:
            raise param_error(f'unknown reject type "{arg}"')
        a.vals["reject"] = _REJECT_ALIAS[arg]
    elif opt == "c":
        _set_opt(a, opt, inv)
        p, _, b = arg.partition(",")
        if not b and i < len(argv):
            b, i = argv[i], i + 1
        if not b:
            raise param_error("-c requires packet and byte counter")
        if not p.isdigit() or not b.isdigit():
            raise param_error(f"-c {'packet' if not p.isdigit() else 'byte'} counter not numeric")
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
                raise param_error("Empty interface is likely to be undesired")
            if len(arg) > 15:
                raise param_error(f"interface name `{arg}' must be shorter than IFNAMSIZ (15)")
            a.vals[opt] = arg
        elif opt in "sd":
            a.vals[opt] = arg
    return i


def _parse_proto(text: str, inv: bool) -> str | None:
    t = text.lower()
    t = PROTO_ALIAS.get(t, t) if not t.isdigit() else t
    if t is not None and t.isdigit():
        num = int(t)
        if num > 255:
            raise param_error(f'unknown protocol "{text}" specified')
        t = PROTO_NAME.get(num, str(num)) if num else None
    elif t is not None and t not in PROTO_NUM:
        raise param_error(f'unknown protocol "{text}" specified')
    if t is None and inv:
        raise param_error("rule would never match protocol")
    return t


def parse_addrs(text: str) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for item in text.split(","):
        host, slash, m = item.partition("/")
        plen = 32
        if slash:
            if "." in m:
                mv = _dotted(m)
                bits = mv.bit_count() if mv is not None else -1
                if mv is None or mv != mask_of(bits):
                    raise param_error(f"invalid mask `{m}' specified")
                plen = bits
            elif m.isdigit() and int(m) <= 32:
                plen = int(m)
            else:
                raise param_error(f"invalid mask `{m}' specified")
        ip = 0x7F000001 if host == "localhost" else _dotted(host)
        if ip is None:
            raise param_error(f"host/network `{host}' not found")
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


def post_check(a: Args) -> str:
    """Checks iptables makes after option parsing; returns the command key."""
    if a.m_icmp and "icmp" not in a.vals:
        raise param_error('icmp: option "--icmp-type" must be specified', blank=True)
    if a.table == "nat" and "DROP" in (a.vals.get("j"), a.extra):
        raise param_error('\nThe "nat" table is not intended for filtering, the use of DROP is '
                          'therefore inhibited.\n\n')
    if not a.cmds:
        raise param_error("no command specified")
    if a.vals.get("j") in _MISSING_TARGETS and a.table == "filter":
        raise _no_match(a.vals["j"], "target")
    keys = ["Dn" if c == "D" and a.rulenum is not None else c for c in a.cmds]
    if keys[0] == "R" and any("," in a.vals.get(k, "") for k in "sd"):
        raise param_error("Replacement rule does not specify a unique address")
    for opt in "nsdpjvxio0cf":
        if opt not in a.opts:
            continue
        legal = [_CMD_OPTS[k] if k in _CMD_OPTS else _RULE_OPTS - ({"c"} if k in "DC" else set())
                 for k in keys]
        if not any(opt in s for s in legal):
            raise param_error(f"Illegal option `-{opt}' with this command")
    if a.chain is not None and len(a.chain) >= 29:
        raise param_error(f"chain name `{a.chain}' too long (must be under 29 chars)")
    if keys[0] in "AIRCD" and keys[0] != "Dn":
        if "i" in a.opts and a.chain in ("OUTPUT", "POSTROUTING"):
            raise param_error(f"Can't use -i with {a.chain}\n")
        if "o" in a.opts and a.chain in ("INPUT", "PREROUTING"):
            raise param_error(f"Can't use -o with {a.chain}\n")
    if len(keys) > 1:  # -Z with -L or -S, in either order: a listing that zeroes
        return next(k for k in keys if k in ("L", "S"))
    return keys[0]

"""Rule matching of ``iptables`` 1.8.9 (nf_tables): ICMP type specs, protocol names and
:func:`verdict`, the walk of a filter chain for one packet as the Linux 6.1 kernel makes it.

ICMP type names, their aliases and their order are iptables' own (``iptables -p icmp -h``); a
spec is ``(neg, type, code_min, code_max)`` and a negated type is stored as
``icmp_type="!8"``. :func:`verdict` reads the rules as stored (ints and canonical strings,
memoised lookups), so it needs no cache invalidation.

Left out: matches other than ``icmp`` (no conntrack state, ports or marks), fragments and
``-g`` (goto); matching does not count packets; a jump below 64 nested user chains is skipped.
"""
from __future__ import annotations

from netarena_gym.core.ipv4 import mask_of
from netarena_gym.routing.state import Iptables, IptRule

__all__ = ["ICMP", "ICMP_NAME_OF", "PROTO_ALIAS", "PROTO_NAME", "PROTO_NUM", "icmp_save",
           "icmp_spec", "verdict"]

PROTO_NUM = {"icmp": 1, "igmp": 2, "tcp": 6, "udp": 17, "gre": 47, "esp": 50, "ah": 51,
             "ipv6-icmp": 58, "sctp": 132, "udplite": 136}
PROTO_NAME = {v: k for k, v in PROTO_NUM.items()}
PROTO_ALIAS = {"icmpv6": "ipv6-icmp", "1": "icmp", "6": "tcp", "17": "udp", "all": None, "0": None}

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


ICMP = [_icmp_entry(e) for e in _ICMP_TABLE.split()]
_ICMP_BY_NAME = {n: (t, lo, hi) for n, t, lo, hi in ICMP}
ICMP_NAME_OF: dict[tuple, str] = {}
for _n, _t, _lo, _hi in ICMP:
    ICMP_NAME_OF.setdefault((_t, _lo, _hi), _n)

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


def icmp_save(spec: tuple, store: bool = False) -> str:
    """``-S`` form of a spec; with ``store`` the lossless form kept in ``IptRule.icmp_type``."""
    t, lo, hi = spec[1:]
    if t == 255 and (not store or (lo, hi) == (0, 255)):
        return "any"
    return f"{t}/{lo}" if (lo, hi) != (0, 255) else str(t)


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
        rp = PROTO_ALIAS.get(r.proto, r.proto)
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
    proto = PROTO_ALIAS.get(proto, proto) or "all"
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

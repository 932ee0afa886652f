"""Conventions shared by the ``ip`` sub-commands (iproute2 6.1).

iproute2 parses its arguments with a few helpers whose wording and exit statuses agents see
all the time; this module reproduces them:

* ``matches(word, keyword)``: ``word`` is a (non-empty) prefix of ``keyword`` -- how iproute2
  accepts abbreviations (``ip r a`` = ``ip route add``).
* usage errors (``invarg``, ``duparg``, ``duparg2``, an incomplete command line) exit 255;
  a bad prefix/address and "Cannot find device" exit 1; a refusal by the kernel exits 2.

Inside the sub-commands an error is raised as :class:`IpExit` and turned into a
:class:`CommandResult` by the ``ip`` dispatcher, so that deep parsing code can stop the
command the way iproute2's ``exit()`` does.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from netarena_gym.core.ipv4 import int_to_ip, mask_of
from netarena_gym.shell.parser import ERROR, INVALID, CommandResult

__all__ = [
    "IpExit", "IpOpts", "matches", "invarg", "duparg", "duparg2", "incomplete", "nodev",
    "kernel_error", "extack_error", "no_such_device_dump", "ArgReader", "parse_inet",
    "get_prefix", "get_addr", "get_u32", "table_a2n", "table_n2a", "proto_a2n", "scope_a2n",
    "rtntype_a2n", "SCOPE_VALUE", "unsupported", "format_dst", "host_bits_set",
]


class IpExit(Exception):
    """Stops an ``ip`` command with this output, exit status and outcome kind."""

    def __init__(self, output: str, status: int, kind: str):
        super().__init__(output)
        self.result = CommandResult(output, status, kind)


@dataclass(slots=True)
class IpOpts:
    """Global options of ``ip`` (``-4 -s -d -o -br -c``)."""
    family: str | None = None  # None (any) | "inet" | "inet6"
    stats: int = 0
    details: int = 0
    oneline: bool = False
    brief: bool = False
    color: bool = False  # -c: ANSI colours (ip_color)
    json: bool = False  # -j: JSON listings (ip_json)

    @property
    def sl(self) -> str:
        """iproute2's line separator inside one record (``\\`` with ``-oneline``)."""
        return "\\" if self.oneline else "\n"


def matches(word: str, keyword: str) -> bool:
    """iproute2's ``matches() == 0``: ``word`` abbreviates ``keyword``."""
    return bool(word) and keyword.startswith(word)


# ------------------------------------------------------------------------ error helpers
def invarg(msg: str, arg: str) -> IpExit:
    return IpExit(f'Error: argument "{arg}" is wrong: {msg}\n', 255, INVALID)


def duparg(key: str, arg: str) -> IpExit:
    return IpExit(f'Error: duplicate "{key}": "{arg}" is the second value.\n', 255, INVALID)


def duparg2(key: str, arg: str) -> IpExit:
    return IpExit(f'Error: either "{key}" is duplicate, or "{arg}" is a garbage.\n', 255,
                  INVALID)


def incomplete() -> IpExit:
    return IpExit('Command line is not complete. Try option "help"\n', 255, INVALID)


def nodev(name: str) -> IpExit:
    return IpExit(f'Cannot find device "{name}"\n', 1, ERROR)


def no_such_device_dump(name: str) -> IpExit:
    """The wording of ``ip addr/link show`` for a missing device."""
    return IpExit(f'Device "{name}" does not exist.\n', 1, ERROR)


def kernel_error(text: str) -> IpExit:
    """A netlink request refused without an extended ack: ``RTNETLINK answers: ...``."""
    return IpExit(f"RTNETLINK answers: {text}\n", 2, ERROR)


def extack_error(text: str) -> IpExit:
    """A netlink request refused with an extended-ack message: ``Error: ....``."""
    if not text.endswith("."):
        text += "."
    return IpExit(f"Error: {text}\n", 2, ERROR)


def unsupported(what: str) -> IpExit:
    """Something real ``ip`` does that the simulator does not model."""
    return IpExit(f"netarena: {what} is not supported by the simulator\n", 1, INVALID)


class ArgReader:
    """The ``argc/argv`` walk of iproute2: ``next()`` is ``NEXT_ARG()``."""
    __slots__ = ("args", "i")

    def __init__(self, args: list[str]):
        self.args = args
        self.i = 0

    def __bool__(self) -> bool:
        return self.i < len(self.args)

    def take(self) -> str:
        a = self.args[self.i]
        self.i += 1
        return a

    def next(self) -> str:
        """The value of the keyword just taken; a missing one is a usage error."""
        if self.i >= len(self.args):
            raise incomplete()
        return self.take()


# ---------------------------------------------------------------------- number parsing
_DEC = re.compile(r"[0-9]+\Z")
_OCTET = r"(0|[1-9]\d{0,2})"  # no leading zero: "010" is octal to iproute2's strtoul
_FAST_PREFIX = re.compile(rf"{_OCTET}\.{_OCTET}\.{_OCTET}\.{_OCTET}(?:/(\d{{1,2}}))?\Z")


def _strtoul(s: str) -> int | None:
    """``strtoul(s, &end, 0)`` requiring the whole string to be consumed."""
    if not s:
        return None
    try:
        if s[:2] in ("0x", "0X"):
            return int(s[2:], 16) if s[2:] else None
        if len(s) > 1 and s[0] == "0":
            return int(s[1:], 8)
        return int(s) if _DEC.match(s) else None
    except ValueError:
        return None


def get_u32(s: str) -> int | None:
    v = _strtoul(s)
    return v if v is not None and v <= 0xFFFFFFFF else None


def _ipv4_partial(s: str) -> int | None:
    """iproute2's ``get_addr_ipv4``: 1..4 parts, each ``strtoul(.., 0)``; ``10`` = 10.0.0.0."""
    parts = s.split(".")
    if len(parts) > 4:
        return None
    v = 0
    for p in parts:
        n = _strtoul(p)
        if n is None or n > 255:
            return None
        v = (v << 8) | n
    return v << (8 * (4 - len(parts)))


def _netmask_len(s: str) -> int | None:
    """iproute2's ``get_netmask``: a prefix length or a contiguous dotted mask."""
    n = _strtoul(s)
    if n is not None:
        return n
    m = _ipv4_partial(s) if "." in s else None
    if m is None:
        return None
    inv = ~m & 0xFFFFFFFF
    if inv & (inv + 1):
        return None  # not contiguous
    return 32 - inv.bit_length()


def parse_inet(s: str, allow_words: bool = True) -> tuple[int, int, bool] | None:
    """``"a.b.c.d[/len]"`` -> ``(addr, plen, plen_given)``; ``default|any|all`` -> (0, 0).
    None when ``s`` is not an IPv4 prefix."""
    m = _FAST_PREFIX.match(s)
    if m is not None:
        a, b, c, d, p = m.groups()
        a, b, c, d = int(a), int(b), int(c), int(d)
        if a < 256 and b < 256 and c < 256 and d < 256:
            if p is None:
                return (a << 24) | (b << 16) | (c << 8) | d, 32, False
            if int(p) <= 32:
                return (a << 24) | (b << 16) | (c << 8) | d, int(p), True
    if allow_words and s in ("default", "any", "all"):
        return 0, 0, True
    addr_s, slash, plen_s = s.partition("/")
    addr = _ipv4_partial(addr_s)
    if addr is None:
        return None
    if not slash:
        return addr, 32, False
    plen = _netmask_len(plen_s)
    if plen is None or plen > 32:
        return None
    return addr, plen, True


def _family_word(family: str | None) -> str:
    return "inet" if family == "inet" else "any valid"


def get_prefix(s: str, family: str | None) -> tuple[int, int, bool]:
    """iproute2's ``get_prefix``: exits 1 with its wording on anything else."""
    if ":" in s:
        raise unsupported("IPv6")
    r = parse_inet(s)
    if r is None:
        raise IpExit(f'Error: {_family_word(family)} prefix is expected rather than "{s}".\n',
                     1, INVALID)
    return r


def get_addr(s: str, family: str | None) -> int:
    """iproute2's ``get_addr``: one address (``default`` is refused for inet gateways)."""
    if ":" in s:
        raise unsupported("IPv6")
    r = parse_inet(s, allow_words=False)
    if r is None or r[2]:
        raise IpExit(f'Error: {_family_word(family)} address is expected rather than "{s}".\n',
                     1, INVALID)
    return r[0]


# ----------------------------------------------------------------------- name tables
_TABLES = {"local": 255, "main": 254, "default": 253, "unspec": 0}
_TABLE_NAMES = {v: k for k, v in _TABLES.items()}


def table_a2n(s: str) -> int | None:
    t = _TABLES.get(s)
    return t if t is not None else get_u32(s)


def table_n2a(t: int) -> str:
    return _TABLE_NAMES.get(t) or str(t)


_PROTOS = {"unspec": 0, "redirect": 1, "kernel": 2, "boot": 3, "static": 4, "gated": 8,
           "ra": 9, "mrt": 10, "zebra": 11, "bird": 12, "dnrouted": 13, "xorp": 14, "ntk": 15,
           "dhcp": 16, "keepalived": 18, "babel": 42, "bgp": 186, "isis": 187, "ospf": 188,
           "rip": 189, "eigrp": 192}
_PROTO_NAMES = {v: k for k, v in _PROTOS.items()}


def proto_a2n(s: str) -> str | None:
    """A protocol word as the model stores it (its name, else its number)."""
    if s in _PROTOS:
        return s
    n = _strtoul(s)
    if n is None or n > 255:
        return None
    return _PROTO_NAMES.get(n, str(n))


SCOPE_VALUE = {"global": 0, "site": 200, "link": 253, "host": 254, "nowhere": 255}
_SCOPE_NAMES = {v: k for k, v in SCOPE_VALUE.items()}


def scope_a2n(s: str) -> str | None:
    if s in SCOPE_VALUE:
        return s
    n = _strtoul(s)
    if n is None or n > 255:
        return None
    return _SCOPE_NAMES.get(n, str(n))


_RTN_BY_NUMBER = {1: "unicast", 2: "local", 3: "broadcast", 4: "anycast", 5: "multicast",
                  6: "blackhole", 7: "unreachable", 8: "prohibit", 9: "throw", 10: "nat",
                  11: "xresolve"}


def rtntype_a2n(s: str) -> str | None:
    """``rtnl_rtntype_a2n``: route/rule type words, abbreviations where iproute2 allows."""
    if s == "local" or s == "nat" or s == "throw":
        return s
    if s == "brd" or matches(s, "broadcast"):
        return "broadcast"
    for word in ("anycast", "multicast", "prohibit", "unreachable", "blackhole", "xresolve",
                 "unicast"):
        if matches(s, word):
            return word
    n = _strtoul(s)
    if n is None or n > 255:
        return None
    return _RTN_BY_NUMBER.get(n, str(n))


def format_dst(net: int, plen: int) -> str:
    """A route destination as iproute2 prints it (``default``, a host, or ``net/len``)."""
    if plen == 0 and net == 0:
        return "default"
    if plen == 32:
        return int_to_ip(net)
    return f"{int_to_ip(net)}/{plen}"


def host_bits_set(addr: int, plen: int) -> bool:
    return bool(addr & ~mask_of(plen) & 0xFFFFFFFF)

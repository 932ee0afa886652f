"""Fast IPv4 helpers on plain ints (the hot paths avoid :mod:`ipaddress`)."""
from __future__ import annotations

__all__ = [
    "ip_to_int", "int_to_ip", "parse_prefix", "mask_of", "net_of", "in_prefix",
    "format_prefix", "AddressError",
]


class AddressError(ValueError):
    """A string that is not an IPv4 address or prefix."""


_MASKS = [((0xFFFFFFFF << (32 - n)) & 0xFFFFFFFF) for n in range(33)]


def mask_of(plen: int) -> int:
    return _MASKS[plen]


def ip_to_int(s: str) -> int:
    parts = s.split(".")
    if len(parts) != 4:
        raise AddressError(s)
    v = 0
    for p in parts:
        if not p.isdigit() or len(p) > 3:
            raise AddressError(s)
        b = int(p)
        if b > 255:
            raise AddressError(s)
        v = (v << 8) | b
    return v


def int_to_ip(v: int) -> str:
    return f"{(v >> 24) & 255}.{(v >> 16) & 255}.{(v >> 8) & 255}.{v & 255}"


def parse_prefix(s: str, default_plen: int = 32) -> tuple[int, int]:
    """``"10.0.0.0/8"`` -> ``(addr_int, 8)``; ``"default"``/``"any"`` -> ``(0, 0)``.
    The host bits are kept (callers that need the network use :func:`net_of`)."""
    if s in ("default", "any", "all"):
        return 0, 0
    if "/" in s:
        a, _, p = s.partition("/")
        if not p.isdigit() or int(p) > 32:
            raise AddressError(s)
        plen = int(p)
    else:
        a, plen = s, default_plen
    return ip_to_int(a), plen


def net_of(addr: int, plen: int) -> int:
    return addr & _MASKS[plen]


def in_prefix(addr: int, net: int, plen: int) -> bool:
    return (addr & _MASKS[plen]) == (net & _MASKS[plen])


def format_prefix(net: int, plen: int, *, default_word: bool = True) -> str:
    if plen == 0 and net == 0 and default_word:
        return "default"
    if plen == 32:
        return int_to_ip(net)
    return f"{int_to_ip(net)}/{plen}"

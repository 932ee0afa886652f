"""``ip -color`` (iproute2 6.1 ``lib/color.c``): the ANSI colours of ``ip -c``.

``-c``/``-color``/``-color=always`` colour; ``-color=auto`` colours only a terminal, and an
agent's command never writes to one, so it is plain, like ``-color=never``. The colours
are iproute2's default palette: interface names cyan, MAC addresses yellow, IPv4 addresses
magenta, operational state ``UP`` green and ``DOWN`` red (other states plain). Each coloured
span is exactly what the matching ``print_color_*`` call prints, trailing space included
where its format has one (route and neighbour fields, brief columns, ``brd`` of an address;
not the ``inet`` address nor ``link/ether``).

The simulator colours its plain output afterwards, field by field, with the patterns
below (checked against iproute2 6.1.0 output: ``ip -c addr|link|route|neigh``, ``-br``,
``-o``, ``ip -c route get``). ``ip rule`` output has no colour.
"""
from __future__ import annotations

import re

__all__ = ["colorize", "color_mode"]

CYAN, YELLOW, MAGENTA, GREEN, RED = "36", "33", "35", "32", "31"
_IP = r"\d+\.\d+\.\d+\.\d+"
_MAC = r"[0-9a-f]{2}(?::[0-9a-f]{2}){5}"
_STATE = {"UP": GREEN, "DOWN": RED}


def _c(code: str, text: str) -> str:
    return f"\x1b[{code}m{text}\x1b[0m"


def color_mode(value: str | None) -> bool | None:
    """Whether ``-color[=value]`` colours an agent's (non-terminal) output; None: invalid."""
    if value is None or value == "always":
        return True
    if value in ("auto", "never"):
        return False
    return None


# ------------------------------------------------------------------ link / address
_HEAD = re.compile(r"^(\d+: )(\S+: )(?=<)")
_OPER = re.compile(r"( state )(UP|DOWN) ")
_LINK_MAC = re.compile(rf"(link/\S+ )({_MAC})( brd )({_MAC})")
_INET = re.compile(rf"(\binet )({_IP})(/\d+)")
_INET_BRD = re.compile(rf"(/\d+ (?:peer \S+ )?brd )({_IP} )")


def _record_line(line: str) -> str:
    line = _HEAD.sub(lambda m: m[1] + _c(CYAN, m[2]), line)
    line = _OPER.sub(lambda m: m[1] + _c(_STATE[m[2]], m[2] + " "), line)
    line = _LINK_MAC.sub(lambda m: m[1] + _c(YELLOW, m[2]) + m[3] + _c(YELLOW, m[4]), line)
    line = _INET.sub(lambda m: m[1] + _c(MAGENTA, m[2]) + m[3], line)
    return _INET_BRD.sub(lambda m: m[1] + _c(MAGENTA, m[2]), line)


_BRIEF = re.compile(r"^(.{17})(.{1,15})(.*)$")
_BRIEF_ADDR = re.compile(rf"(^|(?<= ))({_IP})(/\d+)")
_BRIEF_MAC = re.compile(rf"^({_MAC} )")


def _brief_line(line: str) -> str:
    m = _BRIEF.match(line)
    if m is None:
        return line
    name, state, rest = m[1], m[2], m[3]
    word = state.strip()
    state_c = _c(_STATE[word], state) if word in _STATE else state
    if _BRIEF_MAC.match(rest):
        rest = _BRIEF_MAC.sub(lambda x: _c(YELLOW, x[1]), rest)
    else:
        rest = _BRIEF_ADDR.sub(lambda x: x[1] + _c(MAGENTA, x[2]) + x[3], rest)
    return _c(CYAN, name) + state_c + rest


# --------------------------------------------------------------------- route / neigh
_ROUTE_DST = re.compile(
    rf"^((?:unicast|local|broadcast|blackhole|prohibit|unreachable|throw|multicast) )?"
    rf"({_IP}(?:/\d+)? )")
_ROUTE_FROM = re.compile(rf"(\x1b\[0m| )(from {_IP}(?:/\d+)? )")
_AFTER = r"(?:^| |\x1b\[0m)"  # a field starts a line, follows a space or a coloured span
_VIA_SRC = re.compile(rf"({_AFTER}(?:via|src) )({_IP} )")
_DEV = re.compile(rf"({_AFTER}dev )(\S+ )")
_LLADDR = re.compile(rf"({_AFTER}lladdr )({_MAC} )")


def _route_line(line: str) -> str:
    if line.startswith(" "):  # "    cache ..." continuation of ip route get
        return line
    line = _ROUTE_DST.sub(lambda m: (m[1] or "") + _c(MAGENTA, m[2]), line, count=1)
    line = _ROUTE_FROM.sub(lambda m: m[1] + _c(MAGENTA, m[2]), line, count=1)
    line = _VIA_SRC.sub(lambda m: m[1] + _c(MAGENTA, m[2]), line)
    line = _DEV.sub(lambda m: m[1] + _c(CYAN, m[2]), line)
    return _LLADDR.sub(lambda m: m[1] + _c(YELLOW, m[2]), line)


def colorize(obj: str, text: str, brief: bool) -> str:
    """``text`` (the plain output of ``ip OBJ ...``) as ``ip -c`` prints it."""
    if obj in ("address", "link"):
        fn = _brief_line if brief else _record_line
    elif obj in ("route", "neighbor", "neighbour"):
        fn = _route_line
    else:
        return text
    return "\n".join(fn(line) for line in text.split("\n"))

"""Inputs that must never escape ``step``: each has to come back as an observation inside the
space (an error message and a penalty), not as an exception or a hang, and be refused, not
run: ``info["command_kind"]`` ``"invalid"`` or ``"refused"``, with that reward component and
the reward negative (:func:`netarena_gym.testing.checks.check_hostile_outcome`).

They cover the ways a policy or an LLM produces garbage: wrong Python types, numbers
outside any index range, deep nesting (parsers that recurse), sizes far past every limit,
bytes that are not UTF-8, and shell constructs an operator task refuses.
"""
from __future__ import annotations

import json
from typing import Any

DEEP = 1000
DEEPER_THAN_THE_STACK = 100_000  # a recursive parser raises RecursionError on this

# actions that are wrong for every interface
_ANY: list[Any] = [
    None, float("inf"), float("-inf"), float("nan"), -1, 10**30, -(10**30), 2**63, True,
    [], [1, 2], (), {}, object(), b"\xff\xfe\x00", 1.5,
]

_STRINGS: list[str] = [
    "", " ", "\x00", "\n" * 1000, "x" * 1_000_000, "[" * DEEP + "]" * DEEP,
    "{" * DEEP + "}" * DEEP, '{"a":' * DEEP + "1" + "}" * DEEP, json.dumps("x"), "null",
    "\u2028\ud83d\ude00\u202e", "$(id)", "`id`", "a; b; c", "x | " * 500 + "x",
    "cat </etc/shadow", "echo hi > /tmp/netarena-kit-probe", "grep -E '(a+)+b' /etc/passwd",
    "' unterminated", "\\", "&&", "ls &", "((", "<<EOF\nx\nEOF",
    "[" * DEEPER_THAN_THE_STACK + "]" * DEEPER_THAN_THE_STACK,
    "1" + "0" * 5000,  # more digits than int() converts (Python 3.11+)
]


def deep_dict(depth: int = DEEP) -> dict:
    d: dict = {"x": 1}
    for _ in range(depth):
        d = {"x": d}
    return d


def hostile_actions(text_keys: tuple[str, ...], interface: str) -> list[Any]:
    """Hostile actions for an env with these text keys on this interface."""
    acts: list[Any] = list(_ANY)
    if interface == "discrete":
        acts += ["0", {"index": 0}, -2**31, 2**31]
        return acts
    acts += list(_STRINGS)
    acts.append(deep_dict())
    first = text_keys[0]
    for s in _STRINGS:
        acts.append({k: s for k in text_keys})
    acts += [
        {k: 1 for k in text_keys},
        {k: None for k in text_keys},
        {k: ["a"] for k in text_keys},
        {k: deep_dict() for k in text_keys},
        {**{k: "x" for k in text_keys}, "unexpected": "key"},
        {first: "x" * 10_000_000},
        json.dumps({k: "x" * 200_000 for k in text_keys}),
        json.dumps({first: '{"a":' * DEEP + "1" + "}" * DEEP}),
        '{"%s": 1%s}' % (first, "0" * 5000),
    ]
    return acts

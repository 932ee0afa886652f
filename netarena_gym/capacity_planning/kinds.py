"""The MALT schema used by the capacity-planning task: entity kinds, relationship kinds,
the containment hierarchy, the per-kind attribute blocks, and how kinds are worded."""
from __future__ import annotations

import re
from functools import lru_cache

JUPITER = "EK_JUPITER"
SUPERBLOCK = "EK_SUPERBLOCK"
SPINEBLOCK = "EK_SPINEBLOCK"
AGG_BLOCK = "EK_AGG_BLOCK"
SWITCH = "EK_PACKET_SWITCH"
PORT = "EK_PORT"
CHASSIS = "EK_CHASSIS"
CONTROL_POINT = "EK_CONTROL_POINT"
RACK = "EK_RACK"
CONTROL_DOMAIN = "EK_CONTROL_DOMAIN"

KINDS = (JUPITER, SUPERBLOCK, SPINEBLOCK, AGG_BLOCK, SWITCH, PORT, CHASSIS, CONTROL_POINT,
         RACK, CONTROL_DOMAIN)
KIND_SET = frozenset(KINDS)
KIND_INDEX = {k: i for i, k in enumerate(KINDS)}

CONTAINS = "RK_CONTAINS"
CONTROLS = "RK_CONTROLS"
RELATIONS = (CONTAINS, CONTROLS)

# RK_CONTAINS: parent kind -> kinds it may contain (MALT's hierarchy)
HIERARCHY: dict[str, frozenset[str]] = {
    JUPITER: frozenset({SPINEBLOCK, SUPERBLOCK}),
    SPINEBLOCK: frozenset({SWITCH}),
    SUPERBLOCK: frozenset({AGG_BLOCK}),
    AGG_BLOCK: frozenset({SWITCH}),
    CHASSIS: frozenset({CONTROL_POINT, SWITCH}),
    CONTROL_POINT: frozenset({SWITCH}),
    RACK: frozenset({CHASSIS}),
    SWITCH: frozenset({PORT}),
    CONTROL_DOMAIN: frozenset({CONTROL_POINT, SWITCH}),
}
# RK_CONTROLS: controller kind -> kinds it may control
CONTROLLED: dict[str, frozenset[str]] = {CONTROL_POINT: frozenset({SWITCH})}

# the attribute block of each kind in the text format, and the capacity attribute
ATTR_BLOCK = {JUPITER: "jupiter_attr", SUPERBLOCK: "superblock_attr",
              SWITCH: "packet_switch_attr", PORT: "port_attr"}
CAPACITY = "physical_capacity_bps"
# a port's capacity must be a whole number of bits per second in this range
MIN_CAPACITY = 1_000_000             # 1 Mbps
MAX_CAPACITY = 1_600_000_000_000     # 1.6 Tbps

WORDS = {JUPITER: "jupiter", SUPERBLOCK: "superblock", SPINEBLOCK: "spine block",
         AGG_BLOCK: "aggregation block", SWITCH: "packet switch", PORT: "port",
         CHASSIS: "chassis", CONTROL_POINT: "control point", RACK: "rack",
         CONTROL_DOMAIN: "control domain"}
PLURALS = {JUPITER: "jupiters", SUPERBLOCK: "superblocks", SPINEBLOCK: "spine blocks",
           AGG_BLOCK: "aggregation blocks", SWITCH: "packet switches", PORT: "ports",
           CHASSIS: "chassis", CONTROL_POINT: "control points", RACK: "racks",
           CONTROL_DOMAIN: "control domains"}
KIND_OF_WORD = {w: k for k, w in WORDS.items()}
KIND_OF_PLURAL = {w: k for k, w in PLURALS.items()}
WORD_RE = "|".join(sorted((re.escape(w) for w in KIND_OF_WORD), key=len, reverse=True))
PLURAL_RE = "|".join(sorted((re.escape(w) for w in KIND_OF_PLURAL), key=len, reverse=True))

_DIGITS = re.compile(r"(\d+)")


@lru_cache(maxsize=1 << 16)
def natural_key(name: str) -> tuple:
    """Sort key that orders ``s2c10`` after ``s2c9``."""
    return tuple(int(t) if t.isdigit() else t for t in _DIGITS.split(name))


def kinds_of(attrs: dict | None):
    """The kinds a node declares in its ``type`` attribute (a list, or a plain string), as
    a sequence of strings (the attribute's own list when it is well-formed)."""
    if not attrs:
        return ()
    t = attrs.get("type")
    if type(t) is list:
        for x in t:
            if type(x) is not str:
                return tuple(x for x in t if isinstance(x, str))
        return t
    if isinstance(t, str):
        return (t,)
    if isinstance(t, (list, tuple)):
        return tuple(x for x in t if isinstance(x, str))
    return ()


def primary_kind(attrs: dict | None) -> str | None:
    ks = kinds_of(attrs)
    return ks[0] if ks else None



def may_contain(parent_kinds, child_kinds) -> bool:
    if len(parent_kinds) == 1 and len(child_kinds) == 1:
        return child_kinds[0] in HIERARCHY.get(parent_kinds[0], ())
    return any(c in HIERARCHY.get(p, ()) for p in parent_kinds for c in child_kinds)


def may_control(parent_kinds, child_kinds) -> bool:
    return any(c in CONTROLLED.get(p, ()) for p in parent_kinds for c in child_kinds)


def valid_capacity(value) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if value != value or value in (float("inf"), float("-inf")):
        return False
    return value == int(value) and MIN_CAPACITY <= value <= MAX_CAPACITY

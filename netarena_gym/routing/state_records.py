"""The records of a node's Linux networking state: addresses, interfaces (with their root
qdisc), routes, policy rules, iptables rules and chains, neighbour entries, and the kernel's
constants for them (table ids, route types, rule actions, the stock sysctls).

They mirror what ``ip -d addr|link|route|rule``, ``tc qdisc`` and ``iptables -S`` show on
Linux 6.x with iproute2 6.1 and iptables 1.8 (legacy); each has a ``signature()`` that the
reachability engine compares to decide what changed. The behaviour that ties them together
(connected routes, flushes, lookups) lives in :mod:`netarena_gym.routing.state`.
``new_interface`` and ``new_iptables`` make the records a build needs by setting their
fields directly (the dataclass ``__init__`` costs twice as much); ``KERNEL_RULES`` and
``LO_ADDRESS`` are shared by every node, as records are replaced, never changed in place.
``Lookup`` is the result of a route lookup (:meth:`~netarena_gym.routing.state.Node.lookup`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from netarena_gym.core.ipv4 import in_prefix, int_to_ip, mask_of, net_of

TABLE_IDS = {"local": 255, "main": 254, "default": 253, "unspec": 0}
TABLE_NAMES = {v: k for k, v in TABLE_IDS.items()}
MAIN, LOCAL, DEFAULT_TABLE = 254, 255, 253
ROUTE_TYPES = ("unicast", "blackhole", "prohibit", "unreachable", "throw", "local", "broadcast")
RULE_ACTIONS = ("table", "prohibit", "blackhole", "unreachable")
BUILTIN_CHAINS = ("INPUT", "FORWARD", "OUTPUT")
DEFAULT_SYSCTL = {
    "net.ipv4.ip_forward": "0",
    "net.ipv4.icmp_echo_ignore_all": "0",
    "net.ipv4.conf.all.rp_filter": "0",
}


@lru_cache(maxsize=8192)
def natural_key(name: str) -> tuple:
    """Sort key putting ``h2`` before ``h10`` (memoised: node names recur in every
    episode, and every probe matrix sorts them)."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


@dataclass(slots=True)
class Address:
    ip: int
    plen: int

    @property
    def net(self) -> int:
        return net_of(self.ip, self.plen)

    @property
    def broadcast(self) -> int | None:
        if self.plen >= 31:
            return None
        return self.net | (~mask_of(self.plen) & 0xFFFFFFFF)

    def same_subnet(self, other: "Address") -> bool:
        return self.plen == other.plen and self.net == other.net

    def __str__(self) -> str:
        return f"{int_to_ip(self.ip)}/{self.plen}"


@dataclass(slots=True)
class NeighEntry:
    """One neighbour-cache entry as ``ip neigh`` shows it. ``mac`` None: unresolved."""
    ip: int
    dev: str
    mac: str | None
    state: str  # "REACHABLE" | "STALE" | "FAILED"


@dataclass(slots=True)
class Qdisc:
    """A root qdisc installed with ``tc``. ``None`` on an interface means the kernel default."""
    kind: str  # "netem" | "tbf" | "pfifo" | "pfifo_fast" | "fq_codel" | "htb" | "prio"
    handle: str = "8001:"
    delay_ms: float = 0.0
    jitter_ms: float = 0.0
    loss_pct: float = 0.0
    corrupt_pct: float = 0.0
    duplicate_pct: float = 0.0
    limit: int = 1000
    rate_bps: int = 0
    burst_bytes: int = 0
    latency_ms: float = 0.0

    def signature(self) -> tuple:
        return (self.kind, self.handle, self.delay_ms, self.jitter_ms, self.loss_pct,
                self.corrupt_pct, self.duplicate_pct, self.limit, self.rate_bps,
                self.burst_bytes, self.latency_ms)


@dataclass(slots=True)
class Interface:
    name: str
    ifindex: int
    mac: str
    mtu: int = 1500
    up: bool = True
    promisc: bool = False
    addresses: list[Address] = field(default_factory=list)
    alias: str | None = None
    qdisc: Qdisc | None = None
    peer_ifindex: int | None = None  # veth peer, printed as ``name@ifN``
    loopback: bool = False
    noarp: bool = False  # ``ip link set IF arp off``: neither resolves nor answers ARP
    # the other end when it is another node's interface (transit links); LAN interfaces
    # face a switch port, which is always up
    peer: "Interface | None" = field(default=None, repr=False, compare=False)

    @property
    def carrier(self) -> bool:
        """Admin up and the veth peer up (else the kernel shows NO-CARRIER/linkdown)."""
        return self.up and (self.peer is None or self.peer.up)

    def primary_for(self, addr: Address) -> Address | None:
        """The primary address whose subnet contains ``addr`` (other than itself)."""
        for a in self.addresses:
            if a is not addr and a.same_subnet(addr):
                return a
        return None

    def is_secondary(self, addr: Address) -> bool:
        for a in self.addresses:
            if a is addr:
                return False
            if a.same_subnet(addr):
                return True
        return False

    def signature(self) -> tuple:
        return (self.name, self.mtu, self.up, self.promisc, self.noarp,
                tuple((a.ip, a.plen) for a in self.addresses), self.alias,
                self.qdisc.signature() if self.qdisc else None)


@dataclass(slots=True)
class Route:
    dst: int
    plen: int
    type: str = "unicast"
    dev: str | None = None
    gateway: int | None = None
    metric: int = 0
    proto: str = "boot"
    scope: str = "global"
    src: int | None = None
    onlink: bool = False
    table: int = MAIN
    # the gateway was one of the node's own addresses when the route was made: the
    # kernel gives the nexthop scope host (``fib_check_nh_v4_gw``) and forwards without
    # a gateway (``rt_set_nexthop`` uses it only at scope link): on-link, to the
    # destination itself. ``ip route`` still prints ``via``; ``ip route get`` does not.
    gw_local: bool = False

    @property
    def next_hop(self) -> int | None:
        """The address forwarding resolves with ARP (None: the destination itself)."""
        return None if self.gw_local else self.gateway

    def signature(self) -> tuple:
        return (self.dst, self.plen, self.type, self.dev, self.gateway, self.metric,
                self.proto, self.scope, self.src, self.onlink, self.table, self.gw_local)


@dataclass(slots=True)
class Rule:
    pref: int
    action: str = "table"
    table: int = MAIN
    src: tuple[int, int] | None = None  # (net, plen)
    dst: tuple[int, int] | None = None
    iif: str | None = None
    oif: str | None = None
    invert: bool = False

    def matches(self, src: int, dst: int, iif: str | None, oif: str | None) -> bool:
        ok = True
        if self.src is not None and not in_prefix(src, self.src[0], self.src[1]):
            ok = False
        elif self.dst is not None and not in_prefix(dst, self.dst[0], self.dst[1]):
            ok = False
        elif self.iif is not None and self.iif != iif:
            ok = False
        elif self.oif is not None and self.oif != oif:
            ok = False
        return ok != self.invert

    def signature(self) -> tuple:
        return (self.pref, self.action, self.table, self.src, self.dst, self.iif,
                self.oif, self.invert)


@dataclass(slots=True)
class IptRule:
    target: str  # ACCEPT | DROP | REJECT | RETURN | <user chain>
    src: tuple[int, int] | None = None
    src_neg: bool = False
    dst: tuple[int, int] | None = None
    dst_neg: bool = False
    proto: str | None = None  # "icmp" | "tcp" | "udp" | None (= all)
    proto_neg: bool = False
    in_if: str | None = None  # a trailing "+" is a wildcard, as in iptables
    in_neg: bool = False
    out_if: str | None = None
    out_neg: bool = False
    icmp_type: str | None = None  # e.g. "echo-request" / "8"
    reject_with: str | None = None
    pkts: int = 0
    bytes: int = 0

    def signature(self) -> tuple:
        return (self.target, self.src, self.src_neg, self.dst, self.dst_neg, self.proto,
                self.proto_neg, self.in_if, self.in_neg, self.out_if, self.out_neg,
                self.icmp_type, self.reject_with)


@dataclass(slots=True)
class Iptables:
    """The ``filter`` table: built-in chains with policies, plus user chains."""
    policies: dict[str, str] = field(
        default_factory=lambda: {c: "ACCEPT" for c in BUILTIN_CHAINS})
    chains: dict[str, list[IptRule]] = field(
        default_factory=lambda: {c: [] for c in BUILTIN_CHAINS})

    def signature(self) -> tuple:
        return (tuple(sorted(self.policies.items())),
                tuple((c, tuple(r.signature() for r in rules))
                      for c, rules in self.chains.items()))


# ------------------------------------------------------------- direct construction
_new = object.__new__
LO_MAC = "00:00:00:00:00:00"
LO_ADDRESS = Address(0x7F000001, 8)  # shared: addresses are replaced, never changed in place
_ACCEPT_ALL = {c: "ACCEPT" for c in BUILTIN_CHAINS}


def new_interface(name: str, ifindex: int, mac: str, mtu: int, addresses: list,
                  peer_ifindex: int | None, loopback: bool, alias: str | None = None
                  ) -> Interface:
    """``Interface(...)`` with these fields and the other defaults (up, no qdisc, no peer),
    set directly: the dataclass ``__init__`` costs twice as much, on every node a reset
    builds."""
    c = _new(Interface)
    c.name, c.ifindex, c.mac, c.mtu, c.up, c.promisc = name, ifindex, mac, mtu, True, False
    c.addresses, c.alias, c.qdisc, c.peer_ifindex = addresses, alias, None, peer_ifindex
    c.loopback, c.noarp, c.peer = loopback, False, None
    return c


def new_iptables() -> Iptables:
    """``Iptables()``: empty built-in chains accepting (set directly, as above)."""
    c = _new(Iptables)
    c.policies = _ACCEPT_ALL.copy()
    c.chains = {"INPUT": [], "FORWARD": [], "OUTPUT": []}
    return c


KERNEL_RULES = (Rule(pref=0, table=LOCAL), Rule(pref=32766, table=MAIN),
                 Rule(pref=32767, table=DEFAULT_TABLE))
"""The kernel's three rules, shared by every node (rules are replaced, never changed in
place, as :mod:`netarena_gym.routing.clone` relies on too)."""


@dataclass(slots=True)
class Lookup:
    """Result of a route lookup. ``kind``: local | unicast | blackhole | prohibit | unreachable."""
    kind: str
    dev: str | None = None
    gateway: int | None = None
    route: Route | None = None
    rule: Rule | None = None


def default_rules() -> list[Rule]:
    return list(KERNEL_RULES)

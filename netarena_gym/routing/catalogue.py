"""The discrete action catalogue of the routing task: atomic diagnostic and repair
commands, laid out in fixed slots (router x interface / subnet / link) so the action space
is the same for every episode of an env; slots the episode lacks are masked out. Every entry
renders to the text action an LLM would type, so both interfaces run the same commands."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from netarena_gym.core.actions import Catalogue, CatalogueEntry
from netarena_gym.core.ipv4 import int_to_ip
from netarena_gym.routing.topology import Layout
from netarena_gym.routing.views import INSPECT

ROUTER_ACTIONS = (
    ("inspect", INSPECT),
    ("forwarding on", "sysctl -w net.ipv4.ip_forward=1"),
    ("INPUT policy accept", "iptables -P INPUT ACCEPT"),
    ("FORWARD policy accept", "iptables -P FORWARD ACCEPT"),
    ("OUTPUT policy accept", "iptables -P OUTPUT ACCEPT"),
    ("flush filters", "iptables -F"),
    ("delete prohibit rule", "ip rule del prohibit"),
    ("flush blackhole routes", "ip route flush type blackhole"),
)
IFACE_ACTIONS = ("link up", "mtu 1500", "add address", "flush addresses", "delete qdisc")


@dataclass(frozen=True)
class Dims:
    routers: int
    subnets: int  # per router
    hosts: int  # per subnet
    links: int = -1  # transit links (-1: a tree's, routers - 1)

    @property
    def ifaces(self) -> int:
        return self.subnets + self.routers - 1

    @property
    def subnet_slots(self) -> int:
        return self.routers * self.subnets

    @property
    def link_slots(self) -> int:
        return self.routers - 1 if self.links < 0 else self.links

    @property
    def nodes(self) -> int:
        return self.routers * self.subnets * self.hosts + self.routers

    @property
    def per_router(self) -> int:
        return (len(ROUTER_ACTIONS) + len(IFACE_ACTIONS) * self.ifaces
                + self.subnet_slots + self.link_slots)

    @property
    def size(self) -> int:
        return self.routers * self.per_router


def subnet_slot(lay: Layout, dims: Dims, k: int) -> int:
    """Slot of global subnet ``k`` (1-based): router index x subnets + local index."""
    s = lay.subnets[k - 1]
    r = int(s.router[1:])
    local = int(s.iface.rsplit("eth", 1)[1]) - 1
    return r * dims.subnets + local


_CACHE: dict[tuple, tuple[list, object]] = {}


def fill(cat: Catalogue, lay: Layout, dims: Dims) -> None:
    """Lay out the episode's entries. They depend only on the routers' interfaces and
    links (not on host counts), so they are memoised by that structure."""
    key = (tuple(len(h) for h in lay.spec.hosts), lay.spec.parents, lay.spec.links, dims)
    hit = _CACHE.get(key)
    if hit is None:
        _build(cat, lay, dims)
        if len(_CACHE) > 1024:
            _CACHE.clear()
        _CACHE[key] = (list(cat.entries), cat.mask.copy())
    else:
        cat.entries = list(hit[0])
        cat.mask[:] = hit[1]


@lru_cache(maxsize=65536)
def _entry(label: str, machine: str, command: str, group: str) -> CatalogueEntry:
    """The entry, made once per (label, machine, command, group): entries are immutable
    and shared (the memo above already hands one episode's to the next), and most recur
    across the layouts drawn at random (making one costs more than finding it)."""
    return CatalogueEntry(label, {"machine": machine, "command": command}, group)


def _build(cat: Catalogue, lay: Layout, dims: Dims) -> None:
    cat.clear()
    routes = {r: {} for r in lay.routers}
    for r in lay.routers:
        for net, plen, dev, gw in lay.intended_routes(r):
            routes[r][(net, plen)] = (dev, gw)
    addr_of = {}
    for s in lay.subnets:
        addr_of[s.iface] = f"{int_to_ip(s.gateway)}/24"
    for ln in lay.links:
        addr_of[ln.a_iface] = f"{int_to_ip(ln.a_ip)}/30"
        addr_of[ln.b_iface] = f"{int_to_ip(ln.b_ip)}/30"
    for ri, r in enumerate(lay.routers):
        base = ri * dims.per_router
        for j, (label, cmd) in enumerate(ROUTER_ACTIONS):
            cat.set(base + j, _entry(f"{r}: {label}", r, cmd, "inspect" if j == 0 else "router"))
        base += len(ROUTER_ACTIONS)
        for ii, itf in enumerate(lay.router_ifaces[r]):
            cmds = (f"ip link set {itf} up", f"ip link set {itf} mtu 1500",
                    f"ip addr add {addr_of[itf]} dev {itf}", f"ip addr flush dev {itf}",
                    f"tc qdisc del dev {itf} root")
            for a, (label, cmd) in enumerate(zip(IFACE_ACTIONS, cmds)):
                cat.set(base + ii * len(IFACE_ACTIONS) + a,
                        _entry(f"{r} {itf}: {label}", r, cmd, "iface"))
        base += len(IFACE_ACTIONS) * dims.ifaces
        for s in lay.subnets:
            dev, gw = routes[r][(s.net, 24)]
            cmd = _route_cmd(f"{int_to_ip(s.net)}/24", dev, gw, s.gateway if gw is None else None)
            cat.set(base + subnet_slot(lay, dims, s.index),
                    _entry(f"{r}: route to {s.switch}", r, cmd, "route"))
        base += dims.subnet_slots
        for ln in lay.links:
            dev, gw = routes[r][(ln.net, 30)]
            src = None
            if gw is None:
                src = ln.a_ip if r == ln.a else ln.b_ip
            cmd = _route_cmd(f"{int_to_ip(ln.net)}/30", dev, gw, src)
            cat.set(base + ln.index, _entry(f"{r}: route to link{ln.index}", r, cmd, "route"))


def _route_cmd(prefix: str, dev: str, gw: int | None, src: int | None) -> str:
    if gw is not None:
        return f"ip route replace {prefix} via {int_to_ip(gw)} dev {dev}"
    return f"ip route replace {prefix} dev {dev} proto kernel scope link src {int_to_ip(src)}"

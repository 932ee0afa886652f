"""The discrete action catalogue of the routing task: atomic diagnostic and repair
commands, laid out in fixed slots (router x interface / subnet / link) so the action space
is the same for every episode of an env; slots the episode lacks are masked out. Every entry
renders to the text action an LLM would type, so both interfaces run the same commands.

Networks of more than :data:`LARGE_ABOVE_ROUTERS` routers add one interface action,
"restore routes": the router's intended routes through that interface as one command line
(``ip route replace ...; ip route replace ...``), as the expert chains them there. Linux
drops every route through an interface whose link goes down or whose address goes, and one
interface of a 64-router leaf-spine carries up to 177 routes: one route per action could not
repair it within the episode's budget."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from netarena_gym.core.actions import Catalogue, CatalogueEntry
from netarena_gym.core.ipv4 import int_to_ip
from netarena_gym.routing.shapes import max_links
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
BATCH_ACTION = "restore routes"  # an interface action of large networks only
LARGE_ABOVE_ROUTERS = 4  # networks of more routers are "large" (budget, limits, batches)


@dataclass(frozen=True)
class Dims:
    routers: int
    subnets: int  # per router
    hosts: int  # per subnet
    links: int = -1  # transit links (-1: a tree's, routers - 1)
    batches: bool = False  # the "restore routes" interface action (large networks)

    @classmethod
    def of(cls, cfg) -> "Dims":
        """The dims of a level config (``generator.LevelConfig``): its largest network,
        the most links its shape has, batches when it can have more than
        :data:`LARGE_ABOVE_ROUTERS` routers."""
        routers, subnets, hosts = cfg.max_dims()
        return cls(routers, subnets, hosts, links=max_links(cfg.shape, routers),
                   batches=routers > LARGE_ABOVE_ROUTERS)

    @property
    def iface_actions(self) -> tuple[str, ...]:
        return IFACE_ACTIONS + (BATCH_ACTION,) if self.batches else IFACE_ACTIONS

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
        return (len(ROUTER_ACTIONS) + len(self.iface_actions) * self.ifaces
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
    n_iface = len(dims.iface_actions)
    for ri, r in enumerate(lay.routers):
        base = ri * dims.per_router
        for j, (label, cmd) in enumerate(ROUTER_ACTIONS):
            cat.set(base + j, _entry(f"{r}: {label}", r, cmd, "inspect" if j == 0 else "router"))
        # every route command of the router, by destination slot and by interface
        by_subnet, by_link, by_dev = {}, {}, {}
        for s in lay.subnets:
            dev, gw = routes[r][(s.net, 24)]
            cmd = _route_cmd(f"{int_to_ip(s.net)}/24", dev, gw, s.gateway if gw is None else None)
            by_subnet[s] = cmd
            _add(by_dev, dev, cmd, gw)
        for ln in lay.links:
            dev, gw = routes[r][(ln.net, 30)]
            src = None
            if gw is None:
                src = ln.a_ip if r == ln.a else ln.b_ip
            cmd = _route_cmd(f"{int_to_ip(ln.net)}/30", dev, gw, src)
            by_link[ln] = cmd
            _add(by_dev, dev, cmd, gw)
        base += len(ROUTER_ACTIONS)
        for ii, itf in enumerate(lay.router_ifaces[r]):
            cmds = (f"ip link set {itf} up", f"ip link set {itf} mtu 1500",
                    f"ip addr add {addr_of[itf]} dev {itf}", f"ip addr flush dev {itf}",
                    f"tc qdisc del dev {itf} root", "; ".join(by_dev.get(itf, ())))
            for a, (label, cmd) in enumerate(zip(dims.iface_actions, cmds)):
                if cmd:
                    cat.set(base + ii * n_iface + a, _entry(f"{r} {itf}: {label}", r, cmd,
                                                            "route" if a == 5 else "iface"))
        base += n_iface * dims.ifaces
        for s, cmd in by_subnet.items():
            cat.set(base + subnet_slot(lay, dims, s.index),
                    _entry(f"{r}: route to {s.switch}", r, cmd, "route"))
        base += dims.subnet_slots
        for ln, cmd in by_link.items():
            cat.set(base + ln.index, _entry(f"{r}: route to link{ln.index}", r, cmd, "route"))


def _add(by_dev: dict, dev: str, cmd: str, gw: int | None) -> None:
    """File a route command under its interface, a connected route (no gateway) first:
    the routes via a gateway on that interface need it."""
    cmds = by_dev.setdefault(dev, [])
    if gw is None:
        cmds.insert(0, cmd)
    else:
        cmds.append(cmd)


def _route_cmd(prefix: str, dev: str, gw: int | None, src: int | None) -> str:
    if gw is not None:
        return f"ip route replace {prefix} via {int_to_ip(gw)} dev {dev}"
    return f"ip route replace {prefix} dev {dev} proto kernel scope link src {int_to_ip(src)}"

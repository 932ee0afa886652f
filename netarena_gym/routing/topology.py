"""Topologies: Linux routers, subnets (a switch and its hosts), transit links with static
routes. Everything (names, addresses, MACs) is a pure function of the :class:`TopologySpec`.

Naming and addressing plan (also what the real backend builds):

* routers ``r0..r{R-1}``; router ``ri`` has LAN interfaces ``ri-eth1..ri-eth{S_i}``, then one
  transit interface per tree neighbour;
* subnets are numbered globally ``k = 1..S`` in router order: switch ``s{k}``, network
  ``192.168.k.0/24``, gateway ``192.168.k.1`` on the router;
* hosts ``h1..hN`` numbered globally in subnet order; host ``j`` (0-based) of subnet ``k`` has
  ``hX-eth0`` = ``192.168.k.(100+j)/24`` and ``default via 192.168.k.1``;
* router ``i >= 1`` hangs off router ``parents[i-1]`` by transit link ``t = i-1``:
  ``172.16.t.0/30``, the parent side ``.1``, the child side ``.2``;
* with interface labels on, every router interface carries an ``alias`` describing its
  intended role and address, as operators label ports (``LAN s3 192.168.3.1/24``,
  ``TRANSIT r1 172.16.0.1/30``). Labels are the env option ``interface_labels``: by default
  on, except in compat, whose upstream nodes carry none (there the alias would hand the agent
  the intended address). See :func:`labels_for`.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from netarena_gym.core.ipv4 import int_to_ip
from netarena_gym.routing.state import MAIN, Network, Node, Route  # noqa: F401

MAX_ROUTERS = 4
MAX_SUBNETS_PER_ROUTER = 8
MAX_HOSTS_PER_SUBNET = 4
TRANSIT_BASE = (172 << 24) | (16 << 16)


@dataclass(frozen=True)
class TopologySpec:
    """``hosts[i]`` lists the host count of each subnet of router ``i``;
    ``parents[i-1]`` is the router that router ``i`` attaches to."""
    hosts: tuple[tuple[int, ...], ...]
    parents: tuple[int, ...] = ()

    def __post_init__(self):
        if not 1 <= len(self.hosts) <= MAX_ROUTERS:
            raise ValueError(f"1..{MAX_ROUTERS} routers expected, got {len(self.hosts)}")
        if len(self.parents) != len(self.hosts) - 1:
            raise ValueError("parents must name one parent per router after r0")
        for i, p in enumerate(self.parents, start=1):
            if not 0 <= p < i:
                raise ValueError(f"router r{i} must attach to an earlier router, not r{p}")
        for hs in self.hosts:
            if not 1 <= len(hs) <= MAX_SUBNETS_PER_ROUTER:
                raise ValueError(f"1..{MAX_SUBNETS_PER_ROUTER} subnets per router expected")
            for h in hs:
                if not 1 <= h <= MAX_HOSTS_PER_SUBNET:
                    raise ValueError(f"1..{MAX_HOSTS_PER_SUBNET} hosts per subnet expected")

    @classmethod
    def uniform(cls, subnets: int, hosts_per_subnet: int) -> "TopologySpec":
        """One router, ``subnets`` subnets of ``hosts_per_subnet`` hosts (upstream's shape)."""
        return cls(hosts=((hosts_per_subnet,) * subnets,))

    def to_dict(self) -> dict:
        return {"hosts": [list(h) for h in self.hosts], "parents": list(self.parents)}

    @classmethod
    def from_dict(cls, d: dict) -> "TopologySpec":
        return cls(hosts=tuple(tuple(h) for h in d["hosts"]),
                   parents=tuple(d.get("parents", ())))

    @property
    def n_routers(self) -> int:
        return len(self.hosts)

    @property
    def n_subnets(self) -> int:
        return sum(len(h) for h in self.hosts)

    @property
    def n_hosts(self) -> int:
        return sum(sum(h) for h in self.hosts)


@dataclass(frozen=True)
class Subnet:
    index: int  # global k
    router: str
    iface: str
    switch: str
    net: int
    gateway: int
    hosts: tuple[str, ...]


@dataclass(frozen=True)
class TransitLink:
    index: int
    a: str  # parent router
    a_iface: str
    b: str  # child router
    b_iface: str
    net: int

    @property
    def a_ip(self) -> int:
        return self.net + 1

    @property
    def b_ip(self) -> int:
        return self.net + 2


class Layout:
    """The addressing plan of a spec: subnets, transit links, the router tree."""

    def __init__(self, spec: TopologySpec):
        self.spec = spec
        self.routers = [f"r{i}" for i in range(spec.n_routers)]
        self.subnets: list[Subnet] = []
        self.router_ifaces: dict[str, list[str]] = {r: [] for r in self.routers}
        k, h = 1, 1
        for i, hs in enumerate(spec.hosts):
            r = f"r{i}"
            for j, nh in enumerate(hs, start=1):
                iface = f"{r}-eth{j}"
                net = (192 << 24) | (168 << 16) | (k << 8)
                self.subnets.append(Subnet(k, r, iface, f"s{k}", net, net + 1,
                                           tuple(f"h{h + x}" for x in range(nh))))
                self.router_ifaces[r].append(iface)
                k += 1
                h += nh
        self.links: list[TransitLink] = []
        for t, p in enumerate(spec.parents):
            a, b = f"r{p}", f"r{t + 1}"
            a_if = f"{a}-eth{len(self.router_ifaces[a]) + 1}"
            self.router_ifaces[a].append(a_if)
            b_if = f"{b}-eth{len(self.router_ifaces[b]) + 1}"
            self.router_ifaces[b].append(b_if)
            self.links.append(TransitLink(t, a, a_if, b, b_if, TRANSIT_BASE | (t << 8)))
        self.subnet_of_host = {hn: s for s in self.subnets for hn in s.hosts}

    def neighbors(self, router: str) -> list[tuple[str, str, int]]:
        """(neighbour router, local iface, neighbour's transit address) for a router."""
        out = []
        for ln in self.links:
            if ln.a == router:
                out.append((ln.b, ln.a_iface, ln.b_ip))
            elif ln.b == router:
                out.append((ln.a, ln.b_iface, ln.a_ip))
        return out

    def next_hops(self, router: str) -> dict[str, tuple[str, int]]:
        """For every other router: (local iface, next-hop address) along the tree."""
        first: dict[str, tuple[str, int]] = {}
        frontier = []
        for nb, itf, gw in self.neighbors(router):
            first[nb] = (itf, gw)
            frontier.append(nb)
        seen = {router, *first}
        while frontier:
            cur = frontier.pop(0)
            for nb, _, _ in self.neighbors(cur):
                if nb not in seen:
                    seen.add(nb)
                    first[nb] = first[cur]
                    frontier.append(nb)
        return first

    def intended_routes(self, router: str) -> list[tuple[int, int, str, int | None]]:
        """(net, plen, dev, gateway) of every route ``router`` should have in ``main``."""
        routes = []
        hops = self.next_hops(router)
        for s in self.subnets:
            if s.router == router:
                routes.append((s.net, 24, s.iface, None))
            else:
                itf, gw = hops[s.router]
                routes.append((s.net, 24, itf, gw))
        for ln in self.links:
            if router == ln.a:
                routes.append((ln.net, 30, ln.a_iface, None))
            elif router == ln.b:
                routes.append((ln.net, 30, ln.b_iface, None))
            else:
                # in a tree both ends of a remote link share the first hop
                itf, gw = hops[ln.a]
                routes.append((ln.net, 30, itf, gw))
        return routes

    def iface_alias(self, router: str, iface: str) -> str:
        for s in self.subnets:
            if s.iface == iface:
                return f"LAN {s.switch} {int_to_ip(s.gateway)}/24"
        for ln in self.links:
            if ln.a_iface == iface:
                return f"TRANSIT {ln.b} {int_to_ip(ln.a_ip)}/30"
            if ln.b_iface == iface:
                return f"TRANSIT {ln.a} {int_to_ip(ln.b_ip)}/30"
        raise KeyError(iface)


def labels_for(level, interface_labels: bool | None = None) -> bool:
    """Whether router interfaces carry intent labels: ``interface_labels`` when given, else
    on at every level but ``"compat"``."""
    if interface_labels is not None:
        return bool(interface_labels)
    return level != "compat"


def _mac(node_no: int, ifno: int) -> str:
    return f"02:00:00:{(node_no >> 8) & 255:02x}:{node_no & 255:02x}:{ifno:02x}"


@lru_cache(maxsize=512)
def layout_of(spec: TopologySpec) -> Layout:
    """The (immutable) addressing plan of ``spec``, memoised."""
    return Layout(spec)


def build_network(spec: TopologySpec, *, labels: bool = True) -> tuple[Network, Layout]:
    """Build the healthy network for ``spec`` (``labels``: router interface aliases)."""
    lay = layout_of(spec)
    net = Network()
    node_no = 0
    peer_ifindex = 100
    for r in lay.routers:
        node_no += 1
        node = net.add_node(Node(r, "router"))
        for n, itf in enumerate(lay.router_ifaces[r], start=1):
            node.add_interface(itf, mac=_mac(node_no, n),
                               alias=lay.iface_alias(r, itf) if labels else None,
                               peer_ifindex=peer_ifindex)
            peer_ifindex += 1
        node.sysctl["net.ipv4.ip_forward"] = "1"
    for s in lay.subnets:
        node = net.nodes[s.router]
        node.add_address(s.iface, s.gateway, 24)
        net.attach(s.switch, s.router, s.iface)
        net.probe_ip.setdefault(s.router, s.gateway)
        for j, hn in enumerate(s.hosts):
            node_no += 1
            hif = f"{hn}-eth0"
            ip = s.net + 100 + j
            net.add_node(Node.host(hn, hif, mac=_mac(node_no, 0), peer_ifindex=peer_ifindex,
                                   ip=ip, plen=24, gateway=s.gateway))
            peer_ifindex += 1
            net.attach(s.switch, hn, hif)
            net.probe_ip[hn] = ip
    for ln in lay.links:
        net.nodes[ln.a].add_address(ln.a_iface, ln.a_ip, 30)
        net.nodes[ln.b].add_address(ln.b_iface, ln.b_ip, 30)
        ia, ib = net.nodes[ln.a].interfaces[ln.a_iface], net.nodes[ln.b].interfaces[ln.b_iface]
        ia.peer, ib.peer = ib, ia
        seg = f"link{ln.index}"
        net.attach(seg, ln.a, ln.a_iface)
        net.attach(seg, ln.b, ln.b_iface)
    for r in lay.routers:
        node = net.nodes[r]
        for dst, plen, dev, gw in lay.intended_routes(r):
            if gw is not None:
                node.insert_route(Route(dst=dst, plen=plen, dev=dev, gateway=gw, table=MAIN))
    for node in net.nodes.values():
        node.version = 0
        node._cache_version = node._fp_version = -1
    net.version = 0
    return net, lay

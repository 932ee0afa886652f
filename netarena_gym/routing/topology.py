"""Topologies: Linux routers, subnets (a switch and its hosts), transit links with static
routes. Everything (names, addresses, MACs) is a pure function of the :class:`TopologySpec`.

Naming and addressing plan (also what the real backend builds):

* routers ``r0..r{R-1}``; router ``ri`` has LAN interfaces ``ri-eth1..ri-eth{S_i}``, then one
  transit interface per tree neighbour;
* subnets are numbered globally ``k = 1..S`` in router order: switch ``s{k}``, network
  ``192.168.k.0/24`` (from ``k = 256`` on, in large networks: ``100.64.(k-256).0/24`` and up,
  the shared address space), gateway ``.1`` of it on the router;
* hosts ``h1..hN`` numbered globally in subnet order; host ``j`` (0-based) of subnet ``k`` has
  ``hX-eth0`` = ``192.168.k.(100+j)/24`` and ``default via 192.168.k.1``;
* router ``i >= 1`` hangs off router ``parents[i-1]`` by transit link ``t = i-1``:
  ``172.16.t.0/30``, the parent side ``.1``, the child side ``.2``; a spec may instead list
  its ``links`` as router pairs ``(a, b)`` (rings, leaf-spine: see
  :mod:`netarena_gym.routing.shapes`), link ``t`` then being ``(a, b)`` with the same
  plan (``172.16.0.0`` plus ``t * 256``: link 256 is ``172.17.0.0/30``);
* static routes follow a breadth-first search from each router over its links in
  interface order: a network goes via the first hop toward the first router found that
  holds it (on a tree, the unique path);
* a router without subnets (a spine) is probed at its first transit address;
* with interface labels on, every router interface carries an ``alias`` describing its
  intended role and address, as operators label ports (``LAN s3 192.168.3.1/24``,
  ``TRANSIT r1 172.16.0.1/30``). Labels are the env option ``interface_labels``: by default
  on, except in compat, whose upstream nodes carry none (there the alias would hand the agent
  the intended address). See :func:`labels_for`.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from functools import lru_cache

from netarena_gym.core.ipv4 import int_to_ip
from netarena_gym.errors import ScenarioError
from netarena_gym.routing.clone import clonable, clone_network
from netarena_gym.routing.state import (MAIN, Address, Interface, Network, Node,  # noqa: F401
                                        Route, new_interface)

MAX_ROUTERS = 64
MAX_SUBNETS_PER_ROUTER = 8
MAX_HOSTS_PER_SUBNET = 4
TRANSIT_BASE = (172 << 24) | (16 << 16)


@dataclass(frozen=True)
class TopologySpec:
    """``hosts[i]`` lists the host count of each subnet of router ``i`` (a router may have
    none only when ``links`` is given); ``parents[i-1]`` is the router that router ``i``
    attaches to (a tree), or ``links`` lists every transit link as a router pair."""
    hosts: tuple[tuple[int, ...], ...]
    parents: tuple[int, ...] = ()
    links: tuple[tuple[int, int], ...] = ()

    def __post_init__(self):
        """:class:`~netarena_gym.errors.ScenarioError` (a ``ValueError``) for a spec that
        cannot be built, naming what is wrong."""
        if not all(isinstance(hs, tuple) and all(_is_int(h) for h in hs) for hs in self.hosts):
            raise ScenarioError(f"hosts must list each router's subnets as host counts "
                                f"(ints), got {self.hosts!r}")
        if not all(_is_int(p) for p in self.parents) or not all(
                isinstance(ln, tuple) and all(_is_int(x) for x in ln) for ln in self.links):
            raise ScenarioError(f"parents and links must name routers by index (ints), got "
                                f"parents {self.parents!r}, links {self.links!r}")
        n = len(self.hosts)
        if not 1 <= n <= MAX_ROUTERS:
            raise ScenarioError(f"1..{MAX_ROUTERS} routers expected, got {n}")
        if self.links:
            if self.parents:
                raise ScenarioError("give parents (a tree) or links, not both")
            _check_links(n, self.links)
        elif len(self.parents) != n - 1:
            raise ScenarioError("parents must name one parent per router after r0")
        for i, p in enumerate(self.parents, start=1):
            if not 0 <= p < i:
                raise ScenarioError(f"router r{i} must attach to an earlier router, not r{p}")
        if not any(self.hosts):
            raise ScenarioError("at least one subnet expected")
        for hs in self.hosts:
            if not (0 if self.links else 1) <= len(hs) <= MAX_SUBNETS_PER_ROUTER:
                raise ScenarioError(f"1..{MAX_SUBNETS_PER_ROUTER} subnets per router expected")
            for h in hs:
                if not 1 <= h <= MAX_HOSTS_PER_SUBNET:
                    raise ScenarioError(f"1..{MAX_HOSTS_PER_SUBNET} hosts per subnet expected")

    @classmethod
    def uniform(cls, subnets: int, hosts_per_subnet: int) -> "TopologySpec":
        """One router, ``subnets`` subnets of ``hosts_per_subnet`` hosts (upstream's shape)."""
        return cls(hosts=((hosts_per_subnet,) * subnets,))

    def to_dict(self) -> dict:
        d = {"hosts": [list(h) for h in self.hosts], "parents": list(self.parents)}
        if self.links:
            d["links"] = [list(ln) for ln in self.links]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "TopologySpec":
        return cls(hosts=tuple(tuple(h) for h in d["hosts"]),
                   parents=tuple(d.get("parents", ())),
                   links=tuple(tuple(ln) for ln in d.get("links", ())))

    def edges(self) -> tuple[tuple[int, int], ...]:
        """Every transit link as (a, b): ``links``, else (parent, child) per router."""
        return self.links or tuple((p, i) for i, p in enumerate(self.parents, start=1))

    @property
    def n_routers(self) -> int:
        return len(self.hosts)

    @property
    def n_subnets(self) -> int:
        return sum(len(h) for h in self.hosts)

    @property
    def n_hosts(self) -> int:
        return sum(sum(h) for h in self.hosts)


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _check_links(n: int, links) -> None:
    seen = set()
    for ln in links:
        if len(ln) != 2 or not all(0 <= x < n for x in ln) or ln[0] == ln[1]:
            raise ScenarioError(f"link {ln!r}: two different routers of 0..{n - 1} expected")
        key = frozenset(ln)
        if key in seen:
            raise ScenarioError(f"link {ln!r} given twice")
        seen.add(key)
    adj: dict[int, list[int]] = {}
    for a, b in links:
        adj.setdefault(a, []).append(b)
        adj.setdefault(b, []).append(a)
    reach, todo = {0}, [0]
    while todo:  # one pass over the links, not one per router reached
        for y in adj.get(todo.pop(), ()):
            if y not in reach:
                reach.add(y)
                todo.append(y)
    if len(reach) != n:
        raise ScenarioError("the links must connect every router")


def subnet_net(k: int) -> int:
    """Network address of global subnet ``k`` (see the addressing plan)."""
    if k <= 255:
        return (192 << 24) | (168 << 16) | (k << 8)
    return (100 << 24) | (64 << 16) | ((k - 256) << 8)


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


@lru_cache(maxsize=8192)
def _subnet(k: int, i: int, j: int, first_host: int, hosts: int) -> Subnet:
    """Global subnet ``k``, the ``j``-th of router ``i``, with hosts ``h{first_host}`` on
    (immutable, memoised: layouts drawn at random share most of their subnets)."""
    net = subnet_net(k)
    return Subnet(k, f"r{i}", f"r{i}-eth{j}", f"s{k}", net, net + 1,
                  tuple(f"h{first_host + x}" for x in range(hosts)))


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
                s = _subnet(k, i, j, h, nh)
                self.subnets.append(s)
                self.router_ifaces[r].append(s.iface)
                k += 1
                h += nh
        self.links: list[TransitLink] = []
        for t, (p, c) in enumerate(spec.edges()):
            a, b = f"r{p}", f"r{c}"
            a_if = f"{a}-eth{len(self.router_ifaces[a]) + 1}"
            self.router_ifaces[a].append(a_if)
            b_if = f"{b}-eth{len(self.router_ifaces[b]) + 1}"
            self.router_ifaces[b].append(b_if)
            self.links.append(TransitLink(t, a, a_if, b, b_if, TRANSIT_BASE + (t << 8)))
        self.subnet_of_host = {hn: s for s in self.subnets for hn in s.hosts}
        self._neighbors: dict[str, list[tuple[str, str, int]]] = {}
        self._hops: dict[str, dict[str, tuple[str, int]]] = {}
        self._aliases: dict[str, str] = {}

    def neighbors(self, router: str) -> list[tuple[str, str, int]]:
        """(neighbour router, local iface, neighbour's transit address) for a router, in
        interface order."""
        nb = self._neighbors.get(router)
        if nb is None:
            nb = self._neighbors[router] = []
            for ln in self.links:
                if ln.a == router:
                    nb.append((ln.b, ln.a_iface, ln.b_ip))
                elif ln.b == router:
                    nb.append((ln.a, ln.b_iface, ln.a_ip))
        return nb

    def next_hops(self, router: str) -> dict[str, tuple[str, int]]:
        """For every other router, in breadth-first order over links in interface order:
        (local iface, next-hop address) of the first hop toward it."""
        hit = self._hops.get(router)
        if hit is not None:
            return hit
        first: dict[str, tuple[str, int]] = {}
        frontier = []
        for nb, itf, gw in self.neighbors(router):
            if nb not in first:
                first[nb] = (itf, gw)
                frontier.append(nb)
        seen = {router, *first}
        head = 0
        while head < len(frontier):
            cur = frontier[head]
            head += 1
            for nb, _, _ in self.neighbors(cur):
                if nb not in seen:
                    seen.add(nb)
                    first[nb] = first[cur]
                    frontier.append(nb)
        self._hops[router] = first
        return first

    def intended_routes(self, router: str) -> list[tuple[int, int, str, int | None]]:
        """(net, plen, dev, gateway) of every route ``router`` should have in ``main``.
        A remote link goes via the first hop toward whichever of its ends the search
        reaches first (on a tree both ends share it)."""
        routes = []
        hops = self.next_hops(router)
        rank = {r: i for i, r in enumerate(hops)}
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
                near = ln.a if rank[ln.a] <= rank[ln.b] else ln.b
                itf, gw = hops[near]
                routes.append((ln.net, 30, itf, gw))
        return routes

    def iface_alias(self, router: str, iface: str) -> str:
        alias = self._aliases.get(iface)
        if alias is None:
            for s in self.subnets:
                self._aliases[s.iface] = f"LAN {s.switch} {int_to_ip(s.gateway)}/24"
            for ln in self.links:
                self._aliases[ln.a_iface] = f"TRANSIT {ln.b} {int_to_ip(ln.a_ip)}/30"
                self._aliases[ln.b_iface] = f"TRANSIT {ln.a} {int_to_ip(ln.b_ip)}/30"
            alias = self._aliases[iface]
        return alias


def labels_for(level, interface_labels: bool | None = None) -> bool:
    """Whether router interfaces carry intent labels: ``interface_labels`` when given, else
    on at every level but ``"compat"``."""
    if interface_labels is not None:
        return bool(interface_labels)
    return level != "compat"


@lru_cache(maxsize=8192)
def _mac(node_no: int, ifno: int) -> str:
    return f"02:00:00:{(node_no >> 8) & 255:02x}:{node_no & 255:02x}:{ifno:02x}"


@lru_cache(maxsize=512)
def layout_of(spec: TopologySpec) -> Layout:
    """The (immutable) addressing plan of ``spec``, memoised."""
    return Layout(spec)


def build_network_fresh(spec: TopologySpec, *, labels: bool = True) -> tuple[Network, Layout]:
    """Build the healthy network for ``spec`` from nothing (the reference that
    :func:`build_network`'s copies are tested against)."""
    lay = layout_of(spec)
    net = _build_routers(lay, labels)
    _add_hosts(net, lay)
    return net, lay


def build_network(spec: TopologySpec, *, labels: bool = True,
                  recurring: bool = False) -> tuple[Network, Layout]:
    """The healthy network for ``spec`` (``labels``: router interface aliases), the same as
    :func:`build_network_fresh` builds: from the second time a spec is seen, a copy
    (:mod:`netarena_gym.routing.clone`) of its pristine network, kept (:func:`is_kept`).
    What is seen once is only noted: networks drawn at random (levels 1-3) rarely repeat,
    and kept networks they would not reuse cost the garbage collector more than a build.
    ``recurring``: the spec will be asked for again (a fixed topology), so it is kept from
    this first time on."""
    lay = layout_of(spec)
    whole = _kept(_NETWORKS, (spec, labels), lambda: build_network_fresh(spec, labels=labels)[0],
                  recurring)
    if whole is not None:
        return clone_network(whole), lay
    return build_network_fresh(spec, labels=labels)


def is_kept(spec: TopologySpec, labels: bool) -> bool:
    """Whether :func:`build_network` hands out copies of a kept network for ``spec``."""
    return _NETWORKS.get((spec, labels)) is not None


MAX_KEPT = 64  # networks kept or noted (least recently used out first)
_NETWORKS: dict[tuple, Network | None] = {}  # (spec, labels) -> pristine network, None: seen once


def _kept(kept: dict, key, make, recurring: bool = False) -> Network | None:
    """The pristine network kept under ``key``, made (``make()``) the second time the
    key is asked for (``recurring``: the first); None the first time."""
    net = kept.get(key)
    if net is not None:
        kept[key] = kept.pop(key)  # the most recently used go out last
        return net
    if key in kept or recurring:
        net = make()
        if not clonable(net):
            return None
        kept.pop(key, None)
        kept[key] = net
        for node in net.nodes.values():
            node.fingerprint()  # shared by every copy until the copy changes
    else:
        kept[key] = None
    if len(kept) > MAX_KEPT:
        _release(kept.pop(next(iter(kept))))
    return net


def _release(net: Network | None) -> None:
    """Break a dropped network's reference cycles (node and network, transit peers), so
    that it is freed at once rather than by the cyclic garbage collector."""
    if net is not None:
        for node in net.nodes.values():
            node.network = None
            for itf in node.interfaces.values():
                itf.peer = None


def clear() -> None:
    """Forget every kept network."""
    for net in _NETWORKS.values():
        _release(net)
    _NETWORKS.clear()


def _build_routers(lay: Layout, labels: bool) -> Network:
    """The routers of ``lay``, configured: interfaces, addresses, static routes. The state
    is set directly, as ``add_interface``, ``add_address`` (one primary address per
    interface, hence one connected route each) and ``ip route add`` leave it (the same
    table: one stable sort by destination, prefix length and metric of the routes in the
    order those calls add them); tests/routing/test_topology.py builds it both ways."""
    net = Network()
    nodes = net.nodes
    peer_ifindex = 100
    for node_no, r in enumerate(lay.routers, start=1):
        node = net.add_node(Node(r, "router"))
        itfs = node.interfaces
        names = lay.router_ifaces[r]
        for n, itf in enumerate(names, start=1):
            itfs[itf] = new_interface(itf, n + 1, _mac(node_no, n), 1500, [],
                                      peer_ifindex + n - 1, False,
                                      lay.iface_alias(r, itf) if labels else None)
        peer_ifindex += len(names)
        node._next_ifindex = len(names) + 2
        node.sysctl["net.ipv4.ip_forward"] = "1"
    connected: dict[str, list[Route]] = {r: [] for r in lay.routers}

    def address(r: str, itf: str, ip: int, plen: int) -> None:
        a = Address(ip, plen)
        nodes[r].interfaces[itf].addresses.append(a)
        connected[r].append(Route(dst=a.net, plen=plen, dev=itf, proto="kernel",
                                  scope="link", src=ip, table=MAIN))
    for s in lay.subnets:
        address(s.router, s.iface, s.gateway, 24)
    for ln in lay.links:
        address(ln.a, ln.a_iface, ln.a_ip, 30)
        address(ln.b, ln.b_iface, ln.b_ip, 30)
        ia, ib = nodes[ln.a].interfaces[ln.a_iface], nodes[ln.b].interfaces[ln.b_iface]
        ia.peer, ib.peer = ib, ia
    for r in lay.routers:
        node = nodes[r]
        table = node.tables[MAIN]
        table += connected[r]
        table.extend(Route(dst=dst, plen=plen, dev=dev, gateway=gw, table=MAIN)
                     for dst, plen, dev, gw in lay.intended_routes(r) if gw is not None)
        node._sort_table(MAIN)
    net.version = 0
    return net


def _add_hosts(net: Network, lay: Layout) -> None:
    """Add ``lay``'s hosts to the routers in ``net``, with the L2 segments and the probe
    addresses."""
    node_no = len(lay.routers)
    peer_ifindex = 100 + sum(len(v) for v in lay.router_ifaces.values())
    probe_ip = net.probe_ip
    nodes, segment_of, host = net.nodes, net.segment_of, Node.host
    proxy = weakref.proxy(net)  # what Network.add_node and attach do, inlined
    for s in lay.subnets:
        net.attach(s.switch, s.router, s.iface)
        seg = net.segments[s.switch]
        probe_ip.setdefault(s.router, s.gateway)
        gateway = s.gateway
        for j, hn in enumerate(s.hosts):
            node_no += 1
            hif = hn + "-eth0"
            ip = s.net + 100 + j
            node = host(hn, hif, mac=_mac(node_no, 0), peer_ifindex=peer_ifindex, ip=ip,
                        plen=24, gateway=gateway)
            node.network = proxy
            nodes[hn] = node
            peer_ifindex += 1
            seg.append((hn, hif))
            segment_of[(hn, hif)] = s.switch
            probe_ip[hn] = ip
    for ln in lay.links:
        probe_ip.setdefault(ln.a, ln.a_ip)
        probe_ip.setdefault(ln.b, ln.b_ip)
        seg = f"link{ln.index}"
        net.attach(seg, ln.a, ln.a_iface)
        net.attach(seg, ln.b, ln.b_iface)
    net.version = 0

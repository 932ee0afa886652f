"""The network of :mod:`netarena_gym.routing.state`: every node plus the L2 segments (a
switch or a point-to-point link) joining them, and ARP over them (which node on a segment
answers for an address). It mirrors Linux 6.x's neighbour resolution with ``arp_ignore=0``
and ``arp_announce=0``; it leaves out timers and gratuitous ARP.
"""
from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from netarena_gym.routing.state_records import NeighEntry, natural_key

if TYPE_CHECKING:
    from netarena_gym.routing.state import Node

__all__ = ["Network"]


class Network:
    """All nodes plus the L2 segments (a switch or a point-to-point link) joining them."""

    def __init__(self):
        self.nodes: dict[str, Node] = {}
        self.segments: dict[str, list[tuple[str, str]]] = {}  # segment name -> [(node, iface)]
        self.segment_of: dict[tuple[str, str], str] = {}
        self.probe_ip: dict[str, int] = {}  # address each node is pinged at (cached at build)
        self.version = 0
        self._nb_cache: dict = {}
        self._nb_version = -1
        # dynamic neighbour cache (netarena_gym.routing.neigh): while ``arp_log`` is a
        # list, every ARP resolution is appended to it; ``neigh_tables`` holds the tables
        # made explicit in the current traffic round, keyed by node then (device, address)
        self.arp_log: list | None = None
        self.neigh_tables: dict[str, dict[tuple[str, int], NeighEntry]] = {}
        # devices whose entries were dropped this round on nodes not made explicit yet
        self.neigh_forgotten: dict[str, set[str]] = {}
        self.traffic_rounds = 0
        self.neigh_cache: tuple | None = None

    def add_node(self, node: Node) -> Node:
        # held weakly (a proxy): no reference cycle keeps a discarded network alive, so it is
        # freed by reference counting, not by a full run of the cyclic collector
        node.network = weakref.proxy(self)
        self.nodes[node.name] = node
        self.version += 1
        return node

    def attach(self, segment: str, node: str, iface: str) -> None:
        self.segments.setdefault(segment, []).append((node, iface))
        self.segment_of[(node, iface)] = segment

    def routers(self) -> list[Node]:
        return [n for n in self.nodes.values() if n.kind == "router"]

    def hosts(self) -> list[Node]:
        return [n for n in self.nodes.values() if n.kind == "host"]

    def probe_order(self) -> list[str]:
        """Names in pingall order: natural sort, hosts first and routers last (as Mininet)."""
        hosts = sorted((n.name for n in self.hosts()), key=natural_key)
        routers = sorted((n.name for n in self.routers()), key=natural_key)
        return hosts + routers

    def neighbor(self, node: Node, ifname: str, ip: int) -> tuple[Node, str] | None:
        """ARP: which node on ``ifname``'s segment answers for ``ip`` (arp_ignore=0: any
        address of the answering node counts, if the interface it hears on is up)."""
        if self._nb_version != self.version:
            self._nb_cache.clear()
            self._nb_version = self.version
        key = (node.name, ifname, ip)
        try:
            res = self._nb_cache[key]
        except KeyError:
            res = self._nb_cache[key] = self._resolve(node, ifname, ip)
        if (self.arp_log is not None and (ifname, ip) not in node.static_neigh
                and not node.interfaces[ifname].noarp):
            self.arp_log.append((node, ifname, ip, res))  # permanent or NOARP: asks no one
        return res

    def new_traffic_round(self) -> None:
        """A probe round starts (the backend's ``observe``): the neighbour tables are again
        what that round resolves (the real backend flushes them before probing)."""
        self.traffic_rounds += 1
        self.neigh_tables.clear()
        self.neigh_forgotten.clear()

    def forget_neighbours(self, node: str, ifname: str) -> None:
        """``neigh_ifdown``: drop ``node``'s entries on ``ifname``, permanent ones too (the
        caller touches the node)."""
        n = self.nodes.get(node)
        if n is not None and n.static_neigh:
            for k in [k for k in n.static_neigh if k[0] == ifname]:
                del n.static_neigh[k]
        t = self.neigh_tables.get(node)
        if t is None:
            self.neigh_forgotten.setdefault(node, set()).add(ifname)
            return
        for k in [k for k in t if k[0] == ifname]:
            del t[k]

    def _resolve(self, node: Node, ifname: str, ip: int) -> tuple[Node, str] | None:
        itf = node.interfaces.get(ifname)
        if itf is None or not itf.up:
            return None
        if itf.noarp and (ifname, ip) not in node.static_neigh:
            return None  # NUD_NOARP: frames go to the device's own MAC, which no one takes
        seg = self.segment_of.get((node.name, ifname))
        if seg is None:
            return None
        mac = node.static_neigh.get((ifname, ip)) if node.static_neigh else None
        if mac is not None:  # the frame goes to whoever owns the MAC, whatever its address
            for pname, pif in self.segments[seg]:
                pitf = self.nodes[pname].interfaces[pif]
                if pname != node.name and pitf.up and pitf.mac == mac:
                    return self.nodes[pname], pif
            return None
        other = None  # an owner of ``ip`` on another of its interfaces (arp_ignore=0)
        carrier = None  # one that carries ``ip`` on the segment but sends with another
        sip = node.select_source(ifname, ip)  # the request's sender address
        for pname, pif in self.segments[seg]:
            if pname == node.name and pif == ifname:
                continue
            peer = self.nodes[pname]
            pitf = peer.interfaces[pif]
            if (pitf.up and not pitf.noarp and ip in peer.local_ips()
                    and (sip is None or not peer.is_local(sip))):
                # arp_process answers only when ip_route_input(ip, sender) succeeds; a
                # sender address the peer owns is a martian source (accept_local=0)
                if any(a.ip == ip for a in pitf.addresses):
                    # a duplicate: the node that sends with it (the address is the first
                    # of its subnet there) wins, its ARP requests overriding (neigh_event_ns)
                    if peer.select_source(pif, ip) == ip:
                        return peer, pif
                    if carrier is None:
                        carrier = (peer, pif)
                elif other is None:
                    other = (peer, pif)
        # both answer and the first reply wins; on Mininet the interface that carries the
        # address answers first
        return carrier or other

    def fingerprint(self) -> tuple:
        return tuple(n.fingerprint() for n in self.nodes.values())

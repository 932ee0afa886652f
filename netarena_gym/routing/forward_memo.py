"""Per-destination forwarding memo: the probe matrix's walks as pointer chasing.

The probe matrix walks thousands of echo exchanges through the same network state, and
most hops are at routers whose decision for a packet depends on nothing but where the
packet is and where it goes. At such a *plain* node (no policy rule selects on anything
but the table, empty ``INPUT`` and ``FORWARD`` chains with policy ``ACCEPT``, no netem
qdisc, every MTU at least the probe's 84 bytes, echo requests answered) what
:func:`~netarena_gym.routing.grader.carry` does to a packet that arrived on ``in_if``
for ``dst`` is a function of ``(node, in_if, dst)`` alone: delivered here, dropped here,
or resolved to the next ``(node, in_if)``. :class:`ForwardingMemo` works that decision
out once per ``(node, in_if, dst)`` and keeps, for every such arrival, the end of the
chain of plain nodes it starts: delivered (where, with the last hop's resolution),
dropped, or handed off at the first node that is not plain, with the number of forwards
(TTL decrements), the last resolution and the keys the resolutions read
(:class:`~netarena_gym.routing.pair_store.PairStore`'s dependencies, as a bit mask: an
int with bit ``k`` set for key ``k``, so that joining a chain's keys to a probe's is one
``|``). A probe then runs the sender's part of each walk
(:func:`~netarena_gym.routing.grader.launch`), jumps to the chain's end, and runs the full
hop-by-hop walk from a node that is not plain. Where the jump cannot be exact it is not
taken: a forwarding loop, or a chain as long as the packet's remaining TTL, walks hop by
hop from the first arrival.

The sender's part is kept too where it cannot depend on the destination: sent through a
gateway, with an empty ``OUTPUT`` chain and no qdisc on the device, it is a function of
the sender, the route's device, gateway and preferred source, the given source address
and what the sender learnt from the request it answers; a host's sends to every other
subnet, and a responder's replies, are worked out once. Per (node, incoming interface)
the memo keeps whether the node is plain and forwards there, and per (node, device, next
hop) who answers and the keys that reads.

Results are those of :func:`~netarena_gym.routing.grader.probe`, bit for bit (delays
are summed hop by hop in the same order); ``tests/routing/test_forward_memo.py``
compares the two over many scenarios. The memo holds for one network version and is
dropped when any node changes. It is not used while the network records ARP traffic
(``Network.arp_log``): a jump skips the resolutions that recording needs.
"""
from __future__ import annotations

from netarena_gym.routing.grader import (BASE_MS, HOP_MS, MAX_TTL, PING_PACKET, Trip, carry,
                                         launch, learned_from)
from netarena_gym.routing.matrix_cache import key_mask
from netarena_gym.routing.state import Network, Node

__all__ = ["ForwardingMemo", "plain"]

DELIVER, DROP, HANDOFF, LOOP = 0, 1, 2, 3
_LOOP = (LOOP, None, None, None, 0, 0)


def _arrivals() -> list[float]:
    """A trip's delay after ``k`` arrivals from none, ``HOP_MS`` added one at a time as
    :func:`~netarena_gym.routing.grader.carry` adds it (the same floats, bit for bit)."""
    out, d = [0.0], 0.0
    for _ in range(MAX_TTL + 1):
        d += HOP_MS
        out.append(d)
    return out


_ARRIVALS = _arrivals()


def plain(node: Node) -> bool:
    """Is every forwarding decision at ``node`` a function of (incoming interface,
    destination) for a default-sized probe? See the module docstring."""
    ipt = node.iptables
    for chain in ("INPUT", "FORWARD"):
        if ipt.chains[chain] or ipt.policies[chain] != "ACCEPT":
            return False
    if node.sysctl.get("net.ipv4.icmp_echo_ignore_all") == "1":
        return False
    for itf in node.interfaces.values():
        if itf.mtu < PING_PACKET:
            return False
        q = itf.qdisc
        if q is not None and q.kind == "netem":
            return False
    return node.dst_only()


def _no_source(node: Node, toward: int) -> None:
    return None


class ForwardingMemo:
    """Probe results of one network through memoised chains of plain hops.

    ``seg``: (node name, interface) -> the dependency keys a resolution there reads (the
    indices of the nodes on that segment and its key), as
    :func:`~netarena_gym.routing.matrix_cache.segment_deps` gives (empty: no
    dependencies wanted)."""

    __slots__ = ("net", "seg", "version", "memo", "plain", "segsets", "sends", "gates",
                 "hops")

    def __init__(self, net: Network, seg: dict):
        self.net = net
        self.seg = seg
        self.version = -1
        self.memo: dict[tuple, tuple] = {}
        self.plain: dict[Node, bool] = {}
        self.segsets: dict[tuple[str, str], int] = {}  # (node, device) -> key mask
        self.sends: dict[tuple, tuple | bool] = {}  # False: not to be replayed
        # (node, in_if) -> (plain, forwards on in_if); (node, device, next hop) ->
        # (the neighbour that answers, the keys that resolution reads)
        self.gates: dict[tuple, tuple[bool, bool]] = {}
        self.hops: dict[tuple, tuple] = {}

    def chain(self, node: Node, in_if: str, dst: int) -> tuple:
        """``(kind, node, in_if, last, forwards, deps)`` for a packet to ``dst`` arriving
        at ``node`` on ``in_if``: DELIVER at ``node``/``in_if``, DROP, HANDOFF at the
        first node that is not plain (arriving on ``in_if``), or LOOP. ``last`` is the
        last resolution ``(sender, device, next hop)`` (None: none made); ``deps`` the
        mask of the keys its resolutions read."""
        memo = self.memo
        key = (node, in_if, dst)
        o = memo.get(key)
        if o is not None:
            return o
        gates, hops = self.gates, self.hops
        steps = []
        on_chain = set()
        while True:
            g = gates.get((node, in_if))
            if g is None:
                p = self.is_plain(node)
                g = gates[(node, in_if)] = (p, p and node.forwards_on(in_if))
            if not g[0]:
                o = (HANDOFF, node, in_if, None, 0, 0)
                break
            res = node.lookup(dst, 0, in_if)
            kind = res.kind
            if kind == "local":
                o = (DELIVER, node, in_if, None, 0, 0)
                break
            if not g[1] or kind != "unicast":
                o = (DROP, None, None, None, 0, 0)
                break
            dev, gw = res.dev, res.gateway
            nh = gw if gw is not None else dst
            h = hops.get((node, dev, nh))
            if h is None:
                h = hops[(node, dev, nh)] = (self.net.neighbor(node, dev, nh),
                                             self.keys_of(node.name, dev))
            hop, d = h
            if hop is None:  # the TTL was decremented before the resolution failed
                o = (DROP, None, None, None, 1, d)
                break
            steps.append((key, node, dev, nh, d))
            on_chain.add(key)
            node, in_if = hop
            key = (node, in_if, dst)
            o = memo.get(key)
            if o is not None:
                break
            if key in on_chain:
                o = _LOOP
                break
        memo[key] = o
        for key, node, dev, nh, d in reversed(steps):
            if o[0] != LOOP:
                last = o[3]
                o = (o[0], o[1], o[2], (node, dev, nh) if last is None else last,
                     o[4] + 1, o[5] | d)
            memo[key] = o
        return o

    def probe(self, a: Node, dst: int, timeout_s: float,
              log: list | None) -> tuple[bool, int | None, int]:
        """:func:`~netarena_gym.routing.grader.probe` (same result and source address),
        and the mask of the keys the jumped resolutions read. Resolutions made hop by hop
        go to ``log``."""
        net = self.net
        if self.version != net.version:
            self.memo.clear()
            self.plain.clear()
            self.sends.clear()
            self.gates.clear()
            self.hops.clear()
            self.version = net.version
        req = Trip(a, MAX_TTL, False)
        first = self._launch(req, a, dst, None, "echo-request", None, log)
        reads = 0 if first is None else self._travel(req, first, dst, "echo-request", log)
        if not req.ok:
            return False, req.src, reads
        if req.node is a:
            return True, req.src, reads
        responder, back = req.node, req.src
        rep = Trip(responder, MAX_TTL, False)
        first = self._launch(rep, responder, back, dst, "echo-reply", learned_from(req), log)
        if first is not None:
            reads |= self._travel(rep, first, back, "echo-reply", log)
        return (rep.ok and rep.node is a and req.loss == 0.0 and rep.loss == 0.0
                and BASE_MS + req.delay_ms + rep.delay_ms < timeout_s * 1000.0), req.src, reads

    def _launch(self, trip: Trip, a: Node, dst: int, src: int | None, icmp_type: str,
                learned: tuple | None, log: list | None) -> tuple | None:
        """:func:`~netarena_gym.routing.grader.launch` of a default-sized probe packet.
        A send through a gateway, with ``a``'s ``OUTPUT`` chain empty (policy ``ACCEPT``)
        and no qdisc on the device, is a function of (sender, device, gateway, the route's
        preferred source, the given source, ``learned``) for one network version: it is
        worked out once and replayed."""
        res = a.lookup(dst, src or 0, "lo")
        gw = res.gateway
        if gw is None or res.kind != "unicast":
            return launch(self.net, trip, a, dst, src, PING_PACKET, False, "icmp",
                          icmp_type, False, learned, log)
        route = res.route
        key = (a, res.dev, gw, None if route is None else route.src, src, learned)
        done = self.sends.get(key)
        if done is None:
            first = launch(self.net, trip, a, dst, src, PING_PACKET, False, "icmp",
                           icmp_type, False, learned, log)
            ipt = a.iptables
            itf = a.interfaces[res.dev]
            keep = (first is not None and not ipt.chains["OUTPUT"]
                    and ipt.policies["OUTPUT"] == "ACCEPT" and itf.qdisc is None)
            self.sends[key] = (first, trip.last, trip.src) if keep else False
            return first
        if done is False:
            return launch(self.net, trip, a, dst, src, PING_PACKET, False, "icmp",
                          icmp_type, False, learned, log)
        first, trip.last, trip.src = done
        if log is not None:
            log.append((a.name, res.dev))
        return first

    def keys_of(self, name: str, dev: str) -> int:
        """The mask of the keys a resolution on ``name``'s ``dev`` reads."""
        sk = (name, dev)
        d = self.segsets.get(sk)
        if d is None:
            d = self.segsets[sk] = key_mask(self.seg.get(sk, ()))
        return d

    def is_plain(self, node: Node) -> bool:
        """:func:`plain`, kept per node for this network version."""
        p = self.plain.get(node)
        if p is None:
            p = self.plain[node] = plain(node)
        return p

    def _travel(self, trip: Trip, first: tuple, dst: int, icmp_type: str, log) -> int:
        """:func:`~netarena_gym.routing.grader.carry` from the first arrival ``first``:
        jumps along chains of plain nodes, hop by hop through the others. Returns the
        mask of the keys the jumped resolutions read."""
        net = self.net
        node, in_if, src, size = first
        reads = 0
        while True:
            kind, at, at_if, last, fwd, read = self.chain(node, in_if, dst)
            if kind == LOOP or fwd >= trip.ttl:  # a loop, or the TTL may run out: hop by hop
                carry(net, trip, node, in_if, dst, src, size, "icmp", icmp_type, False,
                      _no_source, log)
                return reads
            reads |= read
            if kind == DROP:
                return reads
            trip.ttl -= fwd
            delay = trip.delay_ms
            if delay == 0.0:  # the same sums, made once
                delay = _ARRIVALS[fwd + (kind == DELIVER)]
            else:
                for _ in range(fwd + (kind == DELIVER)):  # one HOP_MS per arrival, as carry adds
                    delay += HOP_MS
            trip.delay_ms = delay
            if last is not None:
                trip.last = last
            if kind == DELIVER:
                trip.ok, trip.node = True, at
                trip.last += (at_if,)
                return reads
            nxt = carry(net, trip, at, at_if, dst, src, size, "icmp", icmp_type, False,
                        _no_source, log, self.is_plain)
            if nxt is None:
                return reads
            node, in_if, size = nxt

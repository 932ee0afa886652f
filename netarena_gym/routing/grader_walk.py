"""The probe matrix's packet walk: the decisions of :func:`netarena_gym.routing.grader.walk`
with ``detail=False`` (no reporter, no recorded hops), memoised per node.

A probe asks only whether an echo and its reply get through, so a walk here keeps the
outcome, the node that took the packet, the source address, the delay, the loss and the
last hop (whose ARP request taught the receiver its sender: the reply goes back through
that entry, :func:`learned_entry`). What a node does with a packet (deliver, drop, forward
out of a device toward an address, through which netem qdisc, fragmenting an echo reply
to the egress MTU) depends on its own configuration only, so each node's decisions are
kept in :meth:`~netarena_gym.routing.state.Node.memo` (emptied when the node changes). On
a node that is :meth:`~netarena_gym.routing.state.Node.source_blind` a decision is kept
without the source address, so every source toward a destination shares it.

Neighbour resolutions (:meth:`~netarena_gym.routing.state.Network.neighbor`) read the whole
segment (which of several owners of an address answers, whether a link is up), so they
are not memoised per node: a walk calls it exactly as ``walk`` does (the ARP log of
:mod:`netarena_gym.routing.neigh` sees the same calls) and notes each call in ``log``: the
dependencies :class:`~netarena_gym.routing.matrix_cache.PairStore` records. Delay and loss
are summed in the same order as ``walk``, so results are bit-identical.

Within one state of the whole network (no node changed, no ARP being logged) what happens
to a packet after it arrives on a node's interface is fixed by the destination, its size
and kind, and the source address (not even that when every node from there on is source
blind). :class:`Suffixes` keeps those path suffixes, so walks toward one destination from
many sources join the first walk that went there: the rest of the path is replayed (its
delay and loss terms in order, its neighbour resolutions noted in ``log``) without being
walked. A suffix is only reused where the remaining TTL outlasts it.
"""
from __future__ import annotations

from netarena_gym.routing.commands.iptables import verdict
from netarena_gym.routing.state import Network, Node

__all__ = ["PING_PACKET", "MAX_TTL", "HOP_MS", "BASE_MS", "Suffixes", "chain_verdict",
           "learned_entry", "probe_walk", "sending_source"]

PING_PACKET = 84  # IP bytes of a default ping: 56 data + 8 ICMP + 20 IP
MAX_TTL = 64
HOP_MS = 0.02
BASE_MS = 0.04

# hop decisions: (_FAIL,) | (_LOCAL,) | (_FWD, dev, next hop address, netem qdisc or None,
# the packet's size after the hop)
_FAIL, _LOCAL, _FWD = 0, 1, 2
_FAILED = (_FAIL,)
_DELIVERED = (_LOCAL,)
_BLIND = 0  # memo key of Node.source_blind()


def chain_verdict(node: Node, chain: str, src: int, dst: int, proto: str, in_if, out_if,
                  icmp_type: str | None) -> tuple[str, str | None]:
    """``iptables`` verdict of ``chain`` on ``node`` (an empty ACCEPT chain: no walk)."""
    ipt = node.iptables
    if not ipt.chains[chain] and ipt.policies[chain] == "ACCEPT":
        return "ACCEPT", None
    return verdict(ipt, chain, src, dst, proto, in_if, out_if, icmp_type)


def sending_source(node: Node, res, dst: int) -> int | None:
    """The source address of a packet ``node`` sends to ``dst`` along the unicast lookup
    ``res``: the route's preferred source, else ``inet_select_addr`` toward the next hop."""
    if res.route is not None and res.route.src is not None:
        return res.route.src
    return node.select_source(res.dev, res.gateway if res.gateway is not None else dst)


def learned_entry(last: tuple | None, responder: Node) -> tuple | None:
    """What ``responder`` learnt from the ARP request of the last hop ``last`` =
    ``(sender, device, address resolved, interface it arrived on)`` of a packet delivered
    to it (``neigh_event_ns``): ``(interface, sender's address, (sender, device))``, or None
    when no ARP request was sent or a permanent entry is not overridden."""
    if last is None or len(last) < 4:
        return None
    sender, dev, nh, in_if = last
    if sender.interfaces[dev].noarp or (dev, nh) in sender.static_neigh:
        return None  # no ARP request was sent
    sip = sender.select_source(dev, nh)
    if sip is None or (in_if, sip) in responder.static_neigh:
        return None  # ARP does not override a permanent entry
    return in_if, sip, (sender, dev)


def _netem(node: Node, dev: str):
    q = node.interfaces[dev].qdisc
    return q if q is not None and q.kind == "netem" else None


def _first_hop(node: Node, dst: int, src: int | None, icmp_type: str) -> tuple:
    """The sender's part of a walk: ``(decision, source address)``."""
    res = node.lookup(dst, src or 0, "lo")
    if res.kind == "local":
        s = src if src is not None else dst
        if (chain_verdict(node, "OUTPUT", s, dst, "icmp", None, "lo", icmp_type)[0] != "ACCEPT"
                or chain_verdict(node, "INPUT", s, dst, "icmp", "lo", None, icmp_type)[0] != "ACCEPT"):
            return _FAILED, s
        return _DELIVERED, s
    if res.kind != "unicast":
        return _FAILED, None
    dev, gw = res.dev, res.gateway
    if src is None:
        src = sending_source(node, res, dst)
        if src is None:
            return _FAILED, None
    # an OUTPUT drop or reject: no packet leaves (ping sees loss or an error; no probe passes)
    if chain_verdict(node, "OUTPUT", src, dst, "icmp", None, dev, icmp_type)[0] != "ACCEPT":
        return _FAILED, src
    size = min(PING_PACKET, node.interfaces[dev].mtu)  # fragmented locally
    return (_FWD, dev, gw if gw is not None else dst, _netem(node, dev), size), src


def _transit_hop(node: Node, in_if: str, src: int, dst: int, size: int, icmp_type: str) -> tuple:
    """A receiving node's part of a walk, before the TTL check."""
    if size > node.interfaces[in_if].mtu:  # veth drops frames above the receiver's MTU
        return _FAILED
    res = node.lookup(dst, src, in_if)
    if res.kind == "local":
        if chain_verdict(node, "INPUT", src, dst, "icmp", in_if, None, icmp_type)[0] != "ACCEPT":
            return _FAILED
        if icmp_type == "echo-request" and node.sysctl.get("net.ipv4.icmp_echo_ignore_all") == "1":
            return _FAILED
        return _DELIVERED
    if not node.forwards_on(in_if) or res.kind != "unicast":
        return _FAILED
    dev, gw = res.dev, res.gateway
    if chain_verdict(node, "FORWARD", src, dst, "icmp", in_if, dev, icmp_type)[0] != "ACCEPT":
        return _FAILED
    # past the TTL check (the walker's): a frame too big for the egress fails the same way,
    # except an echo reply, which the kernel sends without DF: fragmented here
    mtu = node.interfaces[dev].mtu
    if size > mtu:
        if icmp_type != "echo-reply":
            return _FAILED
        size = mtu
    return (_FWD, dev, gw if gw is not None else dst, _netem(node, dev), size)


class Suffixes:
    """Path suffixes of probe walks in one state of a network (see the module doc).
    :meth:`for_state` empties it when the network changed."""

    __slots__ = ("net", "version", "paths")

    def __init__(self, net: Network):
        self.net = net
        self.version = -1
        self.paths: dict[tuple, tuple] = {}

    def for_state(self) -> "dict[tuple, tuple] | None":
        """The suffixes valid now; None while ARP resolutions are being logged (every
        resolution must then really happen)."""
        net = self.net
        if net.arp_log is not None:
            return None
        if self.version != net.version:
            self.paths = {}
            self.version = net.version
        return self.paths


def _replay(incs, start: int, delay: float, loss: float) -> tuple[float, float]:
    """Add a path's delay and loss terms from ``start`` on, in order: None is a hop,
    anything else a netem qdisc at an egress."""
    for q in incs[start:] if start else incs:
        if q is None:
            delay += HOP_MS
        else:
            delay += q.delay_ms
            loss = 1.0 - (1.0 - loss) * (1.0 - q.loss_pct / 100.0) * (1.0 - q.corrupt_pct / 100.0)
    return delay, loss


def _keep(paths: dict, visits: list, incs: list, logs: list, ok: bool, end: Node,
          done: tuple | None, ttl: int, blind: bool, at_last: bool = False) -> None:
    """Keep the suffix from every visited hop of a walk that ended (not by TTL): ``ok``
    at ``end``, ``done`` its last hop with the receiving interface when delivered, ``ttl``
    left at the end, ``blind``: the part after the visits is source blind. ``at_last``:
    delivered at the last visit itself, whose entry then holds no last hop (a walk joining
    there brings its own)."""
    rec = (ok, end, incs, logs)
    last_visit = len(visits) - 1
    for k in range(last_visit, -1, -1):
        key, k_blind, i_inc, i_log, k_ttl = visits[k]
        blind = blind and k_blind
        entry = (rec, i_inc, i_log, k_ttl - ttl,
                 None if at_last and k == last_visit else done)
        paths[key[:2] + key[3:] if blind else key] = entry


def probe_walk(net: Network, origin: Node, dst: int, src: int | None, icmp_type: str,
               log: list | None = None, learned: tuple | None = None,
               paths: dict | None = None):
    """``(ok, node, src, delay_ms, loss, last)`` of ``walk(net, origin, dst, src,
    icmp_type=icmp_type, detail=False, learned=learned)``: ``node`` took the packet when
    ``ok``; ``last`` is the walk's last hop, with the receiving interface when delivered
    (see :func:`learned_entry`). ``log`` (when given) gets ``(node name, interface)`` of
    every neighbour resolution, in order. ``paths``: :meth:`Suffixes.for_state`, to reuse
    and keep path suffixes."""
    memo = origin.memo()
    key = (dst, src, icmp_type)
    first = memo.get(key)
    if first is None:
        first = memo[key] = _first_hop(origin, dst, src, icmp_type)
    d, src = first
    kind = d[0]
    if kind != _FWD:
        return kind == _LOCAL, origin, src, 0.0, 0.0, None
    delay = loss = 0.0
    _, dev, nh, q, size = d
    if q is not None:
        delay += q.delay_ms
        loss = 1.0 - (1.0 - loss) * (1.0 - q.loss_pct / 100.0) * (1.0 - q.corrupt_pct / 100.0)
    if log is not None:
        log.append((origin.name, dev))
    hop = net.neighbor(origin, dev, nh)
    if learned is not None and learned[0] == dev and learned[1] == nh:
        hop = learned[2]
    if paths is None:
        return _walk_on(net, origin, hop, dev, nh, src, dst, size, icmp_type, delay, loss, log)
    return _walk_kept(net, origin, hop, dev, nh, src, dst, size, icmp_type, delay, loss, log,
                      paths)


def _walk_on(net: Network, node: Node, hop, dev: str, nh: int, src: int, dst: int, size: int,
             icmp_type: str, delay: float, loss: float, log: list | None):
    """The rest of :func:`probe_walk` from the first hop's resolution ``hop``."""
    neighbor = net.neighbor
    ttl = MAX_TTL
    while hop is not None:
        last = (node, dev, nh)
        node, in_if = hop
        delay += HOP_MS
        memo = node.memo()
        blind = memo.get(_BLIND)
        if blind is None:
            blind = memo[_BLIND] = node.source_blind()
        key = (in_if, None if blind else src, dst, size, icmp_type)
        d = memo.get(key)
        if d is None:
            d = memo[key] = _transit_hop(node, in_if, src, dst, size, icmp_type)
        kind = d[0]
        if kind != _FWD:
            if kind == _LOCAL:
                return True, node, src, delay, loss, last + (in_if,)
            return False, node, src, delay, loss, last
        ttl -= 1
        if ttl <= 0:
            return False, node, src, delay, loss, last
        _, dev, nh, q, size = d
        if q is not None:
            delay += q.delay_ms
            loss = 1.0 - (1.0 - loss) * (1.0 - q.loss_pct / 100.0) * (1.0 - q.corrupt_pct / 100.0)
        if log is not None:
            log.append((node.name, dev))
        hop = neighbor(node, dev, nh)
    return False, node, src, delay, loss, None


def _walk_kept(net: Network, node: Node, hop, dev: str, nh: int, src: int, dst: int,
               size: int, icmp_type: str, delay: float, loss: float, log: list | None,
               paths: dict):
    """:func:`_walk_on`, joining a kept suffix where one starts, and keeping this walk's
    (``last`` is only given when ``ok``)."""
    neighbor = net.neighbor
    incs: list = []  # delay and loss terms from the first arrival on (see _replay)
    logs: list = []  # neighbour resolutions from the first arrival on
    visits: list = []  # (suffix key, blind, len(incs), len(logs), ttl) per arrival
    ttl = MAX_TTL
    while hop is not None:
        last = (node, dev, nh)
        node, in_if = hop
        key = (node, in_if, src, dst, size, icmp_type)
        hit = paths.get((node, in_if, dst, size, icmp_type))
        hit_blind = hit is not None
        if hit is None:
            hit = paths.get(key)
        if hit is not None and hit[3] < ttl:  # the TTL outlasts the suffix
            rec, i_inc, i_log, used, done = hit
            ok, end, r_incs, r_logs = rec
            delay, loss = _replay(r_incs, i_inc, delay, loss)
            r_logs = r_logs[i_log:] if i_log else r_logs
            if log is not None:
                log.extend(r_logs)
            if not ok:
                done = None
            elif done is None:  # delivered on arrival: the last hop is this walk's own
                done = last + (in_if,)
            if visits:
                _keep(paths, visits, incs + r_incs[i_inc:], logs + r_logs, ok, end, done,
                      ttl - used, hit_blind)
            return ok, end, src, delay, loss, done
        delay += HOP_MS
        memo = node.memo()
        blind = memo.get(_BLIND)
        if blind is None:
            blind = memo[_BLIND] = node.source_blind()
        visits.append((key, blind, len(incs), len(logs), ttl))
        incs.append(None)
        mkey = (in_if, None if blind else src, dst, size, icmp_type)
        d = memo.get(mkey)
        if d is None:
            d = memo[mkey] = _transit_hop(node, in_if, src, dst, size, icmp_type)
        kind = d[0]
        if kind != _FWD:
            if kind == _LOCAL:
                done = last + (in_if,)
                _keep(paths, visits, incs, logs, True, node, done, ttl, True, True)
                return True, node, src, delay, loss, done
            _keep(paths, visits, incs, logs, False, node, None, ttl, True)
            return False, node, src, delay, loss, None
        ttl -= 1
        if ttl <= 0:  # not kept: a TTL failure depends on the TTL the walk came with
            return False, node, src, delay, loss, None
        _, dev, nh, q, size = d
        if q is not None:
            delay += q.delay_ms
            loss = 1.0 - (1.0 - loss) * (1.0 - q.loss_pct / 100.0) * (1.0 - q.corrupt_pct / 100.0)
            incs.append(q)
        if log is not None:
            log.append((node.name, dev))
        logs.append((node.name, dev))
        hop = neighbor(node, dev, nh)
    _keep(paths, visits, incs, logs, False, node, None, ttl, True)
    return False, node, src, delay, loss, None

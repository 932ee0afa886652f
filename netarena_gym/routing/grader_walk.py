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
"""
from __future__ import annotations

from netarena_gym.routing.commands.iptables import verdict
from netarena_gym.routing.state import Network, Node

__all__ = ["PING_PACKET", "MAX_TTL", "HOP_MS", "BASE_MS", "chain_verdict", "learned_entry",
           "probe_walk", "sending_source"]

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


def probe_walk(net: Network, origin: Node, dst: int, src: int | None, icmp_type: str,
               log: list | None = None, learned: tuple | None = None):
    """``(ok, node, src, delay_ms, loss, last)`` of ``walk(net, origin, dst, src,
    icmp_type=icmp_type, detail=False, learned=learned)``: ``node`` took the packet when
    ``ok``; ``last`` is the walk's last hop, with the receiving interface when delivered
    (see :func:`learned_entry`). ``log`` (when given) gets ``(node name, interface)`` of
    every neighbour resolution, in order."""
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
    neighbor = net.neighbor
    if log is not None:
        log.append((origin.name, dev))
    hop = neighbor(origin, dev, nh)
    if learned is not None and learned[0] == dev and learned[1] == nh:
        hop = learned[2]
    node = origin
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

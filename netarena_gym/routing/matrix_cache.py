"""Incremental pieces of the probe matrix: per-pair results with what each one read,
and the host equivalence classes, both kept across steps.

A probe ``pair_ok(i -> j)`` is a pure function of the configuration of the nodes its two
walks touch: the sender, and for every neighbour resolution every node on that segment
(who answers depends on all of them). :class:`~netarena_gym.routing.pair_store.PairStore`
records per pair the keys it read: those nodes, and the segments it resolved on (from the
resolutions the walks note, ``walk(log=)``). When nodes change, :func:`node_change`
tells from a node's old and new fingerprints what the change can reach, and only those
pairs are probed again; the others keep their result:

* routes, and policy or filter rules that select by an address prefix: every lookup and
  filter decision of an echo exchange is about its destination or its source address,
  so only pairs reading the node with one of them in a changed prefix (the node's
  gained or lost addresses count as /32s: delivery there may differ);
* a link's state, MTU, ARP, qdisc or addresses: pairs that resolved on its segment (who
  answers there, and the source the node sends with there, may differ), with every
  address-less interface of the node on any interface change;
* any interface change: the node's own probes (their source address);
* a gained or lost address: pairs a neighbour on one of the node's segments routes
  through it as a gateway (that ARP request may now find someone, or no one);
* a gained or lost address: pairs that resolved on a segment the node shares with a
  neighbour owning that address too (the node answers no ARP request sent from an
  address it owns itself: a martian source; a loopback change reaches every pair);
* anything else (sysctls, permanent neighbours, loopback, rules selecting no prefix,
  an MTU raised from below the probe's size): every pair reading the node.

So a flushed transit interface walks again the pairs crossing it, not every pair through
its router. A store can sit on a read-only *base* (the pairs of a pristine network, see
:mod:`netarena_gym.routing.pristine`): base pairs are forgotten by the same rules, so a
reset walks only the probes its faults reach. ``tests/routing/test_matrix_cache.py``
checks every kept probe (result, source address, keys read) against a walk from scratch
through random breaks and repairs on transit routers, and one sequence per rule.

Probes on networks of :data:`MEMO_ROUTERS` routers or more go through
:class:`~netarena_gym.routing.forward_memo.ForwardingMemo` (same results and
dependencies as the walk; :data:`FAST_PROBES` off walks every probe hop by hop).

:func:`host_classes` is the class split of :class:`~netarena_gym.routing.grader.ReachabilityOracle`
(same classes, same order), with the long prefixes of each node memoised by its content.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from netarena_gym.core.ipv4 import mask_of
from netarena_gym.routing.state import Network, Node

__all__ = ["NodeChange", "AddressTest", "node_change", "gateway_test",
           "host_classes", "long_prefixes", "segment_deps", "key_mask", "route_changes",
           "FAST_PROBES", "MEMO_ROUTERS"]

# probes go through :class:`~netarena_gym.routing.forward_memo.ForwardingMemo` (False:
# every probe is walked hop by hop, as the differential tests compare)
FAST_PROBES = True
MEMO_ROUTERS = 5  # the fewest routers for which probes go through the memo


def route_changes(old: tuple, new: tuple) -> list[tuple[int, int]]:
    """Prefixes ``(net, plen)`` whose routes (in any table, in order) differ between two
    ``tables`` parts of :meth:`~netarena_gym.routing.state.Node.fingerprint`. A longest
    prefix match for an address outside all of them finds the same route."""
    def groups(tables):
        out: dict[tuple, list] = {}
        for tid, sigs in tables:
            for sig in sigs:
                out.setdefault((tid, sig[0], sig[1]), []).append(sig)
        return out
    a, b = groups(old), groups(new)
    return sorted({(k[1], k[2]) for k in a.keys() | b.keys() if a.get(k) != b.get(k)})


class NodeChange(NamedTuple):
    """What changed at one node, as far as the probes that read it can tell
    (:func:`node_change`)."""
    prefixes: frozenset  # (net, plen): decisions about addresses inside may differ
    addrs: frozenset  # addresses the node gained or lost
    links: tuple  # interfaces whose link, addresses or choice of source address may differ
    own: bool  # the node's own probes (it picks their source address) may differ


def _middle(a: tuple, b: tuple) -> tuple:
    """The entries of two sequences outside their longest common head and tail."""
    n, h = min(len(a), len(b)), 0
    while h < n and a[h] == b[h]:
        h += 1
    t = 0
    while t < n - h and a[-1 - t] == b[-1 - t]:
        t += 1
    return a[h:len(a) - t] + b[h:len(b) - t]


def _masked(p: tuple[int, int]) -> tuple[int, int]:
    return p[0] & mask_of(p[1]), p[1]


def _rule_prefixes(old: tuple, new: tuple) -> set | None:
    """Policy rules (signatures) that differ: a lookup matching none of them meets the
    same rules in the same order. Each must select by destination, or by a source
    prefix without 0.0.0.0 (a sender's own lookup has no source yet), and not be
    inverted (its other selectors only narrow it); None otherwise."""
    out = set()
    for _pref, _act, _tab, src, dst, _iif, _oif, invert in _middle(old, new):
        if invert:
            return None
        if dst is not None:
            out.add(_masked(dst))
        elif src is not None and (src[0] & mask_of(src[1])) != 0:
            out.add(_masked(src))
        else:
            return None
    return out


def _filter_prefixes(old: tuple, new: tuple) -> set | None:
    """The same for the ``iptables`` signature: same policies and chains, and every rule
    that differs selects by a source or destination prefix (not negated)."""
    if old[0] != new[0] or [c for c, _ in old[1]] != [c for c, _ in new[1]]:
        return None
    out = set()
    for (_c, a), (_c2, b) in zip(old[1], new[1]):
        if a == b:
            continue
        for sig in _middle(a, b):
            if sig[3] is not None and not sig[4]:
                out.add(_masked(sig[3]))
            elif sig[1] is not None and not sig[2]:
                out.add(_masked(sig[1]))
            else:
                return None
    return out


def node_change(old: tuple, new: tuple, min_mtu: int) -> NodeChange | None:
    """How a node whose :meth:`~netarena_gym.routing.state.Node.fingerprint` went from
    ``old`` to ``new`` can change the probes that read it; None: in any way (sysctls or
    permanent neighbours changed, interfaces added or removed, the loopback changed, a
    policy or filter rule changed that no address prefix selects, an MTU changed that
    was under ``min_mtu``: a probe dropped for it never resolved on that link).

    Every route lookup and filter decision of an echo exchange is about its destination
    or its source address, so a probe that read the node is affected only if one of them
    is in ``prefixes`` (routes, rules and filter rules that differ, and each address of
    ``addrs``, the addresses the node gained or lost, as a /32: delivery here may
    differ), if it resolved a neighbour on the segment of an interface in ``links``
    (whose link, MTU, ARP, qdisc or addresses changed: who answers there, and the
    source address the node sends with there, may differ; and with any interface
    change, every interface without addresses: a source chosen for it is any of the
    node's addresses), if it is the node's own (``own``: the node picks its source
    address from its interfaces), or if a neighbour on one of the node's segments routes
    it via an address in ``addrs`` (whether anyone answers that ARP request may
    differ). :meth:`~netarena_gym.routing.pair_store.PairStore.invalidate` applies this;
    ``tests/routing/test_matrix_cache.py`` checks it against walks from scratch."""
    if old[3] != new[3] or old[5] != new[5]:
        return None
    prefixes = set(route_changes(old[1], new[1])) if old[1] != new[1] else set()
    for k, diff in ((2, _rule_prefixes), (4, _filter_prefixes)):
        if old[k] != new[k]:
            p = diff(old[k], new[k])
            if p is None:
                return None
            prefixes |= p
    addrs: set[int] = set()
    links = []
    if old[0] != new[0]:
        if [i[0] for i in old[0]] != [i[0] for i in new[0]]:
            return None
        for a, b in zip(old[0], new[0]):
            if a[0] == "lo":
                if a != b:
                    return None
                continue
            if a[1] != b[1] and a[1] < min_mtu:
                return None
            if a != b or not a[5] or not b[5]:
                links.append(a[0])
        addrs = ({ip for i in old[0] for ip, _ in i[5]} ^ {ip for i in new[0] for ip, _ in i[5]})
        prefixes.update((ip, 32) for ip in addrs)
    return NodeChange(frozenset(prefixes), frozenset(addrs), tuple(links), old[0] != new[0])


class AddressTest:
    """``test(ip)``: is ``ip`` in one of ``prefixes`` (or, given a ``node`` and ``via``,
    does ``node``'s route lookup send it to a gateway in ``via``)? Memoised per address;
    ``test(None)`` is False."""

    __slots__ = ("by_len", "node", "via", "seen")

    def __init__(self, prefixes=(), node: Node | None = None, via: frozenset = frozenset()):
        by_len: dict[int, set[int]] = {}
        for net_, pl in prefixes:
            by_len.setdefault(pl, set()).add(net_ & mask_of(pl))
        self.by_len = [(mask_of(pl), nets) for pl, nets in by_len.items()]
        self.node, self.via = node, via
        self.seen: dict[int | None, bool] = {None: False}

    def __call__(self, ip: int | None) -> bool:
        hit = self.seen.get(ip)
        if hit is None:
            hit = False
            for m, nets in self.by_len:
                if (ip & m) in nets:
                    hit = True
                    break
            if not hit and self.node is not None:
                res = self.node.lookup(ip)
                hit = res.kind == "unicast" and res.gateway in self.via
            self.seen[ip] = hit
        return hit

    def hits(self, ips: np.ndarray) -> np.ndarray:
        """``test`` of each address of an int64 array (-1: None) at once."""
        if self.node is not None:
            return np.fromiter((self(None if ip < 0 else ip) for ip in ips.tolist()),
                               dtype=bool, count=len(ips))
        out = np.zeros(len(ips), dtype=bool)
        for m, nets in self.by_len:
            out |= np.isin(ips & m, np.fromiter(nets, dtype=np.int64, count=len(nets)))
        return out & (ips >= 0)


def gateway_test(node: Node, via: frozenset) -> AddressTest | None:
    """The addresses ``node`` forwards to a gateway in ``via`` (None: none). Where its
    lookups depend on more than the destination: every prefix of a route via one."""
    routed = [(rt.dst, rt.plen) for routes in node.tables.values() for rt in routes
              if rt.next_hop is not None and rt.next_hop in via]
    if not routed:
        return None
    if node.dst_only():
        return AddressTest((), node, via)
    return AddressTest(routed)


def key_mask(keys) -> int:
    """The bit mask of dependency keys ``keys`` (bit ``k`` for key ``k``)."""
    m = 0
    for k in keys:
        m |= 1 << k
    return m


def segment_deps(net: Network, index: dict[str, int]) -> dict[tuple[str, str], tuple[int, ...]]:
    """For every attached (node, interface): the indices of every node on its segment,
    then the segment's own key (``len(index)`` plus the segment's rank by name)."""
    out = {}
    n = len(index)
    for k, name in enumerate(sorted(net.segments)):
        members = net.segments[name]
        idx = tuple(sorted({index[m] for m, _ in members})) + (n + k,)
        for m in members:
            out[m] = idx
    return out


def long_prefixes(node: Node) -> frozenset[tuple[int, int]]:
    """Prefixes longer than /24 that ``node``'s configuration names (routes, gateways,
    sources, rules, filters, its own addresses as /32)."""
    out: set[tuple[int, int]] = set()
    for routes in node.tables.values():
        for rt in routes:
            if rt.plen > 24:
                out.add((rt.dst, rt.plen))
            if rt.gateway is not None:
                out.add((rt.gateway, 32))
            if rt.src is not None:
                out.add((rt.src, 32))
    for rule in node.rules:
        for p in (rule.src, rule.dst):
            if p is not None and p[1] > 24:
                out.add(p)
    for chain in node.iptables.chains.values():
        for ir in chain:
            for p in (ir.src, ir.dst):
                if p is not None and p[1] > 24:
                    out.add(p)
    for itf in node.interfaces.values():
        for a in itf.addresses:
            out.add((a.ip, 32))
    for _dev, ip in getattr(node, "static_neigh", ()):  # a permanent entry names one host
        out.add((ip, 32))
    return frozenset(out)


def host_classes(nodes: list[Node], dsts: list[int], seg_of: dict, prefixes_of
                 ) -> tuple[list[list[int]], np.ndarray]:
    """Classes of probe targets: hosts never reconfigured (``version == 0``) on the same
    segment and not told apart by any prefix longer than /24 named anywhere share a class;
    every other node is alone. ``prefixes_of(i)`` gives node ``i``'s :func:`long_prefixes`."""
    pristine = [i for i, n in enumerate(nodes) if n.kind == "host" and n.version == 0]
    named: set[tuple[int, int]] = set()
    is_pristine = set(pristine)
    for i in range(len(nodes)):
        if i not in is_pristine:
            named |= prefixes_of(i)
    by24: dict[int, list[int]] = {}
    for i in pristine:
        by24.setdefault(dsts[i] >> 8, []).append(i)
    sig: dict[int, list[int]] = {}
    q = 0
    for net_, pl in sorted(named):
        members = by24.get(net_ >> 8)
        if not members:
            continue
        m = mask_of(pl)
        net_ &= m
        inside = [i for i in members if (dsts[i] & m) == net_]
        if inside:
            for i in inside:
                sig.setdefault(i, []).append(q)
            q += 1
    groups: dict[tuple, list[int]] = {}
    order: list[tuple] = []
    for i, node in enumerate(nodes):
        if i in is_pristine:
            key = (seg_of.get((node.name, f"{node.name}-eth0")), tuple(sig.get(i, ())))
        else:
            key = ("node", i)
        g = groups.get(key)
        if g is None:
            g = groups[key] = []
            order.append(key)
        g.append(i)
    classes = [groups[k] for k in order]
    cls_of = np.empty(len(nodes), dtype=np.intp)
    for c, members in enumerate(classes):
        cls_of[members] = c
    return classes, cls_of

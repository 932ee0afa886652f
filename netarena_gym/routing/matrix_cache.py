"""Incremental pieces of the probe matrix: per-pair results with the nodes each one read,
and the host equivalence classes, both kept across steps.

A probe ``pair_ok(i -> j)`` is a pure function of the configuration of the nodes its two
walks touch: the sender, and for every neighbour resolution every node on that segment
(who answers depends on all of them). :class:`PairStore` records that set per pair (from
the neighbour resolutions the walks note, ``walk(log=)``) and keeps a reverse index, so that when a node's
configuration changes only the pairs that read it are probed again; the others keep their
result. A store can sit on a read-only *base* (the pairs of a pristine network, see
:mod:`netarena_gym.routing.pristine`): base pairs stay valid until a node they read changes.

Probes on networks of :data:`MEMO_ROUTERS` routers or more go through
:class:`~netarena_gym.routing.forward_memo.ForwardingMemo` (same results and
dependencies as the walk; :data:`FAST_PROBES` off walks every probe hop by hop).

:func:`host_classes` is the class split of :class:`~netarena_gym.routing.grader.ReachabilityOracle`
(same classes, same order), with the long prefixes of each node memoised by its content.
"""
from __future__ import annotations

import numpy as np

from netarena_gym.core.ipv4 import mask_of
from netarena_gym.routing.state import Network, Node

__all__ = ["PairStore", "host_classes", "long_prefixes", "segment_deps", "route_changes",
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


def _covered(ip: int | None, prefixes) -> bool:
    if ip is None:
        return False
    for net_, pl in prefixes:
        if (ip & mask_of(pl)) == net_:
            return True
    return False


def segment_deps(net: Network, index: dict[str, int]) -> dict[tuple[str, str], tuple[int, ...]]:
    """For every attached (node, interface): the indices of every node on its segment."""
    out = {}
    for members in net.segments.values():
        idx = tuple(sorted({index[n] for n, _ in members}))
        for m in members:
            out[m] = idx
    return out


class PairStore:
    """``pair_ok`` results by (source index, destination index) with their dependencies."""

    __slots__ = ("net", "nodes", "dsts", "timeout_s", "seg", "res", "rdeps", "base", "dead",
                 "track", "src", "log", "fps", "asm", "n", "memo", "fast")

    def __init__(self, net: Network, nodes: list[Node], dsts: list[int], timeout_s: float,
                 base: "PairStore | None" = None, track: bool = True):
        """``track=False``: no dependencies are recorded and any change forgets every
        probe (cheaper where every probe reads the same node, as with one router)."""
        self.net, self.nodes, self.dsts, self.timeout_s = net, nodes, dsts, timeout_s
        self.track = track
        self.log: list[tuple[str, str]] = []  # (node, interface) of each resolution
        self.fps: list | None = None  # routers' fingerprints, once frozen
        self.asm: tuple | None = None  # the assembled class matrix, once frozen
        self.n = len(nodes)
        self.seg = segment_deps(net, {n.name: i for i, n in enumerate(nodes)}) if track else {}
        self.res: dict[tuple[int, int], bool] = {}
        self.src: dict[tuple[int, int], int | None] = {}  # the request's source address
        self.rdeps: list[list[tuple[int, int]]] = [[] for _ in nodes]
        self.base = base
        self.dead: set[tuple[int, int]] = set()  # base pairs no longer valid here
        self.memo = None  # the ForwardingMemo probes go through (made on first use)
        # paths across one to four routers are too short for the memo to pay
        self.fast = FAST_PROBES and len(net.routers()) >= MEMO_ROUTERS

    def invalidate(self, changed) -> set[tuple[int, int]] | None:
        """Forget every pair that read a changed node; returns them (None: every pair).
        ``changed``: (node index, prefixes) pairs, ``prefixes`` listing the only routes
        that changed there (:func:`route_changes`) or None for any other change; then a
        pair is kept unless its destination or its source address is in one of them."""
        if not self.track:
            if changed:
                self.res.clear()
                return None
            return set()
        out: set[tuple[int, int]] = set()
        res, base, dsts = self.res, self.base, self.dsts
        for i, prefixes in changed:
            own = self.rdeps[i]
            if prefixes is None:
                for p in own:
                    if res.pop(p, None) is not None:
                        out.add(p)
                own.clear()
            else:
                keep = []
                for p in own:
                    if p not in res:
                        continue  # forgotten already (a stale entry)
                    if _covered(dsts[p[1]], prefixes) or _covered(self.src[p], prefixes):
                        del res[p]
                        out.add(p)
                    else:
                        keep.append(p)
                own[:] = keep
            if base is not None:
                n = base.n
                for q in base.rdeps[i]:
                    p = divmod(q, n)
                    if p not in self.dead and (
                            prefixes is None or _covered(dsts[p[1]], prefixes)
                            or _covered(base.src[q], prefixes)):
                        self.dead.add(p)
                        out.add(p)
        return out

    def get(self, i: int, j: int) -> bool:
        """The probe ``i -> j`` (computed, with the nodes it read, when not known)."""
        p = (i, j)
        r = self.res.get(p)
        if r is not None:
            return r
        base = self.base
        if base is not None and p not in self.dead:
            r = base.res.get(i * base.n + j)
            if r is not None:
                return r
        return self._probe(i, j)

    def _probe(self, i: int, j: int) -> bool:
        from netarena_gym.routing.grader import pair_ok, probe
        net = self.net
        memo = self.memo
        if self.fast and net.arp_log is None:
            if memo is None:
                from netarena_gym.routing.forward_memo import ForwardingMemo
                memo = self.memo = ForwardingMemo(net, self.seg)
        else:
            memo = None
        if not self.track:
            if memo is not None:
                ok = memo.probe(self.nodes[i], self.dsts[j], self.timeout_s, None, None)[0]
            else:
                ok = pair_ok(net, self.nodes[i], self.dsts[j], self.timeout_s)
            self.res[(i, j)] = ok
            return ok
        log = self.log
        log.clear()
        deps = {i}
        if memo is not None:
            ok, self.src[(i, j)] = memo.probe(self.nodes[i], self.dsts[j], self.timeout_s,
                                              log, deps)
        else:
            ok, self.src[(i, j)] = probe(net, self.nodes[i], self.dsts[j], self.timeout_s, log)
        seg = self.seg
        for key in log:
            d = seg.get(key)
            if d is not None:
                deps.update(d)
        p = (i, j)
        self.res[p] = ok
        rdeps = self.rdeps
        for d in deps:
            rdeps[d].append(p)
        return ok

    def release(self) -> None:
        """Drop the forwarding memo (it holds for one network version only): its many
        small records die young instead of aging through the cyclic collector."""
        self.memo = None

    def freeze(self, asm: tuple | None = None) -> "PairStore":
        """Become a read-only base: keep only what a base needs (results, dependencies,
        source addresses, the routers' fingerprints and ``asm``, the oracle's
        :attr:`~netarena_gym.routing.grader.ReachabilityOracle.assembly`), letting the
        network go. Pairs are kept as ints ``i * n + j`` in containers of ints, which the
        cyclic collector never scans."""
        self.asm = asm
        n = self.n
        self.res = {i * n + j: ok for (i, j), ok in self.res.items()}
        self.src = {i * n + j: s for (i, j), s in self.src.items()}
        self.rdeps = [tuple(i * n + j for i, j in ps) for ps in self.rdeps]
        self.fps = [n.fingerprint() if n.kind == "router" else None for n in self.nodes]
        self.net = self.nodes = self.memo = None
        self.seg, self.log = {}, []
        return self


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

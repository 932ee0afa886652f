"""The probes of pristine networks, kept per topology and shared by every episode on it.

Only networks of more than :data:`MIN_ROUTERS` routers are kept: in smaller ones the
faults and the agent's changes reach almost every probe, so a base would not pay for
itself. The first time a topology (spec, interface labels, probe timeout) is seen nothing
is kept, unless the caller knows it recurs (``recurring=True``: a fixed topology, such as
a named shape of fixed sizes); from the second time on (a recurring one: from the first),
the probe results of its healthy network, with the nodes each probe read, become the
read-only base of every new episode's
:class:`~netarena_gym.routing.pair_store.PairStore`. After the faults are injected only
the probes that read a faulted node are walked again. Networks drawn once (level 1's random
sizes) cost nothing extra; a fixed topology reuses its base on every reset from the first
(at 64 routers of 8 subnets of 4 hosts, 2,112 nodes, the healthy probes take seconds:
they are paid once, not twice).

At most :data:`MAX_TOPOLOGIES` topologies are remembered, and the kept bases together hold
at most :data:`MAX_BASE_WEIGHT` ints (:attr:`PairStore.weight`, a pair and its request's
source address per key it read; about 9 bytes each): a ring of 64 routers x 8 subnets x 4
hosts holds about 29 million (260 MB; building it peaks near 1.1 GB), one of 64 x 2 x 2
about 2.8 million. The least recently used go first; the one just made always stays.
"""
from __future__ import annotations

from collections import OrderedDict

from netarena_gym.routing.pair_store import PairStore
from netarena_gym.routing.topology import TopologySpec, build_network

__all__ = ["base_for", "clear", "weight"]

MAX_TOPOLOGIES = 16
MAX_BASE_WEIGHT = 40_000_000
MIN_ROUTERS = 4
_BASES: "OrderedDict[tuple, PairStore | None]" = OrderedDict()


def base_for(spec: TopologySpec, labels: bool, timeout_s: float,
             recurring: bool = False) -> PairStore | None:
    """The pristine probes of ``spec`` (None the first time it is seen unless
    ``recurring``, or when it has at most :data:`MIN_ROUTERS` routers)."""
    from netarena_gym.routing.grader import ReachabilityOracle
    if spec.n_routers <= MIN_ROUTERS:
        return None
    key = (spec, labels, timeout_s)
    if key not in _BASES and not recurring:
        _BASES[key] = None  # noted: the next sighting computes it
        if len(_BASES) > MAX_TOPOLOGIES:
            _BASES.popitem(last=False)
        return None
    base = _BASES.pop(key, None)
    _BASES[key] = base  # the most recently used go out last
    if len(_BASES) > MAX_TOPOLOGIES:
        _BASES.popitem(last=False)
    if base is None:
        net, _ = build_network(spec, labels=labels)
        oracle = ReachabilityOracle(net, timeout_s)
        oracle.matrix()
        base = _BASES[key] = oracle.pairs.freeze(oracle.assembly)
        _fit(key)
    return base


def _fit(keep: tuple) -> None:
    """Forget the least recently used bases until the kept ones weigh at most
    :data:`MAX_BASE_WEIGHT` (``keep``, just made, stays even alone above it)."""
    total = sum(b.weight for b in _BASES.values() if b is not None)
    for key in list(_BASES):
        if total <= MAX_BASE_WEIGHT:
            break
        base = _BASES[key]
        if key != keep and base is not None:
            total -= base.weight
            _BASES[key] = None  # still known to recur: the next sighting makes it again


def weight() -> int:
    """What the kept bases hold together (see :data:`MAX_BASE_WEIGHT`)."""
    return sum(b.weight for b in _BASES.values() if b is not None)


def clear() -> None:
    """Forget every kept topology."""
    _BASES.clear()

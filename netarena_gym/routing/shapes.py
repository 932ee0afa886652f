"""Large routing topologies of a named shape (the ``topology={"shape": ...}`` option).

* ``"tree"``: a binary tree, router ``ri`` (i >= 1) hangs off ``r{(i-1)//2}``;
* ``"ring"``: ``r0 - r1 - ... - r{n-1} - r0`` (from three routers on);
* ``"leaf-spine"``: ``max(2, n // 16)`` spine routers (``r0..``, no subnets) and leaves,
  each leaf linked to every spine (a spine has one transit interface per leaf).

Every router (every leaf) has its own subnets with their hosts; sizes are drawn per router
and per subnet from the given ranges, so fixed sizes give one fixed network per shape. The
addressing and the static routes follow :mod:`netarena_gym.routing.topology` (routes along
a breadth-first search: on a ring or a leaf-spine every router uses one shortest path per
destination, as an operator's static configuration would).
"""
from __future__ import annotations

import numpy as np

from netarena_gym.errors import InvalidConfig
from netarena_gym.routing.topology import MAX_ROUTERS, TopologySpec

SHAPES = ("tree", "ring", "leaf-spine")

__all__ = ["SHAPES", "spines", "shape_spec", "sample_shape", "max_links"]


def spines(n: int) -> int:
    """Spine count of an ``n``-router leaf-spine."""
    return max(2, n // 16)


def shape_spec(shape: str, hosts: list[tuple[int, ...]]) -> TopologySpec:
    """The spec of ``shape`` with ``len(hosts)`` routers; ``hosts[i]`` are router ``i``'s
    subnets (spines' entries are ignored: spines have none)."""
    n = len(hosts)
    if shape not in SHAPES:
        raise InvalidConfig(f"shape must be one of {SHAPES}, got {shape!r}")
    if not 1 <= n <= MAX_ROUTERS:
        raise InvalidConfig(f"1..{MAX_ROUTERS} routers expected, got {n}")
    if shape == "tree" or (shape == "ring" and n < 3):
        return TopologySpec(hosts=tuple(hosts), parents=tuple((i - 1) // 2 if shape == "tree"
                                                              else i - 1 for i in range(1, n)))
    if shape == "ring":
        links = tuple((i, i + 1) for i in range(n - 1)) + ((0, n - 1),)
        return TopologySpec(hosts=tuple(hosts), links=links)
    if n < 3:
        raise InvalidConfig("a leaf-spine needs at least 3 routers (2 spines, 1 leaf)")
    s = spines(n)
    links = tuple((sp, leaf) for leaf in range(s, n) for sp in range(s))
    return TopologySpec(hosts=tuple(() if i < s else tuple(h) for i, h in enumerate(hosts)),
                        links=links)


def max_links(shape: str | None, routers: int) -> int:
    """The most transit links a ``shape`` network of up to ``routers`` routers has (-1:
    a tree's, ``routers - 1``)."""
    if shape == "ring":
        return routers if routers >= 3 else routers - 1
    if shape == "leaf-spine":
        return max(spines(n) * (n - spines(n)) for n in range(1, routers + 1))
    return -1


def sample_shape(rng: np.random.Generator, shape: str, routers: tuple[int, int],
                 subnets: tuple[int, int], hosts: tuple[int, int]) -> TopologySpec:
    """Draw router count, subnets per router and hosts per subnet from the ranges."""
    n = int(rng.integers(routers[0], routers[1] + 1))
    per = []
    for _ in range(n):
        s = int(rng.integers(subnets[0], subnets[1] + 1))
        per.append(tuple(int(rng.integers(hosts[0], hosts[1] + 1)) for _ in range(s)))
    return shape_spec(shape, per)

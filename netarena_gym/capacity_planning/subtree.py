"""Subtree facts of a MALT graph node: its distinct descendants through RK_CONTAINS and
RK_CONTROLS and their total port capacity (:class:`Sub`), computed bottom-up
(:func:`compute_sub`) by :mod:`netarena_gym.capacity_planning.state` for its base graphs and
episode views."""
from __future__ import annotations

import math

from netarena_gym.capacity_planning.kinds import CAPACITY, CONTAINS, CONTROLS, PORT, kinds_of

TRAVERSED = (CONTAINS, CONTROLS)


class Sub:
    """What lies beneath a node: its distinct descendants and their total port capacity.
    ``parts`` (children's keys and their Subs) is kept when the children's subtrees are
    disjoint (``disjoint``), so that the counts add up from theirs instead of walking every
    descendant; the descendants of such a Sub are then made only when asked for."""
    __slots__ = ("_desc", "capacity", "_counts", "parts", "disjoint")

    def __init__(self, desc: frozenset | None, capacity: int, parts: tuple | None = None):
        self._desc = desc  # None: made from ``parts`` when asked for
        self.capacity = capacity
        self._counts: dict | None = None
        self.parts = parts
        self.disjoint = parts is not None

    @property
    def desc(self) -> frozenset:
        d = self._desc
        if d is None:
            kids, subs = self.parts
            d = self._desc = frozenset(kids).union(*[s.desc for s in subs])
        return d

    def counts(self, attrs_of) -> dict[str, int]:
        if self._counts is None:
            c: dict[str, int] = {}
            if self.parts is not None:
                kids, subs = self.parts
                for d in kids:
                    for k in ((d[0],) if type(d) is tuple else kinds_of(attrs_of(d))):
                        c[k] = c.get(k, 0) + 1
                for s in subs:
                    for k, n in s.counts(attrs_of).items():
                        c[k] = c.get(k, 0) + n
            else:
                for d in self.desc:
                    # a (kind, name) key carries its node's kind
                    for k in ((d[0],) if type(d) is tuple else kinds_of(attrs_of(d))):
                        c[k] = c.get(k, 0) + 1
            self._counts = c
            if self._desc is not None:
                self.parts = None  # the children's Subs are no longer needed
        return self._counts


def port_capacity(attrs: dict | None) -> int:
    if attrs is None:
        return 0
    t = attrs.get("type")
    if type(t) is list and len(t) == 1:  # the usual form, one kind: what kinds_of gives
        if t[0] != PORT:
            return 0
    elif PORT not in kinds_of(attrs):
        return 0
    v = attrs.get(CAPACITY)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return 0
    if isinstance(v, float) and not math.isfinite(v):
        return 0  # what no port can carry counts as none
    return int(v)


_NONE = frozenset()


def compute_sub(key, out_of, attrs_of, cached, store, disjoint=None) -> Sub:
    """Iterative post-order computation of ``Sub`` for ``key`` and any uncached descendant.
    ``cached(k)`` returns a Sub or None; cycles (only an agent can make them) are cut.
    ``disjoint(k)`` says that k's children's subtrees are known to be disjoint (and free of
    k): its capacity adds up from theirs without making its descendants."""
    compute_subs((key,), out_of, attrs_of, cached, store, disjoint)
    return cached(key)


def compute_subs(keys, out_of, attrs_of, cached, store, disjoint=None) -> None:
    """:func:`compute_sub` for every key of ``keys`` in one walk (a base graph's every
    node: one stack instead of one per node)."""
    # (node, None: to expand | (its children, their Subs, all cached when expanded))
    stack = [(k, None) for k in reversed(list(keys))]
    pop, push = stack.pop, stack.append
    visiting: set = set()
    while stack:
        k, todo = pop()
        if cached(k) is not None:
            continue
        if todo is None:
            kids = [c for c, t in out_of(k).items() if t in TRAVERSED and c != k]
            if not kids:  # a leaf (most nodes are ports): nothing beneath it
                store(k, Sub(_NONE, port_capacity(attrs_of(k)), ((), ())))
                continue
            subs = list(map(cached, kids))  # one look-up per child
            if None in subs:  # children to compute first: k comes back after them
                visiting.add(k)
                push((k, (kids, subs)))
                for c, s in zip(kids, subs):
                    if s is None and c not in visiting:
                        push((c, None))
                continue
        else:
            kids, subs = todo
            subs = [s if s is not None else cached(c) for c, s in zip(kids, subs)]
            if None in subs:  # a cycle cut: a child being computed further up
                subs = [s for s in subs if s is not None]
        if disjoint is not None and len(subs) == len(kids) and disjoint(k):
            store(k, Sub(None, sum(s.capacity for s in subs) + port_capacity(attrs_of(k)),
                         (kids, subs)))
            visiting.discard(k)
            continue
        descs = [s.desc if s._desc is None else s._desc for s in subs]
        desc = frozenset(kids).union(*descs)  # one pass, no set copy
        if k in desc:
            desc = desc - {k}
        parts = None
        if len(desc) == len(kids) + sum(map(len, descs)) and len(subs) == len(kids):
            # disjoint subtrees (the usual case): capacities and counts add up
            cap = sum(s.capacity for s in subs)
            parts = (kids, subs)
        else:
            cap = sum(port_capacity(attrs_of(d)) for d in desc)
        store(k, Sub(desc, cap + port_capacity(attrs_of(k)), parts))
        visiting.discard(k)

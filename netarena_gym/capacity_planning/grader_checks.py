"""Safety rules on a MALT graph, evaluated where a change can affect them.

Our rules (:func:`violations`) give one record per violation:

* ``bad_type``: a node without a known kind in its ``type`` (or without a ``name``);
* ``bad_edge_type``: an edge that is neither RK_CONTAINS nor RK_CONTROLS;
* ``hierarchy``: an RK_CONTAINS edge MALT's hierarchy does not allow, or an RK_CONTROLS
  edge that is not control point -> packet switch;
* ``isolated``: a node with no edge at all;
* ``switch_without_port``: a packet switch that contains no port;
* ``port_capacity``: a port whose ``physical_capacity_bps`` is missing, not a whole number,
  or outside 1 Mbps .. 1.6 Tbps;
* ``port_parents``: a port contained by more than one switch;
* ``dangling_edge`` and ``duplicate`` come from applying an agent's graph (an edge to a node
  that does not exist; two nodes with the same kind and name).

Safety is relative: a change is safe when it introduces no violation the graph did not
already have (:func:`new_violations`). Every rule is local (a node, its edges and its
neighbours' kinds), so checking the touched nodes and their neighbours is exact. A base
graph is checked once per process: :func:`base_clean` clears a well-formed clean base (every
generated one) in one walk over its nodes and edges; any other is evaluated rule by rule.

:func:`upstream_verdict` reproduces upstream NetArena's checker (its six checks in order,
first failure wins, substring tests on types; of capacities, only 0 and a missing
``physical_capacity_bps`` attribute are rejected: upstream reads the attribute, so a port
without one fails the check) for ``safe_compat``.
"""
from __future__ import annotations

from typing import Iterable

from netarena_gym.capacity_planning.kinds import (
    CAPACITY, CONTAINS, CONTROLS, KIND_SET, KINDS, PORT, SWITCH, kinds_of, may_contain,
    may_control, valid_capacity)
from netarena_gym.capacity_planning.state import Diff, Graph, describe


_ONE = {k: (k,) for k in KINDS}
_NO_EDGE = object()


class Scope:
    """Where a change can alter a rule's outcome: the nodes whose attributes changed, the
    nodes touching a changed edge, the edges to check, and the untouched neighbours whose
    structural rules depend on a touched node (a switch whose child, or a port whose parent,
    was touched). The same scope is evaluated before and after the change."""
    __slots__ = ("changed", "touched", "edges", "near")

    def __init__(self, base, after, diff: Diff):
        self.changed = set(diff.nodes)
        touched = self.touched = diff.touched()
        edges = set(diff.edges)
        # a clean base is never evaluated, so only the edges that exist after matter
        changed = self.changed
        views = (after,) if not base_violations(base) and base_upstream_ok(base) else (base, after)
        for view in views:
            children, parents = view.children, view.parents
            for k in changed:
                edges.update([(k, z) for z in children(k)])
                edges.update([(p, k) for p in parents(k)])
        self.edges = edges
        # an untouched node keeps its edges; its structural rules can only change when the
        # kind of a neighbour changed: a switch above a changed node, a port below one
        kinds = _kinds_reader(base, changed)
        near = set()
        for k in changed:
            near.update([p for p in base.parents(k) if p not in touched and SWITCH in kinds(p)])
            near.update([c for c in base.children(k) if c not in touched and PORT in kinds(c)])
        self.near = near

    def kinds(self, view, k):
        """A node's kinds. An unchanged node keyed ``(kind, name)`` has exactly its key's
        kind (nodes are stored under the key their attributes imply)."""
        if type(k) is tuple and k not in self.changed:
            one = _ONE.get(k[0])
            if one is not None:
                return one
        return kinds_of(view.attrs(k))


def _kinds_reader(view, changed):
    """``Scope.kinds`` on ``view`` as a one-argument function (the checks' inner loops);
    the kinds of a node read from its attributes are read once."""
    attrs, one = view.attrs, _ONE.get
    read: dict = {}

    def kinds(k):
        if type(k) is tuple and k not in changed:
            ks = one(k[0])
            if ks is not None:
                return ks
        ks = read.get(k)
        if ks is None:
            ks = read[k] = kinds_of(attrs(k))
        return ks
    return kinds


def violations(view, scope: Scope) -> set[tuple]:
    """Rule violations of ``view`` within ``scope``."""
    out: set[tuple] = set()
    add = out.add
    attrs, children, parents = view.attrs, view.children, view.parents
    changed = scope.changed
    kinds = _kinds_reader(view, changed)
    for k in scope.touched:
        a = attrs(k)
        if a is None:
            continue
        ks = kinds(k)  # stored under the key its attributes imply when unchanged
        if k in changed:
            if not ks or any(x not in KIND_SET for x in ks) or not isinstance(a.get("name"), str):
                add(("bad_type", k))
            if PORT in ks and not valid_capacity(a.get(CAPACITY)):
                add(("port_capacity", k))
        kids = children(k)
        if not kids and not parents(k):
            add(("isolated", k))
        if SWITCH in ks and not any(t == CONTAINS and PORT in kinds(z) for z, t in kids.items()):
            add(("switch_without_port", k))
        if PORT in ks and _switch_parents(parents(k), kinds) > 1:
            add(("port_parents", k))
    for k in scope.near:  # untouched: kinds and edges as in the base
        if attrs(k) is not None:
            ks = kinds(k)
            if SWITCH in ks and not any(t == CONTAINS and PORT in kinds(z)
                                        for z, t in children(k).items()):
                add(("switch_without_port", k))
            if PORT in ks and _switch_parents(parents(k), kinds) > 1:
                add(("port_parents", k))
    for a, z in scope.edges:
        t = children(a).get(z)
        if t is None or attrs(a) is None:
            continue
        if t == CONTAINS:
            if not may_contain(kinds(a), kinds(z)):
                add(("hierarchy", a, z))
        elif t == CONTROLS:
            if not may_control(kinds(a), kinds(z)):
                add(("hierarchy", a, z))
        else:
            add(("bad_edge_type", a, z))
    return out


def _switch_parents(parents: dict, kinds) -> int:
    """How many packet switches contain a node (its parents' RK_CONTAINS edges)."""
    return sum(1 for p, t in parents.items() if t == CONTAINS and SWITCH in kinds(p))


class _Everything(Scope):
    """A scope covering a whole graph (to check a base once)."""

    def __init__(self, view):
        self.changed = self.touched = set(view.keys())
        self.edges = {(a, z) for a in self.touched for z in view.children(a)}
        self.near = ()


def all_violations(view) -> set[tuple]:
    """Every violation of a whole graph, rule by rule."""
    return violations(view, _Everything(view))


def upstream_all(view) -> tuple[bool, str]:
    """Upstream's verdict on a whole graph, check by check."""
    return _upstream(view, _Everything(view))


def base_violations(base) -> frozenset:
    """Every violation of a base graph (computed once per base; generated bases have none:
    :func:`base_clean` says so in one walk, and only a base it cannot clear is evaluated
    rule by rule)."""
    v = base.facts.get("violations")
    if v is None:
        v = base.facts["violations"] = (frozenset() if base_clean(base)
                                        else frozenset(all_violations(base)))
    return v


def base_upstream_ok(base) -> bool:
    """Whether a base graph passes upstream's checker (once per base, as
    :func:`base_violations`)."""
    v = base.facts.get("upstream_ok")
    if v is None:
        v = base.facts["upstream_ok"] = base_clean(base) or upstream_all(base)[0]
    return v


def base_clean(base) -> bool:
    """Whether a base graph (a :class:`~netarena_gym.capacity_planning.state.BaseGraph`)
    is free of every violation of ours and passes upstream's checker, in one walk over
    its nodes and one over its edges (once per base). Sound, not exact: it clears only
    well-formed graphs (every ``type`` a non-empty list of known kinds as plain strings,
    every edge type exactly RK_CONTAINS or RK_CONTROLS), on which our rules imply
    upstream's; False says the rules must be evaluated one by one."""
    v = base.facts.get("clean")
    if v is None:
        v = base.facts["clean"] = _clean(base.nodes, base.out, base.inn)
    return v


def _clean(nodes: dict, out: dict, inn: dict) -> bool:
    kinds: dict = {}  # node -> its ``type`` list (what kinds_of returns for it)
    for k, a in nodes.items():
        t = a.get("type")
        if type(t) is not list or not t or type(a.get("name")) is not str:
            return False  # bad_type, or a form left to the rule-by-rule walk
        for x in t:
            if type(x) is not str or x not in KIND_SET:
                return False
        if not out[k] and not inn[k]:
            return False  # isolated
        if PORT in t and not valid_capacity(a.get(CAPACITY)):
            return False  # port_capacity (implies upstream's missing or zero capacity)
        kinds[k] = t
    in_switch: set = set()  # nodes a packet switch contains
    for a, kids in out.items():
        if not kids:
            continue
        ka = kinds[a]
        switch = SWITCH in ka
        port = False  # whether switch ``a`` contains a port
        for z, t in kids.items():
            if type(t) is not str:
                return False
            kz = kinds[z]
            if t == CONTAINS:
                if not may_contain(ka, kz):
                    return False  # hierarchy
                if switch:
                    if PORT in kz:
                        port = True
                        if z in in_switch:
                            return False  # port_parents
                    in_switch.add(z)
            elif t != CONTROLS or not may_control(ka, kz):
                return False  # bad_edge_type, hierarchy
        if switch and not port:
            return False  # switch_without_port (implies upstream's)
    return True


def new_violations(graph: Graph, diff: Diff | None = None, extra: Iterable[tuple] = (),
                   scope: Scope | None = None) -> list[tuple]:
    """Violations of ``graph`` (a view over its base) that the base does not have."""
    diff = graph.net_diff() if diff is None else diff
    scope = scope or Scope(graph.base, graph, diff)
    after = violations(graph, scope)
    after.update(extra)
    if base_violations(graph.base):
        after -= violations(graph.base, scope)
    return sorted(after, key=repr)


def assess(graph: Graph, diff: Diff | None = None, extra: Iterable[tuple] = ()):
    """``(new violations, upstream verdict, upstream message)`` of a graph's change."""
    diff = graph.net_diff() if diff is None else diff
    scope = Scope(graph.base, graph, diff)
    new = new_violations(graph, diff, extra, scope)
    ok, msg = upstream_verdict(graph, diff, scope)
    return new, ok, msg


def describe_violation(v: tuple) -> str:
    rule = v[0]
    what = {"bad_type": "has no known kind/name", "isolated": "is isolated (no edges)",
            "switch_without_port": "is a packet switch without a port",
            "port_capacity": "has a missing or out-of-range physical_capacity_bps",
            "port_parents": "is contained by more than one switch",
            "duplicate": "appears twice (same kind and name)"}
    if rule in what:
        return f"{describe(v[1])} {what[rule]}"
    if rule == "hierarchy":
        return f"{describe(v[1])} -> {describe(v[2])} is not allowed by the MALT hierarchy"
    if rule == "bad_edge_type":
        return f"edge {describe(v[1])} -> {describe(v[2])} has an unknown type"
    if rule == "dangling_edge":
        return f"edge {describe(v[1])} -> {describe(v[2])} points to a missing node"
    return repr(v)


# ------------------------------------------------------------- upstream's checker
def _has(t, kind: str) -> bool:
    """Upstream's ``kind in node['type']``: list membership, or substring for a string."""
    if isinstance(t, (str, list, tuple)):
        return kind in t
    return False


def upstream_verdict(graph: Graph, diff: Diff | None = None,
                     scope: Scope | None = None) -> tuple[bool, str]:
    """Upstream's six checks, in upstream's order (the first failure wins), on the part of
    ``graph`` a change can affect. Exact when the base passes (every generated base does);
    otherwise the whole graph is checked."""
    if not base_upstream_ok(graph.base):
        return upstream_all(graph)
    diff = graph.net_diff() if diff is None else diff
    return _upstream(graph, scope or Scope(graph.base, graph, diff))


def _first(failing, message) -> tuple[bool, str]:
    """The failure of the node or edge whose ``repr`` sorts first (sets are unordered:
    this keeps the message independent of Python's string hashing, PYTHONHASHSEED); the
    message is made for that one only."""
    return False, message(min(failing, key=repr))


def _upstream(graph, scope) -> tuple[bool, str]:
    # each check collects the nodes or edges that fail it; the first check that fails
    # reports the failure of the smallest (upstream: first failure)
    attrs, children = graph.attrs, graph.children

    def bad_type(a) -> bool:
        t = a.get("type")
        items = [t] if isinstance(t, str) else t
        return not t or not isinstance(items, (list, tuple)) or any(x not in KINDS for x in items)
    changed = [(k, a) for k in scope.changed if (a := attrs(k)) is not None]
    bad = [k for k, a in changed if bad_type(a)]
    if bad:
        return _first(bad, lambda k: f"Node {describe(k)} has an invalid type {attrs(k).get('type')!r}")
    edges = []  # (a, z, type) of the edges in scope that exist
    for a, z in scope.edges:
        t = children(a).get(z, _NO_EDGE)
        if t is not _NO_EDGE and attrs(a) is not None:
            edges.append((a, z, t))
    bad = [(a, z) for a, z, t in edges
           if not isinstance(t, str) or not (CONTAINS in t or CONTROLS in t)]
    if bad:
        return _first(bad, lambda e: f"Edge {describe(e[0])} -> {describe(e[1])} has an invalid "
                                     f"type {children(e[0])[e[1]]!r}")
    types: dict = {}  # node -> its type as a list (upstream's view)

    def type_list(k) -> list:
        tl = types.get(k)
        if tl is None:
            t = attrs(k).get("type")
            tl = types[k] = [t] if isinstance(t, str) else list(t)
        return tl
    for a, z, t in edges:
        if CONTAINS in t and not may_contain(type_list(a), type_list(z)):
            bad.append((a, z))
    if bad:
        return _first(bad, lambda e: f"Invalid hierarchy: {describe(e[0])} cannot contain {describe(e[1])}")
    live = [(k, a) for k in scope.touched if (a := attrs(k)) is not None]
    parents = graph.parents
    bad = [k for k, _ in live if not children(k) and not parents(k)]
    if bad:
        return _first(bad, lambda k: f"Found isolated node {describe(k)}")
    for k, a in changed:  # upstream reads the attribute: a port without one fails too
        if _has(a.get("type"), PORT) and (CAPACITY not in a or a[CAPACITY] == 0):
            bad.append(k)
    if bad:
        return _first(bad, lambda k: f"Port {describe(k)} has no {CAPACITY} attribute"
                      if CAPACITY not in attrs(k) else f"Port {describe(k)} has zero capacity")
    near = [(k, a) for k in scope.near if (a := attrs(k)) is not None]
    for group in (live, near):  # the touched nodes first, then their neighbours
        for k, a in group:
            if _has(a.get("type"), SWITCH) and not any(
                    _has(attrs(z).get("type"), PORT) for z in children(k)):
                bad.append(k)
        if bad:
            return _first(bad, lambda k: f"Packet switch {describe(k)} has no port")
    return True, ""

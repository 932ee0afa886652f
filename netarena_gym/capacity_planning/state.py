"""The graph model: an immutable base graph shared by every episode, and a copy-on-write
:class:`Graph` view that records an episode's changes without ever copying the base.

Nodes are keyed by ``(kind, name)`` (our scheme) or by ``name`` (upstream's merged scheme);
each has an attribute dict (``name``, ``type`` and the kind's attributes). Edges are typed
and directed: ``out[a][z] = "RK_CONTAINS" | "RK_CONTROLS"``. ``Graph.reset()`` forgets the
episode's changes in O(changes); :meth:`Graph.net_diff` is the episode's net change, the
object the grader compares.

Subtree facts (descendants through RK_CONTAINS and RK_CONTROLS, total port capacity) are
memoised per node on the base and invalidated up the ancestor chain on every change; a
node whose children's subtrees stay disjoint (as in the base, under removals and edges to
new nodes) recomputes its capacity from its children's, its descendants only when asked.
``Graph.before_write`` lets a reader that put off reading (a tool's text) read just before
the graph changes.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from threading import Lock
from typing import Any, Hashable, Iterable, Iterator

from netarena_gym.capacity_planning.kinds import kinds_of, primary_kind
from netarena_gym.capacity_planning.subtree import TRAVERSED, Sub, compute_sub, compute_subs
from netarena_gym.capacity_planning.topology import Topology, TopologySpec, generate
from netarena_gym.core.collector import paused_gc

Key = Hashable
_MISS = object()
_EMPTY: dict = {}


class BaseGraph:
    """An immutable graph built from a topology; shared between envs and episodes."""

    def __init__(self, nodes: dict, edges: dict, scheme: str, spec: TopologySpec | None = None):
        self.scheme = scheme
        self.spec = spec
        self.nodes: dict = nodes
        self.out: dict = {k: {} for k in nodes}
        self.inn: dict = {k: {} for k in nodes}
        for (a, z), t in edges.items():
            self.out[a][z] = t
            self.inn[z][a] = t
        self.n_edges = len(edges)
        self.by_kind: dict[str, list] = {}
        self.by_name: dict[str, list] = {}
        for k, attrs in nodes.items():
            for kind in kinds_of(attrs):
                self.by_kind.setdefault(kind, []).append(k)
            self.by_name.setdefault(attrs.get("name"), []).append(k)
        self.facts: dict = {}  # per-base caches kept by other modules (e.g. base violations)
        self.memo: dict = {}
        compute_subs(nodes, self.out.__getitem__, nodes.get, self.memo.get, self.memo.__setitem__)

    @classmethod
    def from_topology(cls, topology: Topology, scheme: str = "kind_name",
                      spec: TopologySpec | None = None) -> "BaseGraph":
        nodes, edges = topology.graph_records(scheme)
        return cls(nodes, edges, scheme, spec)

    # the read interface shared with Graph (checks and tools use either)
    def attrs(self, k):
        return self.nodes.get(k)

    def has(self, k) -> bool:
        return k in self.nodes

    def children(self, k) -> dict:
        return self.out.get(k, _EMPTY)

    def parents(self, k) -> dict:
        return self.inn.get(k, _EMPTY)

    def keys(self) -> Iterable:
        return self.nodes.keys()

    def __len__(self) -> int:
        return len(self.nodes)


_CACHE: "OrderedDict[tuple, BaseGraph]" = OrderedDict()
_CACHE_LOCK = Lock()
CACHE_SIZE = 16


def base_graph(spec: TopologySpec, scheme: str = "kind_name") -> BaseGraph:
    """The base graph of a generated topology (built once per process, LRU-cached). The
    build makes tens of thousands of objects that all live on: it runs with the cyclic
    garbage collector paused (:func:`~netarena_gym.core.collector.paused_gc`), which would
    otherwise pass over them, and over the whole heap, many times."""
    key = (spec.key(), scheme)
    with _CACHE_LOCK:
        g = _CACHE.get(key)
        if g is not None:
            _CACHE.move_to_end(key)
            return g
    with paused_gc():
        g = BaseGraph.from_topology(generate(spec), scheme, spec)
    with _CACHE_LOCK:
        _CACHE[key] = g
        while len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)
    return g


@dataclass
class Diff:
    """A net change relative to a base graph: ``nodes[k]`` is the final attribute dict of
    a node that was added or changed, or None if it was removed; ``edges[(a, z)]`` is the
    final type of an edge that was added or retyped, or None if it was removed."""
    nodes: dict = field(default_factory=dict)
    edges: dict = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.nodes or self.edges)

    def touched(self) -> set:
        t = set(self.nodes)
        for a, z in self.edges:
            t.add(a)
            t.add(z)
        return t

    def to_json(self) -> dict:
        tup = tuple  # a (kind, name) key becomes a list
        return {"nodes": [[list(k) if type(k) is tup else k, v] for k, v in self.nodes.items()],
                "edges": [[list(a) if type(a) is tup else a, list(z) if type(z) is tup else z, t]
                          for (a, z), t in self.edges.items()]}

    @classmethod
    def from_json(cls, d: dict) -> "Diff":
        nodes = {_key(k): v for k, v in d.get("nodes", [])}
        edges = {(_key(a), _key(z)): t for a, z, t in d.get("edges", [])}
        return cls(nodes, edges)


def _key(k):
    return tuple(k) if isinstance(k, list) else k


class GraphError(ValueError):
    """A mutation that cannot be applied (missing node, existing node)."""


class Graph:
    """A copy-on-write view over a :class:`BaseGraph`."""

    __slots__ = ("base", "_nodes", "_out", "_inn", "_memo", "_edges", "_added_by_name", "watch",
                 "_grafted", "before_write")

    def __init__(self, base: BaseGraph):
        self.base = base
        self._nodes: dict = {}   # key -> attrs | None (removed)
        self._out: dict = {}     # key -> full adjacency (copied on first write)
        self._inn: dict = {}
        self._memo: dict = {}    # key -> Sub | None (dirty)
        self._edges: set = set()  # (a, z) pairs written
        self._added_by_name: dict = {}
        # a set a watcher installs to learn which nodes a write may have affected: their
        # existence or attributes, their edges (children, degree) or their subtree facts
        # (capacity); None when nobody watches. ``reset`` drops it (everything may change).
        self.watch: set | None = None
        # whether an edge was added to a node that already had edges (the tools and the
        # generator only ever add an edge to a new node, which keeps every subtree that was
        # disjoint in the base disjoint: see ``sub``)
        self._grafted = False
        # called (then dropped) before the next write or reset: a reader that put off
        # reading (a tool's text, see ``commands.tools``) reads now
        self.before_write = None

    def _will_write(self) -> None:
        hook, self.before_write = self.before_write, None
        hook()

    def reset(self) -> None:
        if self.before_write is not None:
            self._will_write()
        self._nodes.clear()
        self._out.clear()
        self._inn.clear()
        self._memo.clear()
        self._edges.clear()
        self._added_by_name.clear()
        self.watch = None
        self._grafted = False

    @property
    def changed(self) -> bool:
        return bool(self._nodes or self._edges)

    # ------------------------------------------------------------------ reads
    def attrs(self, k):
        v = self._nodes.get(k, _MISS)
        return self.base.nodes.get(k) if v is _MISS else v

    def has(self, k) -> bool:
        v = self._nodes.get(k, _MISS)
        return k in self.base.nodes if v is _MISS else v is not None

    def children(self, k) -> dict:
        v = self._out.get(k)
        return v if v is not None else self.base.out.get(k, _EMPTY)

    def parents(self, k) -> dict:
        v = self._inn.get(k)
        return v if v is not None else self.base.inn.get(k, _EMPTY)

    def kind(self, k) -> str | None:
        """The primary kind of an existing node (a ``(kind, name)`` key carries it: nodes
        are only ever stored under the key their attributes imply)."""
        if type(k) is tuple:
            return k[0]
        return primary_kind(self.attrs(k))

    def keys(self) -> Iterator:
        for k in self.base.nodes:
            if self._nodes.get(k, _MISS) is not None:
                yield k
        for k, v in self._nodes.items():
            if v is not None and k not in self.base.nodes:
                yield k

    def lookup(self, name: str) -> list:
        """Keys of the existing nodes called ``name``."""
        out = [k for k in self.base.by_name.get(name, ()) if self.has(k)]
        out.extend(k for k in self._added_by_name.get(name, ()) if self.has(k) and k not in out)
        return out

    def degree(self, k) -> int:
        return len(self.children(k)) + len(self.parents(k))

    @property
    def untouched(self) -> bool:
        """Whether every node is :meth:`pristine` (nothing written, no subtree recomputed)."""
        return not (self._nodes or self._out or self._inn or self._memo)

    def pristine(self, k) -> bool:
        """Whether everything the graph knows of ``k`` is still the base's: its attributes,
        its edges in both directions and its subtree facts (so a reading of ``k`` made on
        the base holds)."""
        return (k not in self._nodes and k not in self._out and k not in self._inn
                and k not in self._memo)

    # ------------------------------------------------------------ subtree facts
    def sub(self, k) -> Sub:
        s = self._memo.get(k, _MISS)
        if s is _MISS:
            s = self.base.memo.get(k)
        if s is not None:
            return s

        memo, base_memo = self._memo.get, self.base.memo.get

        def cached(x):
            m = memo(x, _MISS)
            return base_memo(x) if m is _MISS else m
        if not self.has(k):
            raise GraphError(f"no node {k!r}")
        return compute_sub(k, self.children, self.attrs, cached, self._memo.__setitem__,
                            None if self._grafted else self._disjoint)

    def _disjoint(self, k) -> bool:
        """Whether k's children's subtrees are disjoint: they were in the base (a node the
        episode added has only new nodes below it), and removals and edges to new nodes
        keep them so."""
        b = self.base.memo.get(k)
        return b.disjoint if b is not None else True

    def capacity(self, k) -> int:
        return self.sub(k).capacity

    def count(self, k, kind: str) -> int:
        return self.sub(k).counts(self.attrs).get(kind, 0)

    def _invalidate(self, k) -> None:
        # a node already dirty has dirty ancestors: nothing above it was recomputed since
        watch, memo, inn, base_inn = self.watch, self._memo, self._inn, self.base.inn
        stack = [k]
        pop, push = stack.pop, stack.append
        while stack:
            x = pop()
            if memo.get(x, _MISS) is None:
                continue
            memo[x] = None
            if watch is not None:
                watch.add(x)
            ps = inn.get(x)
            for p, t in (ps if ps is not None else base_inn.get(x, _EMPTY)).items():
                if t in TRAVERSED:
                    push(p)

    # ------------------------------------------------------------------ writes
    def _w_out(self, k) -> dict:
        v = self._out.get(k)
        if v is None:
            v = self._out[k] = dict(self.base.out.get(k, _EMPTY))
        return v

    def _w_inn(self, k) -> dict:
        v = self._inn.get(k)
        if v is None:
            v = self._inn[k] = dict(self.base.inn.get(k, _EMPTY))
        return v

    def add_node(self, k, attrs: dict) -> None:
        if self.before_write is not None:
            self._will_write()
        if self.has(k):
            raise GraphError(f"node {k!r} already exists")
        self._nodes[k] = attrs
        self._memo[k] = None
        if self.watch is not None:
            self.watch.add(k)
        if k not in self.base.nodes:
            self._added_by_name.setdefault(attrs.get("name"), []).append(k)

    def set_attrs(self, k, attrs: dict) -> None:
        if self.before_write is not None:
            self._will_write()
        if not self.has(k):
            raise GraphError(f"no node {k!r}")
        self._invalidate(k)
        self._nodes[k] = attrs
        if self.watch is not None:
            self.watch.add(k)

    def set_attr(self, k, name: str, value) -> None:
        a = self.attrs(k)
        if a is None:
            raise GraphError(f"no node {k!r}")
        a = dict(a)
        a[name] = value
        self.set_attrs(k, a)

    def add_edge(self, a, z, kind: str) -> None:
        if self.before_write is not None:
            self._will_write()
        if not self.has(a) or not self.has(z):
            raise GraphError(f"edge {a!r} -> {z!r}: both ends must exist")
        if a == z or self.children(z) or self.parents(z):
            self._grafted = True
        self._invalidate(a)
        self._w_out(a)[z] = kind
        self._w_inn(z)[a] = kind
        self._edges.add((a, z))
        if self.watch is not None:
            self.watch.update((a, z))

    def remove_edge(self, a, z) -> None:
        if self.before_write is not None:
            self._will_write()
        if z not in self.children(a):
            raise GraphError(f"no edge {a!r} -> {z!r}")
        self._invalidate(a)
        self._unlink(a, z)

    def _unlink(self, a, z) -> None:
        del self._w_out(a)[z]
        del self._w_inn(z)[a]
        self._edges.add((a, z))
        if self.watch is not None:
            self.watch.update((a, z))

    def remove_node(self, k) -> None:
        if self.before_write is not None:
            self._will_write()
        if not self.has(k):
            raise GraphError(f"no node {k!r}")
        self._invalidate(k)  # k and everything above it; nothing below k changes
        edges, watch = self._edges, self.watch
        w_out, w_inn = self._w_out, self._w_inn
        if self.children(k):  # _unlink(k, c) for each child, in one pass
            out = w_out(k)
            kids = [c for c in out if c != k]  # a self-loop goes with the parents below
            for c in kids:
                del out[c]
                del w_inn(c)[k]
                edges.add((k, c))
            if watch is not None and kids:
                watch.add(k)
                watch.update(kids)
        if self.parents(k):  # _unlink(p, k) for each parent
            inn = w_inn(k)
            ps = list(inn)
            for p in ps:
                del w_out(p)[k]
                edges.add((p, k))
            inn.clear()
            if watch is not None:
                watch.update(ps)
                watch.add(k)
        self._nodes[k] = None
        self._memo[k] = None
        if self.watch is not None:
            self.watch.add(k)

    # ------------------------------------------------------------------ diffs
    def net_diff(self) -> Diff:
        base_nodes, base_out = self.base.nodes, self.base.out
        written, out = self._nodes, self._out
        nodes: dict = {}
        for k, v in written.items():
            b = base_nodes.get(k)
            if v is None:
                if b is not None:
                    nodes[k] = None
            elif b is None or v != b:
                nodes[k] = v
        edges: dict = {}
        for a, z in self._edges:
            v = written.get(a, _MISS)
            if a in base_nodes if v is _MISS else v is not None:  # self.has(a)
                kids = out.get(a)
                cur = (kids if kids is not None else base_out.get(a, _EMPTY)).get(z)
            else:
                cur = None
            if cur != base_out.get(a, _EMPTY).get(z):
                edges[(a, z)] = cur
        return Diff(nodes, edges)

    def apply_diff(self, diff: Diff) -> list[tuple]:
        """Apply a net change; returns the edges that could not be applied because an end
        does not exist (``("dangling_edge", a, z)`` records)."""
        bad: list[tuple] = []
        for k, v in diff.nodes.items():
            if v is None:
                continue
            if self.has(k):
                self.set_attrs(k, v)
            else:
                self.add_node(k, v)
        for (a, z), t in diff.edges.items():
            if t is None:
                if self.has(a) and z in self.children(a):
                    self.remove_edge(a, z)
            elif self.has(a) and self.has(z):
                if self.children(a).get(z) != t:
                    if z in self.children(a):
                        self.remove_edge(a, z)
                    self.add_edge(a, z, t)
            else:
                bad.append(("dangling_edge", a, z))
        for k, v in diff.nodes.items():
            if v is None and self.has(k):
                self.remove_node(k)
        return bad


def describe(k: Any) -> str:
    """A node key as text: ``EK_PORT ju1.a1.m1.s2c1.p1`` or the bare name."""
    if isinstance(k, tuple) and len(k) == 2:
        return f"{k[0]} {k[1]}"
    return str(k)

"""Graphs in the code sandbox's worker: the cached base graphs, the tagged JSON encoding of
agent values, and the net diff of an updated graph against its base.

Part of the worker (loaded next to :mod:`sandbox_worker`, inside the sandbox too): standard
library and networkx only, nothing from netarena_gym.
"""
from __future__ import annotations

import copy
import json

# ------------------------------------------------------------ tagged values
def encode(v, depth: int = 0):
    """JSON-safe encoding that keeps tuples, sets, non-finite floats and big ints apart."""
    if depth > 40:
        return {"$repr": "<too deep>"}
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v if -(1 << 63) <= v < (1 << 63) else {"$int": str(v)}
    if isinstance(v, float):
        return v if v == v and v not in (float("inf"), float("-inf")) else {"$float": repr(v)}
    if isinstance(v, list):
        return [encode(x, depth + 1) for x in v]
    if isinstance(v, tuple):
        return {"$tuple": [encode(x, depth + 1) for x in v]}
    if isinstance(v, (set, frozenset)):
        return {"$set": [encode(x, depth + 1) for x in v]}
    if isinstance(v, dict):
        if all(isinstance(k, str) and not k.startswith("$") for k in v):
            return {k: encode(x, depth + 1) for k, x in v.items()}
        return {"$dict": [[encode(k, depth + 1), encode(x, depth + 1)] for k, x in v.items()]}
    try:
        r = repr(v)
    except Exception:  # noqa: BLE001 - agent objects may raise anything
        r = "<unrepresentable>"
    return {"$repr": r[:200], "$type": type(v).__name__}


# ----------------------------------------------------------- base graphs
class Base:
    def __init__(self, scheme: str, nodes: list, edges: list):
        import networkx as nx
        self.scheme = scheme
        g = nx.DiGraph()
        self.snap_nodes: dict = {}
        for key, attrs in nodes:
            key = tuple(key) if isinstance(key, list) else key
            g.add_node(key, **attrs)
            self.snap_nodes[key] = json.loads(json.dumps(attrs))  # a private deep copy
        self.snap_edges: dict = {}
        self.snap_adj: dict = {k: {} for k in self.snap_nodes}  # private copy of g._adj
        for a, z, t in edges:
            a = tuple(a) if isinstance(a, list) else a
            z = tuple(z) if isinstance(z, list) else z
            g.add_edge(a, z, type=t)
            self.snap_edges[(a, z)] = t
            self.snap_adj[a][z] = {"type": t}
        self.graph = g
        # upstream's master graph ``G`` (compat namespace): copied once here, in the zygote,
        # for the merged scheme compat uses, so a submission does not pay for the copy
        self._master = copy.deepcopy(g) if scheme == "merged" else None

    @property
    def master(self):
        """A graph equal to the base and separate from :attr:`graph` (see ``sandbox_runtime``)."""
        if self._master is None:
            self._master = copy.deepcopy(self.graph)
        return self._master


def identity(key, attrs: dict, scheme: str):
    """A node's identity: ``(kind, name)`` from its attributes (our scheme) or its ``name``
    (upstream's); the key is the fallback."""
    name = attrs.get("name")
    if scheme == "merged":
        if isinstance(name, str):
            return name
        return key if isinstance(key, str) else "#" + repr(key)[:200]
    t = attrs.get("type")
    kind = t if isinstance(t, str) else (t[0] if isinstance(t, (list, tuple)) and t
                                         and isinstance(t[0], str) else None)
    if kind is not None and isinstance(name, str):
        return (kind, name)
    if isinstance(key, tuple) and len(key) == 2 and all(isinstance(x, str) for x in key):
        return key
    return ("?", repr(key)[:200])


def _edge_type(attrs) -> str:
    t = attrs.get("type") if isinstance(attrs, dict) else None
    if t is None:
        return ""
    return t if isinstance(t, str) else "<" + type(t).__name__ + ">"


def graph_items(obj):
    """(nodes [(key, attrs)], edges [(u, v, attrs)]) of a networkx graph or node-link dict."""
    if hasattr(obj, "nodes") and hasattr(obj, "edges") and not isinstance(obj, dict):
        node_map = getattr(obj, "_node", None)
        nodes = node_map.items() if isinstance(node_map, dict) else obj.nodes(data=True)
        adj = getattr(obj, "_adj", None)
        if isinstance(adj, dict) and not obj.is_multigraph():
            edges = ((u, v, d) for u, nbrs in adj.items() for v, d in nbrs.items())
        else:
            edges = ((e[0], e[1], e[-1]) for e in obj.edges(data=True))
        return nodes, edges
    if isinstance(obj, dict) and isinstance(obj.get("nodes"), list):
        nodes = []
        for d in obj["nodes"]:
            if not isinstance(d, dict):
                raise ValueError("node-link 'nodes' entries must be dicts")
            key = d.get("id")
            key = tuple(key) if isinstance(key, list) else key
            nodes.append((key, {k: v for k, v in d.items() if k != "id"}))
        raw = obj.get("edges", obj.get("links", []))
        if not isinstance(raw, list):
            raise ValueError("node-link 'edges' must be a list")
        edges = []
        for d in raw:
            if not isinstance(d, dict):
                raise ValueError("node-link 'edges' entries must be dicts")
            u, v = d.get("source"), d.get("target")
            u = tuple(u) if isinstance(u, list) else u
            v = tuple(v) if isinstance(v, list) else v
            edges.append((u, v, {k: x for k, x in d.items() if k not in ("source", "target")}))
        return nodes, edges
    raise ValueError("updated_graph must be a networkx graph or node_link_data(graph)")


def _plain_digraph(obj) -> bool:
    return (isinstance(getattr(obj, "_node", None), dict) and isinstance(getattr(obj, "_adj", None), dict)
            and isinstance(getattr(obj, "_pred", None), dict) and not isinstance(obj, dict)
            and obj.is_directed() and not obj.is_multigraph())


def diff_against(base: Base, obj) -> dict:
    """The net change of ``obj`` against the base, keyed by node identity."""
    if _plain_digraph(obj):
        return diff_digraph(base, obj)
    return diff_items(base, obj)


def diff_digraph(base: Base, g) -> dict:
    """The same result as :func:`diff_items` for a networkx DiGraph, touching in Python
    only the nodes whose attributes or edges differ from the base (the rest is compared by
    C-level dict equality against the private snapshot)."""
    snap, snap_adj, scheme = base.snap_nodes, base.snap_adj, base.scheme
    node_map, adj, pred = g._node, g._adj, g._pred
    changed = {}
    for key, attrs in node_map.items():
        old = snap.get(key)
        if old is None or old != attrs:
            changed[key] = attrs
    ident = {}
    seen: dict = {}
    duplicates = []
    for key, attrs in changed.items():
        if not isinstance(attrs, dict):
            attrs = changed[key] = dict(attrs)
        i = identity(key, attrs, scheme)
        ident[key] = i
        if i in seen or (i in node_map and i not in changed and i in snap):
            duplicates.append(i)
        seen[i] = attrs
    out_nodes = []
    for i, attrs in seen.items():
        old = snap.get(i)
        if old is None or old != attrs:
            out_nodes.append([_jkey(i), encode(attrs)])
    kept = len(node_map) - len(changed) + sum(1 for i in seen if i in snap and i not in node_map)
    kept += sum(1 for i in seen if i in snap and i in changed)
    if kept != len(snap):
        out_nodes.extend([_jkey(k), None] for k in snap
                         if not ((k in node_map and k not in changed) or k in seen))
    # sources whose out-edges must be read: changed nodes, their predecessors, and any
    # node whose adjacency differs from the base
    dirty = set(changed)
    for c in changed:
        dirty.update(pred.get(c, ()))
    for u, nbrs in adj.items():
        if u not in dirty and nbrs != snap_adj.get(u):
            dirty.add(u)
    snap_edges = base.snap_edges
    present = set()
    out_edges = []
    for u in dirty:
        a = ident.get(u, u)
        for v, d in adj[u].items():
            e = (a, ident.get(v, v))
            if e in present:
                continue
            present.add(e)
            t = _edge_type(d)
            if snap_edges.get(e) != t:
                out_edges.append([_jkey(e[0]), _jkey(e[1]), t])
    clean = {u for u in adj if u not in dirty}
    for a, kids in snap_adj.items():
        if a in clean:
            continue
        for z in kids:
            if (a, z) not in present:
                out_edges.append([_jkey(a), _jkey(z), None])
    return {"nodes": out_nodes, "edges": out_edges,
            "duplicates": [_jkey(d) for d in duplicates]}


def diff_items(base: Base, obj) -> dict:
    nodes, edges = graph_items(obj)
    scheme, snap = base.scheme, base.snap_nodes
    ident_of: dict = {}
    seen: dict = {}
    duplicates = []
    for key, attrs in nodes:
        if not isinstance(attrs, dict):
            attrs = dict(attrs)
        name, t = attrs.get("name"), attrs.get("type")
        if scheme == "kind_name" and type(t) is list and t and type(t[0]) is str \
                and type(name) is str:
            ident = (t[0], name)
        else:
            ident = identity(key, attrs, scheme)
        try:
            ident_of[key] = ident
        except TypeError:
            raise ValueError("node keys must be hashable") from None
        if ident in seen:
            duplicates.append(ident)
        seen[ident] = attrs
    out_nodes = []
    kept = 0
    for ident, attrs in seen.items():
        old = snap.get(ident)
        if old is None:
            out_nodes.append([_jkey(ident), encode(attrs)])
            continue
        kept += 1
        if old != attrs:
            out_nodes.append([_jkey(ident), encode(attrs)])
    if kept != len(snap):
        out_nodes.extend([_jkey(i), None] for i in snap if i not in seen)
    snap_edges = base.snap_edges
    present = set()
    matched = 0
    out_edges = []
    for u, v, attrs in edges:
        try:
            e = (ident_of[u], ident_of[v])
        except KeyError:
            raise ValueError("an edge refers to a node that is not in the graph") from None
        t = _edge_type(attrs)
        if e in present:
            continue
        present.add(e)
        old = snap_edges.get(e)
        if old is not None:
            matched += 1
        if old != t:
            out_edges.append([_jkey(e[0]), _jkey(e[1]), t])
    if matched != len(snap_edges):
        out_edges.extend([_jkey(a), _jkey(z), None] for (a, z) in snap_edges
                         if (a, z) not in present)
    return {"nodes": out_nodes, "edges": out_edges,
            "duplicates": [_jkey(d) for d in duplicates]}


def _jkey(k):
    return list(k) if isinstance(k, tuple) else k

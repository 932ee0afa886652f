"""Upstream NetArena's MALT semantics, for ``level="compat"`` and score comparability.

Everything here reproduces upstream's *behaviour* (documented in the behavioural spec; no
upstream code is used): its ten query templates and their sampling, its ground-truth
primitives on the name-merged graph (string ``type`` and capacity 1000 for added nodes, a
port named after the repr of the new switch's dict, literal removal, two-level ranking,
edge-counting BFS), and its verdicts: text compared as strings, lists as multisets, graphs
by isomorphism with identical node attributes (direction and edge types ignored).

The isomorphism verdict is computed exactly without VF2: upstream's ground-truth graphs have
a unique ``name`` on every node, so node attribute dicts are pairwise distinct and the only
candidate mapping pairs equal dicts, i.e. equal names. Two graphs are then isomorphic iff
they have the same nodes by name with equal attribute dicts and the same undirected
adjacency, which only needs checking where either graph differs from the shared base.
"""
from __future__ import annotations

import re
from collections import Counter

from netarena_gym.capacity_planning.kinds import (
    AGG_BLOCK, CAPACITY, CONTAINS, CONTROL_DOMAIN, PORT, RACK, SWITCH)
from netarena_gym.capacity_planning.state import Graph, GraphError

TEMPLATES = {
    1: ("add", "rank", "remove", "list"),
    2: ("remove-list", "remove-rank", "remove-count"),
    3: ("add-list", "add-rank", "add-count"),
}
ALL_TEMPLATES = tuple(t for ts in TEMPLATES.values() for t in ts)
LEVEL_OF = {t: lv for lv, ts in TEMPLATES.items() for t in ts}
NEW_CAPACITY = 1000  # upstream gives new ports 1000 bps (real ports are 1e9)


# ------------------------------------------------------------------ primitives
def _has(t, kind: str) -> bool:
    return isinstance(t, (str, list, tuple)) and kind in t


def add(graph: Graph, name: str, typ: str, parent: str) -> None:
    node = {"name": name, "type": typ}
    if typ == PORT:
        node[CAPACITY] = NEW_CAPACITY
    graph.add_node(name, node)
    if typ == SWITCH:
        pname = repr({"name": name, "type": typ}) + ".p1"
        graph.add_node(pname, {"name": pname, "type": PORT, CAPACITY: NEW_CAPACITY})
        graph.add_edge(name, pname, CONTAINS)
    if graph.has(parent):
        graph.add_edge(parent, name, CONTAINS)


def remove(graph: Graph, name: str) -> None:
    if graph.has(name):
        graph.remove_node(name)


def contained(graph: Graph, name: str) -> list:
    return [c for c, t in graph.children(name).items() if t == CONTAINS]


def list_children(graph: Graph, name: str) -> list:
    if not graph.has(name):
        return []
    return [graph.attrs(c)["name"] for c in contained(graph, name)]


def _cap(attrs: dict):
    return attrs.get(CAPACITY, 0)


def rank_children(graph: Graph, name: str) -> list:
    if not graph.has(name):
        return []
    rows = []
    for c in contained(graph, name):
        a = graph.attrs(c)
        total = _cap(a) if _has(a.get("type"), PORT) else 0
        for cc in contained(graph, c):
            ac = graph.attrs(cc)
            if _has(ac.get("type"), PORT):
                total += _cap(ac)
        rows.append((a["name"], total))
    rows.sort(key=lambda r: r[1], reverse=True)  # stable, like upstream
    return rows


def count(graph: Graph, name: str, typ: str) -> int:
    """BFS over RK_CONTAINS with a visited set, +1 per traversed edge whose destination's
    type contains ``typ`` (so it counts edges, not distinct nodes)."""
    if not graph.has(name):
        raise GraphError(f"{name} not found")
    seen = {name}
    queue = [name]
    n = 0
    while queue:
        u = queue.pop(0)
        for v in contained(graph, u):
            if _has(graph.attrs(v).get("type"), typ):
                n += 1
            if v not in seen:
                seen.add(v)
                queue.append(v)
    return n


def run(graph: Graph, ops: list[dict]):
    """Execute compat ops; returns ``(answer_type, answer)`` of the last op."""
    out = ("graph", None)
    for op in ops:
        k = op["op"]
        if k == "add":
            add(graph, op["name"], op["type"], op["parent"])
            out = ("graph", None)
        elif k == "remove":
            remove(graph, op["name"])
            out = ("graph", None)
        elif k == "list":
            out = ("list", list_children(graph, op["name"]))
        elif k == "rank":
            out = ("list", [list(r) for r in rank_children(graph, op["name"])])
        elif k == "count":
            out = ("text", count(graph, op["name"], op["type"]))
        else:
            raise GraphError(f"unknown compat op {k!r}")
    return out


# ---------------------------------------------------------------- question text
def parent_of(name: str) -> str:
    return name.rsplit(".", 1)[0]


def render(template: str, p: dict) -> str:
    """Upstream's wording for one template (``p`` holds the sampled names)."""
    rank_tail = ("based on physical_capacity_bps attribute. Return a list of tuple, each "
                 "tuple has node name and its total physical capacity.")
    if template == "add":
        return f"Add new node with name {p['name']} type {p['type']}, to {p['parent']}. Return a graph."
    if template == "rank":
        return (f"Rank all child nodes of {p['ptype']} type {p['parent']} based on "
                "physical_capacity_bps attribute. Return a list of tuple, each tuple has child "
                "node name and its total physical capacity.")
    if template == "remove":
        return f"Remove {p['name']} from the graph. Return a graph."
    if template == "list":
        return f"List all the child nodes of {p['parent']}. Return a list of child node names."
    first = (f"Remove {p['name']} from the graph." if template.startswith("remove")
             else f"Add node with name '{p['name']}' to {p['parent']}." if template == "add-rank"
             else f"Add {p['name']} to {p['parent']}.")
    where = p["parent"]
    if template.endswith("-list"):
        rest = (f"List direct child nodes of {where} in the updated graph. Return a list of "
                "child nodes name.")
    elif template.endswith("-rank"):
        rest = f"Rank direct child nodes of {where} in the updated graph {rank_tail}"
    else:
        rest = (f"Count the {p['type']} in {where} in the updated graph. Return the count "
                "number as text.")
    return f"{first} {rest}"


def ops_of(template: str, p: dict) -> list[dict]:
    first: list[dict] = []
    if template in ("add", "add-list", "add-rank", "add-count"):
        first = [{"op": "add", "name": p["name"], "type": p["type"], "parent": p["parent"]}]
    elif template.startswith("remove"):
        first = [{"op": "remove", "name": p["name"]}]
    if template == "rank":
        return [{"op": "rank", "name": p["parent"]}]
    if template == "list":
        return [{"op": "list", "name": p["parent"]}]
    if template.endswith("-list"):
        return first + [{"op": "list", "name": p["parent"]}]
    if template.endswith("-rank"):
        return first + [{"op": "rank", "name": p["parent"]}]
    if template.endswith("-count"):
        return first + [{"op": "count", "name": p["parent"], "type": p["type"]}]
    return first


def sample(template: str, draw, by_kind: dict) -> dict:
    """Upstream's parameter sampling for ``template`` (``draw`` serves uniform choices)."""
    def pick(kind):
        return draw.choice(by_kind[kind])
    if template in ("add", "add-count"):
        typ = draw.choice((SWITCH, PORT))
        parent = pick(SWITCH) if typ == PORT else pick(draw.choice((AGG_BLOCK, CONTROL_DOMAIN)))
        return {"name": f"new_{typ}_{draw.index(100) + 1}", "type": typ, "parent": parent}
    if template in ("add-list", "add-rank"):
        typ = draw.choice((SWITCH, PORT))
        parent = pick(draw.choice((AGG_BLOCK, CONTROL_DOMAIN)))
        return {"name": f"new_{typ}_{draw.index(100) + 1}", "type": typ, "parent": parent}
    if template == "rank":
        ptype = draw.choice((AGG_BLOCK, CONTROL_DOMAIN))
        return {"ptype": ptype, "parent": pick(ptype)}
    if template == "list":
        return {"parent": pick(draw.choice((AGG_BLOCK, CONTROL_DOMAIN, RACK, SWITCH)))}
    typ = draw.choice((SWITCH, PORT))
    name = pick(typ)
    return {"name": name, "type": typ, "parent": parent_of(name)}


# --------------------------------------------------------------------- verdicts
def _hashable(v):
    """Lists of lists become tuples (upstream does this before its multiset test)."""
    if isinstance(v, list):
        return tuple(_hashable(x) for x in v)
    return v


def text_equal(gt, agent) -> bool:
    gt = str(gt) if isinstance(gt, int) else gt
    agent = str(agent) if isinstance(agent, int) else agent
    return gt == agent


def list_equal(gt, agent) -> bool:
    if not isinstance(gt, list) or not isinstance(agent, list):
        return False
    try:
        return Counter(_hashable(x) for x in gt) == Counter(_hashable(x) for x in agent)
    except TypeError:  # unhashable items fail, as upstream
        return False


def _linked(graph: Graph, a, b) -> bool:
    return (graph.has(a) and b in graph.children(a)) or (graph.has(b) and a in graph.children(b))


def graph_equal(gt: Graph, agent: Graph, duplicates: bool = False) -> bool:
    """Upstream's isomorphism verdict for two views over the same base (see module doc)."""
    if duplicates:
        return False
    gd, ad = gt.net_diff(), agent.net_diff()
    for k in gd.touched() | ad.touched():
        if gt.attrs(k) != agent.attrs(k):
            return False
    for a, b in set(gd.edges) | set(ad.edges):
        if _linked(gt, a, b) != _linked(agent, a, b):
            return False
    return True


def compare(answer_type: str, gt, agent) -> bool:
    if answer_type == "text":
        return text_equal(gt, agent)
    if answer_type == "list":
        return list_equal(gt, agent)
    return True  # graphs are compared by graph_equal


# ------------------------------------------------------------ reading questions
_NAME = r"(\S+?)"
_PARSERS = (
    ("add", re.compile(rf"Add new node with name {_NAME} type {_NAME}, to {_NAME}\. Return a graph\.$")),
    ("rank", re.compile(rf"Rank all child nodes of {_NAME} type {_NAME} based on ")),
    ("remove", re.compile(rf"Remove {_NAME} from the graph\. Return a graph\.$")),
    ("list", re.compile(rf"List all the child nodes of {_NAME}\. Return a list of child node names\.$")),
    ("remove-list", re.compile(rf"Remove {_NAME} from the graph\. List direct child nodes of {_NAME} in ")),
    ("remove-rank", re.compile(rf"Remove {_NAME} from the graph\. Rank direct child nodes of {_NAME} in ")),
    ("remove-count", re.compile(rf"Remove {_NAME} from the graph\. Count the {_NAME} in {_NAME} in ")),
    ("add-rank", re.compile(rf"Add node with name '{_NAME}' to {_NAME}\. Rank direct child nodes of ")),
    ("add-list", re.compile(rf"Add {_NAME} to {_NAME}\. List direct child nodes of ")),
    ("add-count", re.compile(rf"Add {_NAME} to {_NAME}\. Count the {_NAME} in ")),
)
_NEW = re.compile(r"new_(EK_[A-Z_]+)_\d+$")


def parse(text: str) -> tuple[str, dict]:
    """The template and names of an upstream question (the inverse of :func:`render`)."""
    text = text.strip()
    for template, rx in _PARSERS:
        m = rx.match(text)
        if not m:
            continue
        g = m.groups()
        if template == "add":
            return template, {"name": g[0], "type": g[1], "parent": g[2]}
        if template == "rank":
            return template, {"ptype": g[0], "parent": g[1]}
        if template == "list":
            return template, {"parent": g[0]}
        if template.startswith("remove"):
            p = {"name": g[0], "parent": g[-1] if template == "remove-count" else
                 (g[1] if len(g) > 1 else parent_of(g[0]))}
            if template == "remove-count":
                p["type"] = g[1]
            return template, p
        new = _NEW.match(g[0])
        if new is None:
            raise ValueError(f"cannot tell the type of {g[0]!r}")
        return template, {"name": g[0], "type": new.group(1), "parent": g[1]}
    raise ValueError(f"not an upstream MALT question: {text[:80]!r}")

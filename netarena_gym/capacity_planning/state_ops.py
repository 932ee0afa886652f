"""What each capacity-planning operation means, executed on a :class:`~model.Graph`.

These are the ground-truth semantics of levels 1-4 (upstream's are in :mod:`compat`):

* a node's **capacity** is the sum of ``physical_capacity_bps`` over the *distinct* ports
  reachable from it through RK_CONTAINS and RK_CONTROLS edges, at any depth (a port's is its
  own); a control domain therefore sums the switches its control points control;
* its **children** are its direct RK_CONTAINS successors;
* **count** ``K`` in ``P`` is the number of distinct nodes of kind ``K`` reachable from ``P``;
* **remove** is safe by construction: the node goes together with every neighbour that would
  otherwise be left with no edge (a switch takes its ports); removing a node literally, when
  that would orphan nodes, is what makes a query ``literal_unsafe``;
* **add** creates hierarchy-valid nodes (a port under a switch; a switch, with its ports,
  under an aggregation or spine block) with a list ``type`` and a realistic capacity;
* **drain** removes a switch with its ports, its chassis and its control point;
* **least-loaded** is the child switch with the lowest capacity, then fewest ports, then
  the smallest name (natural order); **place** adds a port to it;
* **isolated** lists what a literal removal would leave with no edge.

An op is a JSON dict; node references are ``[kind, name]``.
"""
from __future__ import annotations

import re

from netarena_gym.capacity_planning.kinds import (
    CAPACITY, CHASSIS, CONTAINS, CONTROL_POINT, CONTROLS, PORT, SWITCH, natural_key)
from netarena_gym.capacity_planning.state import Graph, GraphError

READS = ("list", "rank", "count", "capacity", "least_loaded", "isolated")
MUTATIONS = ("add", "remove", "update", "drain", "place")
# answer type of a query whose last op is this op
ANSWER_TYPE = {"list": "list", "rank": "rank", "count": "number", "capacity": "number",
               "least_loaded": "name", "isolated": "list", "drain": "number", "place": "name",
               "add": "graph", "remove": "graph", "update": "graph"}


def ref(graph: Graph, r) -> tuple:
    k = tuple(r)
    if not graph.has(k):
        raise GraphError(f"no {k[0]} named {k[1]!r}")
    return k


def name_of(k) -> str:
    return k[1] if isinstance(k, tuple) else k


def ports_of(graph: Graph, sw) -> list:
    return [c for c, t in graph.children(sw).items()
            if t == CONTAINS and graph.kind(c) == PORT]


def child_switches(graph: Graph, block) -> list:
    return [c for c, t in graph.children(block).items()
            if t == CONTAINS and graph.kind(c) == SWITCH]


def isolated_if_removed(graph: Graph, k) -> list:
    """Neighbours of ``k`` all of whose edges go to or come from ``k``."""
    out = []
    for n in {**graph.children(k), **graph.parents(k)}:
        if n == k:
            continue
        if all(x == k for x in graph.children(n)) and all(x == k for x in graph.parents(n)):
            out.append(n)
    return sorted(out, key=lambda x: natural_key(name_of(x)))


def least_loaded(graph: Graph, block):
    unchanged = type(graph) is Graph and not graph.changed  # the base's answer, kept
    if unchanged:
        kept = graph.base.facts.setdefault("least_loaded", {})
        sw = kept.get(block)
        if sw is not None:
            return sw
    sws = child_switches(graph, block)
    if not sws:
        raise GraphError(f"{name_of(block)} has no packet switch")
    sw = min(sws, key=lambda s: (graph.capacity(s), len(ports_of(graph, s)),
                                 natural_key(name_of(s))))
    if unchanged:
        kept[block] = sw
    return sw


_PIDX = re.compile(r"\.p(\d+)$")


def next_port_index(graph: Graph, switches) -> int:
    """One more than the highest ``.pN`` suffix among the ports of ``switches``."""
    hi = 0
    for s in switches:
        for p in ports_of(graph, s):
            m = _PIDX.search(name_of(p))
            if m:
                hi = max(hi, int(m.group(1)))
    return hi + 1


def port_attrs(name: str, cap: int) -> dict:
    return {"name": name, "type": [PORT], CAPACITY: int(cap)}


def switch_attrs(name: str, stage: int) -> dict:
    return {"name": name, "type": [SWITCH], "switch_loc": {"stage": int(stage)}}


def execute(graph: Graph, op: dict):
    """Apply one op; returns ``(answer, cascaded)`` where ``cascaded`` lists what a remove
    took along beyond the named node."""
    kind = op["op"]
    if kind == "add":
        parent = ref(graph, op["parent"])
        name = op["name"]
        if op["kind"] == PORT:
            k = (PORT, name)
            graph.add_node(k, port_attrs(name, op["capacity"]))
            graph.add_edge(parent, k, CONTAINS)
        elif op["kind"] == SWITCH:
            k = (SWITCH, name)
            graph.add_node(k, switch_attrs(name, op["stage"]))
            graph.add_edge(parent, k, CONTAINS)
            for i in range(1, int(op["ports"]) + 1):
                p = (PORT, f"{name}.p{i}")
                graph.add_node(p, port_attrs(p[1], op["capacity"]))
                graph.add_edge(k, p, CONTAINS)
        else:
            raise GraphError(f"cannot add a {op['kind']}")
        return None, []
    if kind == "remove":
        k = ref(graph, op["node"])
        extra = isolated_if_removed(graph, k)
        for n in extra:
            graph.remove_node(n)
        graph.remove_node(k)
        return None, extra
    if kind == "update":
        k = ref(graph, op["node"])
        graph.set_attr(k, CAPACITY, int(op["capacity"]))
        return None, []
    if kind == "drain":
        sw = ref(graph, op["node"])
        cap = graph.capacity(sw)
        gone = ports_of(graph, sw)
        gone += [p for p, t in graph.parents(sw).items()
                 if (t == CONTAINS and graph.kind(p) == CHASSIS)
                 or (t == CONTROLS and graph.kind(p) == CONTROL_POINT)]
        for n in gone:
            graph.remove_node(n)
        graph.remove_node(sw)
        return cap, []
    if kind == "place":
        sw = least_loaded(graph, ref(graph, op["parent"]))
        name = f"{name_of(sw)}.p{int(op['index'])}"
        graph.add_node((PORT, name), port_attrs(name, op["capacity"]))
        graph.add_edge(sw, (PORT, name), CONTAINS)
        return name_of(sw), []
    return read(graph, op), []


def read(graph: Graph, op: dict):
    kind = op["op"]
    k = ref(graph, op["node"])
    if kind == "list":
        return sorted((name_of(c) for c, t in graph.children(k).items() if t == CONTAINS),
                      key=natural_key)
    if kind == "rank":
        rows = [[name_of(c), graph.capacity(c)] for c, t in graph.children(k).items()
                if t == CONTAINS]
        return sorted(rows, key=lambda r: (-r[1], natural_key(r[0])))
    if kind == "count":
        return graph.count(k, op["kind"])
    if kind == "capacity":
        return graph.capacity(k)
    if kind == "least_loaded":
        return name_of(least_loaded(graph, k))
    if kind == "isolated":
        return [name_of(n) for n in isolated_if_removed(graph, k)]
    raise GraphError(f"unknown op {kind!r}")


def run(graph: Graph, ops: list[dict]):
    """Execute a query's ops in order; returns ``(answer of the last op, literal_unsafe)``."""
    answer, unsafe = None, False
    for op in ops:
        answer, cascaded = execute(graph, op)
        unsafe = unsafe or bool(cascaded)
    return answer, unsafe

"""Seeded query generation: levels, templates, topologies, and ground truth as data.

Levels (each template is drawn uniformly):

* **1**, one operation: upstream's ``add``, ``rank``, ``remove``, ``list`` and ours
  ``update``, ``count``, ``capacity``, ``least-loaded``, ``isolated``, ``drain``;
* **2**, a change then a read: ``remove-list``, ``remove-rank``, ``remove-count`` (upstream),
  ``update-rank``, ``update-capacity``, ``drain-capacity``;
* **3**, an addition then a read: ``add-list``, ``add-rank``, ``add-count`` (upstream),
  ``add-capacity``, ``place`` (find the least-loaded switch and add a port to it);
* **4**, composition depth 3-4: two or three changes inside one block, then a read on the
  block or its parent (template ``depth-3`` / ``depth-4``);
* **compat**: upstream's ten templates, sampling, wording and ground truth on upstream's
  merged graph (NetArena's copy of Google's model), graded by upstream's rules.

Levels 1-4 draw the topology from a pool (``topologies``, default 4: Google's structure and
three smaller random ones, every port capacity drawn from 10/25/40/100 Gbps). The ground
truth of every query (its answer and the expected net change of the graph) is computed when
the query is drawn and stored in the query record; a drawn query whose ground truth would be
unsafe is redrawn, and ``literal_unsafe`` flags queries whose literal execution would not be
safe (removing a switch orphans its ports; the safe way removes them too).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from netarena_gym.core.scenario import Scenario
from netarena_gym.core.seeding import rng_from_seed
from netarena_gym.errors import InvalidConfig, ScenarioError
from netarena_gym.capacity_planning import grader_compat as compat
from netarena_gym.capacity_planning.grader_checks import assess, new_violations
from netarena_gym.capacity_planning.kinds import (
    AGG_BLOCK, CAPACITY, CHASSIS, CONTAINS, CONTROL_DOMAIN, CONTROL_POINT, JUPITER, PORT, RACK,
    SPINEBLOCK, SUPERBLOCK, SWITCH)
from netarena_gym.capacity_planning.state import BaseGraph, Diff, Graph, GraphError, base_graph
from netarena_gym.capacity_planning.state_ops import (
    child_switches, execute, next_port_index, ports_of, run)
from netarena_gym.capacity_planning.problems import Query, answer_type, render
from netarena_gym.capacity_planning.topology import TopologySpec, netarena_spec

TASK = "capacity_planning"
LEVELS = (1, 2, 3, 4, "compat")
TEMPLATES: dict = {
    1: ("add", "rank", "remove", "list", "update", "count", "capacity", "least-loaded",
        "isolated", "drain"),
    2: ("remove-list", "remove-rank", "remove-count", "update-rank", "update-capacity",
        "drain-capacity"),
    3: ("add-list", "add-rank", "add-count", "add-capacity", "place"),
    4: ("depth-3", "depth-4"),
    "compat": compat.ALL_TEMPLATES,
}
UPSTREAM_TEMPLATES = ("add", "rank", "remove", "list", "remove-list", "remove-rank",
                      "remove-count", "add-list", "add-rank", "add-count")
# capacities that new or updated ports get (bps)
NEW_CAPACITIES = (1_000_000_000, 10_000_000_000, 25_000_000_000, 40_000_000_000,
                  100_000_000_000, 200_000_000_000, 400_000_000_000)
# the port-capacity mix of level topologies
LEVEL_CAPACITIES = (10_000_000_000, 25_000_000_000, 40_000_000_000, 100_000_000_000)
LEVEL_WEIGHTS = (0.4, 0.3, 0.2, 0.1)
MAX_REDRAWS = 100


def level_topologies(pool: int = 4) -> list[TopologySpec]:
    """The topology pool of levels 1-4: Google's structure, then random smaller ones."""
    specs = [TopologySpec(capacities=LEVEL_CAPACITIES, weights=LEVEL_WEIGHTS, capacity_seed=0)]
    for i in range(1, pool):
        draw = rng_from_seed(7919 * i)

        def r(lo: int, hi: int, draw=draw) -> int:
            return int(draw.integers(lo, hi + 1))
        specs.append(TopologySpec(
            superblocks=r(2, 4), aggs_per_superblock=r(2, 4), spineblocks=r(1, 4),
            agg_switches=(r(4, 8), r(4, 8)), spine_switches=(r(4, 8), r(4, 8)),
            ports_per_switch=r(8, 16), capacities=LEVEL_CAPACITIES, weights=LEVEL_WEIGHTS,
            capacity_seed=i))
    return specs


#: the largest topology pool ``topologies=N`` draws (each topology is built once per process)
MAX_POOL = 256


def topology_pool(value) -> list[TopologySpec] | None:
    """The env's ``topologies``: None (the level's pool), a pool size ``1..MAX_POOL``, or a
    list of :class:`TopologySpec` or their dicts; InvalidConfig naming the bad one."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        if not 1 <= value <= MAX_POOL:
            raise InvalidConfig(f"topologies as a pool size must be 1..{MAX_POOL}, got {value}")
        return level_topologies(value)
    if not isinstance(value, (list, tuple)) or not value:
        raise InvalidConfig(f"topologies must be a pool size, or a non-empty list of topology "
                            f"dicts or TopologySpecs, got {value!r}")
    specs = []
    for i, t in enumerate(value):
        try:
            if not isinstance(t, (dict, TopologySpec)):
                raise ValueError(f"a dict or a TopologySpec, got {t!r}")
            spec = t if isinstance(t, TopologySpec) else TopologySpec.from_dict(t)
        except (ValueError, TypeError) as e:
            raise InvalidConfig(f"topologies[{i}]: {e}") from None
        if spec.superblocks < 1 or spec.aggs_per_superblock < 1:
            raise InvalidConfig(f"topologies[{i}]: the questions need an aggregation block: "
                                "superblocks and aggs_per_superblock must be >= 1")
        specs.append(spec)
    return specs


class Draws:
    """Uniform draws served from blocks of a numpy Generator (one call per 64 draws)."""
    __slots__ = ("rng", "buf", "i")

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self.buf: list[float] = []
        self.i = 0

    def uniform(self) -> float:
        if self.i >= len(self.buf):
            self.buf = self.rng.random(64).tolist()
            self.i = 0
        v = self.buf[self.i]
        self.i += 1
        return v

    def index(self, n: int) -> int:
        if n <= 0:
            raise GraphError("nothing to choose from")
        return min(int(self.uniform() * n), n - 1)

    def choice(self, seq):
        return seq[self.index(len(seq))]

    def weighted(self, items, weights):
        u = self.uniform() * sum(weights)
        for x, w in zip(items, weights):
            u -= w
            if u < 0:
                return x
        return items[-1]


class _Redraw(Exception):
    pass


@dataclass
class Drawn:
    query: Query
    spec: TopologySpec
    scheme: str


class QueryGenerator:
    """Draws queries of one level; ``sample(rng)`` is deterministic in ``rng``."""

    def __init__(self, level, topologies: list[TopologySpec] | None = None,
                 templates: tuple[str, ...] | None = None):
        if level not in LEVELS:
            raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
        self.level = level
        self.scheme = "merged" if level == "compat" else "kind_name"
        if topologies is None:
            topologies = [netarena_spec()] if level == "compat" else level_topologies()
        if not topologies:
            raise ValueError("topologies must not be empty")
        self.topologies = list(topologies)
        allowed = TEMPLATES[level]
        self.templates = tuple(templates) if templates else allowed
        bad = [t for t in self.templates if t not in allowed]
        if bad:
            raise InvalidConfig(f"templates {bad} are not in level {level!r}: {allowed}")
        self._scratch: dict[int, Graph] = {}

    def base(self, i: int) -> BaseGraph:
        return base_graph(self.topologies[i], self.scheme)

    def _graph(self, i: int) -> Graph:
        g = self._scratch.get(i)
        if g is None:
            g = self._scratch[i] = Graph(self.base(i))
        g.reset()
        return g

    def sample(self, rng: np.random.Generator, template: str | None = None) -> Drawn:
        if template is not None and template not in self.templates:
            raise InvalidConfig(f"template {template!r} is not one of {self.templates}")
        d = Draws(rng)
        for _ in range(MAX_REDRAWS):
            i = d.index(len(self.topologies))
            t = template or d.choice(self.templates)
            g = self._graph(i)
            try:
                q = self._compat(t, g, d) if self.level == "compat" else self._ours(t, g, d)
            except (_Redraw, GraphError):
                continue
            if q is not None:
                return Drawn(q, self.topologies[i], self.scheme)
        raise ScenarioError(f"could not draw a safe {template or 'query'} at level {self.level}")

    def sample_unique(self, rng: np.random.Generator, n: int) -> list[Drawn]:
        """``n`` distinct queries (by topology and text); raises if the space is smaller."""
        out, seen = [], set()
        misses = 0
        while len(out) < n:
            x = self.sample(rng)
            key = (x.spec.key(), x.query.text)
            if key in seen:
                misses += 1
                if misses > 50 * n + 1000:
                    raise ScenarioError(f"only {len(out)} distinct queries found")
                continue
            seen.add(key)
            out.append(x)
        return out

    # ------------------------------------------------------------ levels 1-4
    def _ours(self, t: str, g: Graph, d: Draws) -> Query | None:
        ops: list[dict] = []
        state = {"answer": None, "unsafe": False}

        def do(op: dict) -> None:
            answer, cascaded = execute(g, op)
            ops.append(op)
            state["answer"] = answer
            state["unsafe"] = state["unsafe"] or bool(cascaded)

        _SAMPLERS[t](g, d, do)
        diff = g.net_diff()
        if new_violations(g, diff):
            raise _Redraw
        q = Query(template=t, level=self.level, text=render(ops), ops=ops,
                  answer_type=answer_type(ops),
                  ground_truth={"answer": state["answer"], "graph": diff.to_json()},
                  # our rules are stricter than upstream's, so a safe ground truth passes both
                flags={"literal_unsafe": state["unsafe"], "gt_safe": True, "gt_safe_compat": True})
        return q

    # ---------------------------------------------------------------- compat
    def _compat(self, t: str, g: Graph, d: Draws) -> Query:
        p = compat.sample(t, d, g.base.by_kind)
        ops = compat.ops_of(t, p)
        atype, answer = compat.run(g, ops)
        diff = g.net_diff()
        unsafe, compat_ok, _ = assess(g, diff)
        return Query(template=t, level="compat", text=compat.render(t, p), ops=ops,
                     answer_type=atype,
                     ground_truth={"answer": answer, "graph": diff.to_json()},
                     flags={"literal_unsafe": t.startswith("remove") and p["type"] == SWITCH,
                            "gt_safe": not unsafe, "gt_safe_compat": compat_ok})


# ------------------------------------------------------------------ samplers
def _pick(g: Graph, d: Draws, kind: str):
    return d.choice(g.base.by_kind[kind])


def _blocks(g: Graph) -> list:
    return g.base.by_kind.get(AGG_BLOCK, []) + g.base.by_kind.get(SPINEBLOCK, [])


def _block_of(g: Graph, sw):
    for p, t in g.parents(sw).items():
        if t == CONTAINS and g.kind(p) in (AGG_BLOCK, SPINEBLOCK):
            return p
    raise _Redraw


def _parent_of(g: Graph, k):
    """The containing parent in the fabric hierarchy (block of a switch, switch of a port)."""
    if k[0] == PORT:
        for p, t in g.parents(k).items():
            if t == CONTAINS and g.kind(p) == SWITCH:
                return p
        raise _Redraw
    return _block_of(g, k)


def _add_port(g: Graph, d: Draws, sw) -> dict:
    n = next_port_index(g, [sw])
    return {"op": "add", "kind": PORT, "name": f"{sw[1]}.p{n}", "parent": list(sw),
            "capacity": d.choice(NEW_CAPACITIES)}


def _add_switch(g: Graph, d: Draws, block) -> dict:
    stage = d.choice((2, 3) if block[0] == AGG_BLOCK else (1, 2))
    prefix = f"{block[1]}.s{stage}c"
    used = [int(c[1][len(prefix):]) for c in g.children(block)
            if c[1].startswith(prefix) and c[1][len(prefix):].isdigit()]
    return {"op": "add", "kind": SWITCH, "name": f"{prefix}{max(used, default=0) + 1}",
            "parent": list(block), "stage": stage, "ports": d.choice((2, 4)),
            "capacity": d.choice(NEW_CAPACITIES)}


def _update(g: Graph, d: Draws, port) -> dict:
    cur = g.attrs(port).get(CAPACITY)
    return {"op": "update", "node": list(port),
            "capacity": d.choice([c for c in NEW_CAPACITIES if c != cur])}


def _addition(g: Graph, d: Draws):
    """An upstream-style addition made hierarchy-valid: a port under a switch, or a switch
    (with its ports) under an aggregation or spine block. Returns (op, parent)."""
    if d.uniform() < 0.5:
        sw = _pick(g, d, SWITCH)
        return _add_port(g, d, sw), sw
    block = d.choice(_blocks(g))
    return _add_switch(g, d, block), block


def _removal(g: Graph, d: Draws):
    c = _pick(g, d, d.choice((SWITCH, PORT)))
    return {"op": "remove", "node": list(c)}, c


def _read(name: str, node, **kw) -> dict:
    return {"op": name, "node": list(node), **kw}


COUNT_PAIRS = ((AGG_BLOCK, SWITCH), (AGG_BLOCK, PORT), (SPINEBLOCK, PORT), (SUPERBLOCK, PORT),
               (SUPERBLOCK, SWITCH), (CONTROL_DOMAIN, PORT), (CONTROL_DOMAIN, SWITCH),
               (CONTROL_DOMAIN, CONTROL_POINT), (RACK, CHASSIS), (RACK, PORT),
               (JUPITER, SWITCH), (JUPITER, AGG_BLOCK))


def s_add(g, d, do):
    op, _ = _addition(g, d)
    do(op)


def s_rank(g, d, do):
    kind = d.choice((AGG_BLOCK, SPINEBLOCK, CONTROL_DOMAIN, SUPERBLOCK, RACK))
    do(_read("rank", _pick(g, d, kind)))


def s_remove(g, d, do):
    do(_removal(g, d)[0])


def s_list(g, d, do):
    kind = d.choice((AGG_BLOCK, CONTROL_DOMAIN, RACK, SWITCH, SPINEBLOCK, SUPERBLOCK))
    do(_read("list", _pick(g, d, kind)))


def s_update(g, d, do):
    do(_update(g, d, _pick(g, d, PORT)))


def s_count(g, d, do):
    pk, k = d.choice(COUNT_PAIRS)
    do(_read("count", _pick(g, d, pk), kind=k))


def s_capacity(g, d, do):
    kind = d.choice((AGG_BLOCK, SPINEBLOCK, SUPERBLOCK, CONTROL_DOMAIN, RACK, SWITCH, JUPITER))
    do(_read("capacity", _pick(g, d, kind)))


def s_least_loaded(g, d, do):
    do(_read("least_loaded", d.choice(_blocks(g))))


def s_isolated(g, d, do):
    kind = d.weighted((SWITCH, PORT, AGG_BLOCK, RACK, CHASSIS, CONTROL_POINT),
                      (5, 1, 1, 1, 1, 1))
    do(_read("isolated", _pick(g, d, kind)))


def s_drain(g, d, do):
    do({"op": "drain", "node": list(_pick(g, d, SWITCH))})


def _then_read(read: str):
    def sampler(g, d, do):
        op, c = _removal(g, d)
        parent = _parent_of(g, c)
        do(op)
        kw = {"kind": c[0]} if read == "count" else {}
        do(_read(read, parent, **kw))
    return sampler


def s_update_then(read: str):
    def sampler(g, d, do):
        port = _pick(g, d, PORT)
        block = _block_of(g, _parent_of(g, port))
        do(_update(g, d, port))
        do(_read(read, block))
    return sampler


def s_drain_capacity(g, d, do):
    sw = _pick(g, d, SWITCH)
    block = _block_of(g, sw)
    do({"op": "drain", "node": list(sw)})
    do(_read("capacity", block))


def _add_then(read: str):
    def sampler(g, d, do):
        op, parent = _addition(g, d)
        do(op)
        kw = {"kind": op["kind"]} if read == "count" else {}
        do(_read(read, parent, **kw))
    return sampler


def s_place(g, d, do):
    block = d.choice(_blocks(g))
    do({"op": "place", "parent": list(block), "capacity": d.choice(NEW_CAPACITIES),
        "index": next_port_index(g, child_switches(g, block))})


def _compose(n_changes: int):
    def sampler(g, d, do):
        block = d.choice(_blocks(g))
        for _ in range(n_changes):
            sws = child_switches(g, block)
            what = d.choice(("add_port", "add_switch", "remove_switch", "remove_port",
                             "update", "drain"))
            if what == "add_switch" or not sws:
                do(_add_switch(g, d, block))
                continue
            sw = d.choice(sws)
            ports = ports_of(g, sw)
            if what == "add_port":
                do(_add_port(g, d, sw))
            elif what == "remove_switch":
                do({"op": "remove", "node": list(sw)})
            elif what == "remove_port" and len(ports) > 1:
                do({"op": "remove", "node": list(d.choice(ports))})
            elif what == "update" and ports:
                do(_update(g, d, d.choice(ports)))
            else:
                do({"op": "drain", "node": list(sw)})
        parent = next(p for p, t in g.parents(block).items() if t == CONTAINS)
        read = d.choice(("rank", "list", "count_port", "count_switch", "capacity",
                         "least_loaded", "rank_parent", "capacity_parent"))
        if read == "count_port":
            do(_read("count", block, kind=PORT))
        elif read == "count_switch":
            do(_read("count", block, kind=SWITCH))
        elif read.endswith("_parent"):
            do(_read(read[:-7], parent))
        else:
            do(_read(read, block))
    return sampler


_SAMPLERS = {
    "add": s_add, "rank": s_rank, "remove": s_remove, "list": s_list, "update": s_update,
    "count": s_count, "capacity": s_capacity, "least-loaded": s_least_loaded,
    "isolated": s_isolated, "drain": s_drain,
    "remove-list": _then_read("list"), "remove-rank": _then_read("rank"),
    "remove-count": _then_read("count"), "update-rank": s_update_then("rank"),
    "update-capacity": s_update_then("capacity"), "drain-capacity": s_drain_capacity,
    "add-list": _add_then("list"), "add-rank": _add_then("rank"),
    "add-count": _add_then("count"), "add-capacity": _add_then("capacity"), "place": s_place,
    "depth-3": _compose(2), "depth-4": _compose(3),
}


# ------------------------------------------------------------- records, replay
def to_scenario(drawn: Drawn, seed: int | None = None) -> Scenario:
    q = drawn.query
    return Scenario(task=TASK, level=q.level,
                    params={"topology": drawn.spec.to_dict(), "scheme": drawn.scheme},
                    faults=(q.to_dict(),), seed=seed,
                    meta={"category": q.label, "template": q.template})


def solve(base: BaseGraph, query: Query) -> tuple[object, Diff]:
    """Recompute a query's ground truth on its base graph (for records without one)."""
    g = Graph(base)
    if base.scheme == "merged":
        _, answer = compat.run(g, query.ops)
    else:
        answer, _ = run(g, query.ops)
    return answer, g.net_diff()


def from_scenario(scenario: Scenario) -> tuple[BaseGraph, Query]:
    """The base graph and query of a recorded scenario, with its ground truth."""
    if scenario.task != TASK:
        raise ValueError(f"scenario is for task {scenario.task!r}, not {TASK!r}")
    if len(scenario.faults) != 1:
        raise ValueError("a capacity-planning scenario holds exactly one query")
    spec = TopologySpec.from_dict(scenario.params["topology"])
    base = base_graph(spec, scenario.params.get("scheme", "kind_name"))
    q = Query.from_dict(scenario.faults[0])
    if "answer" not in q.ground_truth or "graph" not in q.ground_truth:
        answer, diff = solve(base, q)
        q.ground_truth = {"answer": answer, "graph": diff.to_json()}
    return base, q


def import_upstream(question: str) -> Scenario:
    """The ``level="compat"`` scenario of one upstream MALT question (its wording, see
    :func:`grader_compat.parse`), on upstream's graph; the ground truth is recomputed.
    Raises ValueError for a question upstream's templates cannot produce."""
    template, p = compat.parse(question)
    spec = netarena_spec()
    ops = compat.ops_of(template, p)
    atype, _ = compat.run(Graph(base_graph(spec, "merged")), ops)
    q = Query(template=template, level="compat", text=question.strip(), ops=ops,
              answer_type=atype)
    return Scenario(task=TASK, level="compat",
                    params={"topology": spec.to_dict(), "scheme": "merged"},
                    faults=(q.to_dict(with_answer=False),), seed=None,
                    meta={"category": q.label, "template": template, "source": "upstream"})


def generate_dataset(level, n: int, seed: int, **kw) -> list[Scenario]:
    """``n`` distinct scenarios of ``level`` drawn from ``seed``."""
    gen = QueryGenerator(level, **kw)
    rng = rng_from_seed(seed)
    return [to_scenario(x, seed) for x in gen.sample_unique(rng, n)]

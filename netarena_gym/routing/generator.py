"""Seeded scenario generation for the routing task: topology, faults, levels, the upstream
``compat`` preset, and import of upstream ``error_config.json`` files.

Levels:

* **1**: one fault on a one-router network (2-8 subnets, 1-4 hosts each);
* **2**: two faults of different types on a one-router network;
* **3**: three or four faults (types may repeat, targets differ) on any routers of a 2-4
  router network joined by transit links with static routes; faults can hide one another;
* **compat**: upstream's 15 categories (5 single types, 10 pairs, upstream's methods) on
  upstream's topology (one router, 2-4 subnets of 2-4 hosts each, the same names).

Every scenario is checked on the simulator: it must break at least one pair, else it is
resampled (upstream did not check, and some of its queries were healthy at step 0).
Combinations that no sequence of single commands can repair without breaking a working
pair are not drawn: MTU 68 on both ends of one transit link leaves the two routers
talking through fragments, and raising either end first cuts them off.
"""
from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from netarena_gym.core.ipv4 import int_to_ip
from netarena_gym.core.scenario import Scenario
from netarena_gym.errors import ScenarioError
from netarena_gym.core.seeding import choice, draw_seed, rng_from_seed
from netarena_gym.routing.faults import ABBREV, TYPES, UPSTREAM_METHODS, Fault, sample_fault
from netarena_gym.routing.topology import Layout, TopologySpec, layout_of

ALL_CAPABILITIES = frozenset({"netem"})
MAX_RESAMPLES = 200
COMPAT_CATEGORIES: tuple[tuple[str, ...], ...] = tuple(
    [(t,) for t in TYPES] + list(itertools.combinations(TYPES, 2)))
# upstream's plot labels for the 15 categories
_UPSTREAM_L2 = {("disable_routing", "disable_interface"), ("disable_routing", "remove_ip"),
                ("disable_routing", "wrong_routing_table"),
                ("disable_interface", "drop_traffic_to_from_subnet"),
                ("remove_ip", "wrong_routing_table"),
                ("drop_traffic_to_from_subnet", "wrong_routing_table")}


def compat_category_level(types: tuple[str, ...]) -> int:
    if len(types) == 1:
        return 1
    return 2 if tuple(types) in _UPSTREAM_L2 else 3


def category_name(types) -> str:
    return "+".join(types)


@dataclass(frozen=True)
class LevelConfig:
    routers: tuple[int, int]
    subnets: tuple[int, int]
    hosts: tuple[int, int]
    faults: tuple[int, int]
    distinct_types: bool

    def max_dims(self) -> tuple[int, int, int]:
        return self.routers[1], self.subnets[1], self.hosts[1]


LEVELS: dict = {
    1: LevelConfig(routers=(1, 1), subnets=(2, 8), hosts=(1, 4), faults=(1, 1), distinct_types=True),
    2: LevelConfig(routers=(1, 1), subnets=(2, 8), hosts=(1, 4), faults=(2, 2), distinct_types=True),
    3: LevelConfig(routers=(2, 4), subnets=(2, 4), hosts=(1, 3), faults=(3, 4), distinct_types=False),
    "compat": LevelConfig(routers=(1, 1), subnets=(2, 4), hosts=(2, 4), faults=(1, 2),
                          distinct_types=True),
}


def level_config(level, topology: dict | None = None) -> LevelConfig:
    """The level's config, with optional overrides of ``routers``/``subnets``/``hosts``
    ranges (each an int or a ``[lo, hi]`` pair)."""
    cfg = LEVELS[level]
    if not topology:
        return cfg
    kw = {}
    for key in ("routers", "subnets", "hosts"):
        if key in topology:
            v = topology[key]
            lo, hi = (v, v) if isinstance(v, int) else (int(v[0]), int(v[1]))
            if lo > hi:
                raise ValueError(f"topology {key}: {lo} > {hi}")
            kw[key] = (lo, hi)
    unknown = set(topology) - {"routers", "subnets", "hosts"}
    if unknown:
        raise ValueError(f"unknown topology keys {sorted(unknown)}")
    return LevelConfig(routers=kw.get("routers", cfg.routers), subnets=kw.get("subnets", cfg.subnets),
                       hosts=kw.get("hosts", cfg.hosts), faults=cfg.faults,
                       distinct_types=cfg.distinct_types)


def _randint(rng, lo_hi) -> int:
    lo, hi = lo_hi
    return int(rng.integers(lo, hi + 1))


def sample_topology(rng: np.random.Generator, cfg: LevelConfig, *, uniform_hosts=False) -> TopologySpec:
    n = _randint(rng, cfg.routers)
    parents = tuple(int(rng.integers(0, i)) for i in range(1, n))
    hosts = []
    for _ in range(n):
        s = _randint(rng, cfg.subnets)
        if uniform_hosts:
            h = _randint(rng, cfg.hosts)
            hosts.append((h,) * s)
        else:
            hosts.append(tuple(_randint(rng, cfg.hosts) for _ in range(s)))
    return TopologySpec(hosts=tuple(hosts), parents=parents)


@dataclass
class Generated:
    """A scenario and the simulator state already built for it (so reset builds once)."""
    scenario: Scenario
    state: object = field(default=None, repr=False)


class RoutingGenerator:
    """Draws scenarios for one level. ``capabilities`` removes fault methods a backend cannot
    inject (Mininet here has no netem)."""

    def __init__(self, level=1, *, capabilities: frozenset[str] = ALL_CAPABILITIES,
                 topology: dict | None = None, fault_types: tuple[str, ...] | None = None,
                 probe_timeout: float = 0.2):
        if level not in LEVELS:
            raise ValueError(f"level must be one of {tuple(LEVELS)}")
        self.level = level
        self.cfg = level_config(level, topology)
        self.capabilities = frozenset(capabilities)
        self.fault_types = tuple(fault_types or TYPES)
        bad = set(self.fault_types) - set(TYPES)
        if bad:
            raise ValueError(f"unknown fault types {sorted(bad)}; known: {TYPES}")
        self.probe_timeout = probe_timeout

    # ---------------------------------------------------------------- public
    def generate(self, seed: int, *, category: int | None = None) -> Generated:
        """The scenario for ``seed`` (pure function of seed, level and settings)."""
        rng = rng_from_seed(seed)
        for _ in range(MAX_RESAMPLES):
            if self.level == "compat":
                scenario = self._draw_compat(rng, seed, category)
            else:
                scenario = self._draw(rng, seed)
            state = self.build(scenario)
            if not state.oracle.matrix().all():
                return Generated(scenario, state)
        raise ScenarioError(f"no observable fault found for seed {seed} "
                            f"after {MAX_RESAMPLES} draws")

    def sample(self, rng: np.random.Generator, *, category: int | None = None) -> Generated:
        return self.generate(draw_seed(rng), category=category)

    def build(self, scenario: Scenario):
        from netarena_gym.routing.backends.sim import SimState
        return SimState.build(scenario, probe_timeout=self.probe_timeout)

    # --------------------------------------------------------------- drawing
    def _draw(self, rng, seed) -> Scenario:
        cfg = self.cfg
        spec = sample_topology(rng, cfg)
        lay = layout_of(spec)
        k = _randint(rng, cfg.faults)
        types = self._types(rng, k)
        faults: list[Fault] = []
        seen = set()
        for t in types:
            for _ in range(50):
                router = choice(rng, lay.routers)
                f = sample_fault(rng, lay, t, router, self.capabilities, alone=(k == 1))
                key = (f.type, f.router, json.dumps(f.params, sort_keys=True))
                if key not in seen and not _unsafe_pair(lay, f, faults):
                    seen.add(key)
                    faults.append(f)
                    break
        return Scenario(task="routing", level=self.level,
                        params={"topology": spec.to_dict()},
                        faults=tuple(f.to_dict() for f in faults), seed=seed,
                        meta={"category": category_name(tuple(f.type for f in faults)),
                              "labels": [Fault.from_dict(f.to_dict()).label for f in faults]})

    def _types(self, rng, k: int) -> list[str]:
        types = list(self.fault_types)
        if self.cfg.distinct_types:
            if k > len(types):
                raise ValueError(f"level {self.level} needs {k} distinct fault types")
            idx = rng.permutation(len(types))[:k]
            return sorted((types[int(i)] for i in idx), key=TYPES.index)
        return [choice(rng, types) for _ in range(k)]

    def _draw_compat(self, rng, seed, category: int | None) -> Scenario:
        cats = [c for c in COMPAT_CATEGORIES if set(c) <= set(self.fault_types)]
        cat = cats[int(rng.integers(0, len(cats)))] if category is None else COMPAT_CATEGORIES[category]
        s, h = _randint(rng, self.cfg.subnets), _randint(rng, self.cfg.hosts)
        spec = TopologySpec.uniform(s, h)
        lay = Layout(spec)
        faults = [sample_fault(rng, lay, t, "r0", self.capabilities, alone=len(cat) == 1,
                               allowed=UPSTREAM_METHODS[t]) for t in cat]
        return Scenario(task="routing", level="compat", params={"topology": spec.to_dict()},
                        faults=tuple(f.to_dict() for f in faults), seed=seed,
                        meta={"category": category_name(cat),
                              "category_index": COMPAT_CATEGORIES.index(cat),
                              "upstream_level": compat_category_level(cat),
                              "labels": [f.label for f in faults]})


def _unsafe_pair(lay: Layout, f: Fault, faults: list[Fault]) -> bool:
    """True if ``f`` with one of ``faults`` cannot be repaired safely (see module doc)."""
    if (f.type, f.method) != ("disable_interface", 3):
        return False
    ends = {}
    for ln in lay.links:
        ends[ln.a_iface], ends[ln.b_iface] = ln.b_iface, ln.a_iface
    peer = ends.get(f.params["interface"])
    return peer is not None and any(
        (g.type, g.method) == ("disable_interface", 3) and g.params["interface"] == peer
        for g in faults)


# --------------------------------------------------------------- upstream import
_PREFIX = re.compile(r"^p\d+_")


def _iface_name(v) -> str:
    return _PREFIX.sub("", str(v))


def _subnet(v) -> str:
    if isinstance(v, int) or (isinstance(v, str) and v.isdigit()):
        return f"192.168.{int(v)}.0/24"
    s = str(v)
    return s if "/" in s else f"{s}/24"


def _upstream_fault(t: str, d: dict, lay: Layout, rng) -> Fault:
    m = int(d.get("method", 1))
    if t == "disable_routing":
        p = {"subnet": _subnet(d["subnet"])} if m == 4 else {}
    elif t == "disable_interface":
        p = {"interface": _iface_name(d["interface"])}
    elif t == "remove_ip":
        itf = _iface_name(d["interface"])
        p = {"interface": itf}
        k = int(itf.rsplit("eth", 1)[1])
        if m == 2:  # upstream drew this at injection time; we draw it once, here
            p["address"] = f"10.{int(rng.integers(1, 255))}.{int(rng.integers(1, 255))}.1/24"
        elif m == 3:
            p["address"] = f"192.168.{k}.1/{int(d.get('wrong_mask', 30))}"
        elif m == 4:
            others = [s for s in lay.subnets if s.iface != itf]
            p["address"] = f"{int_to_ip(choice(rng, others).gateway)}/24"
    elif t == "drop_traffic_to_from_subnet":
        sub = _subnet(d["subnet"])
        p = {"subnet": sub}
        if m == 4:
            k = int(sub.split(".")[2])
            p.update(interface=f"r0-eth{k}", delay_ms=int(d.get("delay_ms", 2000)))
    elif t == "wrong_routing_table":
        f, to = int(d["from"]), int(d["to"])
        p = {"subnet": f"192.168.{f}.0/24", "dev": _iface_name(d.get("del_interface", f"r0-eth{f}")),
             "via": None, "wrong_dev": _iface_name(d.get("add_interface", f"r0-eth{to}")),
             "wrong_ip": str(d.get("to_ip", f"192.168.{to}.1"))}
        if m == 3:
            p["metric"] = 10000  # upstream always used 10000 here (its stored metric was ignored)
    else:
        raise ValueError(f"unknown upstream error type {t!r}")
    return Fault(t, m, "r0", p)


def import_upstream(source: str | Path | dict) -> list[Scenario]:
    """Convert an upstream ``error_config.json`` (``{"queries": [...]}`` with
    ``errortype``/``errordetail``/``num_switches``/``num_hosts_per_subnet``) into scenarios.
    Parameters upstream drew at injection time are drawn here from a per-query seed."""
    if isinstance(source, (str, Path)):
        data = json.loads(Path(source).read_text())
    else:
        data = source
    queries = data["queries"] if isinstance(data, dict) else data
    out = []
    for i, q in enumerate(queries):
        types = q["errortype"]
        details = q["errordetail"]
        if isinstance(types, str):
            types, details = [types], [details]
        if len(types) != len(details):
            raise ValueError(f"query {i}: errortype and errordetail lengths differ")
        spec = TopologySpec.uniform(int(q.get("num_switches", 2)), int(q.get("num_hosts_per_subnet", 1)))
        lay = Layout(spec)
        rng = rng_from_seed(i)
        faults = [_upstream_fault(t, d, lay, rng) for t, d in zip(types, details)]
        cat = tuple(types)
        out.append(Scenario(task="routing", level="compat", params={"topology": spec.to_dict()},
                            faults=tuple(f.to_dict() for f in faults), seed=None,
                            meta={"category": category_name(cat), "source": "upstream",
                                  "query_index": i,
                                  "upstream_level": compat_category_level(cat) if len(cat) <= 2 else 3,
                                  "labels": [f.label for f in faults]}))
    return out


__all__ = ["RoutingGenerator", "LEVELS", "COMPAT_CATEGORIES", "import_upstream", "ABBREV",
           "Generated", "sample_topology", "level_config"]

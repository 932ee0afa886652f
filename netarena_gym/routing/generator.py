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
Beside other faults, each fault has a target of its own (:func:`~netarena_gym.routing.faults.target`:
an interface, a route, a subnet, a router's forwarding; no two root qdiscs on one interface),
and none is inert (:func:`~netarena_gym.routing.faults.inert`: a wider mask on a LAN breaks
nothing); a fault that finds no such target redraws the scenario, and a requested category
that never fits is :class:`~netarena_gym.errors.InvalidConfig`.
Combinations that no sequence of single commands can repair without breaking a working
pair are not drawn: MTU 68 on both ends of one transit link leaves the two routers
talking through fragments, and raising either end first cuts them off; the same holds for
any two transit interfaces that face each other along a routed path (:func:`mtu_facing`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from netarena_gym.core.scenario import Scenario, category_name, parse_category
from netarena_gym.errors import InvalidConfig, ScenarioError
from netarena_gym.core.seeding import choice, draw_seed, rng_from_seed
from netarena_gym.routing.faults import (
    ABBREV, NETEM, TYPES, UPSTREAM_METHODS, Fault, check_supported, clash, inert,
    sample_fault, target)
from netarena_gym.routing.shapes import SHAPES, sample_shape
from netarena_gym.routing.topology import (MAX_HOSTS_PER_SUBNET, MAX_ROUTERS,
                                           MAX_SUBNETS_PER_ROUTER, Layout, TopologySpec,
                                           layout_of)
# upstream's categories and the import of its queries live in routing/upstream.py
from netarena_gym.routing.upstream import (COMPAT_CATEGORIES, compat_category_level,
                                           import_upstream)

ALL_CAPABILITIES = frozenset({"netem"})
MAX_RESAMPLES = 200


@dataclass(frozen=True)
class LevelConfig:
    routers: tuple[int, int]
    subnets: tuple[int, int]
    hosts: tuple[int, int]
    faults: tuple[int, int]
    distinct_types: bool
    shape: str | None = None  # a named large topology (netarena_gym.routing.shapes)

    def max_dims(self) -> tuple[int, int, int]:
        return self.routers[1], self.subnets[1], self.hosts[1]

    @property
    def fixed_topology(self) -> bool:
        """Whether every draw gives the same topology: fixed router, subnet and host
        counts, and a fixed way of linking the routers (a named shape, or at most two
        routers, whose tree has one form)."""
        fixed = all(lo == hi for lo, hi in (self.routers, self.subnets, self.hosts))
        return fixed and (self.shape is not None or self.routers[1] <= 2)


LEVELS: dict = {
    1: LevelConfig(routers=(1, 1), subnets=(2, 8), hosts=(1, 4), faults=(1, 1), distinct_types=True),
    2: LevelConfig(routers=(1, 1), subnets=(2, 8), hosts=(1, 4), faults=(2, 2), distinct_types=True),
    3: LevelConfig(routers=(2, 4), subnets=(2, 4), hosts=(1, 3), faults=(3, 4), distinct_types=False),
    "compat": LevelConfig(routers=(1, 1), subnets=(2, 4), hosts=(2, 4), faults=(1, 2),
                          distinct_types=True),
}


def level_config(level, topology: dict | None = None) -> LevelConfig:
    """The level's config, with optional overrides of ``routers``/``subnets``/``hosts``
    ranges (each an int or a ``[lo, hi]`` pair) and a ``shape`` (``"tree"``, ``"ring"``,
    ``"leaf-spine"``: :mod:`netarena_gym.routing.shapes`; up to 64 routers)."""
    cfg = LEVELS[level]
    if topology is None:
        return cfg
    if not isinstance(topology, dict):
        raise InvalidConfig(f"topology must be a dict such as {{'routers': [1, 2], 'subnets': 4}}"
                            f", got {topology!r}")
    if not topology:
        return cfg
    kw = {}
    for key, top in (("routers", MAX_ROUTERS), ("subnets", MAX_SUBNETS_PER_ROUTER),
                     ("hosts", MAX_HOSTS_PER_SUBNET)):
        if key in topology:
            lo, hi = _size_range(key, topology[key], top)
            kw[key] = (lo, hi)
    if level == "compat" and ({"shape"} & set(topology) or kw.get("routers", (1, 1)) != (1, 1)):
        raise InvalidConfig("compat draws upstream's one-router networks: its topology takes "
                            "subnets and hosts, not routers or shape")
    unknown = set(topology) - {"routers", "subnets", "hosts", "shape"}
    if unknown:
        raise InvalidConfig(f"unknown topology keys {sorted(unknown, key=repr)}; valid: "
                            "routers, subnets, hosts, shape")
    shape = topology.get("shape")
    if shape is not None and shape not in SHAPES:
        raise InvalidConfig(f"topology shape must be one of {SHAPES}, got {shape!r}")
    out = LevelConfig(routers=kw.get("routers", cfg.routers), subnets=kw.get("subnets", cfg.subnets),
                      hosts=kw.get("hosts", cfg.hosts), faults=cfg.faults,
                      distinct_types=cfg.distinct_types, shape=shape)
    if out.routers[0] * out.subnets[0] < 2:  # one subnet alone has no pair to break
        raise InvalidConfig("topology: the smallest network must have two subnets or more "
                            f"(routers x subnets), got routers {out.routers[0]} x subnets "
                            f"{out.subnets[0]}")
    if shape == "leaf-spine" and out.routers[0] < 4:
        raise InvalidConfig("topology shape 'leaf-spine' needs at least 4 routers")
    return out


def _size_range(key: str, v, top: int) -> tuple[int, int]:
    """``(lo, hi)`` of a topology size given as an int or a ``[lo, hi]`` pair, each in
    ``1..top``; InvalidConfig naming the key otherwise."""
    pair = [v, v] if not isinstance(v, (list, tuple)) else list(v)
    if (len(pair) != 2 or any(isinstance(x, bool) or not isinstance(x, int) for x in pair)
            or not 1 <= pair[0] <= pair[1] <= top):
        raise InvalidConfig(f"topology {key} must be an int or a [lo, hi] pair with "
                            f"1 <= lo <= hi <= {top}, got {v!r}")
    return pair[0], pair[1]


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


def default_netem_faults(level) -> bool:
    """Whether netem fault methods are drawn when ``netem_faults`` is not given: at levels
    1-3 no (every backend can run the default set), in compat yes (upstream's
    ``drop_traffic_to_from_subnet`` method 4 is a netem delay)."""
    return level == "compat"


class RoutingGenerator:
    """Draws scenarios for one level.

    The draw depends only on the seed and these settings, never on the backend: the same
    seed gives the same scenario dict on the simulator and on Mininet. ``netem_faults``
    puts the netem methods (DI4 loss, DT4 delay, DT6 corrupt) into the draw (default:
    :func:`default_netem_faults`). ``capabilities`` are the backend's: a drawn scenario
    that needs one it lacks is refused with :class:`~netarena_gym.errors.ScenarioError`,
    never replaced by another draw."""

    def __init__(self, level=1, *, capabilities: frozenset[str] = ALL_CAPABILITIES,
                 topology: dict | None = None, fault_types: tuple[str, ...] | None = None,
                 probe_timeout: float = 0.2, netem_faults: bool | None = None):
        if level not in LEVELS:
            raise InvalidConfig(f"level must be one of {tuple(LEVELS)}")
        self.level = level
        self.cfg = level_config(level, topology)
        self.capabilities = frozenset(capabilities)
        self.netem_faults = default_netem_faults(level) if netem_faults is None else bool(netem_faults)
        self.drawable = NETEM if self.netem_faults else frozenset()
        if fault_types is not None and not fault_types:
            raise InvalidConfig(f"fault_types must name one fault type or more (None: all), "
                                f"got {fault_types!r}; known: {TYPES}")
        self.fault_types = tuple(dict.fromkeys(TYPES if fault_types is None else fault_types))
        bad = set(self.fault_types) - set(TYPES)
        if bad:
            raise InvalidConfig(f"unknown fault types {sorted(bad)}; known: {TYPES}")
        need = self.cfg.faults[1] if self.cfg.distinct_types and level != "compat" else 1
        if len(self.fault_types) < need:  # refused when the env is built, not at a reset
            raise InvalidConfig(f"level {level!r} draws {need} faults of distinct types: "
                                f"fault_types must name {need} or more, got "
                                f"{list(self.fault_types)}")
        self.probe_timeout = probe_timeout

    # ---------------------------------------------------------------- public
    def generate(self, seed: int, *, category: int | str | None = None) -> Generated:
        """The scenario for ``seed`` (pure function of seed, level, settings and
        ``category``: see :meth:`_category_types`)."""
        rng = rng_from_seed(seed)
        types = self._category_types(category)
        placed = False
        for _ in range(MAX_RESAMPLES):
            if self.level == "compat":
                scenario = self._draw_compat(rng, seed, types)
            else:
                scenario = self._draw(rng, seed, types)
            if scenario is None:  # the faults did not fit on distinct targets: redraw
                continue
            placed = True
            state = self.build(scenario)
            if not state.oracle.matrix().all():
                try:
                    check_supported(scenario.faults, self.capabilities)
                except ScenarioError as e:
                    raise ScenarioError(f"seed {seed} at level {self.level!r}: {e}") from None
                return Generated(scenario, state)
        if not placed:
            what = (f"category {category_name(types)!r}" if types is not None
                    else f"level {self.level!r} with fault_types {list(self.fault_types)}")
            raise InvalidConfig(f"{what}: its faults do not fit on distinct targets (an "
                                f"interface, a route, a subnet, a router's forwarding) of "
                                f"this env's topologies (seed {seed}, {MAX_RESAMPLES} draws)")
        raise ScenarioError(f"no observable fault found for seed {seed} "
                            f"after {MAX_RESAMPLES} draws")

    def sample(self, rng: np.random.Generator, *,
               category: int | str | None = None) -> Generated:
        return self.generate(draw_seed(rng), category=category)

    def build(self, scenario: Scenario):
        """The simulator state of ``scenario``; with a fixed topology
        (:attr:`LevelConfig.fixed_topology`, outside ``compat``) the pristine network and its
        probes are kept from the first reset on, since every later one reuses them."""
        from netarena_gym.routing.backends.sim import SimState
        recurring = self.level != "compat" and self.cfg.fixed_topology
        return SimState.build(scenario, probe_timeout=self.probe_timeout, recurring=recurring)

    # --------------------------------------------------------------- drawing
    def _category_types(self, category) -> tuple[str, ...] | None:
        """The fault types of a requested category (a name such as ``"remove_ip"`` or
        ``"disable_routing+remove_ip"``, a list of types, or an index into upstream's 15
        categories), or None to draw them. In ``compat`` it must be one of upstream's
        categories (one type, or two distinct types); at levels 1-3 it fixes the episode's
        fault types, one fault each."""
        if category is None:
            return None
        types = parse_category(category, TYPES, COMPAT_CATEGORIES)
        if self.level == "compat":
            types = tuple(sorted(types, key=TYPES.index))
            if types not in COMPAT_CATEGORIES:
                raise InvalidConfig(f"compat draws upstream's categories, one fault type or "
                                    f"two distinct ones; {category!r} is not one of them")
        return types

    def _draw(self, rng, seed, types: tuple[str, ...] | None = None) -> Scenario | None:
        """A scenario, or None when a fault finds no target of its own on the drawn
        topology (it used to be left out silently: fewer faults than drawn or asked for)."""
        cfg = self.cfg
        spec = (sample_topology(rng, cfg) if cfg.shape is None
                else sample_shape(rng, cfg.shape, cfg.routers, cfg.subnets, cfg.hosts))
        lay = layout_of(spec)
        if types is None:
            k = _randint(rng, cfg.faults)
            types = self._types(rng, k)
        k = len(types)
        faults: list[Fault] = []
        seen = set()
        for t in types:
            for _ in range(50):
                router = choice(rng, lay.routers)
                f = sample_fault(rng, lay, t, router, self.drawable, alone=(k == 1))
                # a lone fault has no other to repeat, and the scenario's check sees it
                if k == 1 or (target(f) not in seen and not inert(lay, f)
                              and not any(clash(f, g) for g in faults)
                              and not _unsafe_pair(lay, f, faults)):
                    seen.add(target(f))
                    faults.append(f)
                    break
            else:
                return None
        return Scenario(task="routing", level=self.level,
                        params={"topology": spec.to_dict()},
                        faults=tuple(f.to_dict() for f in faults), seed=seed,
                        meta={"category": category_name(tuple(f.type for f in faults)),
                              "labels": [f.label for f in faults]})

    def _types(self, rng, k: int) -> list[str]:
        types = list(self.fault_types)
        if self.cfg.distinct_types:
            if k > len(types):
                raise InvalidConfig(f"level {self.level} needs {k} distinct fault types")
            idx = rng.permutation(len(types))[:k]
            return sorted((types[int(i)] for i in idx), key=TYPES.index)
        return [choice(rng, types) for _ in range(k)]

    def _draw_compat(self, rng, seed, types: tuple[str, ...] | None) -> Scenario:
        cats = [c for c in COMPAT_CATEGORIES if set(c) <= set(self.fault_types)]
        cat = cats[int(rng.integers(0, len(cats)))] if types is None else types
        s, h = _randint(rng, self.cfg.subnets), _randint(rng, self.cfg.hosts)
        spec = TopologySpec.uniform(s, h)
        lay = Layout(spec)
        faults = []
        for t in cat:
            for _ in range(50):  # beside another fault, an inert one would not be there
                f = sample_fault(rng, lay, t, "r0", self.drawable, alone=len(cat) == 1,
                                 allowed=UPSTREAM_METHODS[t])
                if len(cat) == 1 or not inert(lay, f):
                    break
            faults.append(f)
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
    a = f.params["interface"]
    return any((g.type, g.method) == ("disable_interface", 3)
               and (mtu_facing(lay, a, g.params["interface"])
                    or mtu_facing(lay, g.params["interface"], a)) for g in faults)


def mtu_facing(lay: Layout, a: str, b: str) -> bool:
    """Whether a routed path leaves transit interface ``a``'s router through ``a`` and
    later enters ``b``'s router through ``b``: with MTU 68 on both, the packets fragmented
    at ``a`` pass ``b``, and raising ``a`` first cuts that path (both ends of one link are
    the shortest case; on large networks the two links may be far apart)."""
    side = {}
    for ln in lay.links:
        side[ln.a_iface], side[ln.b_iface] = (ln.a, ln.b), (ln.b, ln.a)
    if a not in side or b not in side:
        return False  # a LAN interface's fragments end at its hosts
    (ra, pa), (rb, pb) = side[a], side[b]
    via = {r: {itf: nb for nb, itf, _ in lay.neighbors(r)} for r in lay.routers}
    for t in lay.routers:
        if t == ra or lay.next_hops(ra)[t][0] != a:
            continue
        prev, cur = ra, pa
        while (prev, cur) != (pb, rb):
            if cur == t:
                break
            prev, cur = cur, via[cur][lay.next_hops(cur)[t][0]]
        else:
            return True
    return False


__all__ = ["RoutingGenerator", "LEVELS", "COMPAT_CATEGORIES", "import_upstream", "ABBREV",
           "Generated", "sample_topology", "level_config", "compat_category_level"]

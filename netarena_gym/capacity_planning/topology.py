"""MALT topologies: the entity/relationship record, a loader and writer for MALT text
files, and a seeded generator of MALT-schema topologies of any size.

``generate(TopologySpec())`` reproduces the structure of Google's example model
(``malt-example-final.textproto``, Apache-2.0) entity for entity and relationship for
relationship, in the same order: 1 jupiter, 4 superblocks of 4 aggregation blocks, 4 spine
blocks, 16 switches per block (two stages of 8), 16 ports per switch, one chassis and one
control point per switch, a rack per block and a control domain per superblock and per spine
block: 6,133 entities and 7,064 relationships. Sizes and the port-capacity distribution are
parameters; capacities are drawn from a numpy Generator seeded by ``capacity_seed``.

Graphs are built from a topology in one of two schemes:

* ``"kind_name"`` (ours): one node per entity, keyed by ``(kind, name)``, so a switch, its
  chassis and its control point stay distinct; integer attributes;
* ``"merged"`` (upstream NetArena's loader): one node per *name*, ``type`` the list of the
  merged kinds, every number a float, and parallel relationships overwritten (the last
  wins), which turns the chassis/control-point/switch triangle into an RK_CONTROLS self-loop.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from netarena_gym.core.seeding import rng_from_seed
from netarena_gym.capacity_planning import textproto
from netarena_gym.capacity_planning.kinds import (
    AGG_BLOCK, ATTR_BLOCK, CAPACITY, CHASSIS, CONTAINS, CONTROL_DOMAIN, CONTROL_POINT, CONTROLS,
    JUPITER, KIND_SET, PORT, RACK, SPINEBLOCK, SUPERBLOCK, SWITCH)
from netarena_gym.capacity_planning.textproto import Ident

SCHEMES = ("kind_name", "merged")
#: the most switches and ports a topology may hold: 15x the largest drawn one (compat,
#: about 5,500 nodes); a replayed record of 10**5 superblocks used 22 GB before
MAX_ELEMENTS = 100_000

# NetArena's copy of Google's file differs in exactly these five port capacities
NETARENA_OVERRIDES: tuple[tuple[str, int], ...] = (
    ("ju1.a1.m1.s2c1.p2", 2_000_000_000),
    ("ju1.a1.m1.s2c1.p3", 4_000_000_000),
    ("ju1.a1.m1.s2c2.p14", 5_000_000_000),
    ("ju1.a1.m1.s2c4.p9", 2_000_000_000),
    ("ju1.a1.m1.s2c4.p15", 2_000_000_000),
)


@dataclass(frozen=True)
class Entity:
    kind: str
    name: str
    blocks: dict = field(default_factory=dict)  # attribute block name -> fields (nested dicts)

    def flat_attrs(self) -> dict:
        """Every field of every attribute block, one level deep (upstream's flattening)."""
        out: dict = {}
        for body in self.blocks.values():
            out.update(body)
        return out


@dataclass(frozen=True)
class Relationship:
    kind: str
    a: tuple[str, str]  # (kind, name)
    z: tuple[str, str]


@dataclass
class Topology:
    entities: list[Entity]
    relationships: list[Relationship]

    # ------------------------------------------------------------- text format
    @classmethod
    def from_textproto(cls, text: str) -> "Topology":
        msg = textproto.parse(text)
        ents, rels = [], []
        for key, body in msg:
            if key == "entity":
                ents.append(_entity(body))
            elif key == "relationship":
                rels.append(_relationship(body))
            else:
                raise ValueError(f"unexpected top-level field {key!r} (want entity/relationship)")
        return cls(ents, rels)

    @classmethod
    def load(cls, path) -> "Topology":
        with open(path, encoding="utf-8") as f:
            return cls.from_textproto(f.read())

    def to_textproto(self) -> str:
        msg: list = []
        for e in self.entities:
            body: list = [("id", [("kind", Ident(e.kind)), ("name", e.name)])]
            for block, fields in e.blocks.items():
                body.append((block, _to_message(fields)))
            msg.append(("entity", body))
        for r in self.relationships:
            msg.append(("relationship", [
                ("kind", Ident(r.kind)),
                ("a", [("kind", Ident(r.a[0])), ("name", r.a[1])]),
                ("z", [("kind", Ident(r.z[0])), ("name", r.z[1])])]))
        return textproto.dump(msg)

    # ------------------------------------------------------------------ facts
    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for e in self.entities:
            out[e.kind] = out.get(e.kind, 0) + 1
        return out

    def relationship_counts(self) -> dict[tuple[str, str, str], int]:
        out: dict[tuple[str, str, str], int] = {}
        for r in self.relationships:
            k = (r.kind, r.a[0], r.z[0])
            out[k] = out.get(k, 0) + 1
        return out

    # ----------------------------------------------------------------- graphs
    def graph_records(self, scheme: str = "kind_name") -> tuple[dict, dict]:
        """``(nodes, edges)``: ``nodes`` maps a node key to its attribute dict and ``edges``
        maps ``(a_key, z_key)`` to the relationship kind, both in file order."""
        if scheme == "kind_name":
            nodes: dict = {}
            for e in self.entities:
                attrs = {"name": e.name, "type": [e.kind]}
                if e.blocks:  # most entities (chassis, control points, ...) have none
                    attrs.update(_plain(e.flat_attrs()))
                nodes[(e.kind, e.name)] = attrs
            edges = {(r.a, r.z): r.kind for r in self.relationships}
            return nodes, edges
        if scheme == "merged":
            nodes = {}
            for e in self.entities:
                if e.name not in nodes:
                    nodes[e.name] = {"type": [e.kind], "name": e.name}
                else:
                    nodes[e.name]["type"].append(e.kind)
                for k, v in e.flat_attrs().items():
                    nodes[e.name][k] = _floats(v)
            edges = {}
            for r in self.relationships:
                edges[(r.a[1], r.z[1])] = r.kind
            return nodes, edges
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")


def _plain(v):
    """Attribute values as plain Python data (enum identifiers become ``str``)."""
    t = type(v)
    if t is int or t is str:  # most values (Ident, a str subclass, is not)
        return v
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return str(v) if isinstance(v, Ident) else v


def _floats(v):
    """Upstream's parser turns every numeric literal into a float."""
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, dict):
        return {k: _floats(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_floats(x) for x in v]
    return str(v) if isinstance(v, Ident) else v


def _to_dict(msg) -> dict:
    out: dict = {}
    for k, v in msg:
        v = _to_dict(v) if isinstance(v, list) else v
        if k in out:
            if not isinstance(out[k], list) or not getattr(out[k], "_repeated", False):
                out[k] = _Repeated([out[k]])
            out[k].append(v)
        else:
            out[k] = v
    return out


class _Repeated(list):
    _repeated = True


def _to_message(d: dict) -> list:
    msg: list = []
    for k, v in d.items():
        vals = v if isinstance(v, _Repeated) else [v]
        for x in vals:
            msg.append((k, _to_message(x) if isinstance(x, dict) else x))
    return msg


def _entity(body) -> Entity:
    ident = textproto.field(body, "id")
    if not isinstance(ident, list):
        raise ValueError("entity without an id block")
    kind, name = textproto.field(ident, "kind"), textproto.field(ident, "name")
    if kind not in KIND_SET or not isinstance(name, str):
        raise ValueError(f"entity with bad id: kind={kind!r} name={name!r}")
    blocks = {k: _to_dict(v) for k, v in body if k != "id" and isinstance(v, list)}
    return Entity(str(kind), name, blocks)


def _relationship(body) -> Relationship:
    kind = textproto.field(body, "kind")
    a, z = textproto.field(body, "a"), textproto.field(body, "z")
    if not isinstance(a, list) or not isinstance(z, list):
        raise ValueError("relationship without a/z ends")
    end = lambda m: (str(textproto.field(m, "kind")), textproto.field(m, "name"))  # noqa: E731
    return Relationship(str(kind), end(a), end(z))


# ---------------------------------------------------------------------- generator
@dataclass(frozen=True)
class TopologySpec:
    """Parameters of a generated topology. The defaults give Google's example structure
    with every port at 1 Gbps (Google's values)."""
    jupiter: str = "ju1"
    superblocks: int = 4
    aggs_per_superblock: int = 4
    spineblocks: int = 4
    agg_switches: tuple[int, int] = (8, 8)     # stage-2 and stage-3 switches per agg block
    spine_switches: tuple[int, int] = (8, 8)   # stage-1 and stage-2 switches per spine block
    ports_per_switch: int = 16
    capacities: tuple[int, ...] = (1_000_000_000,)  # port capacities to draw from (bps)
    weights: tuple[float, ...] = (1.0,)
    capacity_per: str = "port"                 # draw per "port" or once per "switch"
    capacity_seed: int = 0
    overrides: tuple[tuple[str, int], ...] = ()  # (port name, bps) applied last

    def __post_init__(self):
        def whole(v) -> bool:
            return isinstance(v, int) and not isinstance(v, bool)

        for f in ("superblocks", "aggs_per_superblock", "spineblocks", "ports_per_switch"):
            if not whole(getattr(self, f)) or getattr(self, f) < 0:
                raise ValueError(f"{f} must be an integer >= 0, got {getattr(self, f)!r}")
        for f in ("agg_switches", "spine_switches"):
            v = getattr(self, f)
            if len(v) != 2 or not all(whole(x) and x >= 0 for x in v):
                raise ValueError(f"{f} must be two integers >= 0, got {v!r}")
        if not all(whole(c) and c > 0 for c in self.capacities):
            raise ValueError(f"capacities must be integers > 0 (bps), got {self.capacities!r}")
        if self.ports_per_switch < 1:
            raise ValueError("ports_per_switch must be >= 1 (a switch needs a port)")
        if len(self.capacities) != len(self.weights) or not self.capacities:
            raise ValueError("capacities and weights must be non-empty and of equal length")
        if any(w < 0 for w in self.weights) or sum(self.weights) <= 0:
            raise ValueError("weights must be non-negative with a positive sum")
        if self.capacity_per not in ("port", "switch"):
            raise ValueError("capacity_per must be 'port' or 'switch'")
        if self.size() > MAX_ELEMENTS:  # a replayed record builds before anything else
            raise ValueError(f"the topology would have about {self.size():,} switches and "
                             f"ports; at most {MAX_ELEMENTS:,}")

    def size(self) -> int:
        """Switches and ports the topology holds (what its graph's size follows)."""
        switches = (self.superblocks * self.aggs_per_superblock * sum(self.agg_switches)
                    + self.spineblocks * sum(self.spine_switches))
        return switches * (1 + self.ports_per_switch)

    def to_dict(self) -> dict[str, Any]:
        d = {f: getattr(self, f) for f in self.__dataclass_fields__}  # scalars and tuples
        d["agg_switches"] = list(self.agg_switches)
        d["spine_switches"] = list(self.spine_switches)
        d["capacities"] = list(self.capacities)
        d["weights"] = list(self.weights)
        d["overrides"] = [list(o) for o in self.overrides]
        return d

    @classmethod
    def from_dict(cls, d: dict | None) -> "TopologySpec":
        d = dict(d or {})
        known = set(cls.__dataclass_fields__)
        bad = set(d) - known
        if bad:
            raise ValueError(f"unknown topology parameters {sorted(bad)}; known: {sorted(known)}")
        for k in ("agg_switches", "spine_switches", "capacities"):
            if k in d:  # JSON may write 1e9 for 1000000000: a whole float is that int
                d[k] = tuple(int(x) if isinstance(x, float) and x.is_integer() else x
                             for x in d[k])
        if "weights" in d:
            d["weights"] = tuple(float(x) for x in d["weights"])
        if "overrides" in d:
            d["overrides"] = tuple((str(n), int(c)) for n, c in d["overrides"])
        return cls(**d)

    def key(self) -> tuple:
        k = self.__dict__.get("_key")
        if k is None:  # a frozen spec's key never changes: computed once
            k = tuple(sorted((k, repr(v)) for k, v in self.to_dict().items()))
            object.__setattr__(self, "_key", k)
        return k


def _draw_capacities(spec: TopologySpec, n_switches: int) -> np.ndarray:
    caps = np.asarray(spec.capacities, dtype=np.int64)
    n_ports = n_switches * spec.ports_per_switch
    if len(caps) == 1:
        return np.full(n_ports, caps[0], dtype=np.int64)
    rng = rng_from_seed(spec.capacity_seed)
    p = np.asarray(spec.weights, dtype=float)
    p = p / p.sum()
    if spec.capacity_per == "switch":
        per = caps[rng.choice(len(caps), size=n_switches, p=p)]
        return np.repeat(per, spec.ports_per_switch)
    return caps[rng.choice(len(caps), size=n_ports, p=p)]


def generate(spec: TopologySpec | None = None) -> Topology:
    """A MALT topology with the structure and file order of Google's example model."""
    spec = spec or TopologySpec()
    ju = spec.jupiter
    ents: list[Entity] = [Entity(JUPITER, ju, {ATTR_BLOCK[JUPITER]: {"jupiter_type": Ident("JDT_COLO")}})]
    rels: list[Relationship] = []
    sbs = [f"{ju}.a{i}" for i in range(1, spec.superblocks + 1)]
    sps = [f"{ju}.s{i}" for i in range(1, spec.spineblocks + 1)]
    for i, sb in enumerate(sbs, 1):
        ents.append(Entity(SUPERBLOCK, sb, {ATTR_BLOCK[SUPERBLOCK]: {"index_within_jupiter": i}}))
    for sp in sps:
        ents.append(Entity(SPINEBLOCK, sp))
    for sb in sbs:
        rels.append(Relationship(CONTAINS, (JUPITER, ju), (SUPERBLOCK, sb)))
    for sp in sps:
        rels.append(Relationship(CONTAINS, (JUPITER, ju), (SPINEBLOCK, sp)))

    # (block kind, block name, rack name, domain name, switches [(name, stage)])
    blocks: list[tuple[str, str, str, str, list[tuple[str, int]]]] = []
    for sb in sbs:
        aggs = [f"{sb}.m{j}" for j in range(1, spec.aggs_per_superblock + 1)]
        for agg in aggs:
            sw = [(f"{agg}.s{st}c{c}", st) for st, n in zip((2, 3), spec.agg_switches)
                  for c in range(1, n + 1)]
            blocks.append((AGG_BLOCK, agg, f"{agg}rack", f"{sb}.dom", sw))
    for sp in sps:
        sw = [(f"{sp}.s{st}c{c}", st) for st, n in zip((1, 2), spec.spine_switches)
              for c in range(1, n + 1)]
        blocks.append((SPINEBLOCK, sp, f"{sp}rack", f"{sp}.dom", sw))
    n_switches = sum(len(b[4]) for b in blocks)
    caps = _draw_capacities(spec, n_switches).tolist()  # Python ints: one conversion
    overrides = dict(spec.overrides)
    ports_of = range(1, spec.ports_per_switch + 1)

    # entities: per superblock its agg blocks, then per block its switches and their ports
    k = 0
    bi = 0
    for sb in sbs:
        for j in range(spec.aggs_per_superblock):
            ents.append(Entity(AGG_BLOCK, blocks[bi + j][1]))
        rels_sb = [Relationship(CONTAINS, (SUPERBLOCK, sb), (AGG_BLOCK, blocks[bi + j][1]))
                   for j in range(spec.aggs_per_superblock)]
        rels.extend(rels_sb)
        for j in range(spec.aggs_per_superblock):
            k = _block_members(blocks[bi + j], spec, caps, k, overrides, ports_of, ents, rels)
        bi += spec.aggs_per_superblock
    for b in blocks[bi:]:
        k = _block_members(b, spec, caps, k, overrides, ports_of, ents, rels)

    # per switch: chassis, control point, then the rack / domain on first use
    seen_racks: set[str] = set()
    seen_domains: set[str] = set()
    for _, _, rack, dom, sw in blocks:
        for name, _ in sw:
            ents.append(Entity(CHASSIS, name))
            ents.append(Entity(CONTROL_POINT, name))
            if rack not in seen_racks:
                seen_racks.add(rack)
                ents.append(Entity(RACK, rack))
            if dom not in seen_domains:
                seen_domains.add(dom)
                ents.append(Entity(CONTROL_DOMAIN, dom))
            rels.append(Relationship(CONTAINS, (CHASSIS, name), (SWITCH, name)))
            rels.append(Relationship(CONTAINS, (CHASSIS, name), (CONTROL_POINT, name)))
            rels.append(Relationship(CONTROLS, (CONTROL_POINT, name), (SWITCH, name)))
            rels.append(Relationship(CONTAINS, (RACK, rack), (CHASSIS, name)))
            rels.append(Relationship(CONTAINS, (CONTROL_DOMAIN, dom), (CONTROL_POINT, name)))
    return Topology(ents, rels)


def _block_members(block, spec, caps, k, overrides, ports_of, ents, rels) -> int:
    kind, bname, _, _, sw = block
    for name, stage in sw:
        ents.append(Entity(SWITCH, name, {ATTR_BLOCK[SWITCH]: {"switch_loc": {"stage": stage}}}))
    start = k
    for name, _ in sw:
        for p in ports_of:
            pname = f"{name}.p{p}"
            cap = overrides.get(pname, caps[k])
            ents.append(Entity(PORT, pname, {ATTR_BLOCK[PORT]: {CAPACITY: cap}}))
            k += 1
    for name, _ in sw:
        rels.append(Relationship(CONTAINS, (kind, bname), (SWITCH, name)))
    k = start
    for name, _ in sw:
        for p in ports_of:
            rels.append(Relationship(CONTAINS, (SWITCH, name), (PORT, f"{name}.p{p}")))
            k += 1
    return k


def netarena_spec() -> TopologySpec:
    """Upstream NetArena's data: Google's structure with its five modified capacities."""
    return TopologySpec(overrides=NETARENA_OVERRIDES)


__all__ = ["Entity", "Relationship", "Topology", "TopologySpec", "generate", "netarena_spec",
           "NETARENA_OVERRIDES", "SCHEMES"]

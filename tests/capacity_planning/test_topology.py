"""The MALT loader against Google's example, and the generator's structure."""
import numpy as np
import pytest

from netarena_gym.capacity_planning import textproto
from netarena_gym.capacity_planning.kinds import (
    AGG_BLOCK, CAPACITY, CHASSIS, CONTAINS, CONTROL_DOMAIN, CONTROL_POINT, CONTROLS, JUPITER, PORT,
    RACK, SPINEBLOCK, SUPERBLOCK, SWITCH)
from netarena_gym.capacity_planning.state import BaseGraph
from netarena_gym.capacity_planning.topology import (
    NETARENA_OVERRIDES, Topology, TopologySpec, generate, netarena_spec)

GOOGLE_COUNTS = {JUPITER: 1, SUPERBLOCK: 4, SPINEBLOCK: 4, AGG_BLOCK: 16, SWITCH: 320,
                 PORT: 5120, CHASSIS: 320, CONTROL_POINT: 320, RACK: 20, CONTROL_DOMAIN: 8}
GOOGLE_RELATIONS = {
    (CONTAINS, JUPITER, SUPERBLOCK): 4, (CONTAINS, JUPITER, SPINEBLOCK): 4,
    (CONTAINS, SUPERBLOCK, AGG_BLOCK): 16, (CONTAINS, AGG_BLOCK, SWITCH): 256,
    (CONTAINS, SPINEBLOCK, SWITCH): 64, (CONTAINS, SWITCH, PORT): 5120,
    (CONTAINS, RACK, CHASSIS): 320, (CONTAINS, CHASSIS, SWITCH): 320,
    (CONTAINS, CHASSIS, CONTROL_POINT): 320, (CONTAINS, CONTROL_DOMAIN, CONTROL_POINT): 320,
    (CONTROLS, CONTROL_POINT, SWITCH): 320}


def test_loader_reads_googles_file(google):
    assert len(google.entities) == 6133
    assert len(google.relationships) == 7064
    assert google.counts() == GOOGLE_COUNTS
    assert google.relationship_counts() == GOOGLE_RELATIONS
    ju = google.entities[0]
    assert (ju.kind, ju.name, ju.blocks) == (JUPITER, "ju1", {"jupiter_attr": {"jupiter_type": "JDT_COLO"}})
    sw = next(e for e in google.entities if e.kind == SWITCH)
    assert sw.name == "ju1.a1.m1.s2c1" and sw.flat_attrs() == {"switch_loc": {"stage": 2}}
    caps = {e.flat_attrs()[CAPACITY] for e in google.entities if e.kind == PORT}
    assert caps == {1_000_000_000}  # Google's values (NetArena changed five of them)


def test_generator_default_is_googles_structure_in_file_order(google, google_text):
    gen = generate(TopologySpec())
    assert gen.entities == google.entities
    assert gen.relationships == google.relationships
    assert gen.to_textproto() == google_text  # byte for byte


def test_loader_round_trips_its_own_output(google, google_text):
    again = Topology.from_textproto(google.to_textproto())
    assert again.entities == google.entities and again.relationships == google.relationships


def test_kind_name_scheme_keeps_switch_chassis_and_control_point_apart(google):
    g = BaseGraph.from_topology(google, "kind_name")
    assert len(g) == 6133 and g.n_edges == 7064
    name = "ju1.a1.m1.s2c1"
    assert {(SWITCH, name), (CHASSIS, name), (CONTROL_POINT, name)} <= set(g.nodes)
    assert g.out[(CHASSIS, name)] == {(SWITCH, name): CONTAINS, (CONTROL_POINT, name): CONTAINS}
    assert g.out[(CONTROL_POINT, name)] == {(SWITCH, name): CONTROLS}
    assert g.nodes[(PORT, name + ".p1")] == {"name": name + ".p1", "type": [PORT], CAPACITY: 10**9}


def test_merged_scheme_reproduces_upstreams_loader(google):
    g = BaseGraph.from_topology(google, "merged")
    assert len(g) == 5493 and g.n_edges == 6424
    kinds = [t for a in g.nodes.values() for t in a["type"]]
    assert kinds.count(PORT) == 5120
    merged = [k for k, a in g.nodes.items() if len(a["type"]) > 1]
    assert len(merged) == 320
    assert g.nodes["ju1.a1.m1.s2c1"]["type"] == [SWITCH, CHASSIS, CONTROL_POINT]
    assert g.nodes["ju1.a1.m1.s2c1"]["switch_loc"] == {"stage": 2.0}
    assert g.nodes["ju1.a1.m1.s2c1.p1"][CAPACITY] == 1e9 and isinstance(g.nodes["ju1.a1.m1.s2c1.p1"][CAPACITY], float)
    loops = [a for a in g.out if a in g.out[a]]
    assert len(loops) == 320 and all(g.out[a][a] == CONTROLS for a in loops)
    contains = sum(1 for kids in g.out.values() for t in kids.values() if t == CONTAINS)
    assert contains == 6104
    roots = [k for k in g.nodes if not g.inn[k]]
    assert len(roots) == 29
    assert not [k for k in g.nodes if not g.inn[k] and not g.out[k]]


def test_netarena_spec_applies_the_five_capacities():
    top = generate(netarena_spec())
    caps = {e.name: e.flat_attrs()[CAPACITY] for e in top.entities if e.kind == PORT}
    assert {n: caps[n] for n, _ in NETARENA_OVERRIDES} == dict(NETARENA_OVERRIDES)
    assert sum(c != 10**9 for c in caps.values()) == 5
    per_switch = {}
    for n, c in caps.items():
        sw = n.rsplit(".", 1)[0]
        per_switch[sw] = per_switch.get(sw, 0) + c
    assert per_switch["ju1.a1.m1.s2c1"] == 20 * 10**9
    assert per_switch["ju1.a1.m1.s2c4"] == 18 * 10**9
    assert sorted(set(per_switch.values())) == [16 * 10**9, 18 * 10**9, 20 * 10**9]


@pytest.mark.parametrize("spec", [
    TopologySpec(superblocks=2, aggs_per_superblock=3, spineblocks=1, agg_switches=(4, 2),
                 spine_switches=(3, 5), ports_per_switch=8),
    TopologySpec(superblocks=1, aggs_per_superblock=1, spineblocks=0, agg_switches=(1, 0),
                 spine_switches=(0, 0), ports_per_switch=1),
])
def test_generator_sizes(spec):
    top = generate(spec)
    c = top.counts()
    aggs = spec.superblocks * spec.aggs_per_superblock
    switches = aggs * sum(spec.agg_switches) + spec.spineblocks * sum(spec.spine_switches)
    assert c[AGG_BLOCK] == aggs and c.get(SPINEBLOCK, 0) == spec.spineblocks
    assert c[SWITCH] == c[CHASSIS] == c[CONTROL_POINT] == switches
    assert c[PORT] == switches * spec.ports_per_switch
    assert c[RACK] == aggs + spec.spineblocks
    assert c[CONTROL_DOMAIN] == spec.superblocks + spec.spineblocks
    g = BaseGraph.from_topology(top)
    assert not [k for k in g.nodes if not g.inn[k] and not g.out[k]]  # nothing isolated


def test_capacity_distribution_is_seeded_and_weighted():
    spec = TopologySpec(capacities=(10, 20, 30), weights=(0.6, 0.3, 0.1), capacity_seed=4)
    caps = [e.flat_attrs()[CAPACITY] for e in generate(spec).entities if e.kind == PORT]
    again = [e.flat_attrs()[CAPACITY] for e in generate(spec).entities if e.kind == PORT]
    other = [e.flat_attrs()[CAPACITY] for e in generate(TopologySpec(
        capacities=(10, 20, 30), weights=(0.6, 0.3, 0.1), capacity_seed=5)).entities if e.kind == PORT]
    assert caps == again and caps != other
    share = np.bincount([(c // 10) - 1 for c in caps]) / len(caps)
    assert abs(share[0] - 0.6) < 0.03 and abs(share[2] - 0.1) < 0.02
    per = TopologySpec(capacities=(10, 20), weights=(1, 1), capacity_per="switch", ports_per_switch=4)
    ports = [e for e in generate(per).entities if e.kind == PORT]
    for i in range(0, len(ports), 4):
        assert len({p.flat_attrs()[CAPACITY] for p in ports[i:i + 4]}) == 1


def test_spec_round_trips_and_rejects_unknown_keys():
    spec = TopologySpec(superblocks=2, capacities=(5, 6), weights=(1, 2), overrides=(("x", 3),))
    assert TopologySpec.from_dict(spec.to_dict()) == spec
    with pytest.raises(ValueError, match="unknown topology parameters"):
        TopologySpec.from_dict({"superblocks": 2, "bogus": 1})
    with pytest.raises(ValueError):
        TopologySpec(ports_per_switch=0)


def test_textproto_reader_details():
    msg = textproto.parse('''
        # a comment
        a { b: 1 c: "x\\"y" c: 'z' d: ENUM_V e: 1.5 f: -3 g: 0x10 }
        h < i: "j" "k" >  l: [1, 2]
    ''')
    a = textproto.field(msg, "a")
    assert a == [("b", 1), ("c", 'x"y'), ("c", "z"), ("d", "ENUM_V"), ("e", 1.5), ("f", -3), ("g", 16)]
    assert isinstance(textproto.field(a, "d"), textproto.Ident)
    assert textproto.field(msg, "h") == [("i", "jk")]
    assert [v for k, v in msg if k == "l"] == [1, 2]
    assert textproto.parse(textproto.dump(msg)) == msg
    for bad in ("a {", "a }", "a: @", "{"):
        with pytest.raises(textproto.TextProtoError):
            textproto.parse(bad)


def test_a_topology_is_bounded_before_it_is_built():
    """A replayed record of 10**5 superblocks was built until the kernel killed the
    process (22 GB)."""
    import copy

    import gymnasium as gym
    from netarena_gym.capacity_planning.topology import MAX_ELEMENTS, TopologySpec
    from netarena_gym.errors import ScenarioError
    assert TopologySpec().size() == 5440 < MAX_ELEMENTS  # Google's example, compat's size
    with pytest.raises(ValueError, match="at most 100,000"):
        TopologySpec(superblocks=10**5)
    env = gym.make("NetArena-CapacityPlanning-v0", interface="discrete")
    rec = env.reset(seed=0)[1]["scenario"]
    bad = copy.deepcopy(rec)
    bad["params"]["topology"]["ports_per_switch"] = 10**7
    with pytest.raises(ScenarioError, match="switches and ports"):
        env.reset(options={"scenario": bad})

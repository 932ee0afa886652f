import json

import gymnasium as gym
import pytest

import netarena_gym  # noqa: F401
from netarena_gym.errors import InvalidConfig, ScenarioError
from netarena_gym.routing.backends.sim import SIM_CAPABILITIES

from netarena_gym.routing.faults import TYPES, Fault
from netarena_gym.routing.generator import (
    COMPAT_CATEGORIES, RoutingGenerator, compat_category_level)
from netarena_gym.routing.topology import Layout, TopologySpec


def test_generation_is_a_pure_function_of_the_seed():
    g = RoutingGenerator(2)
    assert g.generate(123).scenario == g.generate(123).scenario
    assert g.generate(123).scenario != g.generate(124).scenario


@pytest.mark.parametrize("level", [1, 2, 3, "compat"])
def test_levels_shape_and_observability(level):
    g = RoutingGenerator(level)
    for seed in range(40):
        gen = g.generate(seed)
        s = gen.scenario
        spec = TopologySpec.from_dict(s.params["topology"])
        types = [f["type"] for f in s.faults]
        assert not gen.state.oracle.matrix().all()  # at least one broken pair
        if level in (1, 2):
            assert spec.n_routers == 1 and len(types) == level and len(set(types)) == level
            assert all(2 <= len(h) <= 8 and all(1 <= x <= 4 for x in h) for h in spec.hosts)
        elif level == 3:
            assert 2 <= spec.n_routers <= 4 and 3 <= len(types) <= 4
        else:
            assert spec.n_routers == 1 and len(set(spec.hosts[0])) == 1
            assert tuple(types) in COMPAT_CATEGORIES
            assert all(f["method"] in (1, 2, 3, 4) for f in s.faults)
        json.dumps(s.to_dict())  # serialisable
        for f in s.faults:
            Fault.from_dict(f).commands()


def test_every_parameter_is_recorded():
    g = RoutingGenerator(1)
    seen = set()
    for seed in range(300):
        f = g.generate(seed).scenario.faults[0]
        seen.add((f["type"], f["method"]))
        rendered = Fault.from_dict(f).commands()
        assert rendered == Fault.from_dict(json.loads(json.dumps(f))).commands()
    assert {t for t, _ in seen} == set(TYPES)


NETEM_LABELS = {"DI4", "DT4", "DT6"}


@pytest.mark.parametrize("level", [1, 2, 3])
def test_the_same_seed_draws_the_same_scenario_on_every_backend(level):
    sim = RoutingGenerator(level, capabilities=SIM_CAPABILITIES)
    mininet = RoutingGenerator(level, capabilities=frozenset())  # Mininet here: no netem
    for seed in range(50):
        a, b = sim.generate(seed).scenario, mininet.generate(seed).scenario
        assert a.to_dict() == b.to_dict(), seed
        assert not set(a.meta["labels"]) & NETEM_LABELS  # the default set runs everywhere


def test_netem_faults_are_opt_in_and_refused_where_unsupported():
    sim = RoutingGenerator(1, capabilities=SIM_CAPABILITIES, netem_faults=True)
    bare = RoutingGenerator(1, capabilities=frozenset(), netem_faults=True)
    drawn, refused = set(), 0
    for seed in range(200):
        a = sim.generate(seed).scenario
        drawn |= set(a.meta["labels"])
        if set(a.meta["labels"]) & NETEM_LABELS:
            with pytest.raises(ScenarioError, match=r"seed \d+ .*need netem.*netem_faults=False"):
                bare.generate(seed)
            refused += 1
        else:  # never swapped: every other seed is the same scenario
            assert bare.generate(seed).scenario == a
    assert NETEM_LABELS <= drawn and refused
    assert RoutingGenerator("compat").netem_faults  # upstream's DT method 4 is netem


def test_compat_category_levels_and_selection():
    assert len(COMPAT_CATEGORIES) == 15
    assert sum(compat_category_level(c) == 1 for c in COMPAT_CATEGORIES) == 5
    assert sum(compat_category_level(c) == 2 for c in COMPAT_CATEGORIES) == 6
    g = RoutingGenerator("compat")
    s = g.generate(5, category=7).scenario
    assert tuple(f["type"] for f in s.faults) == COMPAT_CATEGORIES[7]


def test_layout_addressing_plan():
    lay = Layout(TopologySpec(hosts=((2, 1), (1,), (1, 1)), parents=(0, 1)))
    assert [s.iface for s in lay.subnets] == ["r0-eth1", "r0-eth2", "r1-eth1", "r2-eth1", "r2-eth2"]
    assert [(ln.a_iface, ln.b_iface) for ln in lay.links] == [("r0-eth3", "r1-eth2"), ("r1-eth3", "r2-eth3")]
    assert lay.subnets[3].hosts == ("h5",)
    routes = {(n >> 8 & 255, p): (d, g) for n, p, d, g in lay.intended_routes("r0")}
    assert routes[(4, 24)] == ("r0-eth3", (172 << 24) | (16 << 16) | 2)


@pytest.mark.parametrize("level,topology,fixed", [
    (1, None, False), (3, None, False),
    (1, {"routers": 1, "subnets": 3, "hosts": 2}, True),
    (3, {"routers": 3, "subnets": 2, "hosts": 2}, False),  # the router tree is drawn
    (3, {"shape": "ring", "routers": 6, "subnets": 2, "hosts": 2}, True),
    (3, {"shape": "ring", "routers": 6, "subnets": [1, 2], "hosts": 2}, False),
])
def test_fixed_topology_means_every_draw_builds_the_same_network(level, topology, fixed):
    g = RoutingGenerator(level, topology=topology)
    assert g.cfg.fixed_topology is fixed
    specs = {json.dumps(g.generate(seed).scenario.params["topology"]) for seed in range(12)}
    assert (len(specs) == 1) is fixed


def test_a_fixed_shape_keeps_its_pristine_probes_from_the_first_reset():
    """A fixed topology starts every episode, the first included, from its pristine
    probes; the first episode of a topology drawn at random sizes does not (it may never
    be drawn again), its second does. Both give the same matrices as a build without."""
    from netarena_gym.routing import pristine
    from netarena_gym.routing.backends.sim import SimState
    from netarena_gym.routing import topology
    pristine.clear()
    topology.clear()
    fixed = RoutingGenerator(3, topology={"shape": "tree", "routers": 6, "subnets": 2,
                                          "hosts": 1})
    first = fixed.generate(0)
    assert first.state.oracle.pairs.base is not None
    drawn = RoutingGenerator(3, topology={"shape": "tree", "routers": 6, "subnets": [1, 3],
                                          "hosts": [1, 2]})
    once = drawn.generate(1)
    assert once.state.oracle.pairs.base is None  # a first sighting: only noted
    assert drawn.build(once.scenario).oracle.pairs.base is not None  # the second
    for gen in (first, once):
        pristine.clear()
        topology.clear()
        plain = SimState.build(gen.scenario)  # a first sighting: no base, every probe walked
        assert plain.oracle.pairs.base is None
        assert (plain.oracle.matrix() == gen.state.oracle.matrix()).all()


@pytest.mark.parametrize("level", [1, 2, 3])
def test_category_fixes_the_fault_types_at_every_level(level):
    """Before, levels 1-3 ignored ``category`` and drew their own faults."""
    env = gym.make("NetArena-Routing-v0", level=level)
    for category, types in [("remove_ip", ["remove_ip"]), (0, ["disable_routing"]),
                            ("wrong_routing_table+disable_interface",
                             ["wrong_routing_table", "disable_interface"])]:
        for seed in range(3):
            _, info = env.reset(seed=seed, options={"category": category})
            assert [f["type"] for f in info["scenario"]["faults"]] == types


@pytest.mark.parametrize("level", [1, "compat"])
@pytest.mark.parametrize("category, says", [
    (15, "out of range"), (-1, "out of range"), ("x", "unknown fault types"),
    (True, "must be a name"), (2.0, "must be a name")])
def test_bad_category_is_invalid_config(level, category, says):
    """Before: IndexError (15), TypeError ("x"), and -1 silently picked category 14."""
    env = gym.make("NetArena-Routing-v0", level=level)
    with pytest.raises(InvalidConfig, match=says):
        env.reset(seed=0, options={"category": category})


def test_compat_category_by_name_in_any_order_and_only_upstreams():
    g = RoutingGenerator("compat")
    s = g.generate(5, category="wrong_routing_table+remove_ip").scenario
    assert s.meta["category_index"] == COMPAT_CATEGORIES.index(("remove_ip", "wrong_routing_table"))
    with pytest.raises(InvalidConfig, match="upstream's categories"):
        g.generate(5, category="remove_ip+remove_ip")


@pytest.mark.parametrize("fault_types", [("remove_ip",), ("remove_ip", "remove_ip"), ()])
def test_too_few_fault_types_are_refused_when_the_env_is_built(fault_types):
    """Before, level 2 with one fault type (or one named twice) was accepted and every
    reset raised; an empty list silently meant every type."""
    with pytest.raises(InvalidConfig, match="fault_types"):
        gym.make("NetArena-Routing-v0", level=2, fault_types=fault_types)


def test_a_fault_type_named_twice_is_drawn_once_at_a_distinct_types_level():
    g = RoutingGenerator(2, fault_types=("remove_ip", "remove_ip", "disable_routing"))
    for seed in range(10):
        types = [f["type"] for f in g.generate(seed).scenario.faults]
        assert sorted(types) == ["disable_routing", "remove_ip"]


def test_faults_of_one_scenario_have_distinct_targets():
    """Before, two faults could hit one target: a second remove_ip flushed the first's
    interface again (the first was not there any more), a second wrong_routing_table on
    one route failed its ``ip route del`` (No such process), and two root qdiscs on one
    interface refused the second ``tc qdisc add``: faults recorded but not injected."""
    from netarena_gym.routing.faults import target
    g = RoutingGenerator(3, fault_types=("remove_ip", "wrong_routing_table"),
                         topology={"routers": 2, "subnets": 1, "hosts": 1})
    for seed in range(20):
        faults = [Fault.from_dict(f) for f in g.generate(seed).scenario.faults]
        assert len({target(f) for f in faults}) == len(faults), faults
    g = RoutingGenerator(3, fault_types=("disable_interface", "drop_traffic_to_from_subnet"),
                         netem_faults=True, topology={"routers": 2, "subnets": 1, "hosts": 1})
    for seed in range(30):
        log = g.generate(seed).state.injection
        assert all(res.status == 0 for _, cmd, res in log if cmd.startswith("tc ")), log


def test_a_category_is_drawn_whole_or_refused():
    """Before, a fault that found no target of its own was left out silently: four
    disable_routing faults on one router of two subnets (three targets: its forwarding and
    each subnet's FORWARD rule) came out as three."""
    g = RoutingGenerator(1, topology={"subnets": 2})
    three = g.generate(0, category="+".join(["disable_routing"] * 3)).scenario
    assert len(three.faults) == 3
    with pytest.raises(InvalidConfig, match="distinct targets"):
        g.generate(0, category="+".join(["disable_routing"] * 4))


@pytest.mark.parametrize("level, topology, seeds", [
    (2, None, 40), ("compat", None, 40),
    (3, {"shape": "leaf-spine", "routers": [4, 9], "subnets": [1, 2], "hosts": 1}, 30)])
def test_every_fault_beside_another_breaks_a_pair_on_its_own(level, topology, seeds):
    """Before, remove_ip with a wider mask (/8, /16 on a LAN; any on a leaf's link to a
    spine that carries no path) and forwarding faults on such a spine were drawn beside
    another fault: the scenario was broken, by the other fault only. Only the tcp-only
    drop (a distractor by design, never drawn alone) may break nothing."""
    import dataclasses
    from netarena_gym.routing.backends.sim import SimState
    g = RoutingGenerator(level, fault_types=("remove_ip", "disable_routing"), topology=topology)
    seen = 0
    for seed in range(seeds):
        sc = g.generate(seed).scenario
        if len(sc.faults) < 2:
            continue
        for f in sc.faults:
            seen += f["type"] == "remove_ip"
            alone = SimState.build(dataclasses.replace(sc, faults=(f,)))
            assert not alone.oracle.matrix().all(), (seed, f)
    assert seen


@pytest.mark.parametrize("topology", [{"x": 1, 2: 3}, {None: 1, "a": 2}])
def test_unknown_topology_keys_of_mixed_types_are_invalid_config(topology):
    """Before, sorting the unknown keys for the message raised TypeError."""
    with pytest.raises(InvalidConfig, match="unknown topology keys"):
        gym.make("NetArena-Routing-v0", level=3, topology=topology)

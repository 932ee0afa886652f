"""The base-graph shortcut of the safety rules: ``base_clean``'s one walk agrees with the
rule-by-rule evaluation of the whole graph, on generated bases and on broken ones."""
import pytest

from netarena_gym.capacity_planning import grader_checks as gc
from netarena_gym.capacity_planning.generator import level_topologies
from netarena_gym.capacity_planning.kinds import (
    AGG_BLOCK, CAPACITY, CHASSIS, CONTAINS, CONTROLS, JUPITER, PORT, SWITCH)
from netarena_gym.capacity_planning.state import BaseGraph
from netarena_gym.capacity_planning.topology import TopologySpec, generate, netarena_spec

SMALL = TopologySpec(superblocks=1, aggs_per_superblock=2, spineblocks=1, agg_switches=(2, 2),
                     spine_switches=(1, 1), ports_per_switch=3)
SPECS = [SMALL, netarena_spec(), *level_topologies()]
SW, SW2 = (SWITCH, "ju1.a1.m1.s2c1"), (SWITCH, "ju1.a1.m1.s2c2")
P1 = (PORT, "ju1.a1.m1.s2c1.p1")


def _agree(base) -> bool:
    """Asserts the shortcut's figures equal the rule-by-rule ones; returns base_clean."""
    every, up = gc.all_violations(base), gc.upstream_all(base)
    clean = gc.base_clean(base)
    if clean:
        assert not every and up == (True, "")
    assert gc.base_violations(base) == frozenset(every)
    assert gc.base_upstream_ok(base) is up[0]
    return clean


@pytest.mark.parametrize("scheme", ["kind_name", "merged"])
@pytest.mark.parametrize("spec", SPECS, ids=range(len(SPECS)))
def test_generated_bases_are_clean_in_one_walk(spec, scheme):
    nodes, edges = generate(spec).graph_records(scheme)
    assert _agree(BaseGraph(nodes, edges, scheme, spec))


def _port_attrs(nodes):
    return nodes[P1]


BREAKS = {
    "zero_capacity": lambda n, e: _port_attrs(n).update({CAPACITY: 0}),
    "small_capacity": lambda n, e: _port_attrs(n).update({CAPACITY: 5}),
    "no_capacity": lambda n, e: _port_attrs(n).pop(CAPACITY),
    "unknown_kind": lambda n, e: _port_attrs(n).update(type=[PORT, "EK_FOO"]),
    "string_type": lambda n, e: _port_attrs(n).update(type=PORT),  # fine, not plain
    "no_name": lambda n, e: _port_attrs(n).pop("name"),
    "isolated": lambda n, e: n.update({(CHASSIS, "spare"): {"name": "spare", "type": [CHASSIS]}}),
    "bad_edge_type": lambda n, e: e.update({(SW, P1): "RK_OWNS"}),
    "hierarchy": lambda n, e: e.update({(SW, (JUPITER, "ju1")): CONTAINS}),
    "bad_control": lambda n, e: e.update({(SW, SW2): CONTROLS}),
    "two_switches": lambda n, e: e.update({(SW2, P1): CONTAINS}),
    "no_port": lambda n, e: [e.pop(x) for x in list(e) if x[0] == SW and x[1][0] == PORT],
    "agg_with_port": lambda n, e: e.update({((AGG_BLOCK, "ju1.a1.m1"), P1): CONTAINS}),
}


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_broken_bases_are_evaluated_rule_by_rule(name):
    nodes, edges = generate(SMALL).graph_records("kind_name")
    BREAKS[name](nodes, edges)
    base = BaseGraph(nodes, edges, "kind_name", SMALL)
    assert not _agree(base)
    if name != "string_type":  # kinds_of reads a plain string: no violation
        assert gc.base_violations(base)

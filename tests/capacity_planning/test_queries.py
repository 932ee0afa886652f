"""Ground truth of every operation on a hand-checked topology, and the query generator."""
import json

import pytest

from netarena_gym.core.seeding import rng_from_seed
from netarena_gym.errors import ScenarioError
from netarena_gym.capacity_planning.grader_checks import new_violations
from netarena_gym.capacity_planning.generator import LEVELS, TEMPLATES, QueryGenerator, solve
from netarena_gym.capacity_planning.kinds import (
    AGG_BLOCK, CHASSIS, CONTROL_DOMAIN, CONTROL_POINT, JUPITER, PORT, RACK, SPINEBLOCK, SWITCH)
from netarena_gym.capacity_planning.state import Graph, base_graph
from netarena_gym.capacity_planning.state_ops import run
from netarena_gym.capacity_planning.problems import parse, render
from netarena_gym.capacity_planning.topology import TopologySpec

G = 1_000_000_000
A = "ju1.a1.m1"
# one aggregation block with switches s2c1 (40G+10G), s2c2 (25G+25G), s3c1 (10G+10G) and a
# spine block with s1c1 (100G+10G)
TINY = TopologySpec(
    superblocks=1, aggs_per_superblock=1, spineblocks=1, agg_switches=(2, 1),
    spine_switches=(1, 0), ports_per_switch=2, capacities=(10 * G,),
    overrides=((f"{A}.s2c1.p1", 40 * G), (f"{A}.s2c2.p1", 25 * G), (f"{A}.s2c2.p2", 25 * G),
               ("ju1.s1.s1c1.p1", 100 * G)))


def ask(*ops):
    g = Graph(base_graph(TINY))
    answer, unsafe = run(g, list(ops))
    return answer, unsafe, g


def r(kind, name):
    return [kind, name]


@pytest.mark.parametrize("node,expected", [
    (r(AGG_BLOCK, A), [[f"{A}.s2c1", 50 * G], [f"{A}.s2c2", 50 * G], [f"{A}.s3c1", 20 * G]]),
    (r(CONTROL_DOMAIN, "ju1.a1.dom"), [[f"{A}.s2c1", 50 * G], [f"{A}.s2c2", 50 * G], [f"{A}.s3c1", 20 * G]]),
    (r(RACK, f"{A}rack"), [[f"{A}.s2c1", 50 * G], [f"{A}.s2c2", 50 * G], [f"{A}.s3c1", 20 * G]]),
    (r(JUPITER, "ju1"), [["ju1.a1", 120 * G], ["ju1.s1", 110 * G]]),
    (r(SWITCH, f"{A}.s2c1"), [[f"{A}.s2c1.p1", 40 * G], [f"{A}.s2c1.p2", 10 * G]]),
])
def test_rank_sums_the_whole_subtree(node, expected):
    assert ask({"op": "rank", "node": node})[0] == expected


@pytest.mark.parametrize("node,kind,n", [
    (r(CONTROL_DOMAIN, "ju1.a1.dom"), PORT, 6), (r(CONTROL_DOMAIN, "ju1.a1.dom"), CONTROL_POINT, 3),
    (r(JUPITER, "ju1"), SWITCH, 4), (r(RACK, f"{A}rack"), CHASSIS, 3), (r(RACK, f"{A}rack"), PORT, 6),
    (r(SPINEBLOCK, "ju1.s1"), PORT, 2), (r(AGG_BLOCK, A), SWITCH, 3),
])
def test_count_distinct_nodes_below(node, kind, n):
    assert ask({"op": "count", "node": node, "kind": kind})[0] == n


@pytest.mark.parametrize("node,cap", [
    (r(CONTROL_DOMAIN, "ju1.a1.dom"), 120 * G), (r(JUPITER, "ju1"), 230 * G),
    (r(PORT, f"{A}.s2c1.p1"), 40 * G), (r(CHASSIS, f"{A}.s2c2"), 50 * G),
    (r(CONTROL_POINT, "ju1.s1.s1c1"), 110 * G),
])
def test_capacity(node, cap):
    assert ask({"op": "capacity", "node": node})[0] == cap


def test_list_children():
    assert ask({"op": "list", "node": r(AGG_BLOCK, A)})[0] == [f"{A}.s2c1", f"{A}.s2c2", f"{A}.s3c1"]
    assert ask({"op": "list", "node": r(SWITCH, "ju1.s1.s1c1")})[0] == ["ju1.s1.s1c1.p1", "ju1.s1.s1c1.p2"]


def test_least_loaded_and_its_ties():
    assert ask({"op": "least_loaded", "node": r(AGG_BLOCK, A)})[0] == f"{A}.s3c1"
    # s3c1 at 50G too: a three-way tie on capacity and ports goes to the smallest name
    tie = ask({"op": "update", "node": r(PORT, f"{A}.s3c1.p1"), "capacity": 40 * G},
              {"op": "least_loaded", "node": r(AGG_BLOCK, A)})[0]
    assert tie == f"{A}.s2c1"
    # ...unless one of them has fewer ports
    fewer = ask({"op": "update", "node": r(PORT, f"{A}.s3c1.p1"), "capacity": 40 * G},
                {"op": "remove", "node": r(PORT, f"{A}.s2c2.p1")},
                {"op": "update", "node": r(PORT, f"{A}.s2c2.p2"), "capacity": 50 * G},
                {"op": "least_loaded", "node": r(AGG_BLOCK, A)})[0]
    assert fewer == f"{A}.s2c2"


def test_isolated_if_removed():
    assert ask({"op": "isolated", "node": r(SWITCH, f"{A}.s2c1")})[0] == [f"{A}.s2c1.p1", f"{A}.s2c1.p2"]
    for node in (r(AGG_BLOCK, A), r(CHASSIS, f"{A}.s2c1"), r(PORT, f"{A}.s2c1.p1"),
                 r(CONTROL_DOMAIN, "ju1.a1.dom")):
        assert ask({"op": "isolated", "node": node})[0] == []


def test_remove_cascades_to_what_would_be_isolated():
    answer, unsafe, g = ask({"op": "remove", "node": r(SWITCH, f"{A}.s2c1")},
                            {"op": "list", "node": r(AGG_BLOCK, A)})
    assert answer == [f"{A}.s2c2", f"{A}.s3c1"] and unsafe
    d = g.net_diff()
    assert set(d.nodes) == {(SWITCH, f"{A}.s2c1"), (PORT, f"{A}.s2c1.p1"), (PORT, f"{A}.s2c1.p2")}
    assert all(v is None for v in d.nodes.values())
    assert not new_violations(g)
    _, unsafe, g = ask({"op": "remove", "node": r(PORT, f"{A}.s2c1.p1")})
    assert not unsafe and g.capacity((SWITCH, f"{A}.s2c1")) == 10 * G


def test_drain_removes_switch_ports_chassis_and_control_point():
    answer, _, g = ask({"op": "drain", "node": r(SWITCH, f"{A}.s2c1")})
    assert answer == 50 * G
    gone = {k for k, v in g.net_diff().nodes.items() if v is None}
    name = f"{A}.s2c1"
    assert gone == {(SWITCH, name), (PORT, name + ".p1"), (PORT, name + ".p2"), (CHASSIS, name),
                    (CONTROL_POINT, name)}
    assert g.capacity((AGG_BLOCK, A)) == 70 * G and len(g.children((RACK, f"{A}rack"))) == 2
    assert not new_violations(g)


def test_place_adds_a_port_to_the_least_loaded_switch():
    answer, _, g = ask({"op": "place", "parent": r(AGG_BLOCK, A), "capacity": 100 * G, "index": 3},
                       {"op": "capacity", "node": r(SWITCH, f"{A}.s3c1")})
    assert answer == 120 * G
    assert g.attrs((PORT, f"{A}.s3c1.p3")) == {"name": f"{A}.s3c1.p3", "type": [PORT],
                                              "physical_capacity_bps": 100 * G}


def test_additions_are_hierarchy_valid_with_list_types():
    answer, _, g = ask({"op": "add", "kind": SWITCH, "name": f"{A}.s3c2", "parent": r(AGG_BLOCK, A),
                        "stage": 3, "ports": 2, "capacity": 25 * G},
                       {"op": "rank", "node": r(AGG_BLOCK, A)})
    assert answer == [[f"{A}.s2c1", 50 * G], [f"{A}.s2c2", 50 * G], [f"{A}.s3c2", 50 * G],
                      [f"{A}.s3c1", 20 * G]]
    assert g.attrs((SWITCH, f"{A}.s3c2")) == {"name": f"{A}.s3c2", "type": [SWITCH],
                                              "switch_loc": {"stage": 3}}
    assert not new_violations(g)
    answer, _, _ = ask({"op": "add", "kind": PORT, "name": "ju1.s1.s1c1.p3",
                        "parent": r(SWITCH, "ju1.s1.s1c1"), "capacity": G},
                       {"op": "count", "node": r(SPINEBLOCK, "ju1.s1"), "kind": PORT})
    assert answer == 3


def test_update_changes_capacity_everywhere_above():
    answer, _, g = ask({"op": "update", "node": r(PORT, "ju1.s1.s1c1.p2"), "capacity": 400 * G},
                       {"op": "capacity", "node": r(JUPITER, "ju1")})
    assert answer == 620 * G and g.capacity((CONTROL_DOMAIN, "ju1.s1.dom")) == 500 * G


# ------------------------------------------------------------------- generator
@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_generated_queries_read_back_and_are_safe(level):
    gen = QueryGenerator(level)
    rng = rng_from_seed(11)
    seen = set()
    for _ in range(600):
        x = gen.sample(rng)
        q = x.query
        seen.add(q.template)
        assert parse(q.text) == q.ops and render(q.ops) == q.text
        json.dumps(q.to_dict())
        assert q.flags["gt_safe"] and q.flags["gt_safe_compat"]
        base = gen.base(gen.topologies.index(x.spec))
        answer, diff = solve(base, q)
        assert answer == q.ground_truth["answer"] and diff.to_json() == q.ground_truth["graph"]
        g = Graph(base)
        g.apply_diff(diff)
        assert not new_violations(g)
    assert seen == set(TEMPLATES[level])


def test_literal_unsafe_flags_switch_removals():
    gen = QueryGenerator(1, templates=("remove",))
    rng = rng_from_seed(2)
    for _ in range(100):
        q = gen.sample(rng).query
        assert q.flags["literal_unsafe"] == (q.ops[0]["node"][0] == SWITCH)


def test_sampling_is_deterministic_and_unique():
    drawn = QueryGenerator(2).sample_unique(rng_from_seed(3), 300)
    a = [x.query.to_dict() for x in drawn]
    b = [x.query.to_dict() for x in QueryGenerator(2).sample_unique(rng_from_seed(3), 300)]
    c = [x.query.to_dict() for x in QueryGenerator(2).sample_unique(rng_from_seed(4), 300)]
    assert a == b and a != c
    # distinct questions: the same wording on another topology is another question
    assert len({(x.spec.key(), x.query.text) for x in drawn}) == 300
    # upstream's L1-rank has only 24 distinct queries: asking for more is an error, not a loop
    with pytest.raises(ScenarioError, match="distinct"):
        QueryGenerator("compat", templates=("rank",)).sample_unique(rng_from_seed(0), 25)


def test_levels_and_templates_are_validated():
    assert LEVELS == (1, 2, 3, 4, "compat")
    with pytest.raises(ValueError):
        QueryGenerator(5)
    with pytest.raises(ValueError, match="not in level"):
        QueryGenerator(1, templates=("remove-list",))

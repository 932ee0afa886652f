"""Grading edge cases: answer forms, canonical graph comparison, safety rules."""
import pytest

from netarena_gym.core.seeding import rng_from_seed
from netarena_gym.capacity_planning.grader_checks import new_violations, upstream_verdict
from netarena_gym.capacity_planning.generator import QueryGenerator
from netarena_gym.capacity_planning.grader import answer_equal, diff_equal, grade, grade_submission
from netarena_gym.capacity_planning.kinds import AGG_BLOCK, CAPACITY, CONTAINS, CONTROLS, PORT, SWITCH
from netarena_gym.capacity_planning.state import Diff, Graph, base_graph
from netarena_gym.capacity_planning.topology import TopologySpec

G = 10**9
SPEC = TopologySpec(superblocks=1, aggs_per_superblock=2, spineblocks=1, agg_switches=(2, 2),
                    spine_switches=(1, 1), ports_per_switch=3)
SW = (SWITCH, "ju1.a1.m1.s2c1")
AGG = (AGG_BLOCK, "ju1.a1.m1")


@pytest.fixture
def g():
    return Graph(base_graph(SPEC))


@pytest.mark.parametrize("agent,ok", [
    (16000000000, True), (1.6e10, True), ("16000000000", True), (" 1.6e10 ", True),
    (16000000000.5, False), ("16 Gbps", False), (True, False), (None, False), ([16000000000], False),
])
def test_number_answers(agent, ok):
    assert answer_equal("number", 16000000000, agent) is ok


def test_name_and_list_answers():
    assert answer_equal("name", "a.s2c1", " a.s2c1 ")
    assert answer_equal("name", "a.s2c1", [SWITCH, "a.s2c1"])
    assert answer_equal("name", "a.s2c1", {"name": "a.s2c1"})
    assert not answer_equal("name", "a.s2c1", "a.s2c10")
    gt = ["a", "b", "c"]
    assert answer_equal("list", gt, ["c", "a", "b"])
    assert answer_equal("list", gt, ("a", [PORT, "b"], {"name": "c"}))
    assert not answer_equal("list", gt, ["a", "b"])
    assert not answer_equal("list", gt, ["a", "b", "c", "c"])
    assert not answer_equal("list", gt, "a, b, c")
    assert answer_equal("list", [], [])


def test_rank_answers_allow_ties_in_any_order_only():
    gt = [["x", 50], ["y", 50], ["z", 20]]
    assert answer_equal("rank", gt, [["y", 50], ["x", 50], ["z", 20]])
    assert answer_equal("rank", gt, [("x", 50.0), ("y", "50"), {"name": "z", "capacity": 20}])
    assert not answer_equal("rank", gt, [["z", 20], ["x", 50], ["y", 50]])  # order
    assert not answer_equal("rank", gt, [["x", 50], ["y", 20], ["z", 50]])  # capacities swapped
    assert not answer_equal("rank", gt, [["x", 50], ["y", 50]])
    assert not answer_equal("rank", gt, [["x", 50], ["y", 50], ["w", 20]])


def test_graph_comparison_normalises_attributes(g):
    port = (PORT, "ju1.a1.m1.s2c1.p9")
    exp = Diff(nodes={port: {"name": port[1], "type": [PORT], CAPACITY: 40 * G}},
               edges={(SW, port): CONTAINS})
    same = Diff(nodes={port: {"name": port[1], "type": PORT, CAPACITY: 40e9}},
                edges={(SW, port): CONTAINS})
    assert diff_equal(g.base, exp, same)
    for bad in (Diff(nodes={port: {"name": port[1], "type": [PORT], CAPACITY: 40 * G, "x": 1}},
                     edges={(SW, port): CONTAINS}),
                Diff(nodes={port: {"name": port[1], "type": [PORT], CAPACITY: 40 * G}},
                     edges={(SW, port): CONTROLS}),
                Diff(nodes={port: {"name": port[1], "type": [PORT], CAPACITY: 40 * G}})):
        assert not diff_equal(g.base, exp, bad)
    # a "change" that normalises to the base is no change
    p1 = (PORT, "ju1.a1.m1.s2c1.p1")
    as_float = dict(g.base.nodes[p1])
    as_float[CAPACITY] = float(as_float[CAPACITY])
    assert diff_equal(g.base, Diff(), Diff(nodes={p1: as_float}))


def test_literal_switch_removal_is_unsafe_and_cascade_is_safe(g):
    g.remove_node(SW)
    v = new_violations(g)
    assert {x[0] for x in v} == {"isolated"} and len(v) == 3
    assert upstream_verdict(g)[0] is False
    for p in [(PORT, f"{SW[1]}.p{i}") for i in (1, 2, 3)]:
        g.remove_node(p)
    assert new_violations(g) == [] and upstream_verdict(g) == (True, "")


@pytest.mark.parametrize("change,rule,upstream_ok", [
    (lambda g: g.set_attr((PORT, "ju1.a1.m1.s2c1.p1"), CAPACITY, 0), "port_capacity", False),
    (lambda g: g.set_attr((PORT, "ju1.a1.m1.s2c1.p1"), CAPACITY, 10**15), "port_capacity", True),
    (lambda g: g.set_attr((PORT, "ju1.a1.m1.s2c1.p1"), CAPACITY, "1G"), "port_capacity", True),
    (lambda g: [g.add_node((PORT, "n"), {"name": "n", "type": [PORT], CAPACITY: G}),
                g.add_edge(AGG, (PORT, "n"), CONTAINS)], "hierarchy", False),
    (lambda g: [g.remove_node((PORT, f"{SW[1]}.p{i}")) for i in (1, 2, 3)], "switch_without_port", False),
    (lambda g: g.add_node((PORT, "lonely"), {"name": "lonely", "type": [PORT], CAPACITY: G}), "isolated", False),
    (lambda g: g.add_edge((SWITCH, "ju1.a1.m1.s2c2"), (PORT, f"{SW[1]}.p1"), CONTAINS), "port_parents", True),
    (lambda g: g.add_edge(AGG, (PORT, f"{SW[1]}.p1"), "RK_CONNECTS"), "bad_edge_type", False),
    (lambda g: g.set_attr((PORT, f"{SW[1]}.p1"), "type", ["EK_NIC"]), "bad_type", False),
    # upstream reads physical_capacity_bps: a port without the attribute fails its check,
    # a port holding None passes it (only 0 is compared)
    (lambda g: [g.add_node((PORT, "n"), {"name": "n", "type": [PORT]}),
                g.add_edge(SW, (PORT, "n"), CONTAINS)], "port_capacity", False),
    (lambda g: g.set_attrs((PORT, f"{SW[1]}.p1"), {"name": f"{SW[1]}.p1", "type": [PORT]}),
     "port_capacity", False),
    (lambda g: g.set_attr((PORT, f"{SW[1]}.p1"), CAPACITY, None), "port_capacity", True),
])
def test_each_rule(g, change, rule, upstream_ok):
    change(g)
    rules = {x[0] for x in new_violations(g)}
    assert rule in rules
    assert upstream_verdict(g)[0] is upstream_ok


def test_upstream_names_the_port_without_capacity(g):
    g.add_node((PORT, "n"), {"name": "n", "type": "EK_PORT"})
    g.add_edge(SW, (PORT, "n"), CONTAINS)
    ok, msg = upstream_verdict(g)
    assert not ok and "n" in msg and "physical_capacity_bps" in msg


@pytest.mark.parametrize("order", [("n3", "n1", "n2"), ("n2", "n3", "n1")])
def test_upstream_reports_the_failure_that_sorts_first(g, order):
    for n in order:  # three isolated ports, added in different orders
        g.add_node((PORT, n), {"name": n, "type": [PORT], CAPACITY: 400 * G})
    assert upstream_verdict(g) == (False, f"Found isolated node {PORT} n1")
    g.add_node((SWITCH, "s0"), {"name": "s0", "type": "X"})  # an earlier check fails first
    assert upstream_verdict(g) == (False, "Node EK_PACKET_SWITCH s0 has an invalid type 'X'")


def test_read_only_changes_are_fine(g):
    g.set_attr((PORT, f"{SW[1]}.p1"), CAPACITY, 400 * G)
    assert new_violations(g) == []


def _query(level, template, seed=0):
    return QueryGenerator(level, templates=(template,)).sample(rng_from_seed(seed))


def test_grade_submission_right_wrong_and_unsafe():
    x = next(x for x in (_query(1, "remove", seed=s) for s in range(100))
             if x.query.ops[0]["node"][0] == SWITCH)
    q = x.query
    base = base_graph(x.spec)
    right = Diff.from_json(q.ground_truth["graph"])
    v = grade_submission(q, base, None, right)
    assert v.correct and v.safe and v.safe_compat
    literal = Diff(nodes={tuple(q.ops[0]["node"]): None},
                   edges={k: v for k, v in right.edges.items() if tuple(q.ops[0]["node"]) in k})
    v = grade_submission(q, base, None, literal)
    assert not v.correct and not v.safe and not v.safe_compat
    assert {x[0] for x in v.violations} == {"isolated"}
    v = grade_submission(q, base, None, None)  # no updated graph: nothing changed
    assert not v.correct and v.safe and not v.safe_compat


def test_duplicates_and_dangling_edges_count_against_the_agent():
    x = _query(1, "list", seed=1)
    base = base_graph(x.spec)
    v = grade_submission(x.query, base, x.query.ground_truth["answer"], Diff(),
                         duplicates=[(PORT, "ju1.a1.m1.s2c1.p1")])
    assert v.answer_ok and not v.graph_ok and not v.safe
    bad = Diff(edges={((PORT, "ghost"), (PORT, "ju1.a1.m1.s2c1.p1")): CONTAINS})
    v = grade_submission(x.query, base, x.query.ground_truth["answer"], bad)
    assert [r[0] for r in v.violations] == ["dangling_edge"]


def test_read_only_query_must_not_change_the_graph():
    x = _query(1, "count", seed=2)
    g = Graph(base_graph(x.spec))
    assert grade(x.query, g, x.query.ground_truth["answer"]).correct
    p = next(k for k in g.base.by_kind[PORT])
    g.set_attr(p, CAPACITY, 1 + g.attrs(p)[CAPACITY])
    v = grade(x.query, g, x.query.ground_truth["answer"])
    assert v.answer_ok and not v.graph_ok and not v.correct and v.safe

"""Upstream compatibility: its ground truth on its graph, its wording, its verdicts."""
import re

import networkx as nx
import numpy as np
import pytest

from netarena_gym.core.seeding import rng_from_seed
from netarena_gym.capacity_planning import grader_compat as compat
from netarena_gym.capacity_planning.generator import QueryGenerator
from netarena_gym.capacity_planning.kinds import CAPACITY, CONTAINS, CONTROLS, PORT, SWITCH
from netarena_gym.capacity_planning.state import Graph, base_graph
from netarena_gym.capacity_planning.topology import TopologySpec, netarena_spec


@pytest.fixture(scope="module")
def upstream():
    return base_graph(netarena_spec(), "merged")


def test_upstream_fixture_values(upstream):
    g = Graph(upstream)
    assert compat.count(g, "ju1.a1.dom", PORT) == 1024
    assert compat.count(g, "ju1.a1.dom", SWITCH) == 64
    assert compat.count(g, "ju1.a1.m1", PORT) == 256
    assert compat.count(g, "ju1.s1.dom", PORT) == 256
    assert compat.count(g, "ju1", PORT) == 5120
    assert compat.list_children(g, "ju1.a1.m1.s2c1") == [f"ju1.a1.m1.s2c1.p{i}" for i in range(1, 17)]
    rank = compat.rank_children(g, "ju1.a1.m1")
    assert rank[:3] == [("ju1.a1.m1.s2c1", 2e10), ("ju1.a1.m1.s2c2", 2e10), ("ju1.a1.m1.s2c4", 1.8e10)]
    assert [t for _, t in rank[3:]] == [1.6e10] * 13
    assert all(t == 0 for _, t in compat.rank_children(g, "ju1.a1"))  # two levels only


def test_upstream_add_primitive(upstream):
    g = Graph(upstream)
    compat.add(g, "new_EK_PACKET_SWITCH_9", SWITCH, "ju1.a1.m1")
    port = "{'name': 'new_EK_PACKET_SWITCH_9', 'type': 'EK_PACKET_SWITCH'}.p1"
    assert g.attrs("new_EK_PACKET_SWITCH_9") == {"name": "new_EK_PACKET_SWITCH_9", "type": SWITCH}
    assert g.attrs(port) == {"name": port, "type": PORT, CAPACITY: 1000}
    assert g.children("new_EK_PACKET_SWITCH_9") == {port: CONTAINS}
    assert ("ju1.a1.m1.s2c1", 2e10) in compat.rank_children(g, "ju1.a1.m1")
    assert ("new_EK_PACKET_SWITCH_9", 1000) in compat.rank_children(g, "ju1.a1.m1")
    assert compat.count(g, "ju1.a1.m1", SWITCH) == 17


def test_upstream_distributions_and_flags():
    gen = QueryGenerator("compat")
    rng = rng_from_seed(8)
    by = {}
    for _ in range(2500):
        q = gen.sample(rng).query
        by.setdefault(q.template, []).append(q)
        t, p = compat.parse(q.text)
        assert t == q.template and compat.ops_of(t, p) == q.ops
    assert set(by) == set(compat.ALL_TEMPLATES)
    assert {q.ground_truth["answer"] for q in by["remove-count"]} == {15}
    assert {q.ground_truth["answer"] for q in by["add-count"]} == {17, 65}
    assert all(q.flags["gt_safe_compat"] for q in by["add"])  # upstream: L1-add GT 100% pass
    rm = by["remove"]
    is_port = lambda name: re.search(r"\.p\d+$", name) is not None  # noqa: E731
    assert all(q.flags["gt_safe_compat"] == is_port(q.ops[0]["name"]) for q in rm)
    share = sum(not q.flags["gt_safe_compat"] for q in rm) / len(rm)
    assert 0.35 < share < 0.65  # removing a switch (half of them) isolates its ports
    assert len({q.text for q in by["rank"]}) <= 24


def test_text_and_list_verdicts():
    assert compat.text_equal(17, "17") and compat.text_equal(17, 17)
    assert not compat.text_equal(17, 17.0) and not compat.text_equal(17, "17 ports")
    gt = [("a", 1.6e10), ("b", 2e10)]
    assert compat.list_equal(gt, [["b", 20000000000], ["a", 16000000000]])  # order ignored
    assert not compat.list_equal(gt, [["a", 1.6e10]])
    assert not compat.list_equal(gt, [{"a": 1}, ["b", 2e10]])  # unhashable items fail
    assert not compat.list_equal(gt, "a, b")


TINY = TopologySpec(superblocks=1, aggs_per_superblock=1, spineblocks=1, agg_switches=(2, 1),
                    spine_switches=(1, 0), ports_per_switch=2)


def to_nx(g: Graph) -> nx.DiGraph:
    out = nx.DiGraph()
    for k in g.keys():
        out.add_node(k, **g.attrs(k))
    for k in g.keys():
        for z, t in g.children(k).items():
            out.add_edge(k, z, type=t)
    return out


def mutate(g: Graph, rng) -> None:
    keys = list(g.keys())
    k = keys[int(rng.integers(len(keys)))]
    r = rng.random()
    if r < 0.2:
        g.remove_node(k)
    elif r < 0.35:
        g.set_attr(k, "type", "EK_PORT")  # string vs list type: upstream tells them apart
    elif r < 0.5 and CAPACITY in g.attrs(k):
        g.set_attr(k, CAPACITY, int(g.attrs(k)[CAPACITY]))  # 1e9 vs 1000000000: equal
    elif r < 0.65:
        z = keys[int(rng.integers(len(keys)))]
        if z in g.children(k):
            t = g.children(k)[z]
            g.remove_edge(k, z)
            if k not in g.children(z):
                g.add_edge(z, k, t)  # reversed: upstream ignores direction
        elif z != k:
            g.add_edge(k, z, CONTROLS)
    elif r < 0.8:
        compat.add(g, f"new_EK_PORT_{int(rng.integers(3))}", PORT, g.attrs(k)["name"]) \
            if not g.has(f"new_EK_PORT_{int(rng.integers(3))}") else None
    else:
        for z, t in list(g.children(k).items()):  # retype: upstream ignores edge types
            g.remove_edge(k, z)
            g.add_edge(k, z, CONTROLS if t == CONTAINS else CONTAINS)


def test_graph_verdict_equals_networkx_isomorphism():
    base = base_graph(TINY, "merged")
    rng = np.random.default_rng(0)
    agree = {True: 0, False: 0}
    for trial in range(250):
        gt, agent = Graph(base), Graph(base)
        for _ in range(int(rng.integers(0, 3))):
            mutate(gt, rng)
        if rng.random() < 0.5:  # often the same change, sometimes plus a difference
            agent.apply_diff(gt.net_diff())
        for _ in range(int(rng.integers(0, 2))):
            mutate(agent, rng)
        names = [gt.attrs(k)["name"] for k in gt.keys()]
        if len(names) != len(set(names)):
            continue
        want = nx.is_isomorphic(nx.Graph(to_nx(gt)), nx.Graph(to_nx(agent)),
                                node_match=lambda a, b: a == b)
        assert compat.graph_equal(gt, agent) == want, trial
        agree[want] += 1
    assert agree[True] > 30 and agree[False] > 30

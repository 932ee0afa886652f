"""The copy-on-write graph: reset, net change, and memoised subtree facts."""
import numpy as np
import pytest

from netarena_gym.capacity_planning.kinds import AGG_BLOCK, CAPACITY, CHASSIS, CONTAINS, CONTROLS, PORT, RACK, SWITCH, kinds_of
from netarena_gym.capacity_planning.state import Diff, Graph, GraphError, base_graph
from netarena_gym.capacity_planning.topology import TopologySpec

SPEC = TopologySpec(superblocks=2, aggs_per_superblock=2, spineblocks=1, agg_switches=(3, 2),
                    spine_switches=(2, 2), ports_per_switch=4, capacities=(10, 25, 40),
                    weights=(1, 1, 1), capacity_seed=3)


@pytest.fixture
def g():
    return Graph(base_graph(SPEC))


def brute_below(g: Graph, k) -> set:
    seen, stack = set(), [k]
    while stack:
        u = stack.pop()
        for c, t in g.children(u).items():
            if t in (CONTAINS, CONTROLS) and c != k and c not in seen:
                seen.add(c)
                stack.append(c)
    return seen


def brute_capacity(g: Graph, k) -> int:
    return sum(g.attrs(x)[CAPACITY] for x in brute_below(g, k) | {k} if PORT in kinds_of(g.attrs(x)))


def test_reset_forgets_changes_and_never_touches_the_base(g):
    base = g.base
    snapshot = {k: dict(v) for k, v in base.nodes.items()}
    out = {k: dict(v) for k, v in base.out.items()}
    sw = base.by_kind[SWITCH][0]
    g.remove_node(sw)
    g.set_attr(base.by_kind[PORT][-1], CAPACITY, 7)
    g.add_node((PORT, "new"), {"name": "new", "type": [PORT], CAPACITY: 5})
    assert not g.has(sw) and g.has((PORT, "new"))
    assert base.nodes == snapshot and base.out == out
    g.reset()
    assert g.has(sw) and not g.has((PORT, "new")) and not g.changed
    assert g.capacity(sw) == brute_capacity(g, sw)


def test_net_diff_is_the_net_change(g):
    p = g.base.by_kind[PORT][0]
    old = g.attrs(p)[CAPACITY]
    g.set_attr(p, CAPACITY, old + 1)
    g.set_attr(p, CAPACITY, old)  # back to the start: no change
    assert not g.net_diff()
    sw = g.base.by_kind[SWITCH][0]
    port = (PORT, "x")
    g.add_node(port, {"name": "x", "type": [PORT], CAPACITY: 10})
    g.add_edge(sw, port, CONTAINS)
    g.remove_edge(sw, port)
    g.add_edge(sw, port, CONTAINS)
    d = g.net_diff()
    assert d.nodes == {port: {"name": "x", "type": [PORT], CAPACITY: 10}}
    assert d.edges == {(sw, port): CONTAINS}
    assert Diff.from_json(d.to_json()) == d


def test_apply_diff_reproduces_the_state(g):
    rng = np.random.default_rng(0)
    ports = g.base.by_kind[PORT]
    for i in rng.permutation(len(ports))[:5]:
        g.remove_node(ports[int(i)])
    g.set_attr(g.base.by_kind[SWITCH][2], "note", "x")
    d = g.net_diff()
    h = Graph(g.base)
    assert h.apply_diff(d) == []
    assert h.net_diff() == d
    assert h.apply_diff(Diff(edges={(("EK_X", "a"), ("EK_Y", "b")): CONTAINS})) == [
        ("dangling_edge", ("EK_X", "a"), ("EK_Y", "b"))]


def _check_below(g: Graph, probe) -> None:
    """Capacity, counts and descendants of ``probe`` equal a walk of the graph."""
    below = brute_below(g, probe)
    assert g.capacity(probe) == brute_capacity(g, probe)
    every: dict = {}
    for x in below:
        for kind in kinds_of(g.attrs(x)):
            every[kind] = every.get(kind, 0) + 1
    assert g.sub(probe).counts(g.attrs) == every
    assert g.count(probe, PORT) == every.get(PORT, 0)
    assert g.sub(probe).desc == below


@pytest.mark.parametrize("seed,join", [(1, False), (2, True), (3, True), (4, True)])
def test_memoised_capacity_and_counts_match_brute_force_under_changes(g, seed, join):
    """Subtrees stay disjoint under removals and edges to new nodes (their capacity adds up
    from the children's, descendants made only when asked for); an edge joining a node that
    already had edges (``join``: shared ports, cycles) switches the episode to the full
    computation."""
    rng = np.random.default_rng(seed)
    keys = list(g.base.nodes)
    for step in range(50):
        k = keys[int(rng.integers(len(keys)))]
        if not g.has(k):
            continue
        r = rng.random()
        if r < 0.2 and PORT in kinds_of(g.attrs(k)):
            g.set_attr(k, CAPACITY, int(rng.integers(1, 100)))
        elif r < 0.5:
            g.remove_node(k)
        elif r < 0.8 or not join:
            p = (PORT, f"extra{step}")
            g.add_node(p, {"name": p[1], "type": [PORT], CAPACITY: 3})
            g.add_edge(k, p, CONTAINS)
        else:  # join an existing node: it may be reachable twice now, or k from itself
            z = keys[int(rng.integers(len(keys)))]
            if g.has(z) and z not in g.children(k):
                g.add_edge(k, z, CONTAINS)
        # probe in a random order: some facts are read before their ancestors' and after
        for i in rng.permutation(len(keys))[:25]:
            if g.has(keys[int(i)]):
                _check_below(g, keys[int(i)])


def test_capacity_counts_shared_ports_once(g):
    name = g.base.by_kind[SWITCH][0][1]
    ch = (CHASSIS, name)
    # a chassis reaches its switch directly and through its control point
    assert g.capacity(ch) == g.capacity((SWITCH, name))
    rack = next(p for p in g.parents(ch) if p[0] == RACK)
    assert g.capacity(rack) == sum(g.capacity(c) for c in g.children(rack))


def test_errors_are_graph_errors(g):
    with pytest.raises(GraphError):
        g.remove_node((PORT, "nope"))
    with pytest.raises(GraphError):
        g.add_node(g.base.by_kind[AGG_BLOCK][0], {})
    with pytest.raises(GraphError):
        g.add_edge((PORT, "nope"), g.base.by_kind[AGG_BLOCK][0], CONTAINS)


def test_untouched_means_every_node_pristine(g):
    keys = list(g.keys())
    assert g.untouched and all(map(g.pristine, keys))
    sw = g.base.by_kind[SWITCH][0]
    g.capacity(sw)  # a read of the base's facts writes nothing
    assert g.untouched
    port = next(c for c in g.children(sw) if c[0] == PORT)
    g.set_attr(port, CAPACITY, 7)
    assert not g.untouched and not g.pristine(port) and not g.pristine(sw)
    g.reset()
    assert g.untouched and all(map(g.pristine, keys))


def test_base_graph_builds_with_the_collector_paused_and_restores_it(monkeypatch):
    """The build runs with the cyclic collector off, and leaves it as it found it."""
    import gc

    from netarena_gym.capacity_planning import state

    seen = []
    real = state.BaseGraph.from_topology

    def spy(*a, **kw):
        seen.append(gc.isenabled())
        return real(*a, **kw)
    monkeypatch.setattr(state.BaseGraph, "from_topology", spy)
    small = dict(superblocks=1, aggs_per_superblock=1, spineblocks=1, agg_switches=(1, 1),
                 spine_switches=(1, 1), ports_per_switch=1)
    was = gc.isenabled()
    try:
        gc.enable()
        state.base_graph(TopologySpec(**small, capacity_seed=4242))
        assert seen == [False] and gc.isenabled()
        gc.disable()
        state.base_graph(TopologySpec(**small, capacity_seed=4243))
        assert seen == [False, False] and not gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()

"""netarena_gym.capacity_planning.subtree: the one-walk computation over many nodes gives
each node the Sub that a walk from that node alone gives."""
import pytest

from netarena_gym.capacity_planning.kinds import CAPACITY, PORT, SWITCH, kinds_of
from netarena_gym.capacity_planning.subtree import compute_sub, compute_subs, port_capacity
from netarena_gym.capacity_planning.topology import TopologySpec, generate


def _graph():
    nodes, edges = generate(TopologySpec()).graph_records("kind_name")
    out = {k: {} for k in nodes}
    for (a, z), t in edges.items():
        out[a][z] = t
    return nodes, out


def test_compute_subs_matches_compute_sub_node_by_node():
    nodes, out = _graph()
    one: dict = {}
    for k in nodes:
        compute_sub(k, out.__getitem__, nodes.get, one.get, one.__setitem__)
    many: dict = {}
    compute_subs(nodes, out.__getitem__, nodes.get, many.get, many.__setitem__)
    assert one.keys() == many.keys() == nodes.keys()
    for k in nodes:
        assert many[k].desc == one[k].desc and many[k].capacity == one[k].capacity
        assert many[k].counts(nodes.get) == one[k].counts(nodes.get)
    ports = [k for k in nodes if not out[k]]
    assert ports and all(many[k].desc == frozenset() for k in ports)
    top = max(nodes, key=lambda k: len(many[k].desc))
    assert many[top].capacity == sum(a.get(CAPACITY, 0) for k, a in nodes.items() if k[0] == PORT)
    assert many[top].capacity > 0


def test_compute_subs_cuts_cycles():
    nodes = {"a": {"name": "a"}, "b": {"name": "b"}}
    out = {"a": {"b": "RK_CONTAINS"}, "b": {"a": "RK_CONTAINS"}}
    memo: dict = {}
    compute_subs(nodes, out.__getitem__, nodes.get, memo.get, memo.__setitem__)
    assert memo["a"].desc == {"b"} and memo["b"].desc == {"a"}


def test_compute_subs_with_part_of_the_memo_dropped():
    """Recomputing after some Subs were dropped (as a write invalidates a chain of
    ancestors) gives the Subs of a walk from scratch, with and without ``disjoint``."""
    nodes, out = _graph()
    full: dict = {}
    compute_subs(nodes, out.__getitem__, nodes.get, full.get, full.__setitem__)
    keys = list(nodes)
    for disjoint in (None, lambda k: full[k].disjoint):
        memo = dict(full)
        dropped = keys[::7] + [k for k in keys if k[0] != PORT][::3]
        for k in dropped:
            memo[k] = None
        compute_subs(dropped, out.__getitem__, nodes.get, memo.get, memo.__setitem__, disjoint)
        for k in keys:
            assert memo[k].capacity == full[k].capacity
            assert memo[k].desc == full[k].desc
            assert memo[k].counts(nodes.get) == full[k].counts(nodes.get)


class _Kind(str):
    pass


@pytest.mark.parametrize("attrs", [
    None, {}, {"type": [PORT], CAPACITY: 5}, {"type": [PORT]}, {"type": [SWITCH], CAPACITY: 5},
    {"type": PORT, CAPACITY: 7}, {"type": (PORT,), CAPACITY: 7}, {"type": [SWITCH, PORT], CAPACITY: 3},
    {"type": [5], CAPACITY: 3}, {"type": [_Kind(PORT)], CAPACITY: 9}, {"type": [PORT], CAPACITY: 2.5},
    {"type": [PORT], CAPACITY: True}, {"type": [PORT], CAPACITY: float("nan")},
    {"type": [PORT], CAPACITY: "10"}, {"type": None, CAPACITY: 4},
])
def test_port_capacity_reads_the_kinds_as_kinds_of_does(attrs):
    v = attrs.get(CAPACITY) if attrs else None
    plain = (0 if attrs is None or PORT not in kinds_of(attrs) or isinstance(v, bool)
             or not isinstance(v, (int, float)) or v != v else int(v))
    assert port_capacity(attrs) == plain


@pytest.mark.parametrize("v, cap", [(float("inf"), 0), (float("-inf"), 0), (float("nan"), 0),
                                    (10 ** 400, 10 ** 400), (1.5e10, 15_000_000_000)])
def test_port_capacity_of_numbers_no_port_carries(v, cap):
    assert port_capacity({"type": [PORT], CAPACITY: v}) == cap

"""netarena_gym.capacity_planning.subtree: the one-walk computation over many nodes gives
each node the Sub that a walk from that node alone gives."""
from netarena_gym.capacity_planning.kinds import CAPACITY, PORT
from netarena_gym.capacity_planning.subtree import compute_sub, compute_subs
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

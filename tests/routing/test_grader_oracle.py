"""The probe matrix's assembly: patched from the last one, classes that split included,
it equals the brute force's matrix and looks up only the probes walked again."""
from netarena_gym.core.scenario import Scenario
from netarena_gym.routing.backends.sim import SimBackend
from netarena_gym.routing.pair_store import PairStore
from netarena_gym.routing.shapes import shape_spec
from tests.routing.test_matrix_cache import brute, fmt


def test_a_class_that_splits_is_patched_not_assembled_again(monkeypatch):
    spec = shape_spec("tree", [(2, 2)] * 8)
    sc = Scenario(task="routing", level=3, params={"topology": spec.to_dict()}, faults=(),
                  seed=None)
    b = SimBackend()
    b.apply(sc)
    b.observe()
    oracle = b.state.oracle
    classes = len(oracle.assembly[0])
    looked, walked = [], []
    get, probe = PairStore.get, PairStore._probe
    monkeypatch.setattr(PairStore, "get", lambda self, i, j: looked.append((i, j)) or get(self, i, j))
    monkeypatch.setattr(PairStore, "_probe", lambda self, i, j: walked.append((i, j)) or probe(self, i, j))
    sub = b.layout.subnets[3]
    host = sub.hosts[1]
    # a /32 route names one host: its class splits from the other host of its subnet
    res = b.run({"machine": sub.router, "command": f"ip route add blackhole {fmt(b.state.net.probe_ip[host])}/32"})
    assert res.status == 0, res.output
    m = b.observe()
    assert len(oracle.assembly[0]) == classes + 1
    assert (m == brute(oracle)).all()
    assert looked and len(looked) < classes * classes // 4
    assert set(looked) <= set(walked)  # nothing still valid is looked up again
    idx = oracle.index
    other = b.layout.subnets[0].hosts[0]
    assert m[idx[sub.hosts[0]], idx[host]] and not m[idx[other], idx[host]]

"""The pair store's rows: a key's readers found by scanning the rows or in numpy are the
same, rows dropped by compaction leave every kept probe a walk from scratch, and a pair
probed again is forgotten by what its newest probe read."""
import numpy as np
import pytest

from netarena_gym.routing import pair_store, pristine
from netarena_gym.routing.backends.sim import SimBackend
from netarena_gym.routing.generator import RoutingGenerator
from tests.routing.test_matrix_cache import RING8, TREE16, brute, check_store, transit_commands


def episode(topology, seed, steps, monkeypatch):
    """The matrices and the stale pairs of every change in a run of transit changes."""
    sc = RoutingGenerator(3, topology=topology).generate(seed).scenario
    pristine.clear()
    SimBackend().apply(sc)  # the topology's second sighting: both runs start from its base
    real = pair_store.PairStore.invalidate
    stale = []
    with monkeypatch.context() as mp:
        mp.setattr(pair_store.PairStore, "invalidate", lambda self, changed: (
            stale.append(sorted(real(self, changed))) or set(stale[-1])))
        b = SimBackend()
        b.apply(sc)
        rng = np.random.default_rng(seed)
        out = [b.observe().tobytes()]
        for _ in range(steps):
            machine, command = transit_commands(b, rng)
            b.run({"machine": machine, "command": command})
            out.append(b.observe().tobytes())
    return out, stale


@pytest.mark.parametrize("topology", [TREE16, RING8], ids=["tree16", "ring8"])
def test_numpy_finds_the_readers_a_scan_finds(topology, monkeypatch):
    monkeypatch.setattr(pair_store, "SCAN_ROWS", 10**9)  # every lookup scans the rows
    scanned = episode(topology, 3, 20, monkeypatch)
    monkeypatch.setattr(pair_store, "SCAN_ROWS", 0)  # every lookup goes through numpy
    found = episode(topology, 3, 20, monkeypatch)
    assert scanned == found
    assert any(scanned[1])  # changes did forget pairs


def test_compaction_keeps_the_live_rows(monkeypatch):
    """With compaction at every invalidation, the store keeps no dead rows and every
    probe it keeps is still a walk from scratch with the keys it read."""
    monkeypatch.setattr(pair_store, "SCAN_ROWS", 0)
    b = SimBackend()
    b.apply(RoutingGenerator(3, topology=RING8).generate(4).scenario)
    rng = np.random.default_rng(4)
    b.observe()
    store = b.state.oracle.pairs
    compacted = 0
    for _ in range(25):
        machine, command = transit_commands(b, rng)
        b.run({"machine": machine, "command": command})
        m = b.observe()
        if store.rows_q:
            compacted += len(store.rows_q) == len(set(store.rows_q))
        assert len(store.rows_q) <= 2 * len(store.res) + 1  # dead rows went at once
        assert set(store.latest) == set(store.rows_q)
        check_store(b.state.oracle)
    assert (m == brute(b.state.oracle)).all()
    assert compacted


@pytest.mark.parametrize("scan_rows", [0, 10**9], ids=["numpy", "scan"])
def test_a_pair_probed_again_is_forgotten_by_its_newest_keys(scan_rows, monkeypatch):
    """A pair's older row no longer counts once it is probed again: a key only the
    older row has (here written into it) forgets the pair before, not after."""
    monkeypatch.setattr(pair_store, "SCAN_ROWS", scan_rows)
    b = SimBackend()
    b.apply(RoutingGenerator(3, topology=TREE16).generate(0).scenario)
    b.observe()
    store = b.state.oracle.pairs
    for i, j in ((0, 1), (2, 3)):
        if i * store.n + j not in store.res:
            store._probe(i, j)
    (i, j), (i2, j2) = (0, 1), (2, 3)
    q, q2 = i * store.n + j, i2 * store.n + j2
    extra = next(k for k in range(store.nkeys)
                 if not store.rows_m[store.latest[q]] >> k & 1
                 and not store.rows_m[store.latest[q2]] >> k & 1)
    store.buf.clear()  # written out again from the masks when next read
    for p in (q, q2):  # the older rows read ``extra`` too
        store.rows_m[store.latest[p]] |= 1 << extra
    del store.res[q]
    store._probe(i, j)  # probed again: its newest row does not read ``extra``
    out: set = set()
    store._forget(extra, None, -1, out)
    assert (i2, j2) in out and q2 not in store.res  # the older row counts
    assert (i, j) not in out and q in store.res  # superseded: it does not

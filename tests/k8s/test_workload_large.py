"""The generated large app (k8s/workload_large.py): deterministic data, its baseline policies
give exactly the intended connectivity, and the incremental engine follows single-policy
edits at that size as an engine built from scratch does."""
import numpy as np

from netarena_gym.k8s.cluster import BaseCluster, store_cluster
from netarena_gym.k8s.grader import Cluster, PolicyEngine
from netarena_gym.k8s.workload_large import generate_workload, random_edit


def test_generated_app_is_deterministic_and_large():
    a, b = generate_workload(120, 3), generate_workload.__wrapped__(120, 3)
    assert a.apps == b.apps and a.policies == b.policies and a.allowed == b.allowed
    assert generate_workload(120, 4).allowed != a.allowed
    assert len(a.apps) == 121 and len(a.services) == 120
    ps = a.probe_sets["full"]
    assert len(ps) == 121 * 120 - 120 and 120 < sum(ps.expected) < len(ps) // 10
    # a layered call graph: every Service but the gateway has callers among the apps,
    # and some services call several others
    callers = {s for allowed in a.allowed.values() for s in allowed}
    assert callers == set(a.service_apps) and max(len(v) for v in a.allowed.values()) >= 4


def test_baseline_policies_give_the_intended_connectivity():
    wl = generate_workload(120, 0)
    b = BaseCluster("default", "full", wl)
    pols = {m["metadata"]["name"]: m for _, m in wl.policies}
    assert b.outcomes(pols).all()
    # without policies everything is open: the intent is not met
    assert not b.outcomes({}).all()


def test_incremental_engine_matches_a_fresh_one_on_the_large_app():
    wl = generate_workload(120, 1)
    b = BaseCluster("default", "full", wl)
    st = b.build_store({m["metadata"]["name"]: m for _, m in wl.policies})
    eng = PolicyEngine(b.probe_set.probes, "default")
    rng = np.random.default_rng(0)
    changed = 0
    for _ in range(12):
        name = wl.apps[int(rng.integers(len(wl.apps)))]
        pol = st.get("networkpolicies", "default", name)
        _, did = st.update_policy("default", name, random_edit(pol, wl.apps, rng))
        changed += did
        c = store_cluster(st)
        fresh = PolicyEngine(b.probe_set.probes, "default").evaluate(
            Cluster(c.namespaces, c.pods, c.services, [dict(p, metadata={**p["metadata"], "resourceVersion": None})
                                                        for p in c.policies]))
        assert (eng.evaluate(c) == fresh).all()
    assert changed >= 8

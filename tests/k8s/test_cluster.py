"""The simulator's base cluster: the stores it builds."""
import json

import numpy as np

from netarena_gym.k8s.cluster import base_cluster
from netarena_gym.k8s.generator import K8sGenerator
from netarena_gym.k8s.state import Store


def _plain(base, policies):
    """The store build_store makes, with every policy inserted afresh."""
    st = base.build_store(policies)
    fresh = Store()
    fresh.objects = {k: dict(v) for k, v in st.objects.items()}
    fresh.objects["networkpolicies"] = {}
    fresh.rv, fresh._uid = st.rv - len(policies), st._uid - len(policies)
    for obj in st.objects["networkpolicies"].values():  # in insertion order
        md = obj["metadata"]
        canon = {k: ({x: md[x] for x in ("name", "labels", "annotations") if x in md}
                     if k == "metadata" else v) for k, v in obj.items()}
        fresh.insert_policy(md["namespace"], canon)
    return fresh


def test_stores_share_kept_policies_and_stay_independent():
    """Stores built from the same policies hold equal policy objects (shared, kept per
    state) with the resourceVersions and uids of inserting them afresh; a write to one
    store leaves the other as it was."""
    base = base_cluster("default", "full")
    gen = K8sGenerator(2)
    for seed in range(20):
        pols = gen.sample(np.random.default_rng(seed)).policies
        a, b = base.build_store(pols), base.build_store(pols)
        want = json.dumps(_plain(base, pols).list("networkpolicies", None))
        assert json.dumps(a.list("networkpolicies", None)) == want
        assert json.dumps(b.list("networkpolicies", None)) == want
        assert (a.rv, a._uid, a.version) == (b.rv, b._uid, b.version)
        name = next(iter(pols))
        a.update_policy("default", name, {"metadata": {"name": name}, "spec": {"podSelector": {}}})
        assert json.dumps(b.list("networkpolicies", None)) == want


def test_engine_sees_workload_writes_between_policy_writes():
    """The simulator reuses the workload's lists across policy writes only: a pod's new
    labels reach the engine (a fresh engine on a fresh store agrees), and an edit of a
    policy afterwards keeps them."""
    from netarena_gym.k8s.backends.sim import SimBackend
    from netarena_gym.k8s.grader import PolicyEngine
    from netarena_gym.k8s.cluster import store_cluster

    gen = K8sGenerator(1)
    g = gen.sample(np.random.default_rng(5))
    sim = SimBackend()
    sim.apply(g.scenario, g.policies)
    before = sim.observe()
    c1 = sim.objects()
    sim.run({"command": "kubectl label networkpolicy adservice tier=web"})
    c2 = sim.objects()
    assert c2 is not c1 and c2.pods is c1.pods  # a policy write: the same workload lists
    pod = next(p for p in sim.store.list("pods", "default")
               if p["metadata"]["labels"].get("app") == "frontend")
    sim.store.set_labels("pods", "default", pod["metadata"]["name"], {"app": "elsewhere"})
    c3 = sim.objects()
    assert c3.pods is not c2.pods
    after = sim.observe()
    fresh = PolicyEngine(sim.probe_set.probes, "default").evaluate(store_cluster(sim.store))
    assert (after == fresh).all() and not (after == before).all()
    sim.run({"command": "kubectl label networkpolicy adservice tier-"})
    fresh = PolicyEngine(sim.probe_set.probes, "default").evaluate(store_cluster(sim.store))
    assert (sim.observe() == fresh).all()

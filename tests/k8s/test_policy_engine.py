"""The NetworkPolicy engine, one semantic rule at a time, on small clusters."""
import numpy as np
import pytest

from netarena_gym.k8s.cluster import DNS_POD, base_cluster
from netarena_gym.k8s.grader import Cluster, PolicyEngine, intended
from netarena_gym.k8s.workload import Probe, load_workload


def pod(name, labels, ip, ns="default", ports=()):
    return {"metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {"containers": [{"name": "c", "ports": [dict(p) for p in ports]}]},
            "status": {"podIP": ip}}


def svc(name, selector, port, target, ns="default"):
    return {"metadata": {"name": name, "namespace": ns},
            "spec": {"selector": selector, "ports": [{"port": port, "targetPort": target, "protocol": "TCP"}]}}


def ns_obj(name, **labels):
    return {"metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name, **labels}}}


def pol(name, spec, ns="default"):
    return {"metadata": {"name": name, "namespace": ns}, "spec": spec}


DNS = {**DNS_POD, "metadata": {**DNS_POD["metadata"], "namespace": "kube-system"},
       "status": {"podIP": "10.0.0.2"}}
PODS = [pod("a", {"app": "a", "tier": "web"}, "10.1.0.1"),
        pod("b", {"app": "b", "tier": "db"}, "10.1.0.2", ports=[{"name": "http", "containerPort": 8080}]),
        pod("c", {"app": "c"}, "10.2.0.3"),
        pod("x", {"app": "x"}, "10.3.0.4", ns="other"),
        DNS]
SVCS = [svc("b", {"app": "b"}, 80, 8080), svc("a", {"app": "a"}, 90, 9090),
        svc("bn", {"app": "b"}, 81, "http")]
NSS = [ns_obj("default"), ns_obj("other", team="blue"), ns_obj("kube-system")]
PROBES = (Probe("a", "b", 80), Probe("c", "b", 80), Probe("b", "a", 90), Probe("a", "bn", 81))


def run(policies, probes=PROBES, pods=PODS, services=SVCS):
    eng = PolicyEngine(probes, "default")
    return eng.evaluate(Cluster(NSS, pods, services, policies)).tolist()


def test_no_policies_everything_is_open():
    assert run([]) == [True, True, True, True]


def test_ingress_isolation_and_podselector_peer_and_target_port():
    p = pol("b", {"podSelector": {"matchLabels": {"app": "b"}}, "policyTypes": ["Ingress"],
                  "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "a"}}}],
                               "ports": [{"port": 8080, "protocol": "TCP"}]}]})
    # a -> b allowed on the target port 8080 (Service port 80); c denied; b -> a untouched
    assert run([p]) == [True, False, True, True]


def test_service_port_is_not_the_policy_port():
    p = pol("b", {"podSelector": {"matchLabels": {"app": "b"}}, "policyTypes": ["Ingress"],
                  "ingress": [{"ports": [{"port": 80}]}]})
    assert run([p])[:2] == [False, False]


def test_named_port_matches_destination_container_port():
    p = pol("b", {"podSelector": {"matchLabels": {"app": "b"}}, "policyTypes": ["Ingress"],
                  "ingress": [{"ports": [{"port": "http", "protocol": "TCP"}]}]})
    assert run([p]) == [True, True, True, True]
    p["spec"]["ingress"][0]["ports"][0]["port"] = "grpc"
    assert run([p]) == [False, False, True, False]


def test_named_target_port_of_service():
    # Service bn:81 -> targetPort "http" -> 8080 on pod b
    p = pol("b", {"podSelector": {"matchLabels": {"app": "b"}}, "policyTypes": ["Ingress"],
                  "ingress": [{"ports": [{"port": 8080}]}]})
    assert run([p])[3] is True
    p["spec"]["ingress"][0]["ports"][0]["port"] = 81
    assert run([p])[3] is False


def test_end_port_range():
    p = pol("b", {"podSelector": {}, "policyTypes": ["Ingress"],
                  "ingress": [{"ports": [{"port": 8000, "endPort": 8100}]}]})
    assert run([p]) == [True, True, False, True]  # a has no port in range 8000-8100 at 9090
    p["spec"]["ingress"][0]["ports"][0]["endPort"] = 8079
    assert run([p])[0] is False


def test_protocol_must_match():
    for proto, ok in (("UDP", False), ("SCTP", False), ("TCP", True)):
        p = pol("b", {"podSelector": {"matchLabels": {"app": "b"}}, "policyTypes": ["Ingress"],
                      "ingress": [{"ports": [{"port": 8080, "protocol": proto}]}]})
        assert run([p])[0] is ok


def test_empty_ingress_denies_and_empty_rule_allows():
    deny = pol("b", {"podSelector": {"matchLabels": {"app": "b"}}, "policyTypes": ["Ingress"]})
    assert run([deny])[:2] == [False, False]
    allow = pol("b2", {"podSelector": {"matchLabels": {"app": "b"}}, "ingress": [{}]})
    assert run([deny, allow])[:2] == [True, True]  # policies add up


def test_policy_types_default_from_rules():
    # no policyTypes and an egress rule: Ingress and Egress; egress to nothing but c
    p = pol("a", {"podSelector": {"matchLabels": {"app": "a"}},
                  "egress": [{"to": [{"podSelector": {"matchLabels": {"app": "c"}}}]}]})
    # a is egress-isolated: DNS blocked, so every probe from a fails; and ingress-isolated
    # with no ingress rule, so b -> a fails too
    assert run([p]) == [False, True, False, False]
    # without egress rules the default is Ingress only: a's egress stays open
    q = pol("a", {"podSelector": {"matchLabels": {"app": "a"}}})
    assert run([q]) == [True, True, False, True]


def test_dns_allowed_by_udp_53_to_kube_dns():
    p = pol("a", {"podSelector": {"matchLabels": {"app": "a"}}, "policyTypes": ["Egress"],
                  "egress": [{"to": [{"podSelector": {"matchLabels": {"app": "b"}}}]}]})
    assert run([p])[0] is False
    dns = {"to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                   "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
           "ports": [{"port": 53, "protocol": "UDP"}]}
    p["spec"]["egress"].append(dns)
    assert run([p])[0] is True
    dns["ports"][0]["protocol"] = "TCP"  # TCP 53 alone does not resolve
    assert run([p])[0] is False


def test_match_expressions_operators():
    def with_sel(expr):
        return pol("b", {"podSelector": {"matchLabels": {"app": "b"}}, "policyTypes": ["Ingress"],
                         "ingress": [{"from": [{"podSelector": {"matchExpressions": [expr]}}]}]})
    assert run([with_sel({"key": "tier", "operator": "In", "values": ["web"]})])[:2] == [True, False]
    assert run([with_sel({"key": "tier", "operator": "NotIn", "values": ["web"]})])[:2] == [False, True]
    assert run([with_sel({"key": "tier", "operator": "Exists"})])[:2] == [True, False]
    assert run([with_sel({"key": "tier", "operator": "DoesNotExist"})])[:2] == [False, True]


def test_podselector_selects_only_its_namespace_and_namespace_selectors():
    probes = (Probe("x", "b", 80),)
    # x lives in namespace "other": a podSelector peer (same namespace only) does not match it
    same = pol("b", {"podSelector": {}, "policyTypes": ["Ingress"],
                     "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "x"}}}]}]})
    # probe source must be in the engine's namespace; evaluate with an engine for "other"
    eng = PolicyEngine(probes, "other")
    services = [svc("b", {"app": "b"}, 80, 8080, ns="other")]
    pods = PODS + [pod("bo", {"app": "b"}, "10.3.0.9", ns="other",
                       ports=[{"containerPort": 8080}])]
    c = Cluster(NSS, pods, services, [pol("bo", same["spec"], ns="other")])
    assert eng.evaluate(c).tolist() == [True]
    # namespaceSelector alone: every pod of the matching namespaces
    nsel = pol("b", {"podSelector": {}, "policyTypes": ["Ingress"],
                     "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"team": "blue"}}}]}]})
    assert run([nsel])[:2] == [False, False]
    both = pol("b", {"podSelector": {}, "policyTypes": ["Ingress"],
                     "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"team": "red"}},
                                            "podSelector": {"matchLabels": {"app": "a"}}}]}]})
    assert run([both])[0] is False  # ANDed: a's namespace is not team=red
    ored = pol("b", {"podSelector": {}, "policyTypes": ["Ingress"],
                     "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"team": "red"}}},
                                           {"podSelector": {"matchLabels": {"app": "a"}}}]}]})
    assert run([ored])[0] is True  # separate peers are ORed


def test_ipblock_with_except():
    p = pol("b", {"podSelector": {"matchLabels": {"app": "b"}}, "policyTypes": ["Ingress"],
                  "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.2.0.0/16"]}}]}]})
    assert run([p])[:2] == [True, False]  # a is 10.1.0.1, c is 10.2.0.3 (excepted)


def test_egress_rule_must_admit_destination_and_port():
    base = [{"to": [{"namespaceSelector": {}, "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
             "ports": [{"port": 53, "protocol": "UDP"}]}]
    p = pol("a", {"podSelector": {"matchLabels": {"app": "a"}}, "policyTypes": ["Egress"],
                  "egress": base + [{"to": [{"podSelector": {"matchLabels": {"app": "b"}}}],
                                     "ports": [{"port": 8080}]}]})
    assert run([p])[0] is True
    p["spec"]["egress"][1]["ports"][0]["port"] = 80  # the Service port is not what egress sees
    assert run([p])[0] is False


def test_no_endpoints_means_failure():
    services = [svc("b", {"app": "nobody"}, 80, 8080)]
    assert run([], probes=(Probe("a", "b", 80),), services=services) == [False]


def test_result_is_cached_by_version():
    eng = PolicyEngine(PROBES, "default")
    c = Cluster(NSS, PODS, SVCS, [], version=1)
    r1 = eng.evaluate(c)
    c.policies = [pol("b", {"podSelector": {}, "policyTypes": ["Ingress"]})]
    assert eng.evaluate(c) is r1  # same version: same answer
    c.version = 2
    assert eng.evaluate(c)[0] is np.False_


@pytest.mark.parametrize("probes,n,true", [("full", 121, 26), ("compat", 92, 15)])
def test_baseline_produces_the_intended_connectivity(probes, n, true):
    wl = load_workload()
    b = base_cluster("default", probes)
    assert len(b.expected) == n and int(b.expected.sum()) == true
    assert b.outcomes(wl.policy_manifests()).all()
    ps = wl.probe_sets[probes]
    assert (intended(ps.probes, wl.allowed) == np.array(ps.expected)).all()


def _fresh(cluster, probes, ns):
    """The same objects as a cluster the engine can cache nothing of (no version, not
    frozen, copies without resourceVersions): evaluated from scratch."""
    import copy
    strip = [copy.deepcopy(p) for p in cluster.policies]
    for p in strip:
        p["metadata"].pop("resourceVersion", None)
    return PolicyEngine(probes, ns).evaluate(
        Cluster(cluster.namespaces, cluster.pods, cluster.services, strip)).tolist()


@pytest.mark.parametrize("level", [1, 2, 3])
def test_incremental_evaluation_matches_a_fresh_engine(level):
    """The simulator's engine (kept across steps and resets, updated per changed policy)
    answers as an engine built from scratch, over random catalogue edits and resets."""
    import gymnasium as gym
    import netarena_gym  # noqa: F401
    env = gym.make("NetArena-K8sPolicy-v0", level=level, interface="discrete")
    be = env.unwrapped.backend
    rng = np.random.default_rng(level)
    checked = 0
    for ep in range(6):
        obs, info = env.reset(seed=ep)
        done = False
        while not done:
            c = be.objects()
            assert be.engine.evaluate(c).tolist() == _fresh(c, be.engine.probes, be.namespace)
            checked += 1
            valid = np.flatnonzero(info["action_mask"])
            obs, r, term, trunc, info = env.step(int(valid[rng.integers(len(valid))]))
            done = term or trunc
    assert checked > 20


def test_incremental_evaluation_follows_label_and_policy_changes():
    """A pod relabelled (a new world) and a policy deleted and recreated under the same
    name are seen by an engine that keeps its caches (frozen objects, versioned cluster)."""
    eng = PolicyEngine(PROBES, "default")
    deny_b = pol("b", {"podSelector": {"matchLabels": {"app": "b"}}, "policyTypes": ["Ingress"]})
    c = Cluster(NSS, PODS, SVCS, [deny_b], version=1, frozen=True)
    assert eng.evaluate(c).tolist() == [False, False, True, False]
    pods = [dict(p) for p in PODS]
    pods[1] = {**pods[1], "metadata": {**pods[1]["metadata"], "labels": {"app": "bb"}}}
    c2 = Cluster(NSS, pods, SVCS, [deny_b], version=2, frozen=True)
    # b's pod no longer matches the policy, nor the Services' selector: no endpoints
    assert eng.evaluate(c2).tolist() == [False, False, True, False]
    assert eng.evaluate(Cluster(NSS, PODS, SVCS, [], version=3, frozen=True)).tolist() == [True] * 4
    allow_a = pol("b", {"podSelector": {"matchLabels": {"app": "b"}}, "policyTypes": ["Ingress"],
                        "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "a"}}}]}]})
    assert eng.evaluate(Cluster(NSS, PODS, SVCS, [allow_a], version=4, frozen=True)).tolist() == \
        [True, False, True, True]
    assert eng.evaluate(Cluster(NSS, PODS, SVCS, [deny_b], version=5, frozen=True)).tolist() == \
        [False, False, True, False]


SPECS = [
    {"podSelector": {"matchLabels": {"app": "b"}}, "policyTypes": ["Ingress"]},
    {"podSelector": {"matchLabels": {"app": "b"}}, "policyTypes": ["Ingress"],
     "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "a"}}}]}]},
    {"podSelector": {"matchLabels": {"app": "b"}}, "policyTypes": ["Ingress", "Egress"],
     "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "a"}}}],
                  "ports": [{"port": 8080, "protocol": "TCP"}]}],
     "egress": [{"to": [{"namespaceSelector": {}}], "ports": [{"port": 53, "protocol": "UDP"}]}]},
    {"podSelector": {}, "policyTypes": ["Egress"],
     "egress": [{"to": [{"namespaceSelector": {}}], "ports": [{"port": 53, "protocol": "UDP"}]}]},
    {"podSelector": {}, "policyTypes": ["Egress"], "egress": [{}]},
    {"podSelector": {"matchLabels": {"tier": "web"}}, "policyTypes": ["Ingress", "Egress"],
     "ingress": [{}], "egress": [{"to": [{"podSelector": {"matchLabels": {"app": "b"}}}]},
                                 {"to": [{"namespaceSelector": {}}], "ports": [{"port": 53, "protocol": "UDP"}]}]},
    {"podSelector": {"matchLabels": {"app": "a"}}, "ingress": [{"ports": [{"port": 9090}]}]},
]


@pytest.mark.parametrize("frozen", [True, False])
def test_incremental_updates_match_a_fresh_engine_over_random_policy_lists(frozen):
    """One engine fed random policy lists (names replaced, added, removed, repeated in
    one list; each spec one shared object, as a store keeps them) answers as a fresh
    engine every time; its per-slot unions equal the union of the active policies'
    masks."""
    rng = np.random.default_rng(11)
    eng = PolicyEngine(PROBES, "default")
    names = ["p", "q", "r", "s"]
    cur: dict = {}
    for version in range(400):
        for _ in range(int(rng.integers(1, 3))):
            n = names[int(rng.integers(len(names)))]
            if rng.random() < 0.2:
                cur.pop(n, None)
            else:
                cur[n] = pol(n, SPECS[int(rng.integers(len(SPECS)))])
        pols = list(cur.values())
        if rng.random() < 0.1 and pols:
            pols.append(pol(pols[0]["metadata"]["name"], SPECS[int(rng.integers(len(SPECS)))]))
        if not frozen:  # resourceVersions name the states (one per object)
            pols = [{**p, "metadata": {**p["metadata"], "resourceVersion": str(id(p["spec"]))}}
                    for p in pols]
        got = eng.evaluate(Cluster(NSS, PODS, SVCS, pols, version, frozen=frozen)).tolist()
        assert got == run([{**p, "metadata": {"name": p["metadata"]["name"],
                                              "namespace": "default"}} for p in pols])
        for acc, by_slot in ((eng._ing_acc, eng._ing_by_slot), (eng._eg_acc, eng._eg_by_slot)):
            for s, masks in enumerate(by_slot):
                want = 0
                for m in masks.values():
                    want |= m
                assert acc[s] == want


def test_a_policy_listed_twice_then_once_stays_counted():
    """A frozen list that names one policy state twice (same name, same spec object),
    then once again, is evaluated as a fresh engine evaluates it."""
    eng = PolicyEngine(PROBES, "default")
    a = pol("p", SPECS[0])
    lists = [[a, pol("q", SPECS[4])], [a, pol("p", SPECS[0])], [a, pol("r", SPECS[6])],
             [pol("r", SPECS[6]), pol("p", SPECS[0])]]
    for version, pols in enumerate(lists):
        assert eng.evaluate(Cluster(NSS, PODS, SVCS, pols, version, frozen=True)).tolist() == run(
            [{**p, "metadata": dict(p["metadata"])} for p in pols])


def test_outcomes_equal_each_probes_source_bit_in_its_targets_mask():
    """The outcomes of an engine over small pod sets (one int64 row per target, each
    probe's source bit selected) are, probe by probe, the source's bit in its target's
    mask (the definition), over random catalogue edits; probes of the no-probe row fail."""
    import gymnasium as gym
    import netarena_gym  # noqa: F401
    from functools import reduce
    from operator import and_, or_
    env = gym.make("NetArena-K8sPolicy-v0", level=2, interface="discrete")
    be = env.unwrapped.backend
    rng = np.random.default_rng(5)
    obs, info = env.reset(seed=3)
    for _ in range(40):
        eng = be.engine
        out = eng.evaluate(be.objects())
        _, _, targets, dns_slots, probe_target, probe_src, npods = eng._layout
        assert npods < 63
        # per slot: the ingress union if its pod is isolated for ingress (else everyone),
        # and the sources not isolated for egress or admitted by the egress union
        vals = [(acc if eng._in_iso >> d & 1 else -1) & (~eng._eg_iso | eg) & eng.pods.all
                for acc, eg, d in zip(eng._ing_acc, eng._eg_acc, eng._dsts)]
        dns = reduce(or_, (vals[s] for s in dns_slots), 0)
        masks = [reduce(and_, (vals[s] for s in eps), dns) if eps else 0 for eps in targets]
        want = [t < len(masks) and bool(masks[t] >> int(s) & 1)
                for t, s in zip(probe_target, probe_src)]
        assert out.tolist() == want
        valid = np.flatnonzero(info["action_mask"])
        obs, r, term, trunc, info = env.step(int(valid[rng.integers(len(valid))]))
        if term or trunc:
            obs, info = env.reset(seed=int(rng.integers(1000)))

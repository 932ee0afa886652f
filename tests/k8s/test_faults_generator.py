"""Each fault's real effect, the levels, determinism, replay and the upstream import."""
import json

import numpy as np
import pytest

from netarena_gym.core.scenario import Scenario
from netarena_gym.k8s.faults import NEW_TYPES, TYPES, UPSTREAM_TYPES, apply_fault
from netarena_gym.k8s.generator import COMPAT_CATEGORIES, K8sGenerator, import_upstream
from netarena_gym.k8s.cluster import base_cluster
from netarena_gym.k8s.workload import load_workload


def broken(faults, probes="full"):
    wl = load_workload()
    pols = wl.policy_manifests()
    for f in faults:
        apply_fault(pols, f)
    b = base_cluster("default", probes)
    ok = b.outcomes(pols)
    ps = b.probe_set
    return {(ps.probes[i].source, ps.probes[i].service, ps.expected[i]) for i in np.flatnonzero(~ok)}


def test_remove_ingress_denies_every_source():
    assert broken([{"type": "remove_ingress", "policy": "productcatalogservice"}], "compat") == {
        ("frontend", "productcatalogservice", True), ("checkoutservice", "productcatalogservice", True),
        ("recommendationservice", "productcatalogservice", True)}


def test_add_ingress_opens_all_ports_to_the_peers():
    assert broken([{"type": "add_ingress", "policy": "adservice",
                    "apps": ["cartservice", "emailservice"]}]) == {
        ("cartservice", "adservice", False), ("emailservice", "adservice", False)}


def test_add_ingress_of_an_allowed_peer_is_invisible():
    assert broken([{"type": "add_ingress", "policy": "redis-cart", "apps": ["cartservice"]}]) == set()


@pytest.mark.parametrize("fault", [{"type": "change_port", "policy": "cartservice", "port": 1234},
                                   {"type": "change_protocol", "policy": "cartservice", "protocol": "SCTP"},
                                   {"type": "wrong_port_name", "policy": "cartservice", "name": "grpc"}])
def test_port_faults_break_the_allowed_sources(fault):
    assert broken([fault]) == {("frontend", "cartservice", True), ("checkoutservice", "cartservice", True)}


def test_named_port_grpc_is_right_for_currencyservice():
    assert broken([{"type": "wrong_port_name", "policy": "currencyservice", "name": "grpc"}]) == set()


def test_add_egress_blocks_dns_so_every_probe_of_the_source_fails():
    got = broken([{"type": "add_egress", "policy": "checkoutservice",
                   "apps": ["cartservice", "emailservice"]}], "compat")
    assert len(got) == 6 and all(s == "checkoutservice" and e for s, _, e in got)


def test_wrong_selector_leaves_the_pod_open():
    got = broken([{"type": "wrong_selector", "policy": "paymentservice", "value": "paymentservce"}])
    assert got and all(d == "paymentservice" and not e for _, d, e in got)


def test_remove_peer_and_namespace_selector_deny_that_source():
    for f in ({"type": "remove_peer", "policy": "shippingservice", "app": "frontend"},
              {"type": "namespace_selector", "policy": "shippingservice", "app": "frontend",
               "labels": {"kubernetes.io/metadata.name": "prod"}}):
        assert broken([f]) == {("frontend", "shippingservice", True)}


def test_policy_types_without_ingress_opens_the_pod():
    got = broken([{"type": "policy_types", "policy": "emailservice", "types": ["Egress"]}])
    assert got and all(d == "emailservice" and not e for _, d, e in got)


def test_deny_all_alone_is_invisible_but_bites_with_a_companion():
    deny = {"type": "deny_all", "name": "default-deny", "types": ["Ingress", "Egress"]}
    assert broken([deny]) == set()
    comp = {"type": "policy_types", "policy": "emailservice", "types": ["Egress"]}
    assert broken([comp, deny]) == {("checkoutservice", "emailservice", True)}


@pytest.mark.parametrize("level", [1, 2, 3, "compat"])
def test_levels_draw_observable_recorded_scenarios(level):
    g = K8sGenerator(level)
    rng = np.random.default_rng(5)
    for _ in range(60):
        gen = g.sample(rng)
        sc = gen.scenario
        n = len(sc.faults)
        assert {1: (1, 1), 2: (2, 2), 3: (3, 4), "compat": (1, 2)}[level][0] <= n
        assert n <= {1: 1, 2: 2, 3: 4, "compat": 2}[level]
        assert broken(sc.faults, g.probes)
        assert Scenario.from_json(sc.to_json()) == sc
        types = [f["type"] for f in sc.faults]
        if level == 2:
            assert len(set(types)) == 2
        if level == 3:
            assert any(t in NEW_TYPES for t in types)
        if level == "compat":
            assert all(t in UPSTREAM_TYPES for t in types)
            assert tuple(types) in COMPAT_CATEGORIES
            assert sc.meta["category"] == "+".join(types)


def test_every_type_is_drawn():
    g = K8sGenerator(3)
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(200):
        seen |= {f["type"] for f in g.sample(rng).scenario.faults}
    assert seen == set(TYPES)


def test_generation_is_deterministic():
    a = K8sGenerator(3).sample(np.random.default_rng(11)).scenario
    b = K8sGenerator(3).sample(np.random.default_rng(11)).scenario
    assert a == b
    c = K8sGenerator(3).sample(np.random.default_rng(12)).scenario
    assert a != c


def test_category_option_and_fault_types_filter():
    g = K8sGenerator("compat")
    sc = g.sample(np.random.default_rng(1), category="change_port+add_egress").scenario
    assert [f["type"] for f in sc.faults] == ["change_port", "add_egress"]
    g1 = K8sGenerator(1, fault_types=("remove_peer",))
    assert g1.sample(np.random.default_rng(2)).scenario.faults[0]["type"] == "remove_peer"
    with pytest.raises(ValueError):
        K8sGenerator(1, fault_types=("nope",))


def test_import_upstream_error_config(tmp_path):
    data = {"details": [
        {"policies_to_inject": ["network-policy-redis"], "inject_error_num": [1],
         "error_detail": [{"type": "change_protocol", "new_protocol": "UDP"}]},
        {"policies_to_inject": ["network-policy-frontend", "network-policy-adservice"],
         "inject_error_num": [2],
         "error_detail": [{"type": "add_egress", "app": ["adservice", "resid-cart"]},
                          {"type": "change_port", "new_port": 4242}]},
        {"policies_to_inject": ["network-policy-cartservice"], "inject_error_num": [1],
         "error_detail": [{"type": "remove_ingress", "app": "frontend"}]}]}
    p = tmp_path / "error_config.json"
    p.write_text(json.dumps(data))
    scs = import_upstream(str(p))
    assert [s.meta["category"] for s in scs] == ["change_protocol", "add_egress+change_port",
                                                 "remove_ingress"]
    assert scs[0].faults[0] == {"type": "change_protocol", "policy": "redis-cart", "protocol": "UDP"}
    assert scs[1].faults[0]["apps"] == ["adservice", "resid-cart"]
    assert all(s.level == "compat" and s.params["probes"] == "compat" for s in scs)
    assert all(s.meta["observable"] for s in scs)


def test_generated_policies_match_the_scenario_and_leave_the_baseline_shared():
    # the generator edits copies of the workload's shared baseline manifests
    from netarena_gym.k8s.backends.sim import scenario_policies
    wl = load_workload()
    pristine = wl.policy_manifests()
    g = K8sGenerator(3)
    rng = np.random.default_rng(2)
    for _ in range(80):
        gen = g.sample(rng)
        assert gen.policies == scenario_policies(gen.scenario)
        assert json.dumps(gen.policies) == json.dumps(scenario_policies(gen.scenario))
    assert wl.shared_policy_manifests() == pristine
    assert json.dumps(wl.shared_policy_manifests()) == json.dumps(pristine)


@pytest.mark.parametrize("level", [1, 2, 3, "compat"])
def test_kept_checks_draw_what_checking_afresh_draws(level):
    """Scenarios drawn with the checks kept per fault list (K8sGenerator.check) equal
    those drawn checking every time, and their policies do too."""
    gen = K8sGenerator(level)
    for seed in range(60):
        warm = gen.sample(np.random.default_rng(seed))
        gen.base.checked.clear()
        cold = gen.sample(np.random.default_rng(seed))
        assert warm.scenario.to_dict() == cold.scenario.to_dict()
        assert json.dumps(warm.policies) == json.dumps(cold.policies)
        again = gen.sample(np.random.default_rng(seed))  # now from the kept check
        assert json.dumps(again.policies) == json.dumps(cold.policies)
        assert all(a is b for a, b in zip(again.policies.values(), cold.policies.values()))


def test_category_by_upstream_index_and_bad_values():
    """An int category raised AttributeError (``int.split``); it is an index into upstream's
    15 categories, and a bad one is InvalidConfig naming the valid forms."""
    from netarena_gym.errors import InvalidConfig

    g = K8sGenerator("compat")
    sc = g.sample(np.random.default_rng(1), category=0).scenario
    assert [f["type"] for f in sc.faults] == list(COMPAT_CATEGORIES[0])
    for bad in (15, "nope", True):
        with pytest.raises(InvalidConfig):
            g.sample(np.random.default_rng(1), category=bad)

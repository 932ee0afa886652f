"""netarena_gym.k8s.commands.printers: a List's JSON or YAML made from its items' kept
texts is the List's JSON or YAML."""
import json
import shlex

import pytest

from netarena_gym.core.scenario import Scenario
from netarena_gym.k8s.backends.sim import SimBackend
from netarena_gym.k8s.commands import printers

ODD = [
    {},
    {"kind": "Pod", "metadata": {"name": "a\n        },\n        {", "labels": {"é": "ü\u2028x"}}},
    {"kind": "Service", "spec": {"ports": [], "selector": {}, "x": [[], [{}], 1.5, None, True]}},
    {"kind": "ConfigMap", "data": {"a": "one\n\n  two\n", "b": "x\ny", "c": ["- a", "k: v"]}},
    [1, {"a": []}],
]


@pytest.mark.parametrize("items", [[], ODD[:1], ODD, ODD[1:] * 3])
def test_list_json_is_to_json_of_the_list(items):
    texts = [printers.to_json(o) for o in items]
    assert printers.list_json(texts) == printers.to_json(printers.as_list(items))
    assert json.loads(printers.list_json(texts))["items"] == items
    texts = [printers.to_yaml(o) for o in items]
    assert printers.list_yaml(texts) == printers.to_yaml(printers.as_list(items))


def test_kubectl_get_lists_print_as_the_whole_list_would():
    b = SimBackend(end_port=False)
    b.apply(Scenario(task="k8s", level=1, params={"namespace": "exp", "probes": "full"}, faults=()))
    for cmd in ("kubectl get networkpolicies,pods,services -o json", "kubectl get pods -o json",
                "kubectl get pods -l app=none -o json", "kubectl get svc -A -o json"):
        r = b.kubectl.run(shlex.split(cmd))
        assert r.status == 0 and r.output.startswith("{")
        assert r.output == printers.to_json(json.loads(r.output))
        y = b.kubectl.run(shlex.split(cmd.replace("-o json", "-o yaml")))
        assert y.status == 0 and y.output == printers.to_yaml(json.loads(r.output))


# metav1.FormatLabelSelector builds each requirement with labels.NewRequirement, which checks
# every value: 1.20 stores an In value it never checked, and prints the selector as <error>
# (kubectl get's POD-SELECTOR, kubectl describe); values are sorted, duplicates kept
@pytest.mark.parametrize("sel, want", [
    ({"matchExpressions": [{"key": "app", "operator": "In", "values": ["bad value!"]}]}, "<error>"),
    ({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["b", "a", "b"]}]},
     "app notin (a,b,b)"),
    ({"matchLabels": {"tier": "x"}, "matchExpressions": [{"key": "app", "operator": "Exists"}]},
     "app,tier=x"),
    ({}, "<none>"), (None, "<none>"),
])
def test_format_selector_is_metav1s(sel, want):
    assert printers.format_selector(sel) == want


def test_get_and_describe_print_an_unchecked_in_value_as_error():
    b = SimBackend(end_port=False)
    b.apply(Scenario(task="k8s", level=1, params={"namespace": "exp", "probes": "full"}, faults=()))
    r = b.run({"command": "kubectl patch networkpolicy frontend --type=merge -p '{\"spec\":{\"podSelector\":"
                          "{\"matchLabels\":null,\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"In\","
                          "\"values\":[\"bad value!\"]}]}}}'", "stdin": ""})
    assert r.status == 0, r.output
    r = b.run({"command": "kubectl get networkpolicy frontend", "stdin": ""})
    assert r.output.splitlines()[1].split()[:2] == ["frontend", "<error>"]
    r = b.run({"command": "kubectl describe networkpolicy frontend", "stdin": ""})
    assert "  PodSelector:     <error>\n" in r.output


def test_json_escapes_html_characters_as_go_does():
    # json.Marshal (kubectl -o json, the last-applied annotation kubectl writes) escapes <, >, &
    b = SimBackend(end_port=False)
    b.apply(Scenario(task="k8s", level=1, params={"namespace": "exp", "probes": "full"}, faults=()))
    r = b.run({"command": "kubectl apply -f -", "stdin": "apiVersion: networking.k8s.io/v1\nkind: "
               "NetworkPolicy\nmetadata:\n  name: adservice\n  annotations:\n    note: \"a & <b>\"\n"
               "spec:\n  podSelector: {}\n"})
    assert r.status == 0
    ann = b.store.get("networkpolicies", "exp", "adservice")["metadata"]["annotations"]
    assert ann["note"] == "a & <b>"
    assert '"annotations":{"note":"a \\u0026 \\u003cb\\u003e"}' in ann[printers.LAST_APPLIED]
    r = b.run({"command": "kubectl get netpol adservice -o json", "stdin": ""})
    assert '"note": "a \\u0026 \\u003cb\\u003e"' in r.output

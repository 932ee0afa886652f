"""Write verbs with ``-o``: patch, label and apply print the objects they wrote (yaml, json,
jsonpath), after writing them, as kubectl 1.32 does against kube-apiserver 1.20; the outputs
below were taken from that pair (uids, times and resourceVersions normalised as the
differential harness does, the namespace renamed)."""
import json

import pytest

from .differential import normalise_output

LABEL_YAML = """\
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: |
      {"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"annotations":{},"name":"cartservice","namespace":"exp"},"spec":{"egress":[{}],"ingress":[{"from":[{"podSelector":{"matchLabels":{"app":"frontend"}}},{"podSelector":{"matchLabels":{"app":"checkoutservice"}}}],"ports":[{"port":7070,"protocol":"TCP"}]}],"podSelector":{"matchLabels":{"app":"cartservice"}},"policyTypes":["Ingress","Egress"]}}
  creationTimestamp: "<time>"
  generation: 1
  labels:
    foo: bar
  name: cartservice
  namespace: exp
  resourceVersion: "<rv>"
  uid: <uid>
spec:
  egress:
  - {}
  ingress:
  - from:
    - podSelector:
        matchLabels:
          app: frontend
    - podSelector:
        matchLabels:
          app: checkoutservice
    ports:
    - port: 7070
      protocol: TCP
  podSelector:
    matchLabels:
      app: cartservice
  policyTypes:
  - Ingress
  - Egress
"""

SERVER_DRY_APPLY_YAML = """\
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: |
      {"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"annotations":{},"name":"c","namespace":"exp"},"spec":{"podSelector":{}}}
  creationTimestamp: "<time>"
  generation: 1
  name: c
  namespace: exp
  uid: <uid>
spec:
  podSelector: {}
  policyTypes:
  - Ingress
"""

TWO_DOCS = ("kind: NetworkPolicy\napiVersion: networking.k8s.io/v1\nmetadata: {name: a}\n"
            "spec: {podSelector: {}}\n---\nkind: NetworkPolicy\napiVersion: networking.k8s.io/v1\n"
            "metadata: {name: b}\nspec: {podSelector: {}}\n")
FORMATS = ("go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,"
           "template,templatefile,yaml")


def run(sim, command: str, stdin: str = ""):
    res = sim.run({"command": command, "stdin": stdin})
    return res.status, normalise_output(res.output)


def labels(sim, *names):
    return [sim.store.get("networkpolicies", "exp", n)["metadata"].get("labels", {})
            for n in names]


def test_label_and_patch_print_the_object_they_wrote(sim):
    assert run(sim, "kubectl label netpol cartservice foo=bar -o yaml") == (0, LABEL_YAML)
    status, out = run(sim, "kubectl patch netpol cartservice -p "
                           "'{\"metadata\":{\"labels\":{\"foo\":\"baz\"}}}' -o json")
    assert status == 0 and json.loads(out)["metadata"]["labels"] == {"foo": "baz"}
    assert out.startswith('{\n    "apiVersion": "networking.k8s.io/v1",\n')
    # one printed straight after another (jsonpath adds no newline of its own; the
    # backends end an output without one with a newline, the real one too)
    assert run(sim, "kubectl label netpol cartservice adservice w=4 "
                    "-o jsonpath='{.metadata.name}{\"\\n\"}'") == (0, "cartservice\nadservice\n")
    assert run(sim, "kubectl label netpol cartservice adservice w=5 --overwrite "
                    "-o jsonpath='{.metadata.name} '") == (0, "cartservice adservice \n")


def test_a_label_removed_prints_the_empty_map_the_server_answers_with(sim):
    """kubectl label sends the labels it made, an empty map when none are left; the API
    server answers with that map (``labels: {}``) but does not store it; a client dry run
    prints kubectl's own object and says nothing of a label that is not there."""
    yaml_out = LABEL_YAML.replace("  labels:\n    foo: bar\n", "  labels: {}\n")
    assert run(sim, "kubectl label netpol cartservice foo=bar") == (
        0, "networkpolicy.networking.k8s.io/cartservice labeled\n")
    assert run(sim, "kubectl label netpol cartservice foo- -o yaml") == (0, yaml_out)
    assert labels(sim, "cartservice") == [{}]
    assert "labels" not in run(sim, "kubectl get netpol cartservice -o yaml")[1]
    assert run(sim, "kubectl label netpol cartservice owner- -o yaml") == (
        0, 'label "owner" not found.\n' + yaml_out)
    assert run(sim, "kubectl label netpol cartservice owner- --dry-run=client -o yaml") == (
        0, yaml_out)
    assert run(sim, "kubectl label netpol cartservice owner- --dry-run=client") == (
        0, "networkpolicy.networking.k8s.io/cartservice labeled (dry run)\n")
    assert run(sim, "kubectl label netpol cartservice owner- --dry-run=server") == (
        0, 'label "owner" not found.\nnetworkpolicy.networking.k8s.io/cartservice labeled '
           "(server dry run)\n")


def test_a_format_kubectl_cannot_print_fails_after_the_write(sim):
    """kubectl makes the printer only when it prints each object it wrote: the write is
    done, then the command fails (once per object: one error with kubectl's prefix,
    several without)."""
    assert run(sim, "kubectl patch netpol cartservice -p '{\"metadata\":{\"labels\":{\"w\":\"5\"}}}'"
                    " -o wide") == (1, 'error: unable to match a printer suitable for the output '
                                       f'format "wide", allowed formats are: {FORMATS}\n')
    assert labels(sim, "cartservice") == [{"w": "5"}]
    assert run(sim, "kubectl label netpol cartservice adservice w=2 --overwrite -o jsonpath=") == \
        (1, "template format specified but no template given\n" * 2)
    assert labels(sim, "cartservice", "adservice") == [{"w": "2"}, {"w": "2"}]


def test_delete_prints_names_only(sim):
    assert run(sim, "kubectl delete netpol cartservice -o yaml") == \
        (1, "error: unexpected -o output mode: yaml. We only support '-o name'\n")
    assert sim.store.get("networkpolicies", "exp", "cartservice") is not None


def test_apply_prints_several_objects_as_one_list(sim):
    status, out = run(sim, "kubectl apply -f - -o json", TWO_DOCS)
    assert status == 0
    assert out.startswith('{\n    "kind": "List",\n    "apiVersion": "v1",\n    "metadata": {},\n'
                          '    "items": [\n        {\n            "apiVersion": "networking.k8s.io'
                          '/v1",\n')
    assert [o["metadata"]["name"] for o in json.loads(out)["items"]] == ["a", "b"]
    # a jsonpath over that list names nothing (the list has no name)
    assert run(sim, "kubectl apply -f - -o jsonpath='{.metadata.name}'", TWO_DOCS) == (0, "")
    assert run(sim, "kubectl apply -f - -o yaml --dry-run=server",
               '{"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":'
               '{"name":"c"},"spec":{"podSelector":{}}}') == (0, SERVER_DRY_APPLY_YAML)
    assert sim.store.find("networkpolicies", "exp", "c") is None


def test_what_is_not_simulated_is_refused_before_writing(sim):
    command = ("kubectl patch netpol cartservice -p '{\"metadata\":{\"labels\":{\"w\":\"1\"}}}' "
               "-o go-template='{{.metadata.name}}'")
    res = sim.run({"command": command, "stdin": ""})
    assert res.kind == "invalid" and "is not simulated" in res.output
    assert labels(sim, "cartservice") == [{}]

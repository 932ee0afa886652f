"""netarena_gym.k8s.state_decode: how kube-apiserver 1.20 decodes a NetworkPolicy, its
decode errors verbatim (kubectl 1.32 against the bundled kube-apiserver 1.20.2)."""
import pytest

from netarena_gym.core.scenario import Scenario
from netarena_gym.k8s.backends.sim import SimBackend


def sim(end_port: bool) -> SimBackend:
    b = SimBackend(end_port=end_port)
    b.apply(Scenario(task="k8s", level=1, params={"namespace": "exp", "probes": "full"}, faults=()))
    return b


# The decoder of a strategic merge patch's result is FromUnstructured: its messages, the
# fields in Go's order (a rule's ports before its peers; a peer's podSelector before its
# ipBlock), a 1.20 server ignoring endPort whatever it holds. Verbatim from kube-apiserver 1.20.2.
SMP_DECODE = [
    ('\'{"spec":{"ingress":[{"ports":[{"port":true}]}]}}\'',
     'The request is invalid: patch: Invalid value: "map[spec:map[ingress:[map[ports:[map[port:true]]]]]]": json: cannot unmarshal bool into Go value of type int32\n'),
    ('\'{"spec":{"ingress":[{"ports":[{"port":80.5}]}]}}\'',
     'The request is invalid: patch: Invalid value: "map[spec:map[ingress:[map[ports:[map[port:80.5]]]]]]": json: cannot unmarshal number 80.5 into Go value of type int32\n'),
    ('\'{"spec":{"ingress":[{"ports":[{"port":4294967376}]}]}}\'',
     'The request is invalid: patch: Invalid value: "map[spec:map[ingress:[map[ports:[map[port:4294967376]]]]]]": json: cannot unmarshal number 4294967376 into Go value of type int32\n'),
    ('\'{"spec":{"ingress":[{"ports":[{"port":1e21}]}]}}\'',
     'The request is invalid: patch: Invalid value: "map[spec:map[ingress:[map[ports:[map[port:1e+21]]]]]]": json: cannot unmarshal number 1e+21 into Go value of type int32\n'),
    ('\'{"spec":{"ingress":[{"ports":[{"port":{"a":1}}]}]}}\'',
     'The request is invalid: patch: Invalid value: "map[spec:map[ingress:[map[ports:[map[port:map[a:1]]]]]]]": json: cannot unmarshal object into Go value of type int32\n'),
    ('\'{"spec":{"ingress":[{"ports":[{"port":80,"protocol":6}]}]}}\'',
     'The request is invalid: patch: Invalid value: "map[spec:map[ingress:[map[ports:[map[port:80 protocol:6]]]]]]": cannot convert int64 to v1.Protocol\n'),
    ('\'{"spec":{"ingress":[{"from":{"podSelector":{"matchLabels":{"app":"x"}}}}]}}\'',
     'The request is invalid: patch: Invalid value: "map[spec:map[ingress:[map[from:map[podSelector:map[matchLabels:map[app:x]]]]]]]": cannot restore slice from map\n'),
    ('\'{"spec":{"ingress":[{"from":[{"ipBlock":5,"podSelector":6}],"ports":{"a":1}}]}}\'',
     'The request is invalid: patch: Invalid value: "map[spec:map[ingress:[map[from:[map[ipBlock:5 podSelector:6]] ports:map[a:1]]]]]": cannot restore slice from map\n'),
    ('\'{"spec":{"ingress":[{"from":[{"ipBlock":5,"podSelector":6}]}]}}\'',
     'The request is invalid: patch: Invalid value: "map[spec:map[ingress:[map[from:[map[ipBlock:5 podSelector:6]]]]]]": cannot restore struct from: int64\n'),
    ('\'{"spec":{"ingress":[{"from":[{"podSelector":{"matchExpressions":[{"key":1,"operator":2,"values":"a"}]}}]}]}}\'',
     'The request is invalid: patch: Invalid value: "map[spec:map[ingress:[map[from:[map[podSelector:map[matchExpressions:[map[key:1 operator:2 values:a]]]]]]]]]": cannot convert int64 to string\n'),
    ('\'{"spec":{"podSelector":"app=frontend"}}\'',
     'The request is invalid: patch: Invalid value: "map[spec:map[podSelector:app=frontend]]": cannot restore struct from: string\n'),
    ('\'{"spec":{"podSelector":{"matchLabels":{"app":1}}}}\'',
     'The request is invalid: patch: Invalid value: "map[spec:map[podSelector:map[matchLabels:map[app:1]]]]": cannot convert int64 to string\n'),
    ('\'{"spec":{"policyTypes":"Ingress"}}\'',
     'The request is invalid: patch: Invalid value: "map[spec:map[policyTypes:Ingress]]": cannot restore slice from string\n'),
    ('\'{"spec":{"policyTypes":[1]}}\'',
     'The request is invalid: patch: Invalid value: "map[spec:map[policyTypes:[1]]]": cannot convert int64 to v1.PolicyType\n'),
    ('\'{"metadata":{"labels":{"a":true}}}\'',
     'The request is invalid: patch: Invalid value: "map[metadata:map[labels:map[a:true]]]": unrecognized type: string\n'),
    ('\'{"metadata":{"name":5}}\'',
     'The request is invalid: patch: Invalid value: "map[metadata:map[name:5]]": cannot convert int64 to string\n'),
    ('\'{"metadata":"x"}\'',
     'The request is invalid: patch: Invalid value: "map[metadata:x]": cannot restore struct from: string\n'),
]


@pytest.mark.parametrize("patch, want", SMP_DECODE)
def test_a_strategic_patch_that_does_not_decode(patch, want):
    b = sim(False)
    r = b.run({"command": "kubectl patch networkpolicy frontend -p " + patch, "stdin": ""})
    assert (r.status, r.output) == (1, want)


@pytest.mark.parametrize("patch", ["'{\"spec\":{\"ingress\":[{\"ports\":[{\"port\":80.0}]}]}}'",
                                   "'{\"spec\":{\"ingress\":[{\"ports\":[{\"port\":80,\"endPort\":\"x\"}]}]}}'"])
def test_a_strategic_patch_takes_what_from_unstructured_takes(patch):
    b = sim(False)
    r = b.run({"command": "kubectl patch networkpolicy frontend -p " + patch, "stdin": ""})
    assert r.output == "networkpolicy.networking.k8s.io/frontend patched\n"
    assert b.store.get("networkpolicies", "exp", "frontend")["spec"]["ingress"] == [
        {"ports": [{"port": 80, "protocol": "TCP"}]}]

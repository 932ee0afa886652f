"""The store decodes a NetworkPolicy spec rule by rule, each rule kept per text: the answer
(shape, stored spec, errors) equals decoding the spec as one, key order included, for specs
the catalogue's patches make and for odd ones (explicit empty lists, bad rules, endPort
off), and a rule left as it was is shared with the spec it came from."""
import copy
import json

import gymnasium as gym
import numpy as np
import pytest

from netarena_gym.k8s.state import canonical_spec_parts
from netarena_gym.k8s.state_validation import (
    DecodeError, apply_defaults, decode_spec, drop_empty, validate_spec)
from tests.k8s.conftest import ENV_ID

PEER = {"podSelector": {"matchLabels": {"app": "b"}}}
ODD = [
    {},
    {"podSelector": {}},
    {"podSelector": {"matchLabels": {}}, "ingress": []},
    {"podSelector": {}, "ingress": [{}], "egress": [{}]},
    {"podSelector": {}, "ingress": [{"from": [], "ports": []}], "policyTypes": []},
    {"podSelector": {}, "ingress": [{"from": [PEER], "ports": [{"port": 80}]}]},
    {"podSelector": {}, "ingress": [{"ports": [{"port": 80, "endPort": 90}]}]},
    {"podSelector": {}, "ingress": [{"ports": [{"port": 90, "endPort": 80}]}]},  # invalid
    {"podSelector": {}, "ingress": [{"from": [{}]}]},  # a peer without a selector
    {"podSelector": {}, "ingress": [{"ports": [{"port": "http", "protocol": "UDP"}]}],
     "policyTypes": ["Ingress", "Egress"]},
    {"podSelector": {}, "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": []}}]}]},
    {"podSelector": {}, "ingress": [None, {"from": [PEER]}]},
    {"podSelector": {}, "policyTypes": ["Ingress", None]},
    {"podSelector": {}, "policyTypes": ["Sideways"]},
    {"podSelector": {"matchLabels": {"app": "bad value!"}}, "ingress": [{}]},
    {"podSelector": {}, "ingress": [{"ports": [{"port": True}]}]},  # does not decode
    {"podSelector": {}, "ingress": {"from": []}},  # does not decode
    {"podSelector": {}, "unknownField": 1, "ingress": [{}]},
    {"ingress": [{"from": [PEER]}], "podSelector": {}},  # another key order
]


def whole(raw, end_port):
    """The spec decoded as one (what the rule-by-rule answer must equal)."""
    shape = apply_defaults(decode_spec(copy.deepcopy(raw), end_port=end_port, keep_empty=True))
    spec = drop_empty(shape)
    return shape, spec, tuple(validate_spec(spec, end_port=end_port))


def same(a, b):
    """Equal, and equal as text without sorting (key order, types)."""
    return a == b and json.dumps(a, default=str) == json.dumps(b, default=str)


def patched_specs():
    """Raw specs as the discrete catalogue's JSON patches leave them, from seeded episodes."""
    env = gym.make(ENV_ID, level=3, interface="discrete")
    base = env.unwrapped
    rng = np.random.default_rng(7)
    out = []
    for ep in range(4):
        _, info = env.reset(seed=ep)
        for _ in range(12):
            valid = np.flatnonzero(info["action_mask"])
            _, _, term, trunc, info = env.step(int(valid[rng.integers(len(valid))]))
            out += [copy.deepcopy(p["spec"]) for p in base.backend.store.objects["networkpolicies"].values()]
            if term or trunc:
                break
    return out


@pytest.mark.parametrize("end_port", [True, False])
@pytest.mark.parametrize("raw", ODD)
def test_rule_by_rule_equals_the_whole_decoding(raw, end_port):
    try:
        want = whole(raw, end_port)
    except DecodeError as e:
        with pytest.raises(DecodeError, match=str(e).replace("[", r"\[").replace("]", r"\]")):
            canonical_spec_parts(copy.deepcopy(raw), end_port)
        return
    got = canonical_spec_parts(copy.deepcopy(raw), end_port)
    assert all(same(g, w) for g, w in zip(got, want))


def test_patched_specs_decode_as_a_whole_would():
    specs = patched_specs()
    assert len(specs) > 100
    for raw in specs:
        # an added rule makes a new text: the other rules come from the rule cache
        grown = {**raw, "ingress": [*raw.get("ingress", []), {"from": [PEER]}]}
        for r in (raw, grown):
            got = canonical_spec_parts(copy.deepcopy(r))
            assert all(same(g, w) for g, w in zip(got, whole(r, True)))


def test_a_rule_left_alone_is_shared():
    rule = {"from": [PEER], "ports": [{"port": 8080}]}
    a = canonical_spec_parts({"podSelector": {}, "ingress": [copy.deepcopy(rule)]})[1]
    b = canonical_spec_parts({"podSelector": {}, "ingress": [copy.deepcopy(rule), {}]})[1]
    assert b["ingress"][0] is a["ingress"][0]
    assert a["ingress"][0] == {"from": [PEER], "ports": [{"protocol": "TCP", "port": 8080}]}


# checkName of the patch handler, kube-apiserver 1.20.2's words
@pytest.mark.parametrize("cmd, want", [
    ("kubectl patch networkpolicy adservice -p '{\"metadata\":{\"namespace\":\"other\"}}'",
     "Error from server (BadRequest): the namespace of the object (other) does not match the "
     "namespace on the request (exp)\n"),
    ("kubectl patch networkpolicy adservice --type=json -p "
     "'[{\"op\":\"replace\",\"path\":\"/metadata/namespace\",\"value\":\"other\"}]'",
     "Error from server (BadRequest): the namespace of the object (other) does not match the "
     "namespace on the request (exp)\n"),
    ("kubectl patch networkpolicy adservice --type=json -p '[{\"op\":\"remove\",\"path\":\"/metadata/name\"}]'",
     "Error from server (BadRequest): the name of the object (adservice based on URL) was "
     "undeterminable: name must be provided\n"),
    ("kubectl patch networkpolicy adservice --type=merge -p '{\"metadata\":{\"name\":null}}'",
     "Error from server (BadRequest): the name of the object (adservice based on URL) was "
     "undeterminable: name must be provided\n"),
])
def test_a_patch_may_not_move_or_unname_the_object(cmd, want):
    from netarena_gym.core.scenario import Scenario
    from netarena_gym.k8s.backends.sim import SimBackend
    b = SimBackend(end_port=False)
    b.apply(Scenario(task="k8s", level=1, params={"namespace": "exp", "probes": "full"}, faults=()))
    before = b.store.get("networkpolicies", "exp", "adservice")
    r = b.run({"command": cmd, "stdin": ""})
    assert (r.status, r.output) == (1, want)
    assert b.store.get("networkpolicies", "exp", "adservice") is before


# one sequence on one store, every answer taken from kubectl 1.32 against kube-apiserver 1.20
FINALIZERS = [
    ('patch netpol frontend -p \'{"metadata":{"finalizers":["a/b"]}}\' -o name',
     0, 'networkpolicy.networking.k8s.io/frontend\n'),
    ('patch netpol frontend -p \'{"metadata":{"finalizers":["c/d"]}}\' -o jsonpath=\'{.metadata.finalizers}\'',
     0, '["c/d","a/b"]\n'),
    ('patch netpol frontend -p \'{"metadata":{"$deleteFromPrimitiveList/finalizers":["a/b"]}}\' -o jsonpath=\'{.metadata.finalizers}\'',
     0, '["c/d"]\n'),
    ('patch netpol frontend --type=merge -p \'{"metadata":{"finalizers":["c/d","e.io/f"]}}\' -o jsonpath=\'{.metadata.finalizers}\'',
     0, '["c/d","e.io/f"]\n'),
    ('delete netpol frontend --wait=false',
     0, 'networkpolicy.networking.k8s.io "frontend" deleted\n'),
    ('patch netpol frontend -p \'{"metadata":{"finalizers":["e/f"]}}\'',
     1, 'The NetworkPolicy "frontend" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"e/f"}\n'),
    ('patch netpol frontend -p \'{"metadata":{"finalizers":["nope"]}}\'',
     1, 'The NetworkPolicy "frontend" is invalid: \n* metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"nope"}\n* metadata.finalizers[0]: Invalid value: "nope": name is neither a standard finalizer name nor is it fully qualified\n'),
    ('patch netpol frontend --type=json -p \'[{"op":"add","path":"/metadata/finalizers/-","value":"g.io/h"},{"op":"add","path":"/metadata/finalizers/-","value":"a.io/b"}]\'',
     1, 'The NetworkPolicy "frontend" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"a.io/b", "g.io/h"}\n'),
    ("""patch netpol frontend -p '{"spec":{"policyTypes":["Ingress"]}}'""",
     0, "networkpolicy.networking.k8s.io/frontend patched\n"),  # allowed: generation 3
    ('delete netpol frontend --wait=false',
     0, 'networkpolicy.networking.k8s.io "frontend" deleted\n'),
    ("get netpol frontend -o jsonpath='{.metadata.generation} {.metadata.deletionGracePeriodSeconds}'",
     0, '3 0\n'),
    ('patch netpol frontend --type=json -p \'[{"op":"remove","path":"/metadata/finalizers"}]\'',
     0, 'networkpolicy.networking.k8s.io/frontend patched\n'),
    ('get netpol frontend',
     1, 'Error from server (NotFound): networkpolicies.networking.k8s.io "frontend" not found\n'),
    ('patch netpol cartservice -p \'{"metadata":{"finalizers":["orphan","foregroundDeletion"]}}\'',
     1, 'The NetworkPolicy "cartservice" is invalid: metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set\n'),
    ('patch netpol cartservice -p \'{"metadata":{"finalizers":["Bad Name","nope"]}}\'',
     1, 'The NetworkPolicy "cartservice" is invalid: \n* metadata.finalizers: Invalid value: "Bad Name": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\')\n* metadata.finalizers[0]: Invalid value: "Bad Name": name is neither a standard finalizer name nor is it fully qualified\n* metadata.finalizers[1]: Invalid value: "nope": name is neither a standard finalizer name nor is it fully qualified\n'),
    ('patch netpol cartservice -p \'{"metadata":{"finalizers":["x.io/y"],"labels":{"bad key!":"v"}},"spec":{"policyTypes":["Foo"]}}\'',
     1, 'The NetworkPolicy "cartservice" is invalid: \n* metadata.labels: Invalid value: "bad key!": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\')\n* spec.policyTypes[0]: Unsupported value: "Foo": supported values: "Ingress", "Egress"\n'),
    ('patch netpol cartservice -p \'{"metadata":{"finalizers":[null,"x.io/y"]}}\' -o jsonpath=\'{.metadata.finalizers}\'',
     1, 'The NetworkPolicy "cartservice" is invalid: \n* metadata.finalizers: Invalid value: "": name part must be non-empty\n* metadata.finalizers: Invalid value: "": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\')\n* metadata.finalizers[0]: Invalid value: "": name is neither a standard finalizer name nor is it fully qualified\n'),
    ('patch netpol cartservice -p \'{"metadata":{"finalizers":[7]}}\'',
     1, 'The request is invalid: patch: Invalid value: "map[metadata:map[finalizers:[7]]]": cannot convert int64 to string\n'),
]


def test_finalizers_are_stored_merged_validated_and_keep_a_deleted_policy(sim):
    """``metadata.finalizers`` (patch strategy ``merge``): a policy deleted with some stays,
    marked as being deleted (its generation bumped), takes no new finalizer, and goes with
    its last one."""
    for command, status, output in FINALIZERS:
        res = sim.run({"command": "kubectl " + command, "stdin": ""})
        assert (res.status, res.output) == (status, output), command


def test_a_policy_being_deleted_still_counts_and_kubectl_delete_waits_for_it(sim):
    run = lambda c: sim.run({"command": c, "stdin": ""})  # noqa: E731
    assert run("kubectl patch netpol frontend -p "
               """'{"metadata":{"finalizers":["example.com/keep"]}}'""").status == 0
    res = run("kubectl delete netpol frontend")
    assert (res.status, res.kind) == (124, "timeout")
    assert res.output.startswith('networkpolicy.networking.k8s.io "frontend" deleted\n'
                                 "netarena: command timed out:")
    assert "frontend" in {p["metadata"]["name"] for p in sim.objects().policies}
    assert run("kubectl get netpol frontend -o jsonpath={.metadata.deletionTimestamp}").output

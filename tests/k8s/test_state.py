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

"""RFC 6902 patches copy on write: the original document is never changed, whatever the
operations (the simulator's stores share stored objects)."""
import copy

import pytest

from netarena_gym.k8s.state_patches import PatchFailed, json_patch

DOC = {"metadata": {"name": "a", "labels": {"x": "1"}},
       "spec": {"podSelector": {"matchLabels": {"app": "a"}},
                "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "b"}}}],
                             "ports": [{"port": 80}]}],
                "egress": [{}]}}

CASES = [
    ([{"op": "add", "path": "/spec/ingress/0/from/-", "value": {"ipBlock": {"cidr": "10.0.0.0/8"}}}],
     lambda d: d["spec"]["ingress"][0]["from"][1] == {"ipBlock": {"cidr": "10.0.0.0/8"}}),
    ([{"op": "remove", "path": "/spec/ingress/0/ports/0"}],
     lambda d: d["spec"]["ingress"][0]["ports"] == []),
    ([{"op": "replace", "path": "/spec/podSelector/matchLabels/app", "value": "z"}],
     lambda d: d["spec"]["podSelector"] == {"matchLabels": {"app": "z"}}),
    ([{"op": "move", "from": "/spec/egress", "path": "/spec/ingress/0/egress"}],
     lambda d: "egress" not in d["spec"] and d["spec"]["ingress"][0]["egress"] == [{}]),
    ([{"op": "copy", "from": "/spec/ingress/0", "path": "/spec/ingress/-"},
      {"op": "add", "path": "/spec/ingress/1/ports/0/port", "value": 81}],
     lambda d: [r["ports"][0]["port"] for r in d["spec"]["ingress"]] == [80, 81]),
    ([{"op": "move", "from": "/spec/ingress/0/from", "path": "/spec/from"},
      {"op": "add", "path": "/spec/from/0/podSelector/matchLabels/tier", "value": "web"}],
     lambda d: d["spec"]["from"][0]["podSelector"]["matchLabels"] == {"app": "b", "tier": "web"}),
    ([{"op": "replace", "path": "", "value": {"spec": {}}}, {"op": "add", "path": "/spec/x", "value": 1}],
     lambda d: d == {"spec": {"x": 1}}),
]


@pytest.mark.parametrize("ops,check", CASES)
def test_json_patch_leaves_the_original_alone(ops, check):
    doc = copy.deepcopy(DOC)
    out = json_patch(doc, ops)
    assert check(out)
    assert doc == DOC


def test_failed_patch_leaves_the_original_alone():
    doc = copy.deepcopy(DOC)
    with pytest.raises(PatchFailed):
        json_patch(doc, [{"op": "remove", "path": "/spec/ingress/0/ports/0"},
                         {"op": "remove", "path": "/spec/nothing/here"}])
    assert doc == DOC


@pytest.mark.parametrize("index", ["²", "٣", "9" * 5000, "01"])
def test_an_array_index_is_ascii_digits_of_a_list_position(index):
    """str.isdigit() takes "²" (int() then raised, crashing the step) and "٣" (read as 3)."""
    with pytest.raises(PatchFailed):
        json_patch(DOC, [{"op": "add", "path": f"/spec/ingress/{index}", "value": {}}])

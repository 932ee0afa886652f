"""Strategic merge patch with its directives: the merge itself, and what the simulated
kubectl answers for it. Expected texts and objects were taken from kubectl 1.32 against
kube-apiserver 1.20 (the policy ``frontend``: podSelector app=frontend, ``ingress: [{}]``,
``egress: [{}]``, policyTypes Ingress and Egress)."""
import pytest

from netarena_gym.k8s.state_strategic import StrategicError, StrategicPanic, strategic_merge_patch

CUR = {"metadata": {"name": "p", "annotations": {"a": "1"}},
       "spec": {"podSelector": {"matchLabels": {"app": "x"}}, "ingress": [{}], "egress": [{}],
                "policyTypes": ["Ingress", "Egress"]}}


def spec(patch, client=False):
    return strategic_merge_patch(CUR, {"spec": patch}, client=client)["spec"]


def test_maps_merge_lists_are_replaced_and_the_original_is_left_alone():
    out = strategic_merge_patch(CUR, {"spec": {"ingress": [{"ports": []}],
                                               "podSelector": {"matchLabels": {"b": "2"}}}})
    assert out["spec"]["ingress"] == [{"ports": []}]
    assert out["spec"]["podSelector"]["matchLabels"] == {"app": "x", "b": "2"}
    assert CUR["spec"]["ingress"] == [{}] and CUR["spec"]["podSelector"] == {"matchLabels": {"app": "x"}}
    out["spec"]["egress"].append(1)
    assert CUR["spec"]["egress"] == [{}]  # a private copy


def test_patch_directive_replaces_deletes_or_is_refused():
    assert spec({"$patch": "replace", "x": 1}) == {"x": 1}
    assert spec({"podSelector": {"$patch": "delete", "matchLabels": {"a": "b"}}})["podSelector"] == {}
    # a directive in a map the original lacks, or of another type, is taken as it is
    assert strategic_merge_patch(CUR, {"metadata": {"labels": {"$patch": "delete"}}})[
        "metadata"]["labels"] == {"$patch": "delete"}
    assert spec({"ingress": {"$patch": "delete"}})["ingress"] == {"$patch": "delete"}
    for bad, shown in (("bogus", "bogus"), (7, "%!s(int64=7)"), (None, "%!s(<nil>)")):
        with pytest.raises(StrategicError) as e:
            spec({"podSelector": {"$patch": bad}})
        assert str(e.value) == f"unknown patch type: {shown} in map: map[$patch:{'<nil>' if bad is None else bad}]"
        assert not e.value.bad_request


def test_retain_keys_keeps_only_those_and_checks_the_patch_against_them():
    assert spec({"$retainKeys": ["podSelector"]}) == {"podSelector": {"matchLabels": {"app": "x"}}}
    assert spec({"$retainKeys": ["podSelector", "ingress"], "ingress": None}) == {
        "podSelector": {"matchLabels": {"app": "x"}}}
    assert spec({"$retainKeys": ["podSelector", 7]}) == {"podSelector": {"matchLabels": {"app": "x"}}}
    for bad in ({"$retainKeys": ["podSelector"], "policyTypes": ["Ingress"]},
                {"$retainKeys": None}, {"$retainKeys": "x"}):
        with pytest.raises(StrategicError, match="^invalid patch format of retainKeys$") as e:
            spec(bad)
        assert e.value.bad_request
    with pytest.raises(StrategicPanic, match="unhashable type map"):
        spec({"$retainKeys": [{}]})


@pytest.mark.parametrize("order, sent, want", [
    (["Egress", "Ingress"], None, ["Egress", "Ingress"]),
    (["Egress"], None, ["Ingress", "Egress"]),  # the unnamed keeps its place in the original
    (["Egress", "Ingress", "Foo"], None, ["Egress", "Ingress"]),
    ([7, "Egress", "Ingress"], None, ["Egress", "Ingress"]),
    (["Egress", "Egress", "Ingress"], None, ["Egress", "Ingress"]),
    ([], None, ["Ingress", "Egress"]),
    (["Egress", "Ingress"], ["Ingress"], ["Ingress"]),
    (["Egress", "Ingress"], ["Ingress", "Egress"], ["Egress", "Ingress"]),
])
def test_set_element_order_reorders_a_list_of_scalars(order, sent, want):
    patch = {"$setElementOrder/policyTypes": order}
    if sent is not None:
        patch["policyTypes"] = sent
    assert spec(patch)["policyTypes"] == want


@pytest.mark.parametrize("patch, error", [
    ({"$setElementOrder/policyTypes": "x"}, "expected a []interface {}, but received a string"),
    ({"$setElementOrder/policyTypes": ["Egress"], "policyTypes": None},
     "expected a []interface {}, but received a %!s(<nil>)"),
    ({"$setElementOrder/podSelector": ["a"]},
     "expected a []interface {}, but received a map[string]interface {}"),
    ({"$setElementOrder/nosuch": ["a"]},
     'unable to find api field in struct NetworkPolicySpec for the json field "nosuch"'),
])
def test_set_element_order_errors(patch, error):
    with pytest.raises(StrategicError) as e:
        spec(patch)
    assert str(e.value) == error and not e.value.bad_request


def test_set_element_order_of_a_list_of_maps_panics():
    with pytest.raises(StrategicPanic, match="^runtime error: hash of unhashable type map"):
        spec({"$setElementOrder/ingress": [{}]})


def test_delete_from_primitive_list_differs_between_kubectl_132_and_the_120_server():
    d = "$deleteFromPrimitiveList/policyTypes"
    assert spec({d: ["Egress"]}, client=True)["policyTypes"] == ["Ingress"]
    assert spec({d: ["Foo"]}, client=True)["policyTypes"] == ["Ingress", "Egress"]
    assert spec({d: "Egress"}, client=True)["policyTypes"] == ["Ingress", "Egress"]
    assert "nosuch" not in spec({"$deleteFromPrimitiveList/nosuch": ["a"]}, client=True)
    with pytest.raises(StrategicError, match="^cannot merge lists without merge key for struct$"):
        spec({"$deleteFromPrimitiveList/ingress": [{}]}, client=True)
    # the 1.20 server replaces the list with the patch's, whatever its type
    assert spec({d: ["Egress"]})["policyTypes"] == ["Egress"]
    assert spec({d: "Egress"})["policyTypes"] == "Egress"
    assert spec({"$deleteFromPrimitiveList/podSelector": ["a"]})["podSelector"] == ["a"]
    assert "nosuch" not in spec({"$deleteFromPrimitiveList/nosuch": ["a"]})


def test_nulls_delete_and_a_new_value_keeps_its_nulls():
    assert "ingress" not in spec({"ingress": None})
    assert spec({"x": {"y": None, "z": 1}})["x"] == {"y": None, "z": 1}
    assert spec({"ingress": [{"x": None}]})["ingress"] == [{"x": None}]


# ------------------------------------------------------------- through the simulated kubectl
P = "kubectl patch networkpolicy frontend -p "
J = " -o jsonpath='{.spec}'"
INGRESS_EGRESS = '"egress":[{}],"ingress":[{}],'
SELECTOR = '"podSelector":{"matchLabels":{"app":"frontend"}}'


@pytest.mark.parametrize("patch, status, output", [
    ('{"spec":{"$retainKeys":["podSelector"]}}', 0,
     '{' + SELECTOR + ',"policyTypes":["Ingress"]}\n'),  # the server defaults policyTypes
    ('{"spec":{"$retainKeys":[]}}', 0, '{"podSelector":{},"policyTypes":["Ingress"]}\n'),
    ('{"spec":{"$retainKeys":["podSelector"],"$patch":"replace","ingress":[]}}', 0,
     '{"podSelector":{},"policyTypes":["Ingress"]}\n'),
    ('{"$retainKeys":["metadata","spec","kind","apiVersion"]}', 0,
     '{' + INGRESS_EGRESS + SELECTOR + ',"policyTypes":["Ingress","Egress"]}\n'),
    ('{"spec":{"$retainKeys":["podSelector"],"policyTypes":["Ingress"]}}', 1,
     "Error from server (BadRequest): invalid patch format of retainKeys\n"),
    ('{"spec":{"$setElementOrder/policyTypes":["Egress","Ingress"]}}', 0,
     '{' + INGRESS_EGRESS + SELECTOR + ',"policyTypes":["Egress","Ingress"]}\n'),
    ('{"spec":{"$setElementOrder/nosuch":["a"]}}', 1, 'Error from server: unable to find api field '
     'in struct NetworkPolicySpec for the json field "nosuch"\n'),
    ('{"spec":{"$setElementOrder/egress":["a"]}}', 1, "Unable to connect to the server: stream "
     "error: stream ID 5; INTERNAL_ERROR; received from peer\n"),
    ('{"spec":{"$deleteFromPrimitiveList/policyTypes":["Foo"]}}', 1, 'The NetworkPolicy '
     '"frontend" is invalid: spec.policyTypes[0]: Unsupported value: "Foo": supported values: '
     '"Ingress", "Egress"\n'),
    ('{"spec":{"$deleteFromPrimitiveList/podSelector":["a"]}}', 1, 'The request is invalid: '
     'patch: Invalid value: "map[spec:map[$deleteFromPrimitiveList/podSelector:[a]]]": cannot '
     "restore struct from: slice\n"),
    ('{"spec":{"podSelector":{"$patch":"delete","matchLabels":{"a":"b"}}}}', 0,
     '{' + INGRESS_EGRESS + '"podSelector":{},"policyTypes":["Ingress","Egress"]}\n'),
    ('{"spec":{"ingress":{"$patch":"delete"}}}', 1, 'The request is invalid: patch: Invalid '
     'value: "map[spec:map[ingress:map[$patch:delete]]]": cannot restore slice from map\n'),
    ('{"spec":{"$patch":"bogus"}}', 1,
     "Error from server: unknown patch type: bogus in map: map[$patch:bogus]\n"),
    ('{"spec":{"podSelector":{"$patch":"replace","matchLabels":{"app":"frontend","x":null}}}}', 0,
     '{' + INGRESS_EGRESS + '"podSelector":{"matchLabels":{"app":"frontend","x":""}},'
     '"policyTypes":["Ingress","Egress"]}\n'),  # replaced as sent: the null decodes to ""
    ('{"spec":{"podSelector":{"matchLabels":{"app":{"a":"b"}}}}}', 1, 'The request is invalid: '
     'patch: Invalid value: "map[spec:map[podSelector:map[matchLabels:map[app:map[a:b]]]]]": '
     "unrecognized type: string\n"),
    ('{"spec":{"podSelector":{"matchLabels":{"app":1.5}}}}', 1, 'The request is invalid: patch: '
     'Invalid value: "map[spec:map[podSelector:map[matchLabels:map[app:1.5]]]]": unrecognized '
     "type: string\n"),
    ('{"spec":{"policyTypes":[true]}}', 1, 'The request is invalid: patch: Invalid value: '
     '"map[spec:map[policyTypes:[true]]]": unrecognized type: string\n'),
    ('{"spec":{"ingress":[{"ports":[{"protocol":{}}]}]}}', 1, 'The request is invalid: patch: '
     'Invalid value: "map[spec:map[ingress:[map[ports:[map[protocol:map[]]]]]]]": unrecognized '
     "type: string\n"),
])
def test_what_the_server_answers(sim, patch, status, output):
    res = sim.run({"command": P + f"'{patch}'" + J, "stdin": ""})
    assert (res.status, res.output) == (status, output)

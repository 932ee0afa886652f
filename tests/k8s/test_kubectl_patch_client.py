"""``kubectl patch|label|apply --dry-run=client``: kubectl 1.32 gets the object and makes the
result locally (gopkg.in/evanphx/json-patch.v4 v4.12.0, strategicpatch), validating
nothing the server would. Every expected text below was taken from kubectl 1.32 against
kube-apiserver 1.20, on the policy ``frontend`` (podSelector app=frontend, ``ingress: [{}]``,
``egress: [{}]``, policyTypes Ingress and Egress)."""
import json

import pytest

from netarena_gym.k8s.commands.kubectl_patch_client import (
    ClientPatchError, client_patch, printed_name, same_object)


def run(sim, command: str, stdin: str = ""):
    return sim.run({"command": command, "stdin": stdin})


# (what follows "kubectl patch netpol ", before " --dry-run=client"; status; output)
PATCHES = [
    ('frontend --type=json -p \'[{"op":"add","path":"","value":{}}]\'',
     1, 'error: add operation does not apply: doc is missing path: "": missing value\n'),
    ('frontend --type=json -p \'[{"op":"add","path":"/spec/a/b","value":1}]\'',
     1, 'error: add operation does not apply: doc is missing path: "/spec/a/b": missing value\n'),
    ('frontend --type=json -p \'[{"op":"add","path":"/spec/ingress/+0","value":{}}]\'',
     0, 'networkpolicy.networking.k8s.io/frontend patched\n'),
    ('frontend --type=json -p \'[{"op":"add","path":"/spec/ingress/-2","value":{}}]\'',
     0, 'networkpolicy.networking.k8s.io/frontend patched\n'),
    ('frontend --type=json -p \'[{"op":"add","path":"/spec/ingress/-3","value":{}}]\'',
     1, "error: error in add for path: '/spec/ingress/-3': Unable to access invalid index: -3: invalid index referenced\n"),
    ('frontend --type=json -p \'[{"op":"add","path":"/spec/ingress/9","value":{}}]\'',
     1, "error: error in add for path: '/spec/ingress/9': Unable to access invalid index: 9: invalid index referenced\n"),
    ('frontend --type=json -p \'[{"op":"add","path":"/spec/ingress/99999999999999999999","value":{}}]\'',
     1, 'error: error in add for path: \'/spec/ingress/99999999999999999999\': value was not a proper array index: \'99999999999999999999\': strconv.Atoi: parsing "99999999999999999999": value out of range\n'),
    ('frontend --type=json -p \'[{"op":"add","path":"/spec/ingress/x","value":1}]\'',
     1, 'error: error in add for path: \'/spec/ingress/x\': value was not a proper array index: \'x\': strconv.Atoi: parsing "x": invalid syntax\n'),
    ('frontend --type=json -p \'[{"op":"add","path":"/spec/podSelector/matchLabels/app/x","value":{}}]\'',
     1, 'error: add operation does not apply: doc is missing path: "/spec/podSelector/matchLabels/app/x": missing value\n'),
    ('frontend --type=json -p \'[{"op":"add","path":"/spec/policyTypes","value":["Foo"]}]\'',
     0, 'networkpolicy.networking.k8s.io/frontend patched\n'),
    ('frontend --type=json -p \'[{"op":"add","path":"/spec/x","value":1},{"op":"remove","path":"/spec/x"}]\'',
     0, 'networkpolicy.networking.k8s.io/frontend patched (no change)\n'),
    ('frontend --type=json -p \'[{"op":"add","path":"/spec/x"}]\'',
     0, 'networkpolicy.networking.k8s.io/frontend patched\n'),
    ('frontend --type=json -p \'[{"op":"add","path":7,"value":{}}]\'',
     1, 'error: add operation failed to decode path: missing value\n'),
    ('frontend --type=json -p \'[{"op":"bogus","path":"/spec"}]\'',
     1, 'error: Unexpected kind: bogus\n'),
    ('frontend --type=json -p \'[{"path":"/spec"}]\'',
     1, 'error: Unexpected kind: unknown\n'),
    ('frontend --type=json -p \'[{"op":"copy","from":"","path":"/spec/x"}]\'',
     1, 'error: copy operation does not apply: doc is missing from path: : missing value\n'),
    ('frontend --type=json -p \'[{"op":"copy","from":"/spec/ingress/5","path":"/spec/x"}]\'',
     1, "error: error in copy for from: '/spec/ingress/5': Unable to access invalid index: 5: invalid index referenced\n"),
    ('frontend --type=json -p \'[{"op":"copy","from":"/spec/nosuch","path":"/spec/x"}]\'',
     0, 'networkpolicy.networking.k8s.io/frontend patched\n'),
    ('frontend --type=json -p \'[{"op":"copy","from":"/spec/podSelector","path":"/q/x"}]\'',
     1, 'error: copy operation does not apply: doc is missing destination path: /q/x: missing value\n'),
    ('frontend --type=json -p \'[{"op":"copy","from":"/spec/podSelector","path":"/spec/ingress/9"}]\'',
     1, 'error: error while adding value during copy: Unable to access invalid index: 9: invalid index referenced\n'),
    ('frontend --type=json -p \'[{"op":"copy","from":"/spec/podSelector"}]\'',
     1, 'error: copy operation failed to decode path: missing value\n'),
    ('frontend --type=json -p \'[{"op":"copy","path":"/spec/x"}]\'',
     1, 'error: copy operation failed to decode from: operation, missing from field: missing value\n'),
    ('frontend --type=json -p \'[{"op":"move","from":"/spec","path":"/spec/x"}]\'',
     1, 'error: move operation does not apply: doc is missing destination path: /spec/x: missing value\n'),
    ('frontend --type=json -p \'[{"op":"move","from":"/spec/ingress/5","path":"/spec/x"}]\'',
     1, "error: error in move for path: '5': Unable to access invalid index: 5: invalid index referenced\n"),
    ('frontend --type=json -p \'[{"op":"move","from":"/spec/nosuch","path":"/spec/x"}]\'',
     1, "error: error in move for path: 'nosuch': Unable to remove nonexistent key: nosuch: missing value\n"),
    ('frontend --type=json -p \'[{"op":"move","from":"/spec/podSelector","path":"/spec/ingress/9"}]\'',
     1, "error: error in move for path: '/spec/ingress/9': Unable to access invalid index: 9: invalid index referenced\n"),
    ('frontend --type=json -p \'[{"op":"move","from":"/spec/podSelector"}]\'',
     1, 'error: move operation failed to decode path: operation missing path field: missing value\n'),
    ('frontend --type=json -p \'[{"op":"remove","path":""}]\'',
     1, 'error: remove operation does not apply: doc is missing path: "": missing value\n'),
    ('frontend --type=json -p \'[{"op":"remove","path":"/apiVersion"}]\'',
     0, 'networkpolicy/frontend patched\n'),
    ('frontend --type=json -p \'[{"op":"remove","path":"/metadata/name"}]\'',
     0, 'networkpolicy.networking.k8s.io/<unknown> patched\n'),
    ('frontend --type=json -p \'[{"op":"remove","path":"/spec/ingress/-1"}]\'',
     0, 'networkpolicy.networking.k8s.io/frontend patched\n'),
    ('frontend --type=json -p \'[{"op":"remove","path":"/spec/ingress/-2"}]\'',
     1, "error: error in remove for path: '/spec/ingress/-2': Unable to access invalid index: -2: invalid index referenced\n"),
    ('frontend --type=json -p \'[{"op":"remove","path":"/spec/ingress/x"}]\'',
     1, 'error: error in remove for path: \'/spec/ingress/x\': strconv.Atoi: parsing "x": invalid syntax\n'),
    ('frontend --type=json -p \'[{"op":"remove","path":"/spec/nosuch"}]\'',
     1, "error: error in remove for path: '/spec/nosuch': Unable to remove nonexistent key: nosuch: missing value\n"),
    ('frontend --type=json -p \'[{"op":"remove"}]\'',
     1, 'error: remove operation failed to decode path: missing value\n'),
    ('frontend --type=json -p \'[{"op":"replace","path":"","value":1}]\'',
     0, 'networkpolicy.networking.k8s.io/frontend patched (no change)\n'),
    ('frontend --type=json -p \'[{"op":"replace","path":"","value":[1]}]\'',
     1, 'error: json: cannot unmarshal array into Go value of type unstructured.detector\n'),
    ('frontend --type=json -p \'[{"op":"replace","path":"","value":{"kind":"NetworkPolicy","apiVersion":"networking.k8s.io/v1","metadata":{"name":"q"}}}]\'',
     0, 'networkpolicy.networking.k8s.io/q patched\n'),
    ('frontend --type=json -p \'[{"op":"replace","path":"/kind","value":"Pod"},{"op":"replace","path":"/apiVersion","value":"v1"}]\'',
     0, 'pod/frontend patched\n'),
    ('frontend --type=json -p \'[{"op":"replace","path":"/metadata/generation","value":1.0}]\'',
     0, 'networkpolicy.networking.k8s.io/frontend patched (no change)\n'),
    ('frontend --type=json -p \'[{"op":"replace","path":"/metadata/name","value":7}]\'',
     0, 'networkpolicy.networking.k8s.io/<unknown> patched\n'),
    ('frontend --type=json -p \'[{"op":"replace","path":"/spec/ingress/9","value":{}}]\'',
     1, 'error: Object to be patched is missing field (/spec/ingress/9: missing value)\n'),
    ('frontend --type=json -p \'[{"op":"replace","path":"/spec/nosuch","value":1}]\'',
     0, 'networkpolicy.networking.k8s.io/frontend patched\n'),
    ('frontend --type=json -p \'[{"op":"replace","path":7,"value":{}}]\'',
     1, 'error: replace operation failed to decode path: json: cannot unmarshal number into Go value of type string\n'),
    ('frontend --type=json -p \'[{"op":"replace","value":{}}]\'',
     1, 'error: replace operation failed to decode path: operation missing path field: missing value\n'),
    ('frontend --type=json -p \'[{"op":"test","path":"","value":{}}]\'',
     1, 'error: testing value  failed: test failed\n'),
    ('frontend --type=json -p \'[{"op":"test","path":"/q/r","value":{}}]\'',
     1, 'error: test operation does not apply: is missing path: /q/r: missing value\n'),
    ('frontend --type=json -p \'[{"op":"test","path":"/spec/ingress/7","value":{}}]\'',
     1, "error: error in test for path: '/spec/ingress/7': Unable to access invalid index: 7: invalid index referenced\n"),
    ('frontend --type=json -p \'[{"op":"test","path":"/spec/nosuch","value":null}]\'',
     0, 'networkpolicy.networking.k8s.io/frontend patched (no change)\n'),
    ('frontend --type=json -p \'[{"op":"test","path":"/spec/podSelector","value":{"matchLabels":{"app":"frontend"},"x":1}}]\'',
     1, 'error: testing value /spec/podSelector failed: test failed\n'),
    ('frontend --type=json -p \'[{"op":"test","path":"/spec/podSelector"}]\'',
     1, 'error: testing value /spec/podSelector failed: test failed\n'),
    ('frontend --type=json -p \'[{"op":"test","path":"/spec/podSelector/matchLabels/app","value":"fr\\u006fntend"}]\'',
     0, 'networkpolicy.networking.k8s.io/frontend patched (no change)\n'),
    ('frontend --type=json -p \'[{"op":7,"path":"/spec"}]\'',
     1, 'error: Unexpected kind: unknown\n'),
    ("frontend --type=json -p '[1]'",
     1, 'error: json: cannot unmarshal number into Go value of type jsonpatch.Operation\n'),
    ('frontend --type=json -p \'{"op":"add"}\'',
     1, 'error: json: cannot unmarshal object into Go value of type jsonpatch.Patch\n'),
    ("frontend --type=merge -p '7'",
     1, 'error: Invalid JSON Patch\n'),
    ("frontend --type=merge -p '[]'",
     1, 'error: json: cannot unmarshal array into Go value of type unstructured.detector\n'),
    ('frontend --type=merge -p \'{"metadata":{"name":"zz"}}\'',
     0, 'networkpolicy.networking.k8s.io/zz patched\n'),
    ('frontend --type=merge -p \'{"spec":{"ingress":[{"x":null}]}}\'',
     0, 'networkpolicy.networking.k8s.io/frontend patched (no change)\n'),
    ('frontend --type=merge -p \'{"spec":{"podSelector":7}}\'',
     0, 'networkpolicy.networking.k8s.io/frontend patched\n'),
    ('frontend --type=merge -p \'{"spec":{"policyTypes":["Foo"]}}\'',
     0, 'networkpolicy.networking.k8s.io/frontend patched\n'),
    ('frontend --type=merge -p \'{"spec":{}} x\'',
     1, 'error: Invalid JSON Patch\n'),
    ("frontend -p '[1]'",
     1, 'error: invalid JSON document\n'),
    ("frontend -p 'null'",
     0, 'networkpolicy.networking.k8s.io/frontend patched (no change)\n'),
    ('frontend -p \'{"$patch":"bogus"}\'',
     1, 'error: unknown patch type: bogus in map: map[$patch:bogus]\n'),
    ('frontend -p \'{"$patch":"replace","spec":{}}\'',
     1, 'error: Object \'Kind\' is missing in \'{"spec":{}}\'\n'),
    ('frontend -p \'{"metadata":{"labels":{"bad key!":"y"}}}\'',
     0, 'networkpolicy.networking.k8s.io/frontend patched\n'),
    ('frontend -p \'{"spec":{"$deleteFromPrimitiveList/ingress":[{}]}}\'',
     1, 'error: cannot merge lists without merge key for struct\n'),
    ('frontend -p \'{"spec":{"$deleteFromPrimitiveList/policyTypes":["Foo"]}}\'',
     0, 'networkpolicy.networking.k8s.io/frontend patched (no change)\n'),
    ('frontend -p \'{"spec":{"$deleteFromPrimitiveList/policyTypes":["Ingress","Egress"]}}\'',
     0, 'networkpolicy.networking.k8s.io/frontend patched\n'),
    ('frontend -p \'{"spec":{"$retainKeys":null}}\'',
     1, 'error: invalid patch format of retainKeys\n'),
    ('frontend -p \'{"spec":{"$setElementOrder/policyTypes":["Egress"]}}\'',
     0, 'networkpolicy.networking.k8s.io/frontend patched (no change)\n'),
    ('frontend -p \'{"spec":{"ingress":[{"$patch":"delete"}]}}\'',
     0, 'networkpolicy.networking.k8s.io/frontend patched\n'),
    ('frontend -p \'{"spec":{"podSelector":{"$patch":"replace","matchLabels":{"app":"frontend"}}}}\'',
     0, 'networkpolicy.networking.k8s.io/frontend patched (no change)\n'),
    ('frontend -p \'{"spec":{"podSelector":{"$patch":7}}}\'',
     1, 'error: unknown patch type: %!s(int64=7) in map: map[$patch:7]\n'),
    ('frontend -p \'{"spec":{"podSelector":{"matchLabels":{"app":"frontend","x":null}}}}\'',
     0, 'networkpolicy.networking.k8s.io/frontend patched (no change)\n'),
    ('frontend -p \'{"spec":{"policyTypes":["Foo"]}}\'',
     0, 'networkpolicy.networking.k8s.io/frontend patched\n'),
    ('frontend -p \'{"spec":{"x":1}}\'',
     0, 'networkpolicy.networking.k8s.io/frontend patched\n'),
    ('frontend -p \'{"spec":{"x":null}}\'',
     0, 'networkpolicy.networking.k8s.io/frontend patched (no change)\n'),
    ('frontend -p \'{"spec":{}} x\'',
     1, 'error: invalid JSON document\n'),
    ('frontend,cartservice --type=json -p \'[{"op":"add","path":"/spec/policyTypes","value":["Foo"]}]\'',
     1, 'Error from server (NotFound): networkpolicies.networking.k8s.io "frontend,cartservice" not found\n'),
]


@pytest.mark.parametrize("args, status, output", PATCHES)
def test_patch_as_kubectl_makes_it(sim, args, status, output):
    res = run(sim, f"kubectl patch netpol {args} --dry-run=client")
    assert (res.status, res.output) == (status, output)
    # nothing was stored, whatever kubectl made
    assert run(sim, "kubectl get netpol frontend -o jsonpath={.spec.policyTypes}").output == \
        '["Ingress","Egress"]\n'


def test_a_patch_the_server_refuses_is_patched_locally(sim):
    args = """frontend --type=merge -p '{"spec":{"policyTypes":["Foo"]}}'"""
    assert run(sim, f"kubectl patch netpol {args}").status == 1  # the server validates
    assert run(sim, f"kubectl patch netpol {args} --dry-run=client").status == 0
    assert run(sim, f"kubectl patch netpol {args} --dry-run=server").status == 1


def test_kubectl_crashes_on_a_test_of_a_missing_value_without_a_value():
    with pytest.raises(ClientPatchError) as e:
        client_patch({"kind": "NetworkPolicy", "spec": {}}, "json",
                     '[{"op":"test","path":"/spec/nosuch"}]')
    assert e.value.status == 2
    assert str(e.value).startswith("panic: runtime error: invalid memory address or nil "
                                   "pointer dereference\n")


def test_the_result_must_have_a_kind_and_be_an_object():
    with pytest.raises(ClientPatchError, match="^Object 'Kind' is missing in '{\"a\":1}'$"):
        client_patch({"kind": "NetworkPolicy", "a": 1}, "merge", '{"kind":null}')
    with pytest.raises(ClientPatchError, match="unstructured.detector$"):
        client_patch({"kind": "NetworkPolicy"}, "merge", "[1]")


def test_printed_name_and_equality_as_go_has_them():
    assert printed_name({"kind": "NetworkPolicy", "apiVersion": "networking.k8s.io/v1",
                         "metadata": {"name": "a"}}) == "networkpolicy.networking.k8s.io/a"
    assert printed_name({"kind": "Pod", "apiVersion": "v1", "metadata": {}}) == "pod/<unknown>"
    assert printed_name({"kind": "X", "apiVersion": "a/b/c", "metadata": 7}) == "x/<unknown>"
    assert same_object({"a": [1, {"b": "c"}]}, {"a": [1, {"b": "c"}]})
    assert not same_object({"a": 1}, {"a": 1.0})  # int64 and float64
    assert not same_object({"a": True}, {"a": 1})
    assert not same_object({"a": 1}, {"a": 1, "b": None})


def test_label_validates_nothing_and_keeps_the_resource_version(sim):
    res = run(sim, "kubectl label netpol frontend 'bad key!=x' --dry-run=client")
    assert (res.status, res.output) == (
        0, "networkpolicy.networking.k8s.io/frontend labeled (dry run)\n")
    res = run(sim, "kubectl label netpol frontend 'bad key!=x' --dry-run=client -o name")
    assert (res.status, res.output) == (0, "networkpolicy.networking.k8s.io/frontend\n")
    res = run(sim, "kubectl label netpol frontend 'a=bad value' --dry-run=client")
    assert res.status == 1 and res.output.startswith('error: invalid label value: "a=bad value"')
    rv = run(sim, "kubectl get netpol frontend -o jsonpath={.metadata.resourceVersion}").output.strip()
    y = run(sim, "kubectl label netpol frontend app=x --overwrite --dry-run=client -o yaml").output
    assert "  labels:\n    app: x\n" in y and f'resourceVersion: "{rv}"' in y
    assert run(sim, "kubectl get netpol frontend -o jsonpath={.metadata.labels}").output == ""


POLICY = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
          "metadata": {"name": "frontend"},
          "spec": {"podSelector": {"matchLabels": {"app": "frontend"}},
                   "policyTypes": ["Ingress", "Egress"], "ingress": [{}], "egress": [{}]}}


@pytest.mark.parametrize("change, name, output", [
    ({}, "frontend", "configured (dry run)"),  # no patch is made: never "unchanged"
    ({"policyTypes": ["Foo"]}, "frontend", "configured (dry run)"),
    ({"ingress": [{"ports": [{"port": 99999}]}]}, "frontend", "configured (dry run)"),
    ({"policyTypes": ["Foo"]}, "brandnew", "created (dry run)"),
])
def test_apply_sends_nothing_but_its_schema_check(sim, change, name, output):
    doc = json.loads(json.dumps(POLICY))
    doc["metadata"]["name"] = name
    doc["spec"].update(change)
    res = run(sim, "kubectl apply --dry-run=client -f -", json.dumps(doc))
    assert (res.status, res.output) == (0, f"networkpolicy.networking.k8s.io/{name} {output}\n")
    assert run(sim, "kubectl get netpol brandnew").status == 1
    doc["spec"]["podSelector"] = "x"  # kubectl's own schema check still runs
    res = run(sim, "kubectl apply --dry-run=client -f -", json.dumps(doc))
    assert res.status == 1 and res.output.startswith('error: error validating "STDIN"')


def test_a_client_dry_run_prints_what_kubectl_made(sim):
    res = run(sim, """kubectl patch netpol frontend -p '{"spec":{"policyTypes":["Foo"],"x":1}}' """
                   "--dry-run=client -o yaml")
    assert res.status == 0 and res.output.endswith(
        "  policyTypes:\n  - Foo\n  x: 1\n") and 'resourceVersion: "' in res.output
    doc = json.loads(json.dumps(POLICY))
    doc["metadata"]["name"] = "brandnew"
    res = run(sim, "kubectl apply --dry-run=client -f - -o json", json.dumps(doc))
    printed = json.loads(res.output)  # the manifest with its annotation and namespace
    assert res.status == 0 and set(printed["metadata"]) == {"annotations", "name", "namespace"}
    assert printed["metadata"]["namespace"] == "exp" and printed["spec"] == doc["spec"]
    live = run(sim, "kubectl get netpol frontend -o yaml").output
    doc["metadata"]["name"] = "frontend"  # an existing object: the live one, as got
    assert run(sim, "kubectl apply --dry-run=client -f - -o yaml", json.dumps(doc)).output == live


@pytest.mark.parametrize("index, says", [
    ("9" * 5000, "value out of range"), ("0" * 5000 + "1", None), ("-" + "0" * 4999 + "2", None),
    ("²", "invalid syntax"), ("٣", "invalid syntax")])
def test_array_indexes_are_atoi_whatever_their_length(index, says):
    doc = {"kind": "NetworkPolicy", "spec": {"ingress": [{}]}}
    patch = json.dumps([{"op": "add", "path": f"/spec/ingress/{index}", "value": {"a": 1}}])
    if says is None:
        assert len(client_patch(doc, "json", patch)["spec"]["ingress"]) == 2
    else:
        with pytest.raises(ClientPatchError, match=says):
            client_patch(doc, "json", patch)

"""The simulated kubectl: parsing, outputs, patch semantics, apply, label, validation and the
allow-list. Expected texts were taken from kubectl 1.32 against kube-apiserver 1.20."""
import json

import pytest

from netarena_gym.k8s.commands.cmdline import UsageError, parse, resource_args
from netarena_gym.k8s.state_patches import (
    PatchFailed, PatchMalformed, json_patch, merge_patch, three_way_patch)


def run(sim, command: str, stdin: str = ""):
    """One k8s action through ``Backend.run`` (the mapping the env passes)."""
    return sim.run({"command": command, "stdin": stdin})


def spec(sim, name):
    return sim.store.get("networkpolicies", "exp", name)["spec"]


# --------------------------------------------------------------------------- parsing
def test_flag_parsing_like_kubectl():
    inv = parse(["-n", "x", "get", "netpol", "-oyaml", "--show-labels", "a", "-lapp=b"])
    assert inv.verb == "get" and inv.args == ["netpol", "a"]
    assert inv.flags == {"namespace": "x", "output": "yaml", "show-labels": True, "selector": "app=b"}
    assert parse(["patch", "np", "a", "--type=json", "--patch", "[]"]).flags["patch"] == "[]"
    with pytest.raises(UsageError, match="unknown flag: --bogus"):
        parse(["get", "pods", "--bogus"])
    assert resource_args(["netpol,svc", "a"]) == [("netpol", "a"), ("svc", "a")]
    assert resource_args(["netpol/a", "pod/b"]) == [("netpol", "a"), ("pod", "b")]


# ---------------------------------------------------------------------- RFC 6902/7386
def test_json_patch_operations():
    doc = {"a": {"b": [1, 2]}, "c~d": 1, "e/f": 2}
    assert json_patch(doc, [{"op": "add", "path": "/a/b/-", "value": 3}])["a"]["b"] == [1, 2, 3]
    assert json_patch(doc, [{"op": "add", "path": "/a/b/0", "value": 0}])["a"]["b"] == [0, 1, 2]
    assert json_patch(doc, [{"op": "remove", "path": "/c~0d"}]) == {"a": {"b": [1, 2]}, "e/f": 2}
    assert json_patch(doc, [{"op": "replace", "path": "/e~1f", "value": 5}])["e/f"] == 5
    assert json_patch(doc, [{"op": "move", "from": "/a/b", "path": "/x"}]) == {"a": {}, "c~d": 1, "e/f": 2, "x": [1, 2]}
    assert json_patch(doc, [{"op": "copy", "from": "/a", "path": "/y"}])["y"] == {"b": [1, 2]}
    assert json_patch(doc, [{"op": "test", "path": "/c~0d", "value": 1}]) == doc
    for bad in ([{"op": "test", "path": "/c~0d", "value": 2}], [{"op": "replace", "path": "/zz", "value": 1}],
                [{"op": "remove", "path": "/a/b/5"}], [{"op": "bogus", "path": "/a"}],
                [{"op": "add", "path": "/q/r", "value": 1}], [{"op": "add", "path": "/a/b/01", "value": 1}]):
        with pytest.raises(PatchFailed):
            json_patch(doc, bad)
    with pytest.raises(PatchMalformed):
        json_patch(doc, {"op": "add"})
    assert doc == {"a": {"b": [1, 2]}, "c~d": 1, "e/f": 2}  # never modified in place


def test_merge_patch_rfc7386_examples():
    assert merge_patch({"a": "b"}, {"a": "c"}) == {"a": "c"}
    assert merge_patch({"a": "b"}, {"b": "c"}) == {"a": "b", "b": "c"}
    assert merge_patch({"a": "b"}, {"a": None}) == {}
    assert merge_patch({"a": [{"b": "c"}]}, {"a": [1]}) == {"a": [1]}
    assert merge_patch({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}) == {"a": {"b": "d"}}
    assert merge_patch({}, {"a": {"bb": {"ccc": None}}}) == {"a": {"bb": {}}}


def test_three_way_patch_deletes_what_the_last_apply_had():
    orig = {"spec": {"egress": [{}], "podSelector": {}}}
    mod = {"spec": {"podSelector": {}}}
    cur = {"spec": {"egress": [{}], "podSelector": {}, "policyTypes": ["Ingress", "Egress"]}}
    assert three_way_patch(orig, mod, cur) == {"spec": {"egress": None}}
    assert three_way_patch(mod, mod, cur) == {}


# ------------------------------------------------------------------------- get/describe
def test_get_table_name_and_selector(sim):
    out = run(sim, "kubectl get netpol").output
    assert out.splitlines()[0] == "NAME                    POD-SELECTOR                AGE"
    assert "adservice               app=adservice               10m" in out
    assert run(sim, "kubectl get netpol -o name").output.splitlines()[0] == \
        "networkpolicy.networking.k8s.io/adservice"
    assert run(sim, "kubectl get netpol -l nothing=here").output == "No resources found in exp namespace.\n"
    out = run(sim, "kubectl get pods,svc -l 'app in (frontend,adservice)'").output
    assert "pod/adservice" in out and "service/frontend-external" in out and "\n\nNAME" in out
    # -A is cluster scope: the agent's Role refuses it (rbac), the kubectl model prints it
    assert sim.kubectl.run(["kubectl", "get", "netpol", "-A"]).output.startswith("NAMESPACE   NAME")
    r = run(sim, "kubectl get netpol adservice nosuch")
    assert r.status == 1 and r.output.endswith(
        'Error from server (NotFound): networkpolicies.networking.k8s.io "nosuch" not found\n')
    assert run(sim, "kubectl get foo").output == 'error: the server doesn\'t have a resource type "foo"\n'


def test_get_yaml_json_and_last_applied(sim):
    y = run(sim, "kubectl get networkpolicy adservice -o yaml").output
    assert y.startswith("apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  annotations:\n"
                        "    kubectl.kubernetes.io/last-applied-configuration: |\n      {\"apiVersion\"")
    assert "  ingress:\n  - from:\n    - podSelector:\n        matchLabels:\n          app: frontend\n" \
           "    ports:\n    - port: 9555\n      protocol: TCP\n" in y
    assert "  egress:\n  - {}\n" in y and 'resourceVersion: "' in y
    j = json.loads(run(sim, "kubectl get netpol adservice cartservice -o json").output)
    assert j["kind"] == "List" and [i["metadata"]["name"] for i in j["items"]] == ["adservice", "cartservice"]


def test_describe_networkpolicy(sim):
    out = run(sim, "kubectl describe networkpolicy cartservice").output
    assert out.endswith("""Labels:       <none>
Annotations:  <none>
Spec:
  PodSelector:     app=cartservice
  Allowing ingress traffic:
    To Port: 7070/TCP
    From:
      PodSelector: app=frontend
    From:
      PodSelector: app=checkoutservice
  Allowing egress traffic:
    To Port: <any> (traffic allowed to all ports)
    To: <any> (traffic not restricted by destination)
  Policy Types: Ingress, Egress
""")
    assert "  Not affecting ingress traffic\n" in run(sim, "kubectl describe netpol loadgenerator").output
    assert "Name:         cartservice" in run(sim, "kubectl describe netpol cart").output  # prefix


# ------------------------------------------------------------------------------- patch
def test_patch_outputs_and_validation_errors(sim):
    p = "kubectl -n exp patch networkpolicy adservice"
    assert run(sim, p + ' --type=json -p \'[{"op":"replace","path":"/spec/ingress/0/ports/0/port","value":70000}]\'').output == \
        ('The NetworkPolicy "adservice" is invalid: spec.ingress[0].ports[0].port: Invalid value: 70000: '
         "must be between 1 and 65535, inclusive\n")
    assert run(sim, p + ' --type=json -p \'[{"op":"replace","path":"/spec/ingress/5/ports/0/port","value":1}]\'').output == \
        "The request is invalid: the server rejected our request due to an error in our request\n"
    assert run(sim, p + ' --type=json -p \'{"op":"remove","path":"/spec/foo"}\'').output == \
        "Error from server (BadRequest): json: cannot unmarshal object into Go value of type jsonpatch.Patch\n"
    assert run(sim, p + ' --type=json -p \'[{"op":"replace","path":"/spec/ingress/0/ports/0/port","value":9555}]\'').output == \
        "networkpolicy.networking.k8s.io/adservice patched (no change)\n"
    out = run(sim, p + ' --type=merge -p \'{"spec":{"policyTypes":["Ingress","Foo"],"ingress":[{"ports":[{"port":"HTTP--"}]}]}}\'').output
    assert out.startswith('The NetworkPolicy "adservice" is invalid: \n* spec.ingress[0].ports[0].port: Invalid value: "HTTP--"')
    assert '* spec.policyTypes[1]: Unsupported value: "Foo": supported values: "Ingress", "Egress"' in out
    assert run(sim, p + " --type=foo -p '{}'").output == 'error: --type must be one of [json merge strategic], not "foo"\n'
    assert run(sim, p + " -p ''").status == 1
    assert run(sim, "kubectl patch netpol nosuch -p '{}'").output == \
        'Error from server (NotFound): networkpolicies.networking.k8s.io "nosuch" not found\n'
    assert run(sim, p + " --type=merge -p '{\"metadata\":{\"name\":\"other\"}}'").output == \
        "Error from server (BadRequest): the name of the object (other) does not match the name on the URL (adservice)\n"


def test_patch_types_change_lists_as_the_server_does(sim):
    run(sim, "kubectl patch netpol cartservice -p '{\"spec\":{\"ingress\":[{\"ports\":[{\"port\":7070}]}]}}'")
    assert spec(sim, "cartservice")["ingress"] == [{"ports": [{"port": 7070, "protocol": "TCP"}]}]
    r = run(sim, "kubectl patch netpol cartservice --type=json -p "
                "'[{\"op\":\"add\",\"path\":\"/spec/ingress/0/from\",\"value\":[{\"podSelector\":{}}]}]'")
    assert r.output.endswith("patched\n")
    r = run(sim, "kubectl patch netpol adservice --type=merge -p '{\"spec\":{\"ingress\":null,\"egress\":[]}}'")
    s = spec(sim, "adservice")
    assert "ingress" not in s and "egress" not in s and s["policyTypes"] == ["Ingress", "Egress"]
    gen = sim.store.get("networkpolicies", "exp", "loadgenerator")["metadata"]["generation"]
    # an explicit empty list is a change for the server even though it prints the same
    r = run(sim, "kubectl patch netpol loadgenerator -p '{\"spec\":{\"egress\":[{\"to\":[],\"ports\":[]}]}}'")
    assert r.output.endswith("patched\n")
    assert sim.store.get("networkpolicies", "exp", "loadgenerator")["metadata"]["generation"] == gen + 1


def test_yaml_json_patch_is_converted_and_bad_yaml_rejected(sim):
    r = run(sim, "kubectl patch netpol adservice --type=json -p '[{op: remove, path: /spec/egress}]'")
    assert r.status == 0 and "egress" not in spec(sim, "adservice")
    r = run(sim, "kubectl patch netpol adservice --type=json -p '[{op: add'")
    assert r.status == 1 and r.output.startswith('error: unable to parse "[{op: add": yaml: ')


# ------------------------------------------------------------------------------- label
def test_label_messages(sim):
    q = "networkpolicy.networking.k8s.io/adservice"
    assert run(sim, "kubectl label networkpolicy adservice tier=web").output == f"{q} labeled\n"
    assert run(sim, "kubectl label networkpolicy adservice tier=db").output == \
        "error: 'tier' already has a value (web), and --overwrite is false\n"
    assert run(sim, "kubectl label networkpolicy adservice tier=db --overwrite").output == f"{q} labeled\n"
    assert run(sim, "kubectl label networkpolicy adservice tier=db --overwrite").output == f"{q} not labeled\n"
    assert run(sim, "kubectl label networkpolicy adservice tier-").output == f"{q} unlabeled\n"
    assert run(sim, "kubectl label networkpolicy adservice tier-").output == \
        f'label "tier" not found.\n{q} labeled\n'
    assert run(sim, "kubectl label networkpolicy adservice 'k=v!'").output.startswith(
        'error: invalid label value: "k=v!": a valid label must be an empty string')
    assert run(sim, "kubectl label networkpolicy adservice").output == \
        "error: at least one label update is required\n"
    # the kubectl model labels pods; the agent may not (its Role writes networkpolicies only)
    assert sim.kubectl.run(["kubectl", "label", "pod", "frontend", "a=b"]).output == \
        "pod/frontend labeled\n"
    assert run(sim, "kubectl label pod frontend a=b").kind == "refused"


# ------------------------------------------------------------------------------- apply
DENY = "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: deny-all\nspec:\n  podSelector: {}\n  policyTypes: [Ingress]\n"


def test_apply_create_unchanged_configured(sim):
    q = "networkpolicy.networking.k8s.io/deny-all"
    assert run(sim, "kubectl apply -f -", DENY).output == f"{q} created\n"
    assert run(sim, "kubectl apply -f -", DENY).output == f"{q} unchanged\n"
    obj = sim.store.get("networkpolicies", "exp", "deny-all")
    assert obj["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] == (
        '{"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"annotations":{},'
        '"name":"deny-all","namespace":"exp"},"spec":{"podSelector":{},"policyTypes":["Ingress"]}}\n')
    assert run(sim, "kubectl apply -f -", DENY.replace("[Ingress]", "[Egress]")).output == f"{q} configured\n"
    assert spec(sim, "deny-all")["policyTypes"] == ["Egress"]
    # a field of the last applied manifest that the new one lacks is removed
    assert run(sim, "kubectl apply -f -", DENY.replace("  policyTypes: [Ingress]\n", "")).status == 0
    assert spec(sim, "deny-all")["policyTypes"] == ["Ingress"]  # the default again


def test_apply_errors(sim):
    bad = DENY + "  foo: 1\n"
    assert run(sim, "kubectl apply -f -", bad).output == (
        'error: error validating "STDIN": error validating data: ValidationError(NetworkPolicy.spec): '
        'unknown field "foo" in io.k8s.api.networking.v1.NetworkPolicySpec; if you choose to ignore '
        "these errors, turn validation off with --validate=false\n")
    r = run(sim, "kubectl apply -f -", DENY.replace("policyTypes: [Ingress]", "ingress: [{ports: [{port: 70000}]}]"))
    assert r.output.startswith('The NetworkPolicy "deny-all" is invalid: spec.ingress[0].ports[0].port')
    assert run(sim, "kubectl apply -f -", "metadata:\n  name: x\n").output.startswith(
        'error: error validating "STDIN": error validating data: [apiVersion not set, kind not set]')
    assert run(sim, "kubectl apply -f -", ": : bad yaml [").output.startswith(
        "error: error parsing STDIN: error converting YAML to JSON: yaml: ")
    assert run(sim, "kubectl apply -f -", "").output == "error: no objects passed to apply\n"
    # endPort does not exist in a 1.20 API server's schema
    r = run(sim, "kubectl apply -f -", DENY + "  ingress: [{ports: [{port: 80, endPort: 90}]}]\n")
    assert "unknown field \"endPort\"" in r.output


def test_delete_policy(sim):
    assert run(sim, "kubectl delete networkpolicy deny-x").output == \
        'Error from server (NotFound): networkpolicies.networking.k8s.io "deny-x" not found\n'
    assert run(sim, "kubectl delete netpol adservice").output == \
        'networkpolicy.networking.k8s.io "adservice" deleted\n'


# --------------------------------------------------------------------------- allow-list
@pytest.mark.parametrize("cmd,stdin", [
    ("kubectl exec frontend -- sh", ""), ("kubectl edit netpol adservice", ""),
    ("kubectl delete pod frontend", ""), ("kubectl delete svc adservice", ""),
    ("kubectl -n kube-system delete netpol x", ""), ("kubectl patch pod frontend -p '{}'", ""),
    ("kubectl --kubeconfig /etc/k get pods", ""), ("kubectl apply -f /etc/passwd", ""),
    ("kubectl apply -f -", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"),
    ("kubectl apply -f -", DENY.replace("name: deny-all", "name: d\n  namespace: default")),
    ("kubectl run x --image=busybox", ""), ("rm -rf /", ""), ("kubectl get pods | sh", ""),
    ("kubectl get pods $(id)", ""), ("kubectl get pods &", ""), ("curl http://x", ""),
    ("kubectl label svc adservice a=b", ""),
])
def test_refused(sim, cmd, stdin):
    before = json.dumps(sim.store.list("networkpolicies", None), sort_keys=True)
    r = run(sim, cmd, stdin)
    assert r.kind == "refused" and r.output.startswith("netarena: command refused: ")
    assert json.dumps(sim.store.list("networkpolicies", None), sort_keys=True) == before


def test_pipes_filters_and_usage_errors(sim):
    r = run(sim, "kubectl get netpol -o yaml | grep -c 'port: '")
    assert r.status == 0 and int(r.output) >= 9
    assert run(sim, "kubectl get netpol | head -n 2 | tail -n 1").output.startswith("adservice ")
    assert run(sim, "kubectl get pods --bogus").kind == "invalid"
    assert run(sim, "kubectl frobnicate").kind == "invalid"
    assert run(sim, "kubectl get netpol -w").kind == "timeout"
    assert run(sim, "kubectl get netpol -o go-template='{{.items}}'").kind == "invalid"
    r = run(sim, "kubectl get netpol -o jsonpath='{.items[0].metadata.name}'")
    assert (r.kind, r.output) == ("ok", "adservice\n")  # the shell ends the line, as a terminal shows it


def test_remembered_json_patch_outcomes_equal_patching_afresh(monkeypatch):
    """A JSON patch under /spec replays its remembered outcome (kubectl.run_json_patch):
    over random catalogue edits, failing and invalid patches and label changes, the
    output, the stored objects (metadata, key order included) and the store's version
    equal those of a backend that patches every time."""
    import gymnasium as gym
    import numpy as np
    import netarena_gym  # noqa: F401
    from netarena_gym.k8s.commands import kubectl
    mk = lambda: gym.make("NetArena-K8sPolicy-v0", level=2, interface="discrete").unwrapped
    a, b = mk(), mk()
    rng = np.random.default_rng(7)
    extra = ['kubectl patch networkpolicy frontend --type=json -p \'[{"op":"remove","path":"/spec/x"}]\'',
             'kubectl patch networkpolicy cartservice --type=json -p \'[{"op":"add","path":"/spec/policyTypes","value":["Bogus"]}]\'',
             'kubectl patch networkpolicy cartservice --type=json -p \'[{"op":"add","path":"/spec/podSelector","value":7}]\'',
             "kubectl label networkpolicy cartservice tier=x --overwrite",
             "kubectl label networkpolicy cartservice tier-"]
    replayed = 0
    for ep in range(12):
        a.reset(seed=ep)
        b.reset(seed=ep)
        for _ in range(25):
            valid = np.flatnonzero(a.catalogue.mask)
            if rng.random() < 0.2:
                cmd = extra[int(rng.integers(len(extra)))]
            else:
                cmd = a.catalogue.entries[int(valid[rng.integers(len(valid))])].action["command"]
            before = sum(len(p.outcomes) for p in a.backend._plans.values() if p)
            ra = a.backend.run({"command": cmd})
            replayed += sum(len(p.outcomes) for p in a.backend._plans.values() if p) == before
            with monkeypatch.context() as m:
                m.setattr(kubectl, "_under_spec", lambda patch: False)
                rb = b.backend.run({"command": cmd})
            assert (ra.output, ra.status, ra.kind) == (rb.output, rb.status, rb.kind)
            sa, sb = a.backend.store, b.backend.store
            assert (sa.version, sa.rv) == (sb.version, sb.rv)
            pa, pb = sa.list("networkpolicies", None), sb.list("networkpolicies", None)
            assert json.dumps(pa) == json.dumps(pb)
            a._fill_catalogue()
    assert replayed > 50


# a JSON or merge patch's result is decoded from JSON (json-iterator through the codec): a
# merge patch's port of 80.0 is refused (a strategic patch takes it; kubectl re-encodes a
# JSON patch from YAML, 80.0 becoming 80), and so is another kind or apiVersion; the value
# shown is the patched object's JSON. The tails are kube-apiserver 1.20.2's (its
# json-iterator field path and byte context before them are left out)
@pytest.mark.parametrize("ptype, patch, tail", [
    ("json", '[{"op":"add","path":"/spec/ingress/0/ports","value":[{"port":80.5}]}]',
     "json: cannot unmarshal number 80.5 into Go value of type int32\n"),
    ("merge", '{"spec":{"ingress":[{"ports":[{"port":80.0}]}]}}',
     "json: cannot unmarshal number 80.0 into Go value of type int32\n"),
    ("merge", '{"kind":"Pod"}', 'no kind "Pod" is registered for version "networking.k8s.io/v1" in '
     'scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"\n'),
    ("json", '[{"op":"replace","path":"/apiVersion","value":"v1"}]', 'no kind "NetworkPolicy" is '
     'registered for version "v1" in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"\n'),
])
def test_json_and_merge_patches_decode_from_json(sim, ptype, patch, tail):
    before = sim.store.get("networkpolicies", "exp", "frontend")
    r = run(sim, f"kubectl patch networkpolicy frontend --type={ptype} -p '{patch}'")
    assert r.status == 1 and r.output.endswith('": ' + tail)
    assert r.output.startswith('The request is invalid: patch: Invalid value: "{\\"apiVersion\\":')
    assert sim.store.get("networkpolicies", "exp", "frontend") is before
    r = run(sim, "kubectl patch networkpolicy frontend -p '{\"spec\":{\"ingress\":[{\"ports\":[{\"port\":80.0}]}]}}'")
    assert r.output == "networkpolicy.networking.k8s.io/frontend patched\n"


def test_a_json_patch_takes_80_0_as_kubectl_sends_it(sim):
    r = run(sim, "kubectl patch networkpolicy frontend --type=json -p "
                 "'[{\"op\":\"add\",\"path\":\"/spec/ingress/0/ports\",\"value\":[{\"port\":80.0}]}]'")
    assert r.output == "networkpolicy.networking.k8s.io/frontend patched\n"
    assert spec(sim, "frontend")["ingress"][0]["ports"] == [{"port": 80, "protocol": "TCP"}]



# several objects patched with errors print them one a line as MultipleErrors does, an
# Invalid one as its status message (kubectl 1.32 against kube-apiserver 1.20.2, verbatim)
@pytest.mark.parametrize("args, want", [
    ('adservice frontend -p \'{"spec":{"policyTypes":["Foo"]}}\'',
     'Error from server (Invalid): NetworkPolicy.extensions "adservice" is invalid: spec.policyTypes[0]: Unsupported value: "Foo": supported values: "Ingress", "Egress"\nError from server (Invalid): NetworkPolicy.extensions "frontend" is invalid: spec.policyTypes[0]: Unsupported value: "Foo": supported values: "Ingress", "Egress"\n'),
    ('adservice nosuch frontend -p \'{"spec":{"policyTypes":["Foo","Bar"]}}\'',
     'Error from server (Invalid): NetworkPolicy.extensions "adservice" is invalid: [spec.policyTypes[0]: Unsupported value: "Foo": supported values: "Ingress", "Egress", spec.policyTypes[1]: Unsupported value: "Bar": supported values: "Ingress", "Egress"]\nError from server (NotFound): networkpolicies.networking.k8s.io "nosuch" not found\nError from server (Invalid): NetworkPolicy.extensions "frontend" is invalid: [spec.policyTypes[0]: Unsupported value: "Foo": supported values: "Ingress", "Egress", spec.policyTypes[1]: Unsupported value: "Bar": supported values: "Ingress", "Egress"]\n'),
])
def test_several_patch_errors_print_as_kubectl_prints_them(sim, args, want):
    r = run(sim, "kubectl patch networkpolicy " + args)
    assert (r.status, r.output) == (1, want)


# --dry-run: nothing is stored (it was ignored: the change was made); the lines kubectl 1.32
# prints against kube-apiserver 1.20.2, verbatim (patch prints as without the flag)
APPLY_NEW = ("apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: brandnew\n"
             "spec:\n  podSelector: {}\n")
APPLY_FRONTEND = APPLY_NEW.replace("brandnew", "frontend")


@pytest.mark.parametrize("cmd, stdin, status, want", [
    ("kubectl apply --dry-run=client -f -", APPLY_FRONTEND, 0,
     "networkpolicy.networking.k8s.io/frontend configured (dry run)\n"),
    ("kubectl apply --dry-run=server -f -", APPLY_FRONTEND, 0,
     "networkpolicy.networking.k8s.io/frontend configured (server dry run)\n"),
    ("kubectl apply --dry-run=server -f -", APPLY_NEW, 0,
     "networkpolicy.networking.k8s.io/brandnew created (server dry run)\n"),
    ("kubectl delete netpol frontend --dry-run=server", "", 0,
     'networkpolicy.networking.k8s.io "frontend" deleted (server dry run)\n'),
    ("kubectl delete netpol nosuch --dry-run=client", "", 0,
     'networkpolicy.networking.k8s.io "nosuch" deleted (dry run)\n'),
    ("kubectl delete netpol nosuch --dry-run=server", "", 1,
     'Error from server (NotFound): networkpolicies.networking.k8s.io "nosuch" not found\n'),
    ("kubectl label netpol frontend q=1 --dry-run=server", "", 0,
     "networkpolicy.networking.k8s.io/frontend labeled (server dry run)\n"),
    ("kubectl label netpol frontend q=1 --dry-run=client", "", 0,
     "networkpolicy.networking.k8s.io/frontend labeled (dry run)\n"),
    ("kubectl patch netpol frontend -p '{\"spec\":{\"policyTypes\":[\"Egress\"]}}' --dry-run=client", "", 0,
     "networkpolicy.networking.k8s.io/frontend patched\n"),
    ("kubectl patch netpol frontend -p '{\"spec\":{\"policyTypes\":[\"Foo\"]}}' --dry-run=server", "", 1,
     'The NetworkPolicy "frontend" is invalid: spec.policyTypes[0]: Unsupported value: "Foo": '
     'supported values: "Ingress", "Egress"\n'),
    ("kubectl delete netpol frontend --dry-run=bogus", "", 1,
     'error: Invalid dry-run value (bogus). Must be "none", "server", or "client".\n'),
    ("kubectl delete netpol -l app=nosuch", "", 0, "No resources found\n"),
])
def test_dry_runs_store_nothing(sim, cmd, stdin, status, want):
    before = {k: dict(v) for k, v in sim.store.objects.items()}
    version = sim.store.version
    r = run(sim, cmd, stdin)
    assert (r.status, r.output) == (status, want)
    assert sim.store.objects == before and sim.store.version == version


# -o name on a write verb: kubectl's name printer, kind.group/name for every object written
# (kubectl 1.32 against kube-apiserver 1.20.2); it printed the action lines
@pytest.mark.parametrize("cmd, stdin", [
    ("kubectl apply -f - -o name", APPLY_NEW),
    ("kubectl apply -f - -o name --dry-run=server", APPLY_NEW),
    ("kubectl patch netpol brandnew -p '{\"spec\":{\"policyTypes\":[\"Egress\"]}}' -o name", ""),
    ("kubectl label netpol brandnew z=1 -o name", ""),
    ("kubectl delete netpol brandnew -o name", ""),
])
def test_write_verbs_print_names_with_o_name(sim, cmd, stdin):
    if "apply" not in cmd:
        assert run(sim, "kubectl apply -f -", APPLY_NEW).status == 0
    r = run(sim, cmd, stdin)
    assert (r.status, r.output) == (0, "networkpolicy.networking.k8s.io/brandnew\n")


def test_a_yaml_scanner_error_on_the_first_line_names_no_line(sim):
    """go-yaml prints ``line N:`` for a scanner error only past the first line (kubectl
    1.32's client-side conversion of a JSON patch; the text taken from it)."""
    res = run(sim, "kubectl patch netpol cartservice --type=json "
                   "-p '[{\"op\": \"replace\", \"path\": \"/spec/x\", \"value\": \"TCP'")
    assert (res.status, res.output) == (1, 'error: unable to parse "[{\\"op\\": \\"replace\\", '
                                           '\\"path\\": \\"/spec/x\\", \\"value\\": \\"TCP": '
                                           'yaml: found unexpected end of stream\n')


# ------------------------------------------------------------- the patch body (-p)
_P = "kubectl patch networkpolicy frontend "
_FROM_SERVER = "Error from server (BadRequest): "
_PATCHED = "networkpolicy.networking.k8s.io/frontend patched\n"
_NO_CHANGE = "networkpolicy.networking.k8s.io/frontend patched (no change)\n"


@pytest.mark.parametrize("args, status, output", [
    # text that starts with '{' goes to the server as it is; it reads one JSON value of a
    # strategic merge patch (json.Decoder) and words a syntax error as Go's scanner does
    ("-p '{\"a\": [1, 2}'", 1, _FROM_SERVER + "invalid character '}' after array element\n"),
    ("-p '{\"a\" 1}'", 1, _FROM_SERVER + "invalid character '1' after object key\n"),
    ("-p '{\"a\": 1 \"b\": 2}'", 1,
     _FROM_SERVER + "invalid character '\"' after object key:value pair\n"),
    ("-p '{\"a\": tru}'", 1, _FROM_SERVER + "invalid character '}' in literal true (expecting 'e')\n"),
    ("-p '{\"a\": nul}'", 1, _FROM_SERVER + "invalid character '}' in literal null (expecting 'l')\n"),
    ("-p '{\"a\": \"x\\q\"}'", 1, _FROM_SERVER + "invalid character 'q' in string escape code\n"),
    ("-p '{\"a\": \"\\u12\"}'", 1,
     _FROM_SERVER + "invalid character '\"' in \\u hexadecimal character escape\n"),
    ("-p '{\"a\": \"b\tc\"}'", 1, _FROM_SERVER + "invalid character '\\t' in string literal\n"),
    ("-p '{\"a\": -}'", 1, _FROM_SERVER + "invalid character '}' in numeric literal\n"),
    ("-p '{\"a\": 1.}'", 1,
     _FROM_SERVER + "invalid character '}' after decimal point in numeric literal\n"),
    ("-p '{\"a\": 1e+}'", 1, _FROM_SERVER + "invalid character '}' in exponent of numeric literal\n"),
    ("-p '{\"a\": -01}'", 1, _FROM_SERVER + "invalid character '1' after object key:value pair\n"),
    ("-p '{\"a\": NaN}'", 1, _FROM_SERVER + "invalid character 'N' looking for beginning of value\n"),
    ("-p '{\"metadata\": {\"labels\": {\"x\": \"é\"}}, \"a\": é}'", 1,
     _FROM_SERVER + "invalid character 'Ã' looking for beginning of value\n"),
    ("-p '  {\"a\": 1'", 1, _FROM_SERVER + "unexpected EOF\n"),
    ("-p '{\"a\": 1} x'", 0, _NO_CHANGE),
    ("-p '{\"a\": 1}}'", 0, _NO_CHANGE),
    ("--type merge -p '{\"a\": NaN}'", 1, "Error from server: Invalid JSON Patch\n"),
    # a JSON patch is decoded whole (json.Unmarshal)
    ("--type json -p '{\"a\": 1} x'", 1, _FROM_SERVER + "invalid character 'x' after top-level value\n"),
    ("--type json -p '{\"a\": [1 2]}'", 1, _FROM_SERVER + "invalid character '2' after array element\n"),
    ("--type json -p '{\"a\": 1'", 1, _FROM_SERVER + "unexpected end of JSON input\n"),
    # anything else is YAML that kubectl converts to JSON first, for every patch type
    ("-p 'metadata: {labels: {x: \"y\"}}'", 0, _PATCHED),
    ("--type merge -p 'metadata: {labels: {x: \"y\"}}'", 0, _PATCHED),
    ("-p 'metadata: {labels: {x: ~}}'", 0, _PATCHED),  # labels: {} where there were none
    ("-p 'metadata: {labels: {x: yes}}'", 1, "The request is invalid: patch: Invalid value: "
     "\"map[metadata:map[labels:map[x:true]]]\": unrecognized type: string\n"),
    ("-p 'spec: {podSelector: {matchLabels: {app: 1}}}'", 1, "The request is invalid: patch: "
     "Invalid value: \"map[spec:map[podSelector:map[matchLabels:map[app:1]]]]\": cannot convert "
     "int64 to string\n"),
    ("-p 'a: b\n---\nc: d'", 0, _NO_CHANGE),  # go-yaml reads the first document only
    ("-p '  '", 0, _NO_CHANGE),  # null: nothing to merge
    ("--type json -p 'null'", 0, _NO_CHANGE),
    ("--type merge -p 'null'", 1, "Error from server: Invalid JSON Patch\n"),
    ("--type merge -p '1.5'", 1, "Error from server: Invalid JSON Patch\n"),
    ("--type merge -p '\"x\"'", 1, "Error from server: Invalid JSON Patch\n"),
    ("-p 'metadata: {labels: {x: \"\\/\"}}'", 1, 'error: unable to parse "metadata: {labels: '
     '{x: \\"\\\\/\\"}}": yaml: found unknown escape character\n'),
    ("-p 'a: !!int x'", 1, 'error: unable to parse "a: !!int x": yaml: cannot decode !!str `x` '
     "as a !!int\n"),
])
def test_the_patch_text_as_kubectl_sends_it_and_the_server_reads_it(sim, args, status, output):
    """kubectl 1.32's ``yaml.ToJSON`` of ``-p`` and kube-apiserver 1.20's decoding of the
    body, outputs taken from the real pair."""
    res = run(sim, _P + args)
    assert (res.status, res.output) == (status, output)


@pytest.mark.parametrize("text, output", [
    ("a: [1, 2", "line 1: did not find expected ',' or ']'"),
    ("[{]", "did not find expected node content"),
    ("a: b: c", "mapping values are not allowed in this context"),
    ("- a\nb: 1", "line 1: did not find expected '-' indicator"),
    ("a: 1\n- b", "line 1: did not find expected key"),
    ("a:\n  b: 1\n c: 2", "line 2: did not find expected key"),
    ("a: 1\nb: [1, 2\nc: 3", "line 2: did not find expected ',' or ']'"),
    ("a: 1\n\tb: 2", "line 2: found a tab character that violates indentation"),
    ("a: 1\nb: \"x", "line 2: found unexpected end of stream"),
    ("a: 1\nb: c: d", "line 2: mapping values are not allowed in this context"),
    ("a: 1\nb: 2\nc: [}", "line 2: did not find expected node content"),
    ("a: 1\n\n\nb: [", "line 4: did not find expected node content"),
    ("x\ny: 1", "line 2: mapping values are not allowed in this context"),
    ("a:\n  - 1\n  b: 2", "line 2: did not find expected '-' indicator"),
])
def test_yaml_errors_name_the_line_as_go_yaml_counts_it(sim, text, output):
    """go-yaml counts lines from 0 and names none for line 0; a parser error names the
    problem's line, a scanner error the next one, and the end of a stream that ends a
    line of text is a line of its own."""
    res = run(sim, f"{_P}-p '{text}'")
    quoted = text.replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    assert (res.status, res.output) == (1, f'error: unable to parse "{quoted}": yaml: {output}\n')


_NP = "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: zz\nspec:\n  podSelector: {}\n"


@pytest.mark.parametrize("stdin, line_and_problem", [
    (_NP + "  x: [1, 2\n", "line 7: did not find expected ',' or ']'"),
    (_NP + "---\n" + _NP.replace("zz", "zy").replace("{}", "[}"),
     "line 12: did not find expected node content"),
    (_NP.replace("kind: NetworkPolicy", "kind: NetworkPolicy\n\tbad: 1"),
     "line 3: found a tab character that violates indentation"),
])
def test_a_manifest_s_yaml_error_names_the_line_as_kubectl_does(sim, stdin, line_and_problem):
    res = run(sim, "kubectl apply -f -", stdin)
    assert (res.status, res.output) == (
        1, f"error: error parsing STDIN: error converting YAML to JSON: yaml: {line_and_problem}\n")

"""Containment attacks of issue #11 against the Kubernetes task, at the simulator level: every
command must be refused (or fail) and leave the store as it was outside the env's namespace.
The same allow-list guards the real backend (``tests/k8s/test_kubernetes.py``)."""
import json
import time

import pytest

from netarena_gym.k8s.commands.kubectl import parse_manifests

NP = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
      "metadata": {"name": "attack-np"}, "spec": {"podSelector": {}}}
NS = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "evil"}}
CRB = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
       "metadata": {"name": "evil"},
       "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
       "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "exp"}]}


def run(sim, command: str, stdin: str = ""):
    """One k8s action through ``Backend.run`` (the mapping the env passes)."""
    return sim.run({"command": command, "stdin": stdin})


def snapshot(sim):
    return json.dumps({r: sim.store.list(r, None) for r in ("pods", "services", "networkpolicies",
                                                              "namespaces")}, sort_keys=True, default=str)


def assert_refused(sim, command, stdin=""):
    before = snapshot(sim)
    res = run(sim, command, stdin)
    assert res.status != 0, (command, res.output)
    assert snapshot(sim) == before, command
    assert "attack-np" not in snapshot(sim)
    return res


FLAG_FIRST = ["kubectl --force pod delete X -n other", "kubectl -R namespace delete other",
              "kubectl -w /tmp proxy -p 8001", "kubectl -n exp --force delete pod x",
              "kubectl --namespace=kube-system delete pods --all", "kubectl -nother label ns other a=b",
              "kubectl --v 9 delete pods --all", "kubectl -A get secrets"]


@pytest.mark.parametrize("command", FLAG_FIRST)
def test_flags_before_the_verb_are_refused(sim, command):
    assert "netarena: command refused" in assert_refused(sim, command).output


@pytest.mark.parametrize("command", [
    "kubectl proxy -p 8001", "kubectl exec -it x -- sh", "kubectl cp x:/etc/passwd /tmp/p",
    "kubectl port-forward pod/x 8080:80", "kubectl auth can-i '*' '*'", "kubectl config view --raw",
    "kubectl get secrets -A", "kubectl get secret", "kubectl describe secrets -n kube-system",
    "kubectl get configmaps -A", "kubectl get sa,secrets", "kubectl get clusterrolebindings",
    "kubectl get all -A", "kubectl get pods --kubeconfig /root/.kube/config",
    "kubectl get pods --token abc", "kubectl get pods --as system:admin",
    "kubectl get pods --as=system:admin", "kubectl get pods -s https://127.0.0.1:6443",
    "kubectl get pods --server=https://x", "kubectl get pods --user admin",
    "kubectl delete pod --all -n exp", "kubectl delete ns exp", "kubectl label ns exp a=b",
    "kubectl create namespace evil", "kubectl run x --image=busybox",
    "kubectl get pods > /tmp/netarena-x", "kubectl get pods > /tmp/netarena-x > /dev/null",
    "kubectl get pods > /tmp/netarena-x >&2"])
def test_dangerous_verbs_flags_and_reads_are_refused(sim, command):
    assert_refused(sim, command)


@pytest.mark.parametrize("command", [
    "kubectl apply -f - -f -", "kubectl apply -f http://127.0.0.1:1/x.json -f -",
    "kubectl apply -f /etc/hostname -f -", "kubectl apply -f/etc/hostname -f -",
    "kubectl apply --filename=/etc/hostname -f -", "kubectl apply -f -f-",
    "kubectl delete -f - ", "kubectl delete -f /w.yaml -f -", "kubectl apply -f /etc/hostname",
    "kubectl apply -fhttp://127.0.0.1:1/x"])
def test_only_one_dash_f_dash(sim, command):
    assert_refused(sim, command, json.dumps(NP))


@pytest.mark.parametrize("stdin", [
    json.dumps(NP) + json.dumps(NS), json.dumps(NP) + "\n" + json.dumps(CRB),
    json.dumps(NP) + " " + json.dumps(dict(NP, metadata={"name": "x", "namespace": "other"})),
    json.dumps({"kind": "List", "apiVersion": "v1", "items": [NP, NS]}),
    json.dumps([NP, NS]),
    "kind: NetworkPolicy\napiVersion: networking.k8s.io/v1\nmetadata: {name: attack-np}\n"
    "spec: {podSelector: {}}\n---\nkind: Namespace\napiVersion: v1\nmetadata: {name: evil}\n",
    "---\n" + json.dumps(NP) + "\n---\n" + json.dumps(CRB) + "\n",
    json.dumps(NP) + "\n---\nkind: ClusterRoleBinding\n", "- 1\n- 2\n", "just a string\n",
    json.dumps(NP) + "{garbage"])
def test_every_document_of_a_stream_is_checked(sim, stdin):
    assert_refused(sim, "kubectl apply -f -", stdin)


def test_json_and_yaml_streams_decode_every_document():
    assert len(parse_manifests(json.dumps(NP) + json.dumps(NS) + "\n" + json.dumps(CRB))) == 3
    assert [d["kind"] for d in parse_manifests("kind: A\n---\nkind: B\n---\n")] == ["A", "B"]


BOMB = ('a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
        + "".join(f"{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n"
                  for p, c in zip("abcdefgh", "bcdefghi")))


@pytest.mark.parametrize("command", ["kubectl apply -f -", "kubectl patch netpol x --type=json -p BOMB"])
def test_yaml_alias_bomb_is_cheap(sim, command):
    assert len(BOMB) < 1000
    t = time.monotonic()
    if "BOMB" in command:
        res = run(sim, command.replace("BOMB", "'" + BOMB.replace("'", "") + "'"))
    else:
        res = run(sim, command, BOMB)
    assert time.monotonic() - t < 1.0
    assert res.status != 0 and "alias" in res.output


def test_size_and_depth_budgets(sim):
    assert "larger than" in run(sim, "kubectl apply -f -", "#" * (300 * 1024)).output
    deep = "[" * 200 + "]" * 200
    assert "too deep" in run(sim, "kubectl apply -f -", deep).output
    assert "too deep" in run(sim, "kubectl apply -f -", "a: " + deep + "\n").output


@pytest.mark.parametrize("command, stdin", [
    ("kubectl apply -f -", "[" * 5000 + "]" * 5000),
    ("kubectl apply -f -", '{"a": ' * 5000 + "1" + "}" * 5000),
    ("kubectl patch networkpolicy adservice -n exp --type json -p '"
     + "[" * 1900 + "]" * 1900 + "'", ""),
    ("kubectl patch networkpolicy adservice -n exp --type merge -p '"
     + '{"a":' + "[" * 1900 + "]" * 1900 + "}'", ""),
], ids=["apply-array", "apply-object", "patch-json", "patch-merge"])
@pytest.mark.parametrize("recursion_limit", [None, 50_000], ids=["default-limit", "raised-limit"])
def test_json_deeper_than_the_stack_is_an_error_not_a_recursion_error(sim, command, stdin,
                                                                      recursion_limit):
    """A JSON stream or patch past Python's recursion limit raised RecursionError out of
    ``env.step``; it is refused as output, and nothing changes. Under a raised recursion
    limit (some libraries raise it) the parse succeeds and the depth check refuses it."""
    import sys

    before = sys.getrecursionlimit()
    if recursion_limit:
        sys.setrecursionlimit(recursion_limit)
    try:
        res = assert_refused(sim, command, stdin)
    finally:
        sys.setrecursionlimit(before)
    assert "too deep" in res.output or "Error" in res.output


def test_controls_still_work(sim):
    assert run(sim, "kubectl get pods").status == 0
    assert run(sim, "kubectl get netpol -n exp -o yaml").status == 0
    res = run(sim, "kubectl apply -f -", json.dumps(NP))
    assert res.status == 0, res.output
    assert sim.store.get("networkpolicies", "exp", "attack-np") is not None
    two = dict(NP, metadata={"name": "np2"})
    assert run(sim, "kubectl apply -f -", json.dumps(NP) + "\n" + json.dumps(two)).status == 0
    assert run(sim, "kubectl delete netpol np2").status == 0

"""The agent's RBAC (``netarena_gym.k8s.rbac``): the rules, the simulator's Forbidden
answers, and, against a real API server (marked ``kubernetes``), the system line itself:
kubectl run as the agent with no check of ours must be stopped by the API server, and the
cluster, as the admin client reads it, must be unchanged."""
import json
import os
import secrets

import pytest

from netarena_gym.core.scenario import Scenario
from netarena_gym.k8s import rbac
from netarena_gym.k8s.backends.sim import SimBackend

USER = 'User "system:serviceaccount:exp:netarena-agent"'


def run(b, command):
    return b.run({"command": command, "stdin": ""})


# ------------------------------------------------------------------------------ the rules
def test_role_grants_reads_and_policy_writes_in_its_namespace_only():
    pods, netpol = rbac.api_resource("po"), rbac.api_resource("netpol")
    secrets_, ns = rbac.api_resource("secrets"), rbac.api_resource("ns")
    assert rbac.allowed("list", pods, "exp", "exp") and rbac.allowed("delete", netpol, "exp", "exp")
    assert not rbac.allowed("delete", pods, "exp", "exp")
    assert not rbac.allowed("patch", pods, "exp", "exp")
    assert not rbac.allowed("list", pods, "kube-system", "exp")
    assert not rbac.allowed("list", pods, None, "exp")
    assert not rbac.allowed("get", secrets_, "exp", "exp")
    assert rbac.allowed("get", ns, "exp", "exp") and not rbac.allowed("get", ns, "default", "exp")
    assert rbac.api_resource("deploy.apps").qualified == "deployments.apps"


def test_agent_objects_bind_the_role_to_the_service_account():
    sa, role, rb = rbac.agent_objects("exp", {"x": "y"})
    assert (sa["kind"], role["kind"], rb["kind"]) == ("ServiceAccount", "Role", "RoleBinding")
    assert all(o["metadata"] == {"name": "netarena-agent", "namespace": "exp", "labels": {"x": "y"}}
               for o in (sa, role, rb))
    assert rb["subjects"] == [{"kind": "ServiceAccount", "name": "netarena-agent", "namespace": "exp"}]
    verbs = {(g, r): set(rule["verbs"]) for rule in role["rules"] for g in rule["apiGroups"]
             for r in rule["resources"]}
    writes = {k for k, v in verbs.items() if v - {"get", "list", "watch"}}
    assert writes == {("networking.k8s.io", "networkpolicies")}
    assert not any(r in ("secrets", "configmaps", "serviceaccounts", "roles") for _, r in verbs)


# -------------------------------------------------------------------- simulator answers
# The API server's own text (kube-apiserver v1.20.2, kubectl 1.32), pinned verbatim.
FORBIDDEN = {
    "kubectl get pods -n kube-system":
        f'Error from server (Forbidden): pods is forbidden: {USER} cannot list resource "pods" '
        'in API group "" in the namespace "kube-system"\n',
    "kubectl get pods -A":
        f'Error from server (Forbidden): pods is forbidden: {USER} cannot list resource "pods" '
        'in API group "" at the cluster scope\n',
    "kubectl get ns":
        f'Error from server (Forbidden): namespaces is forbidden: {USER} cannot list resource '
        '"namespaces" in API group "" at the cluster scope\n',
    "kubectl describe ns default":
        f'Error from server (Forbidden): namespaces "default" is forbidden: {USER} cannot get '
        'resource "namespaces" in API group "" in the namespace "default"\n',
    "kubectl get netpol -A":
        'Error from server (Forbidden): networkpolicies.networking.k8s.io is forbidden: '
        f'{USER} cannot list resource "networkpolicies" in API group "networking.k8s.io" at the '
        'cluster scope\n',
    "kubectl get pods x y -n kube-system":
        f'Error from server (Forbidden): pods "x" is forbidden: {USER} cannot get resource "pods" '
        'in API group "" in the namespace "kube-system"\n'
        f'Error from server (Forbidden): pods "y" is forbidden: {USER} cannot get resource "pods" '
        'in API group "" in the namespace "kube-system"\n',
    "kubectl get nodes":
        f'Error from server (Forbidden): nodes is forbidden: {USER} cannot list resource "nodes" '
        'in API group "" at the cluster scope\n',
}


@pytest.mark.parametrize("command", sorted(FORBIDDEN))
def test_sim_answers_refused_reads_as_the_api_server(sim, command):
    res = run(sim, command)
    assert (res.output, res.status, res.kind) == (FORBIDDEN[command], 1, "error")


def test_sim_mixed_read_prints_the_allowed_part_then_the_refusals(sim):
    res = run(sim, "kubectl get pods,nodes")
    assert res.status == 1 and res.output.startswith("NAME ")
    assert res.output.endswith(FORBIDDEN["kubectl get nodes"]) and "pod/" not in res.output
    res = run(sim, "kubectl get ns kube-system exp")
    assert res.output.splitlines()[1].startswith("exp ")
    assert 'namespaces "kube-system" is forbidden' in res.output


def test_sim_own_namespace_reads_still_work(sim):
    assert run(sim, "kubectl get ns exp").status == 0
    assert run(sim, "kubectl describe ns exp").output.startswith("Name:         exp\n")
    assert run(sim, "kubectl get netpol -n exp").status == 0
    assert run(sim, "kubectl get pods").output.startswith("NAME ")


# -------------------------------------------------------------- against the real server
K = pytest.mark.kubernetes

# Commands the allow-list refuses, run as the agent with no check of ours: the API server
# must stop every one (the system line). Each is an escape reported in issue #11.
SYSTEM_ATTACKS = [
    ["kubectl", "--force", "pod", "delete", "victim", "-n", "{other}"],
    ["kubectl", "-R", "namespace", "delete", "{other}"],
    ["kubectl", "label", "ns", "{other}", "pwned=1"],
    ["kubectl", "patch", "svc", "victim", "-n", "{other}", "-p", '{"metadata":{"labels":{"pwned":"1"}}}'],
    ["kubectl", "delete", "pod", "--all"],
    ["kubectl", "label", "pod", "frontend", "pwned=1"],
    ["kubectl", "get", "secrets", "-A"],
    ["kubectl", "get", "secret", "planted", "-o", "yaml"],
    ["kubectl", "get", "configmaps", "-n", "{other}"],
    ["kubectl", "create", "namespace", "{evil}"],
    ["kubectl", "create", "clusterrolebinding", "{evil}", "--clusterrole=cluster-admin",
     "--serviceaccount={ns}:netarena-agent"],
    ["kubectl", "create", "rolebinding", "{evil}", "--clusterrole=admin",
     "--serviceaccount={ns}:netarena-agent"],
    ["kubectl", "run", "{evil}", "--image=busybox"],
    ["kubectl", "create", "token", "default", "-n", "kube-system"],
    ["kubectl", "get", "pods", "--kubeconfig", "{admin}"],
    ["kubectl", "get", "pods", "--as", "system:admin"],
    ["kubectl", "apply", "-f", "{admin}"],
]
MANIFEST_ATTACKS = [  # several documents in one stdin: kubectl applies each
    [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "{evil}"}}],
    [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
      "metadata": {"name": "{evil}"},
      "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
      "subjects": [{"kind": "ServiceAccount", "name": "netarena-agent", "namespace": "{ns}"}]}],
    [{"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
      "metadata": {"name": "{evil}", "namespace": "{other}"}, "spec": {"podSelector": {}}}],
]


@pytest.fixture(scope="module")
def real(kubeconfig):
    """A real backend with its scenario applied, an 'other' namespace with a pod, a Service
    and a ConfigMap, and a Secret planted in the agent's own namespace."""
    from kubernetes import client, config
    from netarena_gym.k8s.backends.kubernetes import KubernetesBackend
    b = KubernetesBackend(kubeconfig=kubeconfig)
    b.apply(Scenario(task="k8s", level=1, params={"namespace": b.namespace, "probes": "full"},
                     faults=()))
    api = config.new_client_from_config(config_file=kubeconfig)
    core = client.CoreV1Api(api)
    other = f"netarena-victim-{secrets.token_hex(3)}"
    core.create_namespace({"metadata": {"name": other}})
    core.create_namespaced_pod(other, {"metadata": {"name": "victim", "labels": {"app": "v"}},
                                       "spec": {"containers": [{"name": "c", "image": "x"}]}})
    core.create_namespaced_service(other, {"metadata": {"name": "victim"}, "spec": {
        "selector": {"app": "v"}, "ports": [{"port": 80}]}})
    core.create_namespaced_config_map(other, {"metadata": {"name": "cm"}, "data": {"k": "v"}})
    core.create_namespaced_secret(b.namespace, {"metadata": {"name": "planted"},
                                                "stringData": {"password": "hunter2"}})
    yield b, api, other, kubeconfig
    core.delete_namespace(other)
    b.close()
    api.close()


def cluster_state(api) -> str:
    """Everything an escape would change, as the admin client reads it."""
    from kubernetes import client
    core, rb, net = client.CoreV1Api(api), client.RbacAuthorizationV1Api(api), client.NetworkingV1Api(api)

    def names(items):
        return sorted((i.metadata.namespace or "", i.metadata.name, json.dumps(i.metadata.labels,
                                                                               sort_keys=True))
                      for i in items)
    return json.dumps({
        "ns": names(core.list_namespace().items),
        "pods": names(core.list_pod_for_all_namespaces().items),
        "svc": names(core.list_service_for_all_namespaces().items),
        "netpol": names(net.list_network_policy_for_all_namespaces().items),
        "crb": names(rb.list_cluster_role_binding().items),
        "rb": names(rb.list_role_binding_for_all_namespaces().items),
        "sa": names(core.list_service_account_for_all_namespaces().items),
    })


def _fill(v, subst):
    if isinstance(v, str):
        for k, x in subst.items():
            v = v.replace("{" + k + "}", x)
        return v
    if isinstance(v, list):
        return [_fill(x, subst) for x in v]
    if isinstance(v, dict):
        return {k: _fill(x, subst) for k, x in v.items()}
    return v


@K
@pytest.mark.parametrize("argv", SYSTEM_ATTACKS, ids=lambda a: " ".join(a[1:4]))
def test_api_server_stops_the_agent(real, argv):
    b, api, other, admin = real
    subst = {"ns": b.namespace, "other": other, "evil": f"evil-{secrets.token_hex(3)}",
             "admin": admin}
    before = cluster_state(api)
    p = b.agent_process(_fill(argv, subst))
    assert p.returncode != 0, p.stdout
    assert "hunter2" not in p.stdout + p.stderr and "aHVudGVyMg" not in p.stdout
    err = p.stderr.lower()
    assert "forbidden" in err or "permission denied" in err, p.stderr
    assert cluster_state(api) == before


@K
@pytest.mark.parametrize("docs", MANIFEST_ATTACKS, ids=lambda d: d[0]["kind"])
def test_api_server_stops_manifests_the_allow_list_would_refuse(real, docs):
    b, api, other, _ = real
    subst = {"ns": b.namespace, "other": other, "evil": f"evil-{secrets.token_hex(3)}"}
    before = cluster_state(api)
    stream = "\n".join(json.dumps(d) for d in _fill(docs, subst))
    p = b.agent_process(["kubectl", "apply", "-f", "-"], stream)
    assert p.returncode != 0 and "Forbidden" in p.stderr, p.stderr
    assert cluster_state(api) == before


@K
def test_agent_process_holds_no_admin_credentials(real):
    b, api, _, admin = real
    admin_token = next(iter(api.configuration.api_key.values())).split()[-1]
    assert admin_token
    p = b.agent_process(["kubectl", "config", "view", "--raw", "-o", "json"])
    cfg = json.loads(p.stdout)
    assert [u["name"] for u in cfg["users"]] == ["netarena-agent"]
    assert admin_token not in p.stdout
    st = os.stat(b.agent_kubeconfig)
    assert st.st_mode & 0o777 == 0o600 and os.stat(os.path.dirname(b.agent_kubeconfig)).st_mode & 0o027 == 0
    if os.geteuid() == 0:
        assert st.st_uid != 0  # kubectl runs unprivileged: the admin kubeconfig is unreadable
        p = b.agent_process(["kubectl", "get", "pods", "--kubeconfig", admin])
        assert p.returncode != 0 and "permission denied" in p.stderr


@K
def test_agent_legitimate_work_still_goes_through(real):
    b, _, _, _ = real
    np_ = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
           "metadata": {"name": "control"}, "spec": {"podSelector": {}, "policyTypes": ["Ingress"]}}
    for command, stdin in [("kubectl get pods", ""), ("kubectl get netpol", ""),
                           ("kubectl describe ns " + b.namespace, ""),
                           ("kubectl apply -f -", json.dumps(np_)),
                           ("kubectl label netpol control tier=x", ""),
                           ("kubectl patch netpol control --type=merge -p "
                            "'{\"spec\":{\"policyTypes\":[\"Ingress\",\"Egress\"]}}'", ""),
                           ("kubectl delete netpol control", "")]:
        res = b.run({"command": command, "stdin": stdin})
        assert res.status == 0, (command, res.output)


@K
def test_sim_and_real_agree_on_refused_reads(real):
    b, _, other, _ = real
    s = SimBackend(end_port=False)
    s.apply(Scenario(task="k8s", level=1, params={"namespace": b.namespace, "probes": "full"},
                     faults=()))
    for command in [*FORBIDDEN, f"kubectl get pods -n {other}", f"kubectl describe pod victim -n {other}",
                    "kubectl get svc,nodes", "kubectl get pods,secret", f"kubectl get ns {b.namespace}",
                    "kubectl get deploy -n kube-system", "kubectl get all -n kube-system"]:
        r_sim, r_real = run(s, command), run(b, command)
        assert (r_sim.status, r_sim.kind) == (r_real.status, r_real.kind), (command, r_sim, r_real)
        forb = [ln for ln in r_real.output.splitlines() if "Forbidden" in ln]
        assert [ln for ln in r_sim.output.splitlines() if "Forbidden" in ln] == forb, command


@K
def test_close_removes_only_what_it_created(kubeconfig):
    from kubernetes import client, config
    from netarena_gym.errors import BackendUnavailable
    from netarena_gym.k8s.backends.kubernetes import KubernetesBackend
    api = config.new_client_from_config(config_file=kubeconfig)
    core, rb = client.CoreV1Api(api), client.RbacAuthorizationV1Api(api)
    sc = lambda ns: Scenario(task="k8s", level=1, params={"namespace": ns, "probes": "full"}, faults=())  # noqa: E731
    ns = f"netarena-kept-{secrets.token_hex(3)}"
    core.create_namespace({"metadata": {"name": ns}})
    try:
        b = KubernetesBackend(kubeconfig=kubeconfig, namespace=ns)
        b.apply(sc(ns))
        assert [k for k, _, _ in b.created] == ["ServiceAccount", "Role", "RoleBinding"]
        b.close()
        assert not core.list_namespaced_service_account(ns).items
        assert not rb.list_namespaced_role(ns).items and not rb.list_namespaced_role_binding(ns).items
        assert core.read_namespace(ns).status.phase == "Active"
        # somebody else's account of the same name: refused, and left alone
        core.create_namespaced_service_account(ns, {"metadata": {"name": "netarena-agent"}})
        b2 = KubernetesBackend(kubeconfig=kubeconfig, namespace=ns)
        with pytest.raises(BackendUnavailable, match="not created by this env"):
            b2.apply(sc(ns))
        b2.close()
        assert core.read_namespaced_service_account("netarena-agent", ns).metadata.name
    finally:
        core.delete_namespace(ns)
        api.close()

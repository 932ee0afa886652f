"""The agent's Kubernetes permissions, as data: one ServiceAccount and one namespaced Role.

Mirrors Kubernetes RBAC (``rbac.authorization.k8s.io/v1``, as the v1.20 API server's RBAC
authorizer evaluates it) for the requests kubectl makes on the agent's behalf, and the
``Error from server (Forbidden)`` text the API server answers when a rule is missing.

* The real backend creates :func:`agent_objects` with the caller's (admin) credentials and
  hands the agent a token of that ServiceAccount: the API server enforces the rules.
* The simulator asks :func:`denial` before it runs a read, and answers with the same
  message the API server gives, so both backends agree.

The Role grants, in the env's namespace only: reads (get, list, watch) of the app's objects
(pods, services, endpoints, events, the workload controllers ``kubectl get all`` lists, quota
and limit ranges that ``describe namespace`` reads) and of its own Namespace object; and
create, update, patch and delete of NetworkPolicies. Nothing cluster-scoped and nothing in
any other namespace. Secrets, ConfigMaps, ServiceAccounts and RBAC objects are not readable.

Left out: aggregated ClusterRoles, ``resourceNames`` rules, non-resource URLs and
impersonation (the agent has none of them); :func:`denial` models the read requests of
``get`` and ``describe`` (writes outside the namespace are refused by the allow-list first).
"""
from __future__ import annotations

from dataclasses import dataclass

AGENT_NAME = "netarena-agent"
READ = ("get", "list", "watch")
WRITE = ("create", "update", "patch", "delete")


@dataclass(frozen=True)
class ApiResource:
    """One resource type as the API server's discovery lists it."""
    plural: str
    group: str
    namespaced: bool
    aliases: tuple[str, ...]

    @property
    def qualified(self) -> str:
        """How the API server names it in messages: ``pods``, ``deployments.apps``."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


def _r(plural, group, namespaced, *aliases) -> ApiResource:
    return ApiResource(plural, group, namespaced, (plural, *aliases))


# The v1.20 server's resource types that an agent may name (kubectl's short names included).
API_RESOURCES = (
    _r("pods", "", True, "pod", "po"),
    _r("services", "", True, "service", "svc"),
    _r("endpoints", "", True, "ep"),
    _r("events", "", True, "event", "ev"),
    _r("replicationcontrollers", "", True, "replicationcontroller", "rc"),
    _r("resourcequotas", "", True, "resourcequota", "quota"),
    _r("limitranges", "", True, "limitrange", "limits"),
    _r("configmaps", "", True, "configmap", "cm"),
    _r("secrets", "", True, "secret"),
    _r("serviceaccounts", "", True, "serviceaccount", "sa"),
    _r("persistentvolumeclaims", "", True, "persistentvolumeclaim", "pvc"),
    _r("podtemplates", "", True, "podtemplate"),
    _r("namespaces", "", False, "namespace", "ns"),
    _r("nodes", "", False, "node", "no"),
    _r("persistentvolumes", "", False, "persistentvolume", "pv"),
    _r("componentstatuses", "", False, "componentstatus", "cs"),
    _r("deployments", "apps", True, "deployment", "deploy"),
    _r("replicasets", "apps", True, "replicaset", "rs"),
    _r("statefulsets", "apps", True, "statefulset", "sts"),
    _r("daemonsets", "apps", True, "daemonset", "ds"),
    _r("controllerrevisions", "apps", True, "controllerrevision"),
    _r("horizontalpodautoscalers", "autoscaling", True, "horizontalpodautoscaler", "hpa"),
    _r("jobs", "batch", True, "job"),
    _r("cronjobs", "batch", True, "cronjob", "cj"),
    _r("networkpolicies", "networking.k8s.io", True, "networkpolicy", "netpol", "netpols"),
    _r("ingresses", "networking.k8s.io", True, "ingress", "ing"),
    _r("poddisruptionbudgets", "policy", True, "poddisruptionbudget", "pdb"),
    _r("endpointslices", "discovery.k8s.io", True, "endpointslice"),
    _r("leases", "coordination.k8s.io", True, "lease"),
    _r("roles", "rbac.authorization.k8s.io", True, "role"),
    _r("rolebindings", "rbac.authorization.k8s.io", True, "rolebinding"),
    _r("clusterroles", "rbac.authorization.k8s.io", False, "clusterrole"),
    _r("clusterrolebindings", "rbac.authorization.k8s.io", False, "clusterrolebinding"),
    _r("customresourcedefinitions", "apiextensions.k8s.io", False,
       "customresourcedefinition", "crd", "crds"),
    _r("storageclasses", "storage.k8s.io", False, "storageclass", "sc"),
    _r("priorityclasses", "scheduling.k8s.io", False, "priorityclass", "pc"),
)
_BY_NAME = {}
for _res in API_RESOURCES:
    for _a in _res.aliases:
        _BY_NAME[_a] = _res
        if _res.group:
            _BY_NAME[f"{_a}.{_res.group}"] = _res
del _res, _a

# (API group, resources, verbs): the agent's Role.
ROLE_RULES = (
    ("", ("pods", "services", "endpoints", "events", "replicationcontrollers",
          "resourcequotas", "limitranges", "namespaces"), READ),
    ("apps", ("deployments", "replicasets", "statefulsets", "daemonsets"), READ),
    ("autoscaling", ("horizontalpodautoscalers",), READ),
    ("batch", ("jobs", "cronjobs"), READ),
    ("events.k8s.io", ("events",), READ),
    ("networking.k8s.io", ("networkpolicies",), READ + WRITE),
)
_GRANTED = {(g, r): frozenset(v) for g, rs, v in ROLE_RULES for r in rs}


def api_resource(alias: str) -> ApiResource | None:
    """The resource type ``alias`` names (``po``, ``deploy.apps``, ``NetworkPolicy``), or None."""
    return _BY_NAME.get(alias.lower())


def agent_user(namespace: str) -> str:
    """The user name the API server gives the agent's token."""
    return f"system:serviceaccount:{namespace}:{AGENT_NAME}"


def allowed(verb: str, res: ApiResource, request_ns: str | None, namespace: str) -> bool:
    """Whether the Role in ``namespace`` allows ``verb`` on ``res``. ``request_ns`` is the
    request's namespace (None: cluster scope; a Namespace object's own name for it)."""
    return request_ns == namespace and verb in _GRANTED.get((res.group, res.plural), ())


def forbidden(verb: str, res: ApiResource, name: str | None, request_ns: str | None,
              namespace: str) -> str:
    """The API server's answer, as kubectl prints it."""
    what = f'{res.qualified} "{name}"' if name else res.qualified
    where = f'in the namespace "{request_ns}"' if request_ns else "at the cluster scope"
    return (f'Error from server (Forbidden): {what} is forbidden: User "{agent_user(namespace)}" '
            f'cannot {verb} resource "{res.plural}" in API group "{res.group}" {where}\n')


# ``kubectl get all``: the "all" category of the v1.20 server, in kubectl's order.
ALL_CATEGORY = ("pods", "replicationcontrollers", "services", "daemonsets", "deployments",
                "replicasets", "statefulsets", "horizontalpodautoscalers", "jobs", "cronjobs")


def read_requests(targets, request_ns: str, all_namespaces: bool):
    """The (target index, verb, resource, name, namespace) requests ``get``/``describe``
    make for ``[(type, name|None)]``, in kubectl's order (unknown types are skipped: kubectl
    reports them itself; ``all`` expands to its category)."""
    out = []
    for i, (alias, name) in enumerate(targets):
        if alias.lower() == "all" and not name:
            for plural in ALL_CATEGORY:
                ns = None if all_namespaces else request_ns
                out.append((i, "list", api_resource(plural), None, ns))
            continue
        res = api_resource(alias)
        if res is None:
            continue
        if not res.namespaced:
            ns = name if res.plural == "namespaces" and name else None
        else:
            ns = None if all_namespaces and not name else request_ns
        out.append((i, "get" if name else "list", res, name, ns))
    return out


def denials(targets, request_ns: str, all_namespaces: bool,
            namespace: str) -> tuple[set[int], str]:
    """``(indices of refused targets, the API server's Forbidden lines)`` for a read.

    kubectl makes every request, prints what the allowed ones returned, then one
    ``Error from server (Forbidden)`` line per refused request, and exits 1."""
    refused, lines = set(), []
    for i, verb, res, name, ns in read_requests(targets, request_ns, all_namespaces):
        if not allowed(verb, res, ns, namespace):
            refused.add(i)
            lines.append(forbidden(verb, res, name, ns, namespace))
    return refused, "".join(lines)


def agent_objects(namespace: str, labels: dict[str, str]) -> list[dict]:
    """The ServiceAccount, Role and RoleBinding manifests the real backend creates."""
    md = {"name": AGENT_NAME, "namespace": namespace, "labels": dict(labels)}
    rules = [{"apiGroups": [g], "resources": list(rs), "verbs": list(v)} for g, rs, v in ROLE_RULES]
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": dict(md),
         "automountServiceAccountToken": False},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": dict(md),
         "rules": rules},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": dict(md),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": AGENT_NAME},
         "subjects": [{"kind": "ServiceAccount", "name": AGENT_NAME, "namespace": namespace}]},
    ]

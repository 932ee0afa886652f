"""The simulated cluster around the workload: namespaces, the Online Boutique pods (running,
with IPs, owned by their ReplicaSets), Deployments, ReplicaSets, Services (with the cluster
IPs of :func:`~netarena_gym.k8s.workload.service_addresses`) and Endpoints, with the API
server's defaults (the objects the real backend creates, see
:mod:`netarena_gym.k8s.backends.kubernetes_workload`), and kube-dns in ``kube-system``. Builds the
simulator's object store for a scenario and scores manifests with the policy engine (the
generator's observability check)."""
from __future__ import annotations

import copy
from functools import lru_cache

import numpy as np

from netarena_gym.k8s.grader import Cluster, PolicyEngine
from netarena_gym.k8s.state import Store, canonical_spec_parts
from netarena_gym.k8s import state_defaults
from netarena_gym.k8s.state import EPOCH, timestamp
from netarena_gym.k8s.workload import (
    NODE_NAME, deployment_manifests, deployment_status, endpoints_manifest, load_workload, pod_ips,
    Workload, pod_owner, pod_status, replicaset_status, service_addresses)

NODE = NODE_NAME
DNS_POD = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "coredns-5d78c9869d-kt4wz",
                        "labels": {"k8s-app": "kube-dns", "pod-template-hash": "5d78c9869d"}},
           "spec": {"containers": [{"name": "coredns", "image": "registry.k8s.io/coredns/coredns:v1.11.1",
                                    "ports": [{"name": "dns", "containerPort": 53, "protocol": "UDP"},
                                              {"name": "dns-tcp", "containerPort": 53, "protocol": "TCP"},
                                              {"name": "metrics", "containerPort": 9153, "protocol": "TCP"}]}]}}
DNS_SERVICE = {"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": "kube-dns", "labels": {"k8s-app": "kube-dns"}},
               "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.10", "selector": {"k8s-app": "kube-dns"},
                        "ports": [{"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
                                  {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
                                  {"name": "metrics", "port": 9153, "protocol": "TCP", "targetPort": 9153}]}}


SHARED_MAX = 4096  # manifests keyed by identity (the baseline's and shared ones)


def canonical_spec(manifest: dict) -> dict:
    """The spec as the API server stores it (decoded, defaulted, empty lists dropped),
    shared with the store's decoding of the same text (:func:`canonical_spec_parts`):
    never change it."""
    return canonical_spec_parts(manifest.get("spec"))[1]


class BaseCluster:
    """Everything but the policies, for one namespace; ``outcomes(policies)`` runs the
    engine over manifests and returns "probe behaves as intended" per probe."""

    def __init__(self, namespace: str, probes: str, wl: Workload | None = None):
        """``wl``: the app (default: Online Boutique, :func:`load_workload`)."""
        wl = wl if wl is not None else load_workload()
        self.namespace = namespace
        self.probe_set = wl.probe_sets[probes]
        self.expected = np.array(self.probe_set.expected, dtype=bool)
        self.pods, self.services, self.namespaces = [], [], []
        when = timestamp(EPOCH)
        self.controllers = deployment_manifests(list(wl.pods))
        for p, (_, rs), ip in zip(wl.pods, self.controllers, pod_ips(len(wl.pods))):
            q = copy.deepcopy(p)
            q["metadata"]["namespace"] = namespace
            q["metadata"]["ownerReferences"] = pod_owner(rs["metadata"]["name"], "")
            q["spec"] = state_defaults.pod_spec(q["spec"], pod=True)
            q["spec"]["nodeName"] = NODE
            q["status"] = pod_status(q, ip, when)
            q["metadata"]["resourceVersion"] = "0"  # fixed objects: the engine may cache them
            self.pods.append(q)
        dns = copy.deepcopy(DNS_POD)
        dns["metadata"]["namespace"] = "kube-system"
        dns["spec"] = state_defaults.pod_spec(dns["spec"], pod=True)
        dns["spec"]["nodeName"] = NODE
        dns["status"] = pod_status(dns, "10.244.0.2", when)
        dns["metadata"]["resourceVersion"] = "0"
        self.dns_pod = dns
        addresses = service_addresses(namespace, list(wl.services))
        for s in wl.services:
            q = copy.deepcopy(s)
            q["metadata"]["namespace"] = namespace
            ip, node_ports = addresses[q["metadata"]["name"]]
            q["spec"]["clusterIP"] = ip
            for p, port in zip(q["spec"]["ports"], node_ports or ()):
                p["nodePort"] = port
            q["spec"] = state_defaults.service_spec(q["spec"])
            q["status"] = {"loadBalancer": {}}
            self.services.append(q)
        dsvc = copy.deepcopy(DNS_SERVICE)
        dsvc["metadata"]["namespace"] = "kube-system"
        self.dns_service = dsvc
        names = dict.fromkeys([namespace, "default", "kube-node-lease", "kube-public", "kube-system"])
        for n in sorted(names):
            self.namespaces.append({"apiVersion": "v1", "kind": "Namespace",
                                    "metadata": {"name": n, "labels": {"kubernetes.io/metadata.name": n}},
                                    "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})
        self.engine = PolicyEngine(self.probe_set.probes, namespace)
        self._snapshot = None
        self._all_pods = self.pods + [self.dns_pod]
        self._canon: dict = {}   # manifest (repr) -> canonical stored policy
        self._specs: dict = {}   # manifest (repr) -> policy as the engine reads it
        # the workload's shared baseline manifests by id: [manifest, engine policy, canonical]
        self._shared = {id(m): [m, None, None] for m in wl.shared_policy_manifests().values()}
        self._baseline = dict(self._shared)
        self._stored: dict = {}  # stored policy objects shared by stores (Store.insert_kept_policy)
        #: fault list (repr) -> the faulty manifests, or None: what K8sGenerator.check found
        self.checked: dict = {}
        #: (id of a manifest, fault (repr)) -> (that manifest, the faulty one or None), see
        #: K8sGenerator._faulted
        self.faulted: dict = {}

    def share(self, manifest: dict) -> None:
        """Key ``manifest``'s engine policy and canonical object by identity, as the
        baseline's are: the caller promises never to change it (the generator's checked
        scenarios share their manifests)."""
        if self._shared.get(id(manifest), (None,))[0] is manifest:
            return
        if len(self._shared) >= SHARED_MAX:
            self._shared = dict(self._baseline)
        self._shared[id(manifest)] = [manifest, None, None]

    def outcomes(self, policies: dict[str, dict]) -> np.ndarray:
        pols = []
        for m in policies.values():
            hit = self._shared.get(id(m))
            if hit is not None and hit[0] is m and hit[1] is not None:
                pols.append(hit[1])
                continue
            key = repr(m)  # a cache key only: exact (types and order) and faster than JSON
            hit = self._specs.get(key)
            if hit is None:
                if len(self._specs) > 4096:
                    self._specs.clear()
                hit = self._specs[key] = {"metadata": {"name": m["metadata"]["name"],
                                                       "namespace": self.namespace},
                                          "spec": canonical_spec(m)}
            pols.append(hit)
            self._keep_shared(m, 1, hit)
        # frozen: these objects are never changed, so the engine keys its caches by identity
        c = Cluster(self.namespaces, self._all_pods, self.services, pols, None, frozen=True)
        return self.engine.evaluate(c) == self.expected

    def build_store(self, policies: dict[str, dict], *, end_port: bool = True) -> Store:
        """The simulator's API server: namespaces, pods, services, kube-dns and the given
        policies, created as ``kubectl apply`` would (with the last-applied annotation)."""
        from netarena_gym.k8s.commands.kubectl import LAST_APPLIED, last_applied
        if self._snapshot is None:
            self._snapshot = self._workload_snapshot()
        objects, rv, uid = self._snapshot
        st = Store(end_port=end_port)
        for res, items in objects.items():  # shared objects: the store writes copies
            st.objects[res] = dict(items)
        st.rv, st._uid = rv, uid
        for m in policies.values():
            hit = self._shared.get(id(m))
            if hit is not None and hit[0] is m and hit[2] is not None:
                st.insert_kept_policy(self.namespace, hit[2], self._stored)
                continue
            key = repr(m)
            canon = self._canon.get(key)
            if canon is None:
                body = dict(m)
                md = body["metadata"] = dict(m.get("metadata") or {})
                md["annotations"] = {**(md.get("annotations") or {}),
                                     LAST_APPLIED: last_applied(m, self.namespace)}
                canon = st.canonical_policy(body, self.namespace)
                canon.pop("_shape", None)
                if len(self._canon) > 4096:
                    self._canon.clear()
                self._canon[key] = canon
            self._keep_shared(m, 2, canon)
            st.insert_kept_policy(self.namespace, canon, self._stored)  # never changed
        st.version = 0
        return st

    def _keep_shared(self, manifest: dict, slot: int, value) -> None:
        """Remember ``value`` by identity when ``manifest`` is one of the workload's shared
        baseline manifests (never changed, so its identity stands for its text)."""
        entry = self._shared.get(id(manifest))
        if entry is not None and entry[0] is manifest:
            entry[slot] = value

    def _workload_snapshot(self) -> tuple[dict, int, int]:
        st = Store()
        for n in self.namespaces:
            st.load("namespaces", "", {k: v for k, v in n.items() if k != "status"}, n["status"])
        ns, when = self.namespace, timestamp(EPOCH)
        for (dep, rs), p in zip(self.controllers, self.pods):
            dep, rs = copy.deepcopy(dep), copy.deepcopy(rs)
            dep["spec"] = state_defaults.deployment_spec(dep["spec"])
            made = st.load("deployments", ns, dep, deployment_status(rs["metadata"]["name"], when))
            rs["metadata"]["ownerReferences"][0]["uid"] = made["metadata"]["uid"]
            rs["spec"] = state_defaults.replicaset_spec(rs["spec"])
            made = st.load("replicasets", ns, rs, replicaset_status())
            pod = {k: v for k, v in p.items() if k != "status"}
            pod["metadata"] = {**pod["metadata"], "ownerReferences": pod_owner(
                rs["metadata"]["name"], made["metadata"]["uid"])}
            st.load("pods", ns, pod, p["status"])
        st.load("pods", "kube-system", {k: v for k, v in self.dns_pod.items() if k != "status"},
                self.dns_pod["status"])
        for s in self.services:
            st.load("services", ns, {k: v for k, v in s.items() if k != "status"}, s["status"])
        pods = st.list("pods", ns)
        for s in st.list("services", ns):
            st.load("endpoints", ns, endpoints_manifest(s, pods))
        st.load("services", "kube-system", self.dns_service)
        return st.objects, st.rv, st._uid


def store_cluster(st: Store, keep: Cluster | None = None) -> Cluster:
    """The objects of a simulator store as the policy engine reads them: versioned by the
    store's identity and version, and frozen (the store replaces objects, never changes one,
    and the lists are never changed either). ``keep``: an earlier Cluster of this store
    whose namespaces, pods and Services are still the store's (no write but to policies
    since, see ``Store.workload_version``); its lists are reused (the engine then knows
    the world unchanged by their identity)."""
    ob = st.objects
    if keep is not None:
        return Cluster(keep.namespaces, keep.pods, keep.services,
                       list(ob["networkpolicies"].values()), (st.token, st.version), frozen=True)
    return Cluster(list(ob["namespaces"].values()), list(ob["pods"].values()),
                   list(ob["services"].values()), list(ob["networkpolicies"].values()),
                   (st.token, st.version), frozen=True)


@lru_cache(maxsize=16)
def base_cluster(namespace: str, probes: str, app: str = "boutique") -> BaseCluster:
    """The base cluster of ``app`` (see :func:`~netarena_gym.k8s.workload_large.workload_for`)."""
    from netarena_gym.k8s.workload_large import workload_for
    return BaseCluster(namespace, probes, workload_for(app))

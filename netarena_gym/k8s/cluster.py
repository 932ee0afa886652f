"""The simulated cluster around the workload: namespaces, the Online Boutique pods (running,
with IPs) and Services (with cluster IPs), and kube-dns in ``kube-system``. Builds the
simulator's object store for a scenario and scores manifests with the policy engine (the
generator's observability check)."""
from __future__ import annotations

import copy
import json
from functools import lru_cache

import numpy as np

from netarena_gym.k8s.state_patches import clone
from netarena_gym.k8s.grader import Cluster, PolicyEngine
from netarena_gym.k8s.state import Store
from netarena_gym.k8s.state_validation import apply_defaults, decode_spec
from netarena_gym.k8s.workload import load_workload

NODE = "netarena-control-plane"
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


def pod_status(pod: dict, ip: str) -> dict:
    return {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}], "hostIP": "172.18.0.2",
            "containerStatuses": [{"name": c["name"], "ready": True, "restartCount": 0,
                                   "image": c.get("image", ""), "started": True}
                                  for c in pod["spec"]["containers"]]}


def canonical_spec(manifest: dict) -> dict:
    return apply_defaults(decode_spec(manifest.get("spec")))


class BaseCluster:
    """Everything but the policies, for one namespace; ``outcomes(policies)`` runs the
    engine over manifests and returns "probe behaves as intended" per probe."""

    def __init__(self, namespace: str, probes: str):
        wl = load_workload()
        self.namespace = namespace
        self.probe_set = wl.probe_sets[probes]
        self.expected = np.array(self.probe_set.expected, dtype=bool)
        self.pods, self.services, self.namespaces = [], [], []
        for i, p in enumerate(wl.pods):
            q = copy.deepcopy(p)
            q["metadata"]["namespace"] = namespace
            q["spec"]["nodeName"] = NODE
            q["status"] = pod_status(q, f"10.244.0.{10 + i}")
            q["metadata"]["resourceVersion"] = "0"  # fixed objects: the engine may cache them
            self.pods.append(q)
        dns = copy.deepcopy(DNS_POD)
        dns["metadata"]["namespace"] = "kube-system"
        dns["spec"]["nodeName"] = NODE
        dns["status"] = pod_status(dns, "10.244.0.2")
        dns["metadata"]["resourceVersion"] = "0"
        self.dns_pod = dns
        node_port = 30080
        for i, s in enumerate(wl.services):
            q = copy.deepcopy(s)
            q["metadata"]["namespace"] = namespace
            q["spec"]["clusterIP"] = f"10.96.{20 + i}.{100 + 7 * i}"
            for p in q["spec"]["ports"]:
                p.setdefault("protocol", "TCP")
                if q["spec"]["type"] == "LoadBalancer":
                    p["nodePort"] = node_port
                    node_port += 1
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
        self._canon: dict = {}   # manifest JSON -> canonical stored policy
        self._specs: dict = {}   # manifest JSON -> policy as the engine reads it

    def outcomes(self, policies: dict[str, dict]) -> np.ndarray:
        pols = []
        for m in policies.values():
            key = json.dumps(m, sort_keys=True)
            hit = self._specs.get(key)
            if hit is None:
                if len(self._specs) > 4096:
                    self._specs.clear()
                hit = self._specs[key] = {"metadata": {"name": m["metadata"]["name"],
                                                       "namespace": self.namespace,
                                                       "resourceVersion": key},
                                          "spec": canonical_spec(m)}
            pols.append(hit)
        c = Cluster(self.namespaces, self.pods + [self.dns_pod], self.services, pols, None)
        return self.engine.evaluate(c) == self.expected

    def build_store(self, policies: dict[str, dict], *, end_port: bool = True) -> Store:
        """The simulator's API server: namespaces, pods, services, kube-dns and the given
        policies, created as ``kubectl apply`` would (with the last-applied annotation)."""
        from netarena_gym.k8s.commands.kubectl import LAST_APPLIED, last_applied
        if self._snapshot is None:
            self._snapshot = self._workload_snapshot()
        text, rv, uid = self._snapshot
        st = Store(end_port=end_port)
        for res, items in json.loads(text).items():
            st.objects[res] = {((o["metadata"].get("namespace") or ""), o["metadata"]["name"]): o
                               for o in items}
        st.rv, st._uid = rv, uid
        for m in policies.values():
            key = json.dumps(m, sort_keys=True)
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
            st.insert_policy(self.namespace, clone(canon))
        st.version = 0
        return st

    def _workload_snapshot(self) -> tuple[str, int, int]:
        st = Store()
        for n in self.namespaces:
            st.load("namespaces", "", {k: v for k, v in n.items() if k != "status"}, n["status"])
        for p in self.pods:
            st.load("pods", self.namespace, {k: v for k, v in p.items() if k != "status"}, p["status"])
        st.load("pods", "kube-system", {k: v for k, v in self.dns_pod.items() if k != "status"},
                self.dns_pod["status"])
        for s in self.services:
            st.load("services", self.namespace, s)
        st.load("services", "kube-system", self.dns_service)
        text = json.dumps({res: list(objs.values()) for res, objs in st.objects.items()})
        return text, st.rv, st._uid


@lru_cache(maxsize=16)
def base_cluster(namespace: str, probes: str) -> BaseCluster:
    return BaseCluster(namespace, probes)

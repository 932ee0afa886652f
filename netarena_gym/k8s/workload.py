"""The Online Boutique workload, its baseline NetworkPolicies and the intended connectivity,
loaded from the package data in ``netarena_gym/k8s/data/`` (``NETARENA_K8S_DATA`` points elsewhere).

* ``workload.yaml``: one Pod per app (labels, container names, named container ports) and
  the Services (port -> targetPort), without a namespace;
* ``policies/*.yaml``: the 12 baseline policies upstream applies (file names as upstream's
  ``POLICY_NAMES``);
* ``intent.json``: which (source app, Service:port) probes must succeed, the full probe set
  and upstream's 92-probe ``compat`` set in upstream's order.

Everything is parsed once per process and handed out as deep copies.
"""
from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from netarena_gym.errors import require

DEFAULT_DATA = Path(__file__).resolve().parent / "data"
NETWORKING = "networking.k8s.io/v1"


def data_dir() -> Path:
    d = Path(os.environ.get("NETARENA_K8S_DATA", DEFAULT_DATA))
    if not (d / "intent.json").is_file():
        raise FileNotFoundError(
            f"Online Boutique data not found in {d} (NETARENA_K8S_DATA must name a folder with "
            "workload.yaml, intent.json and policies/, as netarena_gym/k8s/data/ has)")
    return d


def yaml_module():
    """PyYAML (a core dependency, and the kubernetes client's)."""
    return require("yaml", "k8s")


@dataclass(frozen=True)
class Probe:
    """One probe: a TCP connection from the pod of ``source`` to ``service:port``."""
    source: str
    service: str
    port: int

    def key(self) -> str:
        return f"{self.source}>{self.service}:{self.port}"


@dataclass(frozen=True)
class ProbeSet:
    name: str
    probes: tuple[Probe, ...]
    expected: tuple[bool, ...]

    def __len__(self) -> int:
        return len(self.probes)


@dataclass(frozen=True, eq=False)
class Workload:
    pods: tuple[dict, ...]
    services: tuple[dict, ...]
    policies: tuple[tuple[str, dict], ...]   # (upstream file name, manifest)
    apps: tuple[str, ...]                     # every app, intent order
    service_apps: tuple[str, ...]             # apps with a Service (probe targets)
    target_ports: dict                        # service -> (port, targetPort)
    allowed: dict                             # source app -> frozenset of services
    probe_sets: dict                          # "full" | "compat" -> ProbeSet

    def pod_manifests(self) -> list[dict]:
        return copy.deepcopy(list(self.pods))

    def service_manifests(self) -> list[dict]:
        return copy.deepcopy(list(self.services))

    def policy_manifests(self) -> dict[str, dict]:
        """Baseline policies by metadata.name, in upstream's order (a fresh copy)."""
        return json.loads(_policies_json(self))

    def shared_policy_manifests(self) -> dict[str, dict]:
        """Baseline policies by metadata.name, in upstream's order: a new dict of manifests
        shared by every caller, which must never change them (copy one before editing it);
        the same objects every call, so caches may key on their identity."""
        return dict(_shared_policies(self))

    def policy_file(self, name: str) -> str:
        for f, m in self.policies:
            if m["metadata"]["name"] == name:
                return f
        raise KeyError(name)

    def policy_of_file(self, file_name: str) -> str:
        """metadata.name of an upstream file name such as ``network-policy-redis``."""
        for f, m in self.policies:
            if f == file_name:
                return m["metadata"]["name"]
        raise KeyError(file_name)


@lru_cache(maxsize=4)
def _policies_json(wl: Workload) -> str:
    return json.dumps({m["metadata"]["name"]: m for _, m in wl.policies})


@lru_cache(maxsize=1)
def load_workload() -> Workload:
    yaml = yaml_module()
    d = data_dir()
    docs = [x for x in yaml.safe_load_all((d / "workload.yaml").read_text()) if x]
    pods = tuple(x for x in docs if x["kind"] == "Pod")
    services = tuple(x for x in docs if x["kind"] == "Service")
    policies = []
    for p in sorted((d / "policies").glob("*.yaml")):
        policies.append((p.stem, yaml.safe_load(p.read_text())))
    intent = json.loads((d / "intent.json").read_text())
    apps = tuple(intent["sources"])
    tp = {}
    for s in services:
        port = s["spec"]["ports"][0]
        tp[s["metadata"]["name"]] = (int(port["port"]), port["targetPort"])
    targets = [(str(s), int(p)) for s, p in intent["targets"]]
    allowed = {a: frozenset(intent["allowed"].get(a, ())) for a in apps}

    def make(name, sources, tgts):
        probes, exp = [], []
        for src in sources:
            for svc, port in tgts:
                if svc == src:
                    continue
                probes.append(Probe(src, svc, port))
                exp.append(svc in allowed[src])
        return ProbeSet(name, tuple(probes), tuple(exp))

    sets = {"full": make("full", apps, targets),
            "compat": make("compat", intent["compat"]["sources"],
                           [(str(s), int(p)) for s, p in intent["compat"]["targets"]])}
    return Workload(pods=pods, services=services, policies=tuple(policies), apps=apps,
                    service_apps=tuple(s for s, _ in targets), target_ports=tp,
                    allowed=allowed, probe_sets=sets)


# ------------------------------------------------------------ controllers' objects
# The bundled API server runs no controller-manager, scheduler or kubelet: nothing would
# create a Deployment's ReplicaSet, bind or start a pod, or fill a Service's Endpoints. Both
# backends therefore hold what those controllers would have written for one ready replica
# per app (the simulator in its store, the real backend by creating it), with two documented
# simplifications: pods keep their names (``frontend``, not ``frontend-<hash>-<id>``) and
# their single ``app`` label (the faults, the grader and upstream's prompts read them), so
# a ReplicaSet's selector and template are the Deployment's, without ``pod-template-hash``.
APPS_V1 = "apps/v1"
NODE_NAME = "netarena-control-plane"
HOST_IP = "172.18.0.2"
_HASH_CHARS = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand's alphabet


def template_hash(app: str) -> str:
    """A stable ``pod-template-hash`` (10 characters of the safe alphabet) for ``app``."""
    import hashlib
    h = int.from_bytes(hashlib.sha256(app.encode()).digest()[:8], "big")
    out = ""
    for _ in range(10):
        h, r = divmod(h, len(_HASH_CHARS))
        out += _HASH_CHARS[r]
    return out


def replicaset_name(app: str) -> str:
    return f"{app}-{template_hash(app)}"


def deployment_manifests(pods: list[dict] | None = None) -> list[tuple[dict, dict]]:
    """(Deployment, ReplicaSet) manifests for every workload pod, as ``kubectl apply`` of
    upstream's Deployment and then the deployment controller would create them (one
    replica, revision 1). The ReplicaSet's ``ownerReferences`` lack the Deployment's
    ``uid``, which the API server assigns: the caller fills it in."""
    out = []
    for pod in copy.deepcopy(pods if pods is not None else list(load_workload().pods)):
        md = pod["metadata"]
        app = md["name"]
        labels = dict(md.get("labels") or {})
        template = {"metadata": {"labels": labels}, "spec": pod["spec"]}
        dep = {"apiVersion": APPS_V1, "kind": "Deployment",
               "metadata": {"name": app, "labels": dict(labels),
                            "annotations": {"deployment.kubernetes.io/revision": "1"}},
               "spec": {"replicas": 1, "selector": {"matchLabels": dict(labels)},
                        "template": copy.deepcopy(template)}}
        h = template_hash(app)
        rs = {"apiVersion": APPS_V1, "kind": "ReplicaSet",
              "metadata": {"name": replicaset_name(app),
                           "labels": {**labels, "pod-template-hash": h},
                           "annotations": {"deployment.kubernetes.io/desired-replicas": "1",
                                           "deployment.kubernetes.io/max-replicas": "2",
                                           "deployment.kubernetes.io/revision": "1"},
                           "ownerReferences": [{"apiVersion": APPS_V1, "kind": "Deployment",
                                                "name": app, "uid": "", "controller": True,
                                                "blockOwnerDeletion": True}]},
              "spec": {"replicas": 1, "selector": {"matchLabels": dict(labels)},
                       "template": copy.deepcopy(template)}}
        out.append((dep, rs))
    return out


def deployment_status(rs_name: str, when: str) -> dict:
    """The status the deployment controller writes once its one replica is available."""
    cond = {"lastTransitionTime": when, "lastUpdateTime": when, "status": "True"}
    return {"availableReplicas": 1, "observedGeneration": 1, "readyReplicas": 1, "replicas": 1,
            "updatedReplicas": 1,
            "conditions": [{**cond, "type": "Available", "reason": "MinimumReplicasAvailable",
                            "message": "Deployment has minimum availability."},
                           {**cond, "type": "Progressing", "reason": "NewReplicaSetAvailable",
                            "message": f'ReplicaSet "{rs_name}" has successfully progressed.'}]}


def replicaset_status() -> dict:
    return {"availableReplicas": 1, "fullyLabeledReplicas": 1, "observedGeneration": 1,
            "readyReplicas": 1, "replicas": 1}


def pod_status(pod: dict, ip: str, when: str) -> dict:
    """The status a kubelet reports for a running pod whose containers are all ready."""
    names = [c["name"] for c in pod["spec"]["containers"]]
    conds = [{"lastProbeTime": None, "lastTransitionTime": when, "status": "True", "type": t}
             for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")]
    return {"phase": "Running", "conditions": conds, "hostIP": HOST_IP, "podIP": ip,
            "podIPs": [{"ip": ip}], "qosClass": "BestEffort", "startTime": when,
            "containerStatuses": [{"name": c["name"], "ready": True, "restartCount": 0,
                                   "image": c.get("image", ""), "imageID": "", "lastState": {},
                                   "started": True,
                                   "state": {"running": {"startedAt": when}}}
                                  for c in pod["spec"]["containers"] if c["name"] in names]}


def pod_owner(rs_name: str, rs_uid: str) -> list[dict]:
    return [{"apiVersion": APPS_V1, "kind": "ReplicaSet", "name": rs_name, "uid": rs_uid,
             "controller": True, "blockOwnerDeletion": True}]


def endpoints_manifest(service: dict, pods: list[dict]) -> dict:
    """The Endpoints the endpoints controller writes for ``service`` over ``pods`` (objects
    as the server holds them: with ``status.podIP``, ``uid``, ``resourceVersion``): ready
    addresses sorted by IP, ports with the Service's port names and the resolved targetPort."""
    md, spec = service["metadata"], service.get("spec") or {}
    sel = spec.get("selector") or {}
    ns = md.get("namespace")
    chosen = [p for p in pods if sel and all(
        ((p.get("metadata") or {}).get("labels") or {}).get(k) == v for k, v in sel.items())
        and (p.get("status") or {}).get("podIP")]
    ep = {"apiVersion": "v1", "kind": "Endpoints",
          "metadata": {"name": md["name"], **({"labels": dict(md["labels"])} if md.get("labels") else {})}}
    if not chosen:
        return ep
    addrs, ports = [], []
    for p in sorted(chosen, key=lambda p: tuple(int(x) for x in p["status"]["podIP"].split("."))):
        pm = p["metadata"]
        addrs.append({"ip": p["status"]["podIP"], "nodeName": p["spec"].get("nodeName", NODE_NAME),
                      "targetRef": {"kind": "Pod", "name": pm["name"], "namespace": ns or pm.get("namespace"),
                                    "resourceVersion": pm.get("resourceVersion", ""),
                                    "uid": pm.get("uid", "")}})
    first = chosen[0]
    for sp in spec.get("ports") or ():
        tp = sp.get("targetPort", sp.get("port"))
        if isinstance(tp, str):
            tp = next((cp["containerPort"] for c in first["spec"]["containers"]
                       for cp in c.get("ports") or () if cp.get("name") == tp), None)
            if tp is None:
                continue
        port = {"port": int(tp), "protocol": sp.get("protocol", "TCP")}
        if sp.get("name"):
            port["name"] = sp["name"]
        ports.append(port)
    if ports:
        ep["subsets"] = [{"addresses": addrs, "ports": ports}]
    return ep


def service_addresses(namespace: str, services: list[dict] | None = None) -> dict:
    """{service: (clusterIP, [nodePort per port] or None)}: fixed per namespace (a hash of
    its name picks a block of 16 addresses in 10.96.16.0-10.96.255.255 and of node ports),
    so that the simulator shows the addresses the real backend asks the server for, and
    envs in different namespaces of one cluster rarely collide."""
    import hashlib
    h = int.from_bytes(hashlib.sha256(namespace.encode()).digest()[:8], "big")
    block = h % (240 * 16)
    third, base = 16 + block // 16, (block % 16) * 16 + 1
    node_port = 30000 + (h >> 20) % 2700
    out = {}
    for i, s in enumerate(services if services is not None else load_workload().services):
        ports = None
        if (s.get("spec") or {}).get("type") in ("NodePort", "LoadBalancer"):
            ports = []
            for _ in s["spec"].get("ports") or ():
                ports.append(node_port)
                node_port += 1
        out[s["metadata"]["name"]] = (f"10.96.{third}.{base + i}", ports)
    return out


def pod_ips(n: int | None = None) -> list[str]:
    """The addresses of the first ``n`` pods (default: the workload's), in workload order
    (status only: nothing allocates pod IPs on the bundled server): 10.244.0.10 onwards."""
    n = len(load_workload().pods) if n is None else n
    return [f"10.244.{(10 + i) // 256}.{(10 + i) % 256}" for i in range(n)]


@lru_cache(maxsize=4)
def _shared_policies(wl: Workload) -> dict[str, dict]:
    return json.loads(_policies_json(wl))

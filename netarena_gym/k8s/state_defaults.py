"""The defaults kube-apiserver 1.20 fills into the workload's objects when they are created
(``SetDefaults_*`` of ``k8s.io/kubernetes/pkg/apis/{core,apps}/v1`` and the
``DefaultTolerationSeconds`` and ``Priority`` admission plugins), so that the simulator
stores what the real server returns. Only the fields the Online Boutique manifests leave
unset are covered (no volumes, probes, init containers or resources)."""
from __future__ import annotations

import copy

NOT_READY_TOLERATIONS = [
    {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists",
     "tolerationSeconds": 300},
    {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists",
     "tolerationSeconds": 300}]


def pod_spec(spec: dict, *, pod: bool) -> dict:
    """A PodSpec with the server's defaults; ``pod``: a Pod (admission adds priority and
    tolerations), else a template of a Deployment or ReplicaSet."""
    s = copy.deepcopy(spec)
    for c in s.get("containers") or ():
        image = c.get("image", "")
        tag = image.rsplit("/", 1)[-1]
        latest = ":" not in tag or tag.endswith(":latest")
        c.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
        c.setdefault("resources", {})
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
        for p in c.get("ports") or ():
            p.setdefault("protocol", "TCP")
    s.setdefault("dnsPolicy", "ClusterFirst")
    s.setdefault("restartPolicy", "Always")
    s.setdefault("schedulerName", "default-scheduler")
    s.setdefault("securityContext", {})
    s.setdefault("terminationGracePeriodSeconds", 30)
    if pod:
        s.setdefault("enableServiceLinks", True)
        s.setdefault("preemptionPolicy", "PreemptLowerPriority")
        s.setdefault("priority", 0)
        s.setdefault("tolerations", copy.deepcopy(NOT_READY_TOLERATIONS))
    return s


def template(t: dict) -> dict:
    t = copy.deepcopy(t)
    t.setdefault("metadata", {})["creationTimestamp"] = None
    t["spec"] = pod_spec(t.get("spec") or {}, pod=False)
    return t


def deployment_spec(spec: dict) -> dict:
    s = copy.deepcopy(spec)
    s.setdefault("replicas", 1)
    s.setdefault("progressDeadlineSeconds", 600)
    s.setdefault("revisionHistoryLimit", 10)
    s.setdefault("strategy", {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
                              "type": "RollingUpdate"})
    s["template"] = template(s.get("template") or {})
    return s


def replicaset_spec(spec: dict) -> dict:
    s = copy.deepcopy(spec)
    s.setdefault("replicas", 1)
    s["template"] = template(s.get("template") or {})
    return s


def service_spec(spec: dict) -> dict:
    s = copy.deepcopy(spec)
    s.setdefault("type", "ClusterIP")
    s.setdefault("sessionAffinity", "None")
    if s.get("clusterIP") and "clusterIPs" not in s:
        s["clusterIPs"] = [s["clusterIP"]]
    for p in s.get("ports") or ():
        p.setdefault("protocol", "TCP")
        p.setdefault("targetPort", p.get("port"))
    if s["type"] in ("NodePort", "LoadBalancer"):
        s.setdefault("externalTrafficPolicy", "Cluster")
    return s

"""The Online Boutique workload on a real API server, as the controllers of a full cluster
would hold it: the bundled kube-apiserver (1.20, no controller-manager, scheduler or
kubelet) creates no ReplicaSet for a Deployment, binds and starts no pod and fills no
Endpoints, so :func:`create_workload` writes those objects itself, through the
``kubernetes`` Python client:

* per app a Deployment, its ReplicaSet (``ownerReferences`` to the Deployment, as the
  deployment controller sets them) and the pod (bound to ``netarena-control-plane``, owned
  by the ReplicaSet), each with the status its controller or kubelet would report for one
  ready replica (``/status`` subresource);
* the Services at the addresses :func:`~netarena_gym.k8s.workload.service_addresses` gives
  (the server allocates others when those are taken: then ``CLUSTER-IP`` differs from the
  simulator's), and their Endpoints.

It creates only objects that are missing, by the workload's names, in the env's namespace;
nothing updates them later (an agent relabelling a pod does not change the Endpoints, on
either backend). The simulator builds the same objects (:mod:`netarena_gym.k8s.cluster`).
"""
from __future__ import annotations

import copy
import json

from netarena_gym.k8s.workload import (
    NODE_NAME, deployment_manifests, deployment_status, endpoints_manifest, load_workload,
    pod_ips, pod_owner, pod_status, replicaset_status, service_addresses)


def _when(obj) -> str:
    return obj.metadata.creation_timestamp.strftime("%Y-%m-%dT%H:%M:%SZ")


def create_workload(api_client, ns: str, timeout: float) -> list[tuple[str, str, str]]:
    """Creates what is missing and returns ``(kind, name, uid)`` of each object it created,
    for :func:`delete_workload`. Every call waits ``timeout`` seconds at most."""
    from kubernetes import client
    from kubernetes.client.rest import ApiException
    core, apps = client.CoreV1Api(api_client), client.AppsV1Api(api_client)
    t = {"_request_timeout": timeout}
    made: list[tuple[str, str, str]] = []

    def items(call) -> list:
        return json.loads(call(ns, _preload_content=False, **t).data)["items"]

    def names(call) -> set:
        return {o["metadata"]["name"] for o in items(call)}

    def keep(kind: str, obj):
        made.append((kind, obj.metadata.name, obj.metadata.uid))
        return obj

    wl = load_workload()
    have_dep = names(apps.list_namespaced_deployment)
    have_rs = names(apps.list_namespaced_replica_set)
    have_pod = names(core.list_namespaced_pod)
    pods = wl.pod_manifests()
    for pod, (dep, rs), ip in zip(pods, deployment_manifests(pods), pod_ips()):
        app, rs_name = dep["metadata"]["name"], rs["metadata"]["name"]
        if app not in have_dep:
            made_dep = keep("Deployment", apps.create_namespaced_deployment(ns, dep, **t))
            apps.patch_namespaced_deployment_status(
                app, ns, {"status": deployment_status(rs_name, _when(made_dep))}, **t)
        if rs_name not in have_rs:
            rs["metadata"]["ownerReferences"][0]["uid"] = apps.read_namespaced_deployment(
                app, ns, **t).metadata.uid
            keep("ReplicaSet", apps.create_namespaced_replica_set(ns, rs, **t))
            apps.patch_namespaced_replica_set_status(rs_name, ns, {"status": replicaset_status()},
                                                     **t)
        if app not in have_pod:
            pod = copy.deepcopy(pod)
            pod["spec"]["nodeName"] = NODE_NAME
            pod["metadata"]["ownerReferences"] = pod_owner(
                rs_name, apps.read_namespaced_replica_set(rs_name, ns, **t).metadata.uid)
            made_pod = keep("Pod", core.create_namespaced_pod(ns, pod, **t))
            core.patch_namespaced_pod_status(app, ns, {"status": pod_status(pod, ip, _when(made_pod))},
                                             **t)
    have_svc = names(core.list_namespaced_service)
    addresses = service_addresses(ns)
    for svc in wl.service_manifests():
        name = svc["metadata"]["name"]
        if name in have_svc:
            continue
        ip, node_ports = addresses[name]
        fixed = copy.deepcopy(svc)
        fixed["spec"]["clusterIP"] = ip
        for p, port in zip(fixed["spec"].get("ports") or (), node_ports or ()):
            p["nodePort"] = port
        try:
            keep("Service", core.create_namespaced_service(ns, fixed, **t))
        except ApiException as e:
            if e.status != 422:  # 422: the address or node port is taken; the server chooses
                raise
            keep("Service", core.create_namespaced_service(ns, svc, **t))
    live = items(core.list_namespaced_pod)
    have_ep = names(core.list_namespaced_endpoints)
    for svc in items(core.list_namespaced_service):
        if svc["metadata"]["name"] not in have_ep:
            keep("Endpoints", core.create_namespaced_endpoints(ns, endpoints_manifest(svc, live), **t))
    return made


def delete_workload(api_client, ns: str, made: list[tuple[str, str, str]], timeout: float) -> None:
    """Deletes the objects :func:`create_workload` recorded, newest first, each by its name
    with its uid as a precondition (an object of that name made since by somebody else is
    left alone; one already gone is skipped). The bundled server runs no garbage collector,
    so owned objects (pods of a ReplicaSet) are deleted one by one, as recorded."""
    from kubernetes import client
    from kubernetes.client.rest import ApiException
    core, apps = client.CoreV1Api(api_client), client.AppsV1Api(api_client)
    calls = {"Deployment": apps.delete_namespaced_deployment,
             "ReplicaSet": apps.delete_namespaced_replica_set,
             "Pod": core.delete_namespaced_pod, "Service": core.delete_namespaced_service,
             "Endpoints": core.delete_namespaced_endpoints}
    for kind, name, uid in reversed(made):
        try:
            calls[kind](name, ns, body={"preconditions": {"uid": uid}}, _request_timeout=timeout,
                        _preload_content=False)  # the answer's shape differs by server version
        except ApiException as e:
            if e.status not in (404, 409):  # gone, or a new object of that name (not ours)
                raise

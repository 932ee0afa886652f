"""The policy engine's layout of a probe set over a cluster's pods and Services: the slots
(each destination pod, port and protocol a probe or DNS lookup reaches), each probe
destination resolved to its endpoint slots, and per probe its row and source column (see
:mod:`netarena_gym.k8s.grader`)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from netarena_gym.k8s.grader_world import Pods, select_pods

DNS_PORT = 53


@dataclass
class Target:
    """A probe destination resolved to pods: [(pod index, port number)]; empty when the
    Service is missing or has no endpoints."""
    endpoints: list


def build_layout(pods: Pods, services_list: list, probes: tuple, namespace: str,
                 dns_labels: dict, dns_namespace: str) -> tuple:
    """(slots, slots by pod, per target its endpoint slots, DNS slots, per probe its
    target row and source column, pod count) of ``probes`` from pods of ``namespace`` to
    its Services, with DNS to the pods labelled ``dns_labels`` in ``dns_namespace``."""
    src_of = {name: i for i, (name, ns) in enumerate(zip(pods.names, pods.ns))
              if ns == namespace}
    services = {}
    for sv in services_list:
        md = sv.get("metadata") or {}
        if (md.get("namespace") or "default") == namespace:
            services[md.get("name")] = sv
    slot_of: dict = {}

    def slot(key):
        if key not in slot_of:
            slot_of[key] = len(slot_of)
        return slot_of[key]

    index: dict[tuple[str, int], int] = {}
    targets: list = []
    n = len(pods.names)
    probe_target = np.empty(len(probes), dtype=np.intp)
    probe_src = np.empty(len(probes), dtype=np.intp)
    for k, pr in enumerate(probes):
        key = (pr.service, pr.port)
        if key not in index:
            index[key] = len(targets)
            eps = target(pods, namespace, services.get(pr.service), pr.port).endpoints
            targets.append(tuple(slot((d, num, "TCP")) for d, num in eps))
        probe_target[k] = index[key]
        probe_src[k] = src_of.get(pr.source, n)
    missing = probe_src == n
    probe_target[missing] = len(targets)  # the all-False row
    dns_pods = select_pods({"matchLabels": dns_labels}, pods.ns_mask.get(dns_namespace, 0),
                           pods.label_index, pods.key_index)
    dns_slots = []
    while dns_pods:
        low = dns_pods & -dns_pods
        dns_slots.append(slot((low.bit_length() - 1, DNS_PORT, "UDP")))
        dns_pods ^= low
    slots = tuple(slot_of)
    by_pod: dict = {}
    for s, (d, _, _) in enumerate(slots):
        by_pod.setdefault(d, []).append(s)
    return slots, by_pod, targets, dns_slots, probe_target, probe_src, n

def target(pods: Pods, namespace: str, svc: dict | None, port: int) -> Target:
    """The endpoints of Service ``svc`` (None: missing) for ``port``/TCP."""
    if svc is None:
        return Target([])
    spec = svc.get("spec") or {}
    sp = None
    for p in spec.get("ports") or ():
        if p.get("port") == port and (p.get("protocol") or "TCP") == "TCP":
            sp = p
            break
    sel = spec.get("selector")
    if sp is None or not sel:
        return Target([])
    members = select_pods({"matchLabels": sel}, pods.ns_mask.get(namespace, 0),
                          pods.label_index, pods.key_index)
    tp = sp.get("targetPort", port)
    eps = []
    while members:
        low = members & -members
        i = low.bit_length() - 1
        members ^= low
        if isinstance(tp, str) and not tp.isdigit():
            num = pods.ports[i].get((tp, "TCP"))
            if num is None:
                continue  # this pod does not expose the named port: not an endpoint
        else:
            num = int(tp)
        eps.append((i, num))
    return Target(eps)

"""A generated microservice app of 100+ services beside Online Boutique, for scale: the
same shape of data as :func:`~netarena_gym.k8s.workload.load_workload` gives (one Pod per
app, its Service, one baseline NetworkPolicy per app, the intended connectivity and the
``full`` probe set), drawn from a seed.

The app is a layered call graph, as large microservice deployments are: a ``loadgen``
client (no Service, egress only) calls the ``gateway``, which calls six services of the
first tier, each service calls 1-4 services of deeper tiers (and every service has a
caller), and the last tier (the datastores) calls nothing. Every baseline policy selects its app,
isolates both directions, admits its callers on the Service's target port (the pod's one
container port, named ``grpc``) and allows all egress, as Online Boutique's policies do. Nothing here is a real app's manifest: names, ports and calls are drawn.

Used by ``benchmarks/bench_speed.py`` (incremental evaluation per changed policy at this
size) and ``tests/k8s/test_workload_large.py``; see docs/envs/k8s.md, "Large apps".
"""
from __future__ import annotations

from functools import lru_cache

from netarena_gym.core.seeding import rng_from_seed
from netarena_gym.k8s.workload import NETWORKING, Probe, ProbeSet, Workload, load_workload

PORT_POOL = (3550, 5000, 5050, 6379, 7000, 7070, 8080, 9090, 9555, 50051)
TIERS = 5


def _pod(app: str, port: int | None) -> dict:
    container = {"name": "server", "image": "busybox:1.36",
                 "command": ["httpd", "-f", "-p", str(port or 8080)]}
    if port is not None:
        container["ports"] = [{"name": "grpc", "containerPort": port}]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": app, "labels": {"app": app}},
            "spec": {"containers": [container], "terminationGracePeriodSeconds": 0}}


def _service(app: str, port: int) -> dict:
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": app},
            "spec": {"type": "ClusterIP", "selector": {"app": app},
                     "ports": [{"name": "grpc", "port": port, "targetPort": port}]}}


def _policy(app: str, callers: list[str], port, has_service: bool) -> dict:
    spec: dict = {"podSelector": {"matchLabels": {"app": app}}}
    if not has_service:
        spec["policyTypes"] = ["Egress"]
    else:
        spec["policyTypes"] = ["Ingress", "Egress"]
        spec["ingress"] = [{"from": [{"podSelector": {"matchLabels": {"app": c}}} for c in callers],
                            "ports": [{"port": port, "protocol": "TCP"}]}] if callers else []
    spec["egress"] = [{}]
    return {"apiVersion": NETWORKING, "kind": "NetworkPolicy", "metadata": {"name": app},
            "spec": spec}


@lru_cache(maxsize=4)
def generate_workload(services: int = 120, seed: int = 0) -> Workload:
    """The generated app with ``services`` Services (>= 2; apps: those plus ``loadgen``),
    deterministic per ``(services, seed)``."""
    if services < 2:
        raise ValueError("a generated app needs at least 2 services")
    r = rng_from_seed(seed)
    names = ["gateway"] + [f"svc-{i:03d}" for i in range(1, services)]
    tier = {"gateway": 0}
    for i, n in enumerate(names[1:]):
        tier[n] = 1 + (i * (TIERS - 1)) // max(1, services - 1)
    port = {n: int(PORT_POOL[int(r.integers(len(PORT_POOL)))]) for n in names}
    port["gateway"] = 80
    calls: dict[str, list[str]] = {}
    for n in names:
        deeper = [m for m in names if tier[m] > tier[n]]
        if not deeper:
            calls[n] = []
            continue
        k = min(len(deeper), int(r.integers(1, 5)) if n != "gateway" else 6)
        near = [m for m in deeper if tier[m] == tier[n] + 1] or deeper
        picks = {near[int(r.integers(len(near)))]}
        while len(picks) < k:
            picks.add(deeper[int(r.integers(len(deeper)))])
        calls[n] = sorted(picks)
    called = {m for v in calls.values() for m in v}
    for n in names[1:]:  # every service has a caller in the tier above (no dead services)
        if n not in called:
            above = [m for m in names if tier[m] == tier[n] - 1]
            calls[above[int(r.integers(len(above)))]].append(n)
    calls = {n: sorted(v) for n, v in calls.items()}
    calls["loadgen"] = ["gateway"]
    apps = tuple(names + ["loadgen"])
    callers = {n: sorted(a for a in apps if n in calls[a]) for n in names}
    pods = tuple(_pod(a, port.get(a)) for a in apps)
    svcs = tuple(_service(n, port[n]) for n in names)
    policies = tuple((f"network-policy-{a}", _policy(
        a, callers.get(a, []), port.get(a),
        a != "loadgen")) for a in apps)
    allowed = {a: frozenset(calls[a]) for a in apps}
    probes, expected = [], []
    for src in apps:
        for svc in names:
            if svc != src:
                probes.append(Probe(src, svc, port[svc]))
                expected.append(svc in allowed[src])
    full = ProbeSet("full", tuple(probes), tuple(expected))
    return Workload(pods=pods, services=svcs, policies=policies, apps=apps,
                    service_apps=tuple(names),
                    target_ports={n: (port[n], port[n]) for n in names},
                    allowed=allowed, probe_sets={"full": full})


def random_edit(policy: dict, apps: tuple[str, ...], rng) -> dict:
    """A new body for ``policy`` (an object as the store holds it), one edit away: a caller
    dropped from or added to its first ingress rule, or its ports widened to all; used to
    drive the engine one changed policy at a time (benchmark and tests)."""
    spec = policy.get("spec") or {}
    body = {"metadata": {"name": policy["metadata"]["name"]},
            "spec": {k: v for k, v in spec.items()}}
    rules = [dict(r) for r in spec.get("ingress") or ()]
    if not rules:
        rules = [{"from": []}]
    first = rules[0]
    peers = list(first.get("from") or ())
    kind = int(rng.integers(3))
    if kind == 0 and peers:
        peers.pop(int(rng.integers(len(peers))))
    elif kind == 1 or not peers:
        peers.append({"podSelector": {"matchLabels": {"app": apps[int(rng.integers(len(apps)))]}}})
    else:
        first.pop("ports", None)
    first["from"] = peers
    rules[0] = first
    body["spec"]["ingress"] = rules
    return body


APPS = ("boutique", "large")
LARGE_SERVICES, LARGE_SEED = 120, 0


def workload_for(app: str = "boutique") -> Workload:
    """The app an env runs: ``"boutique"`` (Online Boutique, the package data) or
    ``"large"`` (:func:`generate_workload` with 120 services, seed 0)."""
    if app == "boutique":
        return load_workload()
    if app == "large":
        return generate_workload(LARGE_SERVICES, LARGE_SEED)
    raise ValueError(f"app must be one of {APPS}, got {app!r}")

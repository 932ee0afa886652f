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

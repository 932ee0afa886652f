"""Fixed-size numeric observation of the Kubernetes task (the discrete interface): the
intended and the actual outcome of every probe, and per policy slot (the apps' policies,
then extra ones) a feature row and the set of apps its ingress rules name as peers. The
discrete interface reads the policy objects directly (a dashboard's view)."""
from __future__ import annotations

import numpy as np
from gymnasium import spaces

from netarena_gym.k8s.catalogue import EXTRA_SLOTS
from netarena_gym.k8s.workload import ProbeSet, Workload

POLICY_FEATURES = ("present", "selects_own_app", "selects_nothing_known", "ingress_isolated",
                   "egress_isolated", "ingress_rules", "rule_without_ports", "port_matches_target",
                   "non_tcp_protocol", "named_port", "egress_allow_all", "namespace_selector")


def feature_spaces(wl: Workload, probes: ProbeSet) -> dict:
    slots = len(wl.apps) + EXTRA_SLOTS
    n = len(probes)
    return {"expected": spaces.MultiBinary(n), "actual": spaces.MultiBinary(n),
            "policy_features": spaces.Box(0.0, 1.0, (slots, len(POLICY_FEATURES)), np.float32),
            "policy_peers": spaces.MultiBinary([slots, len(wl.apps)])}


class FeatureBuilder:
    def __init__(self, wl: Workload, probes: ProbeSet):
        self.wl, self.probes = wl, probes
        self.expected = np.array(probes.expected, dtype=np.int8)
        self.slots = len(wl.apps) + EXTRA_SLOTS
        self._cache: dict[str, tuple] = {}
        self.app_index = {a: i for i, a in enumerate(wl.apps)}

    def clear(self) -> None:
        """Forget cached rows: resourceVersions restart with every episode's store."""
        self._cache.clear()

    def arrays(self, actual: np.ndarray, policies: dict[str, dict]) -> dict:
        feats = np.zeros((self.slots, len(POLICY_FEATURES)), np.float32)
        peers = np.zeros((self.slots, len(self.wl.apps)), np.int8)
        extras = sorted(n for n in policies if n not in self.app_index)[:EXTRA_SLOTS]
        for slot, name in [(i, a) for i, a in enumerate(self.wl.apps)] + \
                [(len(self.wl.apps) + k, n) for k, n in enumerate(extras)]:
            obj = policies.get(name)
            if obj is None:
                continue
            rv = obj["metadata"].get("resourceVersion")
            hit = self._cache.get(name)
            if hit is None or hit[0] != rv:
                hit = self._cache[name] = (rv,) + self._row(name, obj)
            feats[slot], peers[slot] = hit[1], hit[2]
        return {"expected": self.expected.copy(), "actual": actual.astype(np.int8),
                "policy_features": feats, "policy_peers": peers}

    def _row(self, name: str, obj: dict):
        spec = obj.get("spec") or {}
        f = np.zeros(len(POLICY_FEATURES), np.float32)
        p = np.zeros(len(self.wl.apps), np.int8)
        sel = spec.get("podSelector") or {}
        ml = sel.get("matchLabels") or {}
        f[0] = 1.0
        f[1] = float(ml == {"app": name} and not sel.get("matchExpressions"))
        f[2] = float(bool(ml) and ml.get("app") not in self.app_index)
        types = spec.get("policyTypes") or []
        f[3] = float("Ingress" in types)
        f[4] = float("Egress" in types)
        ingress = spec.get("ingress") or []
        f[5] = min(len(ingress), 4) / 4.0
        tp = self.wl.target_ports.get(name)
        for r in ingress:
            ports = r.get("ports") or []
            if not ports:
                f[6] = 1.0
            for q in ports:
                if tp is not None and q.get("port") == tp[1]:
                    f[7] = 1.0
                if q.get("protocol", "TCP") != "TCP":
                    f[8] = 1.0
                if isinstance(q.get("port"), str):
                    f[9] = 1.0
            for peer in r.get("from") or ():
                a = ((peer.get("podSelector") or {}).get("matchLabels") or {}).get("app")
                if a in self.app_index:
                    p[self.app_index[a]] = 1
                if "namespaceSelector" in peer:
                    f[11] = 1.0
        f[10] = float(spec.get("egress") == [{}])
        return f, p

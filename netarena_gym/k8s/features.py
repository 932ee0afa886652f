"""Fixed-size numeric observation of the Kubernetes task (the discrete interface): the
intended and the actual outcome of every probe, and per policy slot (the apps' policies,
then extra ones) a feature row and the set of apps its ingress rules name as peers. The
discrete interface reads the policy objects directly (a dashboard's view)."""
from __future__ import annotations

import numpy as np
from gymnasium import spaces

from netarena_gym.k8s.catalogue import EXTRA_SLOTS, changed_names
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


_NONE = object()  # no policy in this slot
MAX_CACHED = 4096  # (policy name, spec) rows kept


class FeatureBuilder:
    def __init__(self, wl: Workload, probes: ProbeSet):
        self.wl, self.probes = wl, probes
        self.expected = np.array(probes.expected, dtype=np.int8)
        self.slots = len(wl.apps) + EXTRA_SLOTS
        self._cache: dict[str, tuple] = {}
        self.app_index = {a: i for i, a in enumerate(wl.apps)}

    def clear(self) -> None:
        """Forget cached rows. Never needed for correctness: a row is keyed by its spec
        object (stored specs are never changed in place; the cache keeps the spec alive),
        so rows stay valid across episodes; the cache is emptied past ``MAX_CACHED`` rows."""
        self._cache.clear()
        self._feats = np.zeros((self.slots, len(POLICY_FEATURES)), np.float32)
        self._peers = np.zeros((self.slots, len(self.wl.apps)), np.int8)
        self._slot_spec: list = [_NONE] * self.slots
        self._seen: dict = {}                # name -> policy object at the last call
        self._extras: list | None = None     # the extra policies' names in their slots

    def arrays(self, actual: np.ndarray, policies: dict[str, dict]) -> dict:
        """The arrays for these policies: a row is recomputed when its policy's spec is a
        new object (stored specs are never changed in place), the rest are kept; when the
        names are those of the last call, only the slots of policies that are new objects
        are looked at."""
        if not hasattr(self, "_feats"):
            self.clear()
        changed = changed_names(self._seen, policies)
        self._seen = dict(policies)
        if changed is not None and self._extras is not None:
            # the same names: only the changed ones' slots (the extras keep theirs)
            for name in changed:
                slot = self.app_index.get(name)
                if slot is None and name in self._extras:
                    slot = len(self.wl.apps) + self._extras.index(name)
                if slot is not None:
                    self._update(slot, name, policies[name])
        else:
            extras = sorted(n for n in policies if n not in self.app_index)[:EXTRA_SLOTS]
            self._extras = extras
            names = list(self.wl.apps) + extras + [None] * (EXTRA_SLOTS - len(extras))
            for slot, name in enumerate(names):
                self._update(slot, name, policies.get(name) if name is not None else None)
        feats, peers = self._feats, self._peers
        return {"expected": self.expected.copy(), "actual": actual.astype(np.int8),
                "policy_features": feats.copy(), "policy_peers": peers.copy()}

    def _update(self, slot: int, name: str | None, obj: dict | None) -> None:
        feats, peers, slot_spec = self._feats, self._peers, self._slot_spec
        spec = _NONE if obj is None else obj.get("spec")
        old = slot_spec[slot]
        if old is not _NONE and old[0] == name and old[1] is spec:
            return
        if obj is None:
            if old is not _NONE:
                feats[slot], peers[slot] = 0, 0
                slot_spec[slot] = _NONE
            return
        key = (name, id(spec))
        hit = self._cache.get(key)
        if hit is None or hit[0] is not spec:
            if len(self._cache) >= MAX_CACHED:
                self._cache.clear()
            hit = self._cache[key] = (spec,) + self._row(name, obj)
        feats[slot], peers[slot] = hit[1], hit[2]
        slot_spec[slot] = (name, spec)

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

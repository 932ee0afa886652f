"""Seeded scenario generation for the Kubernetes task: levels, the upstream ``compat``
preset, and import of upstream ``error_config`` files.

* **1**: one fault of any type but ``deny_all``;
* **2**: two faults of different types (``deny_all`` comes with a fault that takes a pod's
  own policy away from it, or it would change nothing);
* **3**: three or four faults, at least one of the new types, possibly on the same policy;
* **compat**: upstream's 15 categories (5 single types and their 10 pairs), upstream's
  choices of targets and peers, upstream's 92 probes.

Every scenario is checked with the policy engine: at least one probe mismatches, every
fault edits its policy, and a ``deny_all`` changes the outcome. The scenario records every
parameter, so it replays without the seed.
"""
from __future__ import annotations

import copy
import itertools
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from netarena_gym.core.scenario import Scenario, category_name, parse_category
from netarena_gym.errors import InvalidConfig, ScenarioError
from netarena_gym.core.seeding import choice, draw_seed, rng_from_seed, sample
from netarena_gym.k8s.state_patches import clone
from netarena_gym.k8s.faults import NEW_TYPES, TYPES, UPSTREAM_TYPES, apply_fault
from netarena_gym.k8s.cluster import BaseCluster, base_cluster
from netarena_gym.k8s.workload import load_workload
from netarena_gym.k8s.workload_large import workload_for

MAX_RESAMPLES = 200
CHECKED_MAX = 4096  # fault lists whose check a base cluster keeps
FAULTED_MAX = 4096  # (manifest, fault) edits a base cluster keeps
LEVELS = (1, 2, 3, "compat")
COMPAT_CATEGORIES = tuple([(t,) for t in UPSTREAM_TYPES] + list(itertools.combinations(UPSTREAM_TYPES, 2)))

# upstream's candidate peers (detail_range) and targets
ADD_INGRESS_PEERS = {
    "adservice": ["recommendationservice", "productcatalogservice", "cartservice", "checkoutservice",
                  "emailservice", "shippingservice"],
    "recommendationservice": ["adservice", "productcatalogservice", "cartservice", "checkoutservice",
                              "emailservice", "shippingservice"],
    "productcatalogservice": ["adservice", "recommendationservice", "cartservice", "emailservice",
                              "shippingservice"],
    "redis-cart": ["adservice", "recommendationservice", "productcatalogservice", "cartservice",
                   "emailservice", "shippingservice"],
    "checkoutservice": ["adservice", "recommendationservice", "productcatalogservice", "cartservice",
                        "emailservice", "shippingservice"],
    "shippingservice": ["adservice", "recommendationservice", "productcatalogservice", "cartservice",
                        "emailservice"],
    "currencyservice": ["adservice", "recommendationservice", "productcatalogservice", "cartservice",
                        "emailservice", "shippingservice"],
    "paymentservice": ["frontend", "adservice", "recommendationservice", "productcatalogservice",
                       "cartservice", "emailservice", "shippingservice"],
    "emailservice": ["loadgenerator", "frontend", "adservice", "recommendationservice",
                     "productcatalogservice", "cartservice", "shippingservice"],
    "cartservice": ["adservice", "recommendationservice", "productcatalogservice", "emailservice",
                    "shippingservice"],
    "frontend": ["adservice", "recommendationservice", "productcatalogservice", "cartservice",
                 "checkoutservice", "emailservice", "shippingservice"],
}
ADD_EGRESS_PEERS = {
    "recommendationservice": ["adservice", "cartservice", "checkoutservice", "paymentservice",
                              "emailservice", "shippingservice", "currencyservice", "redis-cart"],
    "checkoutservice": ["adservice", "recommendationservice", "productcatalogservice", "cartservice",
                        "paymentservice", "emailservice", "shippingservice", "currencyservice",
                        "redis-cart"],
    "cartservice": ["adservice", "recommendationservice", "productcatalogservice", "checkoutservice",
                    "paymentservice", "emailservice", "shippingservice", "currencyservice"],
    "frontend": ["adservice", "recommendationservice", "productcatalogservice", "cartservice",
                 "checkoutservice", "paymentservice", "emailservice", "shippingservice",
                 "currencyservice", "resid-cart"],
}
TARGETS = ("adservice", "cartservice", "checkoutservice", "currencyservice", "emailservice",
           "paymentservice", "productcatalogservice", "recommendationservice", "redis-cart",
           "shippingservice")
REMOVE_INGRESS_COMPAT = ("adservice", "recommendationservice", "productcatalogservice",
                         "cartservice", "checkoutservice", "shippingservice", "currencyservice",
                         "paymentservice", "emailservice")
UNISOLATING = ("wrong_selector", "policy_types")
PORT_NAMES = ("http", "grpc", "tcp", "grpc-web", "metrics", "web")
WRONG_NAMESPACES = ("production", "prod", "staging", "boutique", "shop")
DENY_NAMES = ("default-deny", "deny-all", "default-deny-all")


def _typo(rng, word: str) -> str:
    i = int(rng.integers(0, len(word) - 1))
    kind = int(rng.integers(0, 3))
    if kind == 0:
        return word[:i] + word[i + 1:]
    if kind == 1:
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    return word + "-v2"


@dataclass
class Generated:
    scenario: Scenario
    policies: dict  # the faulty manifests by name (shared between equal fault lists: never change them)


class K8sGenerator:
    """Draws scenarios for one level on a probe set (``"full"`` or ``"compat"``)."""

    def __init__(self, level=1, *, probes: str | None = None, namespace: str = "default",
                 fault_types: tuple[str, ...] | None = None, app: str = "boutique"):
        if level not in LEVELS:
            raise InvalidConfig(f"level must be one of {LEVELS}")
        self.level = level
        self.probes = probes or ("compat" if level == "compat" else "full")
        if self.probes not in ("full", "compat"):
            raise InvalidConfig("probes must be 'full' or 'compat'")
        if app != "boutique" and (level == "compat" or self.probes != "full"):
            raise InvalidConfig("compat (level and probes) is upstream's Online Boutique only")
        self.namespace = namespace
        self.app = app
        self.wl = workload_for(app)
        self.base: BaseCluster = base_cluster(namespace, self.probes, app)
        # where faults go: upstream's Online Boutique targets, or every app with a Service
        self.targets = TARGETS if app == "boutique" else self.wl.service_apps
        self._port_names = {} if app == "boutique" else {
            p["metadata"]["name"]: {cp["name"] for c in p["spec"]["containers"]
                                    for cp in c.get("ports") or () if cp.get("name")}
            for p in self.wl.pods}
        allowed = TYPES if level != "compat" else UPSTREAM_TYPES
        if fault_types is not None:
            bad = set(fault_types) - set(TYPES)
            if bad:
                raise InvalidConfig(f"unknown fault types {sorted(bad)}; known: {TYPES}")
            allowed = tuple(t for t in allowed if t in fault_types)
            if not allowed:
                raise InvalidConfig("no fault type left for this level")
        self.types = allowed

    # --------------------------------------------------------------------- public
    def sample(self, rng: np.random.Generator,
               category: int | str | None = None) -> Generated:
        seed = draw_seed(rng)
        r = rng_from_seed(seed)
        for _ in range(MAX_RESAMPLES):
            types = self._draw_types(r, category)
            faults = [self._draw_fault(r, t) for t in types]
            faults = self._companions(r, faults)
            if faults is None:
                continue
            pols = self.check(faults)
            if pols is not None:
                params = {"namespace": self.namespace, "probes": self.probes}
                if self.app != "boutique":  # Online Boutique's records stay as they were
                    params["app"] = self.app
                sc = Scenario(task="k8s", level=self.level, params=params,
                              faults=tuple(faults), seed=seed,
                              meta={"category": category_name([f["type"] for f in faults])})
                return Generated(sc, pols)
        raise ScenarioError("could not draw an observable scenario; loosen fault_types")

    def check(self, faults: list[dict]) -> dict | None:
        """The faulty manifests when the faults are valid and observable, else None. The
        answer is kept per fault list (in the base cluster, shared by the generators of a
        process): the manifests are then shared, never to be changed (copy one to edit)."""
        key = repr(faults)
        memo = self.base.checked
        if key in memo:
            hit = memo[key]
            return None if hit is None else dict(hit)
        pols = self._check(faults)
        if len(memo) >= CHECKED_MAX:
            memo.clear()
        memo[key] = pols
        if pols is None:
            return None
        for m in pols.values():
            self.base.share(m)
        return dict(pols)

    def _check(self, faults: list[dict]) -> dict | None:
        pols = self.wl.shared_policy_manifests()
        for f in faults:
            key = f.get("policy", f.get("name"))
            before = pols.get(key)
            after = self._faulted(before, f)
            if after is None:
                return None
            pols[key] = after
            if after == before and json.dumps(after, sort_keys=True) == json.dumps(before, sort_keys=True):
                return None
        ok = self.base.outcomes(pols)
        if ok.all():
            return None
        for i, f in enumerate(faults):
            if f["type"] == "deny_all":
                without = self.wl.shared_policy_manifests()
                for j, g in enumerate(faults):
                    if j != i:
                        k = g.get("policy", g.get("name"))
                        without[k] = self._faulted(without.get(k), g)
                        if without[k] is None:
                            raise ValueError(f"fault {g} does not apply without {f}")
                if (self.base.outcomes(without) == ok).all():
                    return None
        return pols

    def _faulted(self, before: dict | None, f: dict) -> dict | None:
        """The manifest that fault ``f`` makes of ``before`` (the manifest it edits; None:
        none of that name), or None when the fault does not apply. Kept per (manifest,
        fault) in the base cluster (``faulted``) and shared, never to be changed: the same
        edit of the same manifest gives the same object, so the caches keyed by identity
        (engine, store, catalogue, features) hit across fault lists."""
        memo = self.base.faulted
        mkey = (id(before), repr(f))
        hit = memo.get(mkey)
        if hit is None or hit[0] is not before:
            key = f.get("policy", f.get("name"))
            one = {} if before is None else {key: clone(before)}
            try:
                apply_fault(one, f)
                after = one.get(key)
            except (ValueError, KeyError):
                after = None
            if len(memo) >= FAULTED_MAX:
                memo.clear()
            hit = memo[mkey] = (before, after)  # keeps ``before`` (its id is the key) alive
            if after is not None:
                self.base.share(after)
        return hit[1]

    # -------------------------------------------------------------------- drawing
    def _draw_types(self, r, category: int | str | None) -> tuple[str, ...]:
        if category is not None:
            return parse_category(category, TYPES, COMPAT_CATEGORIES)
        if self.level == "compat":
            return choice(r, [c for c in COMPAT_CATEGORIES if all(t in self.types for t in c)])
        if self.level == 1:
            return (choice(r, [t for t in self.types if t != "deny_all"] or list(self.types)),)
        if self.level == 2:
            return tuple(sample(r, list(self.types), 2))
        n = int(r.integers(3, 5))
        types = [choice(r, list(self.types)) for _ in range(n)]
        news = [t for t in self.types if t in NEW_TYPES]
        if news and not any(t in NEW_TYPES for t in types):
            types[int(r.integers(0, n))] = choice(r, news)
        return tuple(types)

    def _companions(self, r, faults: list[dict]) -> list[dict] | None:
        """``deny_all`` needs a fault that un-isolates a pod; swap one in when missing."""
        if not any(f["type"] == "deny_all" for f in faults):
            return faults
        if any(f["type"] in UNISOLATING for f in faults):
            return faults
        comp = [t for t in UNISOLATING if t in self.types]
        if not comp:
            return None
        for i, f in enumerate(faults):
            if f["type"] != "deny_all":
                faults[i] = self._draw_fault(r, choice(r, comp))
                return faults
        return None  # deny_all alone cannot be observed

    def _draw_fault(self, r, t: str) -> dict:
        compat = self.level == "compat"
        if t == "remove_ingress":
            pol = choice(r, REMOVE_INGRESS_COMPAT if compat else self.targets)
            return {"type": t, "policy": pol}
        if t == "add_ingress":
            pol = choice(r, tuple(self.targets) + (("frontend",) if compat else ()))
            peers = ADD_INGRESS_PEERS[pol] if self.app == "boutique" else \
                [a for a in self.wl.apps if a != pol]
            return {"type": t, "policy": pol, "apps": sample(r, peers, 2)}
        if t == "change_port":
            pol = choice(r, self.targets)
            return {"type": t, "policy": pol, "port": int(r.integers(1, 65536))}
        if t == "change_protocol":
            return {"type": t, "policy": choice(r, self.targets), "protocol": choice(r, ("UDP", "SCTP"))}
        if t == "add_egress":
            if compat:
                src = choice(r, tuple(ADD_EGRESS_PEERS))
                apps = sample(r, ADD_EGRESS_PEERS[src], 2)
            else:
                src = choice(r, self.wl.apps)
                apps = sample(r, [a for a in self.wl.apps if a != src], 2)
            return {"type": t, "policy": src, "apps": apps}
        if t == "wrong_selector":
            pol = choice(r, self.targets)
            if r.random() < 0.5:
                value = _typo(r, pol)
            else:
                value = choice(r, [a for a in self.wl.apps if a != pol])
            return {"type": t, "policy": pol, "value": value}
        if t in ("remove_peer", "namespace_selector"):
            pols = self.wl.shared_policy_manifests()  # read only
            cands = [p for p in self.targets if pols[p]["spec"].get("ingress")
                     and len(pols[p]["spec"]["ingress"][0]["from"]) >= (2 if t == "remove_peer" else 1)]
            pol = choice(r, cands)
            peers = [x["podSelector"]["matchLabels"]["app"] for x in pols[pol]["spec"]["ingress"][0]["from"]]
            f = {"type": t, "policy": pol, "app": choice(r, peers)}
            if t == "namespace_selector":
                f["labels"] = {"kubernetes.io/metadata.name": choice(r, WRONG_NAMESPACES)}
            return f
        if t == "deny_all":
            return {"type": t, "name": choice(r, DENY_NAMES),
                    "types": list(choice(r, (("Ingress",), ("Ingress", "Egress"))))}
        if t == "policy_types":
            return {"type": t, "policy": choice(r, self.targets), "types": ["Egress"]}
        if t == "wrong_port_name":
            pol = choice(r, self.targets)
            names = [n for n in PORT_NAMES if not (n == "grpc" and pol == "currencyservice")
                     and n not in self._port_names.get(pol, ())]  # a name the pod has is no fault
            return {"type": t, "policy": pol, "name": choice(r, names)}
        raise ValueError(f"unknown fault type {t!r}")


# ------------------------------------------------------------------ upstream import
def _upstream_fault(policy: str, d: dict) -> dict:
    t = d.get("type")
    if t == "remove_ingress":
        return {"type": t, "policy": policy}
    if t == "add_ingress":
        return {"type": t, "policy": policy, "apps": list(d["app"])}
    if t == "change_port":
        return {"type": t, "policy": policy, "port": int(d["new_port"])}
    if t == "change_protocol":
        return {"type": t, "policy": policy, "protocol": d["new_protocol"]}
    if t == "add_egress":
        return {"type": t, "policy": policy, "apps": list(d["app"])}
    raise ValueError(f"unknown upstream error type {t!r}")


def import_upstream(path_or_data, *, namespace: str = "default") -> list[Scenario]:
    """Scenarios from an upstream NetArena error-config file (``{"details": [...]}``), in
    order, at level ``compat`` on the 92 upstream probes. Entries that change nothing
    observable (upstream did not check) are kept and marked ``meta["observable"] = False``."""
    data = path_or_data
    if isinstance(path_or_data, (str, Path)):
        data = json.loads(Path(path_or_data).read_text())
    wl = load_workload()
    base = base_cluster(namespace, "compat")
    out = []
    for i, entry in enumerate(data["details"]):
        files = entry["policies_to_inject"]
        details = entry["error_detail"]
        if len(files) != len(details):
            raise ValueError(f"entry {i}: {len(files)} policies but {len(details)} error details")
        faults = [_upstream_fault(wl.policy_of_file(f), d) for f, d in zip(files, details)]
        pols = wl.policy_manifests()
        for f in faults:
            apply_fault(pols, f)
        observable = not bool(base.outcomes(pols).all())
        out.append(Scenario(task="k8s", level="compat",
                            params={"namespace": namespace, "probes": "compat"},
                            faults=tuple(copy.deepcopy(faults)), seed=None,
                            meta={"category": category_name([d["type"] for d in details]),
                                  "upstream_index": i, "observable": observable}))
    return out

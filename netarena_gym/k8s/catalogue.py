"""The discrete action catalogue of the Kubernetes task: atomic NetworkPolicy edits in fixed
slots (one block per app policy, plus slots for extra policies), each rendering to the
kubectl command an LLM would type (a JSON patch computed from the current policy) and
masked when it would change nothing or its policy is missing.

Per app policy X (apps in intent order), with X's Service target port P:
``inspect X``; ``select app=X``; ``isolate both directions``; ``allow all egress``;
``ingress ports -> P/TCP``; ``drop rules without ports``; ``drop namespaceSelectors``;
``allow S`` and ``disallow S`` for every other app S. Then ``list policies`` and
``delete <extra policy>`` for up to ``EXTRA_SLOTS`` policies not named after an app.
A block is re-rendered only when its policy's spec changes (a new object).
"""
from __future__ import annotations

from itertools import compress
from operator import is_not

import numpy as np

from netarena_gym.core.actions import Catalogue, CatalogueEntry
from netarena_gym.k8s.workload import Workload

EXTRA_SLOTS = 3
BLOCKS_KEPT = 256  # rendered blocks kept per app (one per spec seen)
FIXED = ("inspect", "select own pods", "isolate both directions", "allow all egress",
         "ingress ports to target port", "drop rules without ports", "drop namespaceSelectors")


def size(wl: Workload) -> int:
    n = len(wl.apps)
    return n * (len(FIXED) + 2 * (n - 1)) + 1 + EXTRA_SLOTS


def _json_patch(name: str, ops: list[str]) -> dict:
    return {"command": f"kubectl patch networkpolicy {name} --type=json -p '[{','.join(ops)}]'"}


def _peer_app(peer: dict) -> str | None:
    return ((peer.get("podSelector") or {}).get("matchLabels") or {}).get("app")


def _peer_json(app: str) -> str:
    return '{"podSelector":{"matchLabels":{"app":"%s"}}}' % app


def changed_names(seen: dict, policies: dict) -> list | None:
    """The names whose policy object in ``policies`` is not the one in ``seen`` (name ->
    object, the last call's), or None when the set of names differs."""
    if len(policies) != len(seen) or policies.keys() != seen.keys():
        return None
    # one pass in C: the names whose object is not the one seen, in ``policies``' order
    return list(compress(policies, map(is_not, policies.values(), map(seen.get, policies))))


_MISSING = object()       # the app's policy does not exist
_MISSING_KEY = object()   # the block was never rendered


class CatalogueBuilder:
    def __init__(self, wl: Workload):
        self.wl = wl
        self.block = len(FIXED) + 2 * (len(wl.apps) - 1)
        self._rv: dict[str, object] = {}   # app -> the spec its block was rendered from
        self._cat: Catalogue | None = None
        self._memo: dict = {}   # app -> {id(spec): (spec, rendered block)}
        self._extras: list | None = None
        self._static = {app: self._static_entries(app) for app in wl.apps}
        self._index = {app: i for i, app in enumerate(wl.apps)}
        self._seen: dict = {}   # name -> policy object at the last fill

    def fill(self, cat: Catalogue, policies: dict[str, dict], force: bool = False) -> None:
        """Render the blocks whose policy changed since the last fill of ``cat``: a block is
        a function of its policy's spec alone, and stored specs are never changed in place,
        so the spec object itself (kept here) says whether to re-render. ``force``: rewrite
        every slot (the catalogue was changed elsewhere)."""
        wl = self.wl
        if force or cat is not self._cat:
            self._cat = cat
            self._rv = {}
            self._extras = None
            self._seen = {}
        changed = changed_names(self._seen, policies)
        self._seen = dict(policies)
        partial = (changed is not None and self._extras is not None
                   and all(n in self._index for n in changed))
        # the same names and only app policies changed: the other blocks and the extras stand
        apps = [(self._index[n], n) for n in changed] if partial else enumerate(wl.apps)
        for ai, app in apps:
            obj = policies.get(app)
            spec = _MISSING if obj is None else obj.get("spec")
            if self._rv.get(app, _MISSING_KEY) is spec:
                continue
            self._rv[app] = spec
            base = ai * self.block
            memo = self._memo.setdefault(app, {})
            hit = memo.get(id(spec))
            if hit is None or hit[0] is not spec:
                if len(memo) >= BLOCKS_KEPT:
                    memo.clear()
                block = self._entries(app, obj)
                hit = memo[id(spec)] = (spec, [e for e, _ in block], np.array(
                    [1 if e is not None and v else 0 for e, v in block], np.int8))
            cat.set_block(base, hit[1], hit[2])
        if partial:
            return
        extras = sorted(n for n in policies if n not in self._static)[:EXTRA_SLOTS]
        if extras != self._extras:
            self._extras = extras
            base = len(wl.apps) * self.block
            cat.set(base, CatalogueEntry("list policies", {"command": "kubectl get networkpolicies"},
                                         "inspect"))
            for k in range(EXTRA_SLOTS):
                if k < len(extras):
                    cat.set(base + 1 + k, CatalogueEntry(
                        f"delete {extras[k]}", {"command": f"kubectl delete networkpolicy {extras[k]}"},
                        "delete"))
                else:
                    cat.set(base + 1 + k, None)

    def _static_entries(self, app: str) -> dict:
        tp = self.wl.target_ports.get(app)
        port = None if tp is None else tp[1]
        types = '["Ingress","Egress"]' if port is not None else '["Egress"]'
        e = {"inspect": CatalogueEntry(f"{app}: inspect",
                                       {"command": f"kubectl get networkpolicy {app} -o yaml"}, "inspect"),
             "select": CatalogueEntry(f"{app}: select own pods", _json_patch(app, [
                 '{"op":"add","path":"/spec/podSelector","value":{"matchLabels":{"app":"%s"}}}' % app])),
             "isolate": CatalogueEntry(f"{app}: isolate both directions", _json_patch(app, [
                 '{"op":"add","path":"/spec/policyTypes","value":%s}' % types])),
             "egress": CatalogueEntry(f"{app}: allow all egress", _json_patch(app, [
                 '{"op":"add","path":"/spec/egress","value":[{}]}'])),
             "port": port, "types": ["Ingress", "Egress"] if port is not None else ["Egress"],
             "allow_peer": {}, "allow_rule": {}}
        for s in self.wl.apps:
            if s == app or port is None:
                continue
            e["allow_peer"][s] = CatalogueEntry(f"{app}: allow {s}", _json_patch(app, [
                '{"op":"add","path":"/spec/ingress/0/from/-","value":%s}' % _peer_json(s)]))
            e["allow_rule"][s] = CatalogueEntry(f"{app}: allow {s}", _json_patch(app, [
                '{"op":"add","path":"/spec/ingress/-","value":{"from":[%s],"ports":[{"port":%d,'
                '"protocol":"TCP"}]}}' % (_peer_json(s), port)]))
        return e

    def _entries(self, app: str, obj: dict | None) -> list[tuple[CatalogueEntry | None, bool]]:
        others = [a for a in self.wl.apps if a != app]
        if obj is None:
            return [(None, False)] * (len(FIXED) + 2 * len(others))
        st = self._static[app]
        spec = obj.get("spec") or {}
        ingress = spec.get("ingress") or []
        port = st["port"]
        out: list[tuple[CatalogueEntry | None, bool]] = [
            (st["inspect"], True),
            (st["select"], spec.get("podSelector") != {"matchLabels": {"app": app}}),
            (st["isolate"], spec.get("policyTypes") != st["types"]),
            (st["egress"], spec.get("egress") != [{}])]
        if port is not None:
            want = [{"port": port, "protocol": "TCP"}]
            ops = ['{"op":"add","path":"/spec/ingress/%d/ports","value":[{"port":%d,"protocol":"TCP"}]}'
                   % (i, port) for i, r in enumerate(ingress) if r.get("ports") and r["ports"] != want]
            out.append((CatalogueEntry(f"{app}: ingress ports to target port", _json_patch(app, ops)),
                        bool(ops)) if ops else (None, False))
        else:
            out.append((None, False))
        ops = ['{"op":"remove","path":"/spec/ingress/%d"}' % i
               for i in reversed(range(len(ingress))) if not ingress[i].get("ports")]
        out.append((CatalogueEntry(f"{app}: drop rules without ports", _json_patch(app, ops)), True)
                   if ops else (None, False))
        ops = ['{"op":"remove","path":"/spec/ingress/%d/from/%d/namespaceSelector"}' % (i, j)
               for i, r in enumerate(ingress) for j, p in enumerate(r.get("from") or ())
               if "namespaceSelector" in p and len(p) > 1]
        out.append((CatalogueEntry(f"{app}: drop namespaceSelectors", _json_patch(app, ops)), True)
                   if ops else (None, False))
        apps_of = [[_peer_app(p) for p in r.get("from") or ()] for r in ingress]
        present = {a for apps in apps_of for a in apps}
        first = ingress[0].get("from") if ingress else None
        first_apps = set(apps_of[0]) if ingress else set()
        for s in others:
            if port is None:
                out.append((None, False))
            elif first:
                out.append((st["allow_peer"][s], s not in first_apps))
            else:
                out.append((st["allow_rule"][s], True))
        for s in others:
            if s not in present:
                out.append((None, False))
                continue
            ops = []
            for i in reversed(range(len(ingress))):
                peers = apps_of[i]
                hits = [j for j, a in enumerate(peers) if a == s]
                if not hits:
                    continue
                if len(hits) == len(peers):  # a rule left without peers would admit everyone
                    ops.append('{"op":"remove","path":"/spec/ingress/%d"}' % i)
                else:
                    ops += ['{"op":"remove","path":"/spec/ingress/%d/from/%d"}' % (i, j)
                            for j in reversed(hits)]
            out.append((CatalogueEntry(f"{app}: disallow {s}", _json_patch(app, ops)), True)
                       if ops else (None, False))
        return out

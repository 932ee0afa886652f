"""A deterministic expert for the Kubernetes task, acting on observations only.

1. It lists the namespace's policies, pods and services once
   (``kubectl get networkpolicies,pods,services -o json``).
2. It evaluates those objects with the policy engine (assuming the standard kube-dns pod)
   and reads the intended outcome of every probe from the mismatch report: a reported pair
   is expected to flip, every other pair to stay as it is.
3. For every app's policy (a policy is named after the app it guards, as in the Online
   Boutique manifests) it derives the intended spec: select the app's pods, isolate both
   directions, admit exactly the sources the intent needs on the app's target port, and
   allow all egress. Other policies (e.g. an added deny-all) are candidates for deletion.
4. It applies the candidates that change the outcome, one JSON patch (or delete) per step,
   in an order it checks with the engine so that no step breaks a probe that works:
   each step is the one that fixes most without breaking any.

If an observed report differs from its prediction it lists the objects again and re-plans.
"""
from __future__ import annotations

import json
import re
from functools import lru_cache

import numpy as np

from netarena_gym.core.observation import last_output as core_last_output
from netarena_gym.k8s.cluster import DNS_POD
from netarena_gym.k8s.state_patches import clone
from netarena_gym.k8s.grader import Cluster, PolicyEngine
from netarena_gym.k8s.workload import Probe

INSPECT = "kubectl get networkpolicies,pods,services -o json"
# how kubectl get -o json (4-space indent) opens, separates and closes the items of a List
_ITEMS_OPEN, _ITEMS_CLOSE, _ITEMS_EMPTY = '\n    "items": [\n', "\n    ]", '\n    "items": []'
_ITEM_CUT, _ITEM_TAIL = "\n        },\n", "\n        }"
_MISMATCH = re.compile(r"^Mismatch: (\S+) (?:->|→) ([^:\s]+):(\d+) \(Expected: (True|False), "
                       r"Actual: (True|False)\)$", re.M)


def last_output(observation: str) -> str:
    return core_last_output(observation, ("\n\nConfiguration of every policy:", "\n\nSteps left:"))


def mismatches(observation: str) -> frozenset:
    head = observation.split("\nOutput:\n", 1)[0]
    return frozenset((m[0], m[1], int(m[2]), m[3] == "True") for m in _MISMATCH.findall(head))


class K8sExpert:
    def __init__(self):
        self.memo = PlanMemo()
        self.reset()

    def reset(self) -> None:
        self.plan: list[tuple[str, str]] = []   # (command, predicted mismatch set key)
        self.inspected = False
        self.predicted: frozenset | None = None
        self.replans = 0

    def act(self, observation: str, info: dict | None = None):
        seen = mismatches(observation)
        if not self.inspected:
            self.inspected = True
            return {"command": INSPECT}
        if self.predicted is None:  # the output of INSPECT is in this observation
            try:
                objs = self.memo.load(last_output(observation))
            except json.JSONDecodeError:
                return {"command": INSPECT}
            self.plan = plan(objs, seen, self.memo)
            self.predicted = seen
        elif not seen <= self.predicted and self.replans < 3:
            self.replans += 1
            self.predicted = None
            return {"command": INSPECT}
        if not self.plan:
            if seen and self.replans < 3:
                self.replans += 1
                self.predicted = None
                return {"command": INSPECT}
            return {"command": "kubectl get networkpolicies"}
        cmd, pred = self.plan.pop(0)
        self.predicted = pred
        return {"command": cmd}


# ------------------------------------------------------------------------ planning
class PlanMemo:
    """What one expert keeps between plans: listed objects equal to ones listed before are
    replaced by those (so the policy engine, kept per probe set, finds its compiled pods,
    Services and policies by identity), and the engines."""

    MAX = 4096

    def __init__(self):
        self._objs: dict = {}
        self._engines: dict = {}
        self._dns: dict = {}
        self._index: dict = {}
        self._texts: dict = {}

    def load(self, text: str):
        """``json.loads(text)``, for a List as ``kubectl get -o json`` prints it (4-space
        indent) with each item's text parsed once: pods and Services repeat across
        listings, and parsing them again was most of a plan's time. The items are cut where
        one ends and the next begins at the list's own depth; JSON strings hold no raw
        newline, so the cut cannot fall inside a value. Any other text is parsed whole."""
        start = text.find(_ITEMS_OPEN)
        end = text.find(_ITEMS_CLOSE, start + 1)
        if start < 0 or end < 0 or not text.startswith("{"):
            return json.loads(text)
        try:
            top = json.loads(text[:start] + _ITEMS_EMPTY + text[end + len(_ITEMS_CLOSE):])
        except json.JSONDecodeError:
            return json.loads(text)
        if not isinstance(top, dict) or top.get("items") != []:
            return json.loads(text)
        body = text[start + len(_ITEMS_OPEN):end]
        items = []
        for part in (body.split(_ITEM_CUT) if body.strip() else ()):
            hit = self._texts.get(part)
            if hit is None:  # every item but the last lost its closing brace to the cut
                try:
                    hit = json.loads(part if part.endswith(_ITEM_TAIL) else part + _ITEM_TAIL)
                except json.JSONDecodeError:
                    return json.loads(text)
                if len(self._texts) >= self.MAX:
                    self._texts.clear()
                self._texts[part] = hit
            items.append(hit)
        top["items"] = items
        return top

    def same(self, o: dict) -> dict:
        """``o``, or the equal object listed before under the same kind, namespace and name."""
        md = o.get("metadata") or {}
        key = (o.get("kind"), md.get("namespace"), md.get("name"), md.get("resourceVersion"))
        hit = self._objs.get(key)
        if hit is not None and (hit is o or hit == o):
            return hit
        if len(self._objs) >= self.MAX:
            self._objs.clear()
        self._objs[key] = o
        return o

    def engine(self, key: tuple, ns: str) -> PolicyEngine:
        """The engine over the probes of ``key`` (see :func:`_probe_key`; the key, not the
        probes, is hashed: a few names instead of every probe)."""
        eng = self._engines.get((key, ns))
        if eng is None:
            if len(self._engines) >= 16:
                self._engines.clear()
            eng = self._engines[(key, ns)] = PolicyEngine(_probe_grid(*key), ns)
        return eng

    def index(self, key: tuple) -> dict:
        """(source, service, port) -> position in the probes of ``key``."""
        hit = self._index.get(key)
        if hit is None:
            if len(self._index) >= 16:
                self._index.clear()
            hit = self._index[key] = {(p.source, p.service, p.port): i
                                      for i, p in enumerate(_probe_grid(*key))}
        return hit

    def dns_pod(self) -> dict:
        """The standard kube-dns pod the plan assumes (one object, never changed)."""
        if "pod" not in self._dns:
            dns = clone(DNS_POD)
            dns["metadata"]["namespace"] = "kube-system"
            self._dns["pod"] = dns
        return self._dns["pod"]


def _items(objs: dict) -> tuple[list, list, list]:
    items = objs.get("items", [objs]) if isinstance(objs, dict) else []
    pols = [o for o in items if o.get("kind") == "NetworkPolicy"]
    pods = [o for o in items if o.get("kind") == "Pod"]
    svcs = [o for o in items if o.get("kind") == "Service"]
    return pols, pods, svcs


def _probe_key(pods: list, svcs: list) -> tuple[tuple, tuple]:
    """(source pod names, (Service, port) targets): what the probe grid is made of."""
    targets = []
    for s in svcs:
        if (s.get("spec") or {}).get("type") == "LoadBalancer":
            continue
        for sp in (s.get("spec") or {}).get("ports") or ():
            if (sp.get("protocol") or "TCP") == "TCP":
                targets.append((s["metadata"]["name"], int(sp["port"])))
    return tuple(p["metadata"]["name"] for p in pods), tuple(targets)


@lru_cache(maxsize=64)
def _probe_grid(sources: tuple, targets: tuple) -> tuple[Probe, ...]:
    """Every source against every Service port but its own."""
    return tuple(Probe(src, name, port) for src in sources for name, port in targets if name != src)


def _target_port(app: str, pods: list, svcs: list) -> int | None:
    svc = next((s for s in svcs if s["metadata"]["name"] == app), None)
    if svc is None:
        return None
    tp = svc["spec"]["ports"][0].get("targetPort", svc["spec"]["ports"][0]["port"])
    if isinstance(tp, int):
        return tp
    for p in pods:
        if p["metadata"]["name"] == app:
            for c in p["spec"]["containers"]:
                for cp in c.get("ports") or ():
                    if cp.get("name") == tp:
                        return int(cp["containerPort"])
    return None


@lru_cache(maxsize=4096)
def _desired(app: str, sources: tuple[str, ...], all_sources: tuple[str, ...],
             port: int | None) -> dict:
    """The intended spec of ``app``'s policy; memoised, so the same intent gives the same
    object (which :func:`_norm_of` finds by identity): the result is shared, never change it."""
    spec = {"podSelector": {"matchLabels": {"app": app}}}
    if port is None:  # no Service: only egress matters (the loadgenerator)
        spec["policyTypes"] = ["Egress"]
        spec["egress"] = [{}]
        return spec
    spec["policyTypes"] = ["Ingress", "Egress"]
    if set(sources) >= set(all_sources):
        spec["ingress"] = [{}]
    else:
        spec["ingress"] = [{"from": [{"podSelector": {"matchLabels": {"app": s}}} for s in sources],
                            "ports": [{"port": port, "protocol": "TCP"}]}]
    spec["egress"] = [{}]
    return spec


def _patch_cmd(name: str, spec: dict) -> str:
    ops = [{"op": "add", "path": f"/spec/{k}", "value": spec[k]}
           for k in ("podSelector", "policyTypes", "ingress", "egress") if k in spec]
    if "ingress" not in spec:
        ops.append({"op": "add", "path": "/spec/ingress", "value": []})
    return (f"kubectl patch networkpolicy {name} --type=json -p '"
            + json.dumps(ops, separators=(",", ":")) + "'")


def plan(objs: dict, seen: frozenset, memo: PlanMemo | None = None) -> list[tuple[str, frozenset]]:
    """The steps (command, mismatches expected after it); ``memo`` (kept by the expert)
    makes later plans cheaper and never changes one."""
    memo = memo if memo is not None else PlanMemo()
    pols, pods, svcs = (list(map(memo.same, x)) for x in _items(objs))
    if not pods:
        return []
    ns = pods[0]["metadata"].get("namespace", "default")
    key = _probe_key(pods, svcs)
    probes = _probe_grid(*key)
    engine = memo.engine(key, ns)
    base = [o for o in pods] + [memo.dns_pod()]

    def run(policies: list) -> np.ndarray:
        # frozen: nothing here changes these objects, so the engine keeps each policy's
        # contribution by identity while candidates are scored and rescored
        return engine.evaluate(Cluster([], base, svcs, policies, None, frozen=True)).copy()

    actual = run(pols)
    index = memo.index(key)
    expected = actual.copy()
    for src, svc, port, exp in seen:
        i = index.get((src, svc, port))
        if i is not None:
            expected[i] = exp
    apps = [p["metadata"]["name"] for p in pods]
    by_name = {p["metadata"]["name"]: p for p in pols}
    candidates: dict[str, tuple[str, list | None]] = {}
    wanted: dict[str, list[str]] = {}
    for i in np.flatnonzero(expected):
        wanted.setdefault(probes[i].service, []).append(probes[i].source)
    for app in apps:
        port = _target_port(app, pods, svcs)
        sources = wanted.get(app, [])
        others = [a for a in apps if a != app]
        want = _desired(app, tuple(sources), tuple(others), port)
        cur = by_name.get(app)
        if cur is not None and _same(cur.get("spec") or {}, want):
            continue
        new = {"metadata": {"name": app, "namespace": ns}, "spec": want}
        cmd = _patch_cmd(app, want) if cur is not None else _apply_cmd(app, want)
        candidates[app] = (cmd, new)
    for name in by_name:
        if name not in apps:
            candidates[name] = (f"kubectl delete networkpolicy {name}", None)
    current = {p["metadata"]["name"]: p for p in pols}
    state = actual
    steps: list[tuple[str, frozenset]] = []
    while candidates and not (state == expected).all():
        scored = _score(candidates, current, state, expected, run)
        safe = [x for x in scored if x[0] == 0 and x[1] > 0]
        pick = max(safe, key=lambda x: x[1]) if safe else None
        if pick is None:  # a harmless step that makes a later one safe (two-step lookahead)
            for x in scored:
                if x[0] == 0 and x[1] == 0:
                    rest = {k: v for k, v in candidates.items() if k != x[2]}
                    if any(y[0] == 0 and y[1] > 0 for y in _score(rest, x[3], x[4], expected, run)):
                        pick = x
                        break
        if pick is None:
            if any(x[1] > 0 for x in scored):
                pick = min((x for x in scored if x[1] > 0), key=lambda x: (x[0], -x[1]))
            elif any(x[0] == 0 for x in scored):
                pick = next(x for x in scored if x[0] == 0)
            else:
                break
        _, _, name, trial, out = pick
        current, state = trial, out
        steps.append((candidates.pop(name)[0], _report(probes, out, expected)))
    return steps


def _score(candidates: dict, current: dict, state, expected, run) -> list:
    """(broken, gain, name, policies after, outcome after) for every candidate step."""
    good_before = state == expected
    n_before = int(np.count_nonzero(good_before))
    out_list = []
    for name, (_, new) in candidates.items():
        trial = dict(current)
        if new is None:
            trial.pop(name, None)
        else:
            trial[name] = new
        out = run(list(trial.values()))
        broken = int(np.count_nonzero(good_before & (out != expected)))
        gain = int(np.count_nonzero(out == expected)) - n_before
        out_list.append((broken, gain, name, trial, out))
    return out_list


def _apply_cmd(app: str, spec: dict) -> str:
    return (f"kubectl patch networkpolicy {app} --type=json -p '"
            + json.dumps([{"op": "add", "path": "/spec", "value": spec}], separators=(",", ":")) + "'")


def _report(probes, out, expected) -> frozenset:
    """The mismatches expected after this step, over the expert's probes (a superset of
    the env's)."""
    return frozenset((probes[i].source, probes[i].service, probes[i].port, bool(expected[i]))
                     for i in np.flatnonzero(out != expected).tolist())


def _norm(spec: dict) -> tuple:
    """A canonical form of a spec: defaults filled, empty lists dropped, peers and ports in
    a fixed order (their order does not matter to the semantics); two specs are the same
    policy when their forms are equal (scalars keep their JSON type: 1, 1.0 and true differ)."""
    s = dict(spec)
    for key, peer_key in (("ingress", "from"), ("egress", "to")):
        if not s.get(key):
            s.pop(key, None)
            continue
        rules = []
        for r in s[key]:
            r = dict(r)
            if "ports" in r:
                r["ports"] = _Sorted({**p, "protocol": p.get("protocol", "TCP")} for p in r["ports"])
            if peer_key in r:
                r[peer_key] = _Sorted(r[peer_key])
            rules.append(r)
        s[key] = rules
    if not s.get("podSelector"):
        s["podSelector"] = {}
    return _freeze(s)


class _Sorted(list):
    """A list whose order does not count."""


def _freeze(v):
    """Hashable, ordered form of JSON data that compares as the JSON texts would."""
    t = type(v)
    if t is dict:
        return ("d", tuple(sorted((k, _freeze(x)) for k, x in v.items())))
    if t is _Sorted:
        return ("l", tuple(sorted(_freeze(x) for x in v)))
    if t is list:
        return ("l", tuple(_freeze(x) for x in v))
    return (t.__name__, v)


_NORMS: dict = {}   # id(spec) -> (spec, its norm); the entry holds the spec, so its id stays its own


def _norm_of(spec: dict) -> tuple:
    """:func:`_norm`, memoised by the spec object: the specs compared repeat across
    decisions as the same objects (listed objects through :meth:`PlanMemo.same`, intended
    ones through :func:`_desired`), and nothing changes a spec once it is read or made."""
    hit = _NORMS.get(id(spec))
    if hit is not None and hit[0] is spec:
        return hit[1]
    if len(_NORMS) >= 4096:
        _NORMS.clear()
    norm = _norm(spec)
    _NORMS[id(spec)] = (spec, norm)
    return norm


def _same(a: dict, b: dict) -> bool:
    return a == b or _norm_of(a) == _norm_of(b)

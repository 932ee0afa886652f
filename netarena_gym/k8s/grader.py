"""The NetworkPolicy engine: ``networking.k8s.io/v1`` semantics over API objects (dicts as
the API server returns them), evaluated for a set of probes.

Rules implemented (Kubernetes documentation, "Network Policies"):

* A policy selects pods of its own namespace by ``spec.podSelector`` (``matchLabels`` and
  ``matchExpressions`` In/NotIn/Exists/DoesNotExist, ANDed; ``{}`` selects every pod).
* A selected pod is isolated for ingress if ``policyTypes`` holds Ingress, for egress if it
  holds Egress. Without ``policyTypes`` the API's default applies: Ingress, plus Egress when
  the policy has egress rules. A pod no policy isolates in a direction is open in it.
* Policies are allow-lists and add up. A connection src -> dst:port/proto is allowed iff src
  is not egress-isolated or some egress rule of a policy selecting src admits (dst, port),
  and dst is not ingress-isolated or some ingress rule of a policy selecting dst admits
  (src, port). Replies are implicit.
* A rule admits when one of its peers matches (no or empty ``from``/``to``: every peer) and
  one of its ports matches (no or empty ``ports``: every port and protocol).
* Peers: ``podSelector`` alone (pods of the policy's namespace), ``namespaceSelector`` alone
  (every pod of the matching namespaces), both in one element (ANDed), ``ipBlock``
  (``cidr`` minus ``except``, matched against pod IPs).
* Ports: ``protocol`` (TCP default, UDP, SCTP); ``port`` a number (with ``endPort``, a
  range) or the name of a container port of the destination pod (same protocol); no port:
  every port of the protocol. Ports are the destination pod's, after the Service
  translates ``port`` to ``targetPort`` (which may itself be a named container port).
* Probes go to Service names, so a source pod that is egress-isolated must be allowed
  UDP 53 to a kube-dns pod (``k8s-app=kube-dns``) or every probe from it fails.
* A Service's endpoints are the pods its selector matches in its namespace that have the
  target port; a probe succeeds iff the Service has endpoints and every one admits it.

Pod sets are Python integers used as bit sets (:mod:`netarena_gym.k8s.grader_world`); the
slots and probe destinations come from :mod:`netarena_gym.k8s.grader_layout`.
Evaluation is incremental: the engine keeps, per policy, what it contributes to every
destination (pod, port, protocol) that a probe or DNS reaches, so a change to one policy
recomputes that policy's contribution and the destinations it touches, not the cluster
(see benchmarks/bench_k8s.py and benchmarks/bench_speed.py). For frozen clusters the
contributions are shared by the engines of a process that see the same world (pods,
namespaces, slots): the generator's check computes them once for the env's engine.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass
from functools import reduce
from itertools import compress, repeat
from operator import and_, or_, rshift, sub

import numpy as np

from netarena_gym.k8s.grader_layout import Target, build_layout  # noqa: F401 (Target re-exported)
from netarena_gym.k8s.grader_slots import merge_delta, move_part
from netarena_gym.k8s.grader_world import (  # noqa: F401 (select_pods re-exported)
    Namespaces, Pods, compile_policy, port_matches, select_pods, world, world_key)
from netarena_gym.k8s.workload import Probe

MEMO_MAX = 4096
SHARED_WORLDS = 16
#: world signature -> contributions of frozen clusters' policies, shared by the engines of a
#: process that see the same world (the generator's check and the simulator's engine)
_SHARED_MEMOS: dict = {}


@dataclass
class Cluster:
    """The objects the engine reads: lists of API objects as dicts. ``version`` changes
    whenever any object changes (None: never cached). ``frozen``: the caller never changes
    these objects in place (a write replaces the object), so the engine may key its caches
    by object identity (the simulator's store), and the same lists stand for the same
    objects; otherwise by name and resourceVersion."""
    namespaces: list
    pods: list
    services: list
    policies: list
    version: object = None
    frozen: bool = False


class PolicyEngine:
    """Evaluates a probe set over a cluster. ``evaluate(cluster)`` returns a bool array
    (probe succeeded), cached by ``cluster.version``; calls with the same outcomes may
    return the same array, so a caller must not change it in place.

    Kept between calls, while pods, namespaces and Services stay the same: the slots (each
    destination pod, port and protocol a probe or DNS lookup reaches), each policy's
    contribution to them (keyed by the policy's identity, see :class:`Cluster`), and per
    slot the union of those contributions. A call diffs the policy list against the last
    one and updates only the slots the added or removed policies touch."""

    def __init__(self, probes: tuple[Probe, ...], namespace: str, *,
                 dns_labels: dict | None = None, dns_namespace: str = "kube-system"):
        self.probes = probes
        self.namespace = namespace
        self.dns_labels = dns_labels or {"k8s-app": "kube-dns"}
        self.dns_namespace = dns_namespace
        self._version = object()
        self._result: np.ndarray | None = None
        self._wkey = object()
        self._skey = object()
        self._keep: tuple = ()            # objects whose ids are cache keys (kept alive)
        self._clear_world()

    # ------------------------------------------------------------------ caches
    def _clear_world(self) -> None:
        self.pods: Pods | None = None
        self._nss: Namespaces | None = None
        self._peer_cache: dict = {}
        self._layout = None
        self._clear_policies()

    def _clear_policies(self) -> None:
        self._memo: dict = {}             # policy key -> contribution
        self._fmemo: dict | None = None   # the same for frozen clusters' keys, shared
        self._prev: tuple | None = None   # (last frozen policy list, its keys), see _diff
        self._active: dict = {}           # policy key -> contribution, the last list
        self._ing_by_slot: list = []      # slot -> {policy key: peers admitted}
        self._eg_by_slot: list = []       # slot -> {policy key: sources admitted}
        self._ing_acc: list = []
        self._eg_acc: list = []
        self._in_iso = self._eg_iso = 0
        self._masks: list | None = None   # per target, the mask the table's row holds
        self._table: np.ndarray | None = None
        self._by_masks: dict = {}          # masks (tuple) -> outcome array
        if self._layout is not None:
            n = len(self._layout[0])
            self._ing_by_slot = [{} for _ in range(n)]
            self._eg_by_slot = [{} for _ in range(n)]
            self._ing_acc, self._eg_acc = [0] * n, [0] * n

    # ------------------------------------------------------------------ evaluate
    def evaluate(self, cluster: Cluster) -> np.ndarray:
        if cluster.version is not None and cluster.version == self._version:
            return self._result
        frozen = cluster.frozen
        keep = self._keep
        if frozen and keep and cluster.pods is keep[0] and cluster.namespaces is keep[1] \
                and cluster.services is keep[2]:
            wk, sk = self._wkey, self._skey  # the same lists of a frozen cluster: the same world
        elif frozen:
            wk = (tuple(map(id, cluster.pods)), tuple(map(id, cluster.namespaces)))
            sk = tuple(map(id, cluster.services))
        else:
            wk = world_key(cluster)
            sk = None if wk is None else _services_key(cluster.services)
        stable = self._result is not None  # the last result holds for unchanged slots
        if wk is None or wk != self._wkey:
            stable = False
            self._wkey = wk
            self._skey = object()
            self._clear_world()
            self.pods, self._nss = world(cluster)
        if sk is None or sk != self._skey:
            stable = False
            self._skey = sk
            layout = self._build_layout(cluster)
            same = self._layout is not None and layout[0] == self._layout[0]
            self._layout = layout
            # per probe its source's bit, and a row per target plus the no-probe row (zero),
            # for pod sets that fit an int64 (see _outcomes)
            self._bitsel = np.left_shift(np.int64(1), layout[5].astype(np.int64)) \
                if layout[6] < 63 else None
            self._rows = np.zeros(len(layout[2]) + 1, dtype=np.int64)
            self._dsts = tuple(d for d, _, _ in layout[0])  # per slot, its destination pod
            # every destination has one endpoint (the usual app): their slots
            self._single = (tuple(eps[0] for eps in layout[2])
                            if all(len(eps) == 1 for eps in layout[2]) else None)
            if same:  # the slots stand: keep the policies' contributions
                self._masks = self._table = None
                self._by_masks = {}
            else:
                self._clear_policies()
            if frozen:
                self._fmemo = _shared_memo(self._signature())
        # ids are keys only while the objects live (and the lists, kept, keep their ids)
        self._keep = (cluster.pods, cluster.namespaces, cluster.services) if frozen else ()
        if self._update_policies(cluster.policies, frozen) or not stable:
            out = self._outcomes()
        else:  # no slot's union and no isolation changed: the outcomes stand
            out = self._result
        self._version = cluster.version
        self._result = out
        return out

    def _diff(self, policies: list) -> tuple | None:
        """(removed keys, added keys, {added key: policy}) of a frozen policy list against
        the last one, looking only at the positions whose object changed; None when that
        does not apply (another length, a name twice)."""
        prev = self._prev
        if prev is None or len(prev[0]) != len(policies):
            return None
        prev_pols, prev_keys = prev
        changed = [i for i, same in enumerate(map(operator.is_, policies, prev_pols)) if not same]
        new_keys = list(prev_keys)
        keys = {}
        for i in changed:
            pol = policies[i]
            md = pol.get("metadata") or {}
            k = new_keys[i] = (md.get("namespace"), md.get("name"), id(pol.get("spec")))
            keys[k] = pol
        gone = {prev_keys[i] for i in changed}
        came = {new_keys[i] for i in changed}
        removed, added = gone - came, came - gone
        if len(came) < len(changed) or any(k in self._active for k in added):
            return None  # a key twice in the list
        self._prev = (list(policies), new_keys)
        return list(removed), [k for k in new_keys if k in added], keys

    def _update_policies(self, policies: list, frozen: bool) -> None:
        if frozen:
            done = self._replace_one(policies)
            if done is not None:
                return done
        diff = self._diff(policies) if frozen else None
        active = self._active
        if diff is not None:
            removed, added, keys = diff
        else:
            keys = {}
            order = []
            for pol in policies:
                md = pol.get("metadata") or {}
                if frozen:
                    key = (md.get("namespace"), md.get("name"), id(pol.get("spec")))
                elif md.get("resourceVersion") is not None:
                    key = (md.get("namespace"), md.get("name"), md.get("resourceVersion"))
                else:
                    key = ("#", id(pol))  # not cacheable: compiled afresh every time
                keys[key] = pol
                order.append(key)
            self._prev = (list(policies), order) if frozen and len(keys) == len(order) else None
            removed = [k for k in active if k not in keys]
            added = [k for k in keys if k not in active]
        if not removed and not added:
            return False
        ing_by, eg_by = self._ing_by_slot, self._eg_by_slot
        # per slot, the masks that left and the masks that came: a slot whose union can only
        # have grown is OR-ed in place, one that may have lost bits is recomputed
        ing_delta: dict = {}
        eg_delta: dict = {}
        memo = self._fmemo if frozen and self._fmemo is not None else self._memo
        contrib = {}
        for k in added:
            c = memo.get(k)
            if c is None:
                c = self._contribution(keys[k])
                if k[0] != "#":
                    if len(memo) >= MEMO_MAX:
                        memo.clear()
                    memo[k] = c if not frozen else c + (keys[k].get("spec"),)
            contrib[k] = c
        # a policy replaced under its name: a part (ingress, egress) that contributes the
        # same masks to the same slots only changes its key there
        replaced: dict = {}
        gone = []  # removed and not replaced (a duplicate name is not paired either)
        for k in removed:
            if k[:2] in replaced:
                gone.append(k)
            else:
                replaced[k[:2]] = k
        iso = False
        for k in added:
            c = contrib[k]
            old = replaced.pop(k[:2], None)
            oc = None if old is None else active.pop(old)
            iso = iso or oc is None or oc[0] != c[0] or oc[1] != c[1]
            move_part(ing_by, ing_delta, old, None if oc is None else oc[2], k, c[2])
            move_part(eg_by, eg_delta, old, None if oc is None else oc[3], k, c[3])
            active[k] = c
        gone += replaced.values()
        for old in gone:
            iso = True
            oc = active.pop(old)
            move_part(ing_by, ing_delta, old, oc[2], None, None)
            move_part(eg_by, eg_delta, old, oc[3], None, None)
        merge_delta(self._ing_acc, ing_by, ing_delta)
        merge_delta(self._eg_acc, eg_by, eg_delta)
        if iso:
            self._isolation()
        return True

    def _isolation(self) -> None:
        """The pods isolated for ingress and for egress: the union over the active policies."""
        in_iso = eg_iso = 0
        for c in self._active.values():
            in_iso |= c[0]
            eg_iso |= c[1]
        self._in_iso, self._eg_iso = in_iso, eg_iso

    def _replace_one(self, policies: list) -> bool | None:
        """The common step of a frozen cluster: one position of the last list holds a new
        object of the same policy (a patch), or none does. Updates the slots as
        :meth:`_update_policies` would and returns whether a slot's union or an isolation
        mask may have changed; None (nothing done) for any other change."""
        prev = self._prev
        if prev is None or len(prev[0]) != len(policies):
            return None
        prev_pols, prev_keys = prev
        changed = list(compress(range(len(policies)), map(operator.is_not, policies, prev_pols)))
        if len(changed) != 1:
            return None if changed else self._keep_list(policies, prev_keys)
        i = changed[0]
        pol = policies[i]
        md = pol.get("metadata") or {}
        old = prev_keys[i]
        spec = pol.get("spec")
        if old[2] == id(spec) and old[1] == md.get("name") and old[0] == md.get("namespace"):
            return self._keep_list(policies, prev_keys)  # the same spec in a new object
        k = (md.get("namespace"), md.get("name"), id(spec))
        active = self._active
        if k[:2] != old[:2] or k in active:
            return None
        memo = self._fmemo if self._fmemo is not None else self._memo
        c = memo.get(k)
        if c is None:
            c = self._contribution(pol)
            if len(memo) >= MEMO_MAX:
                memo.clear()
            memo[k] = c + (spec,)
        oc = active.pop(old)
        ing_delta: dict = {}
        eg_delta: dict = {}
        move_part(self._ing_by_slot, ing_delta, old, oc[2], k, c[2])
        move_part(self._eg_by_slot, eg_delta, old, oc[3], k, c[3])
        active[k] = c
        if ing_delta:
            merge_delta(self._ing_acc, self._ing_by_slot, ing_delta)
        if eg_delta:
            merge_delta(self._eg_acc, self._eg_by_slot, eg_delta)
        iso = oc[0] != c[0] or oc[1] != c[1]
        if iso:
            self._isolation()
        keys = list(prev_keys)
        keys[i] = k
        self._prev = (list(policies), keys)
        return iso or bool(ing_delta) or bool(eg_delta)

    def _keep_list(self, policies: list, keys: list) -> bool:
        self._prev = (list(policies), keys)
        return False

    def _contribution(self, pol: dict) -> tuple:
        """(pods isolated for ingress, for egress, {slot: peers its ingress rules admit},
        {slot: sources its egress rules let reach the slot}) of one policy."""
        selected, ingress, egress = compile_policy(pol, self.pods, self._nss, self._peer_cache)
        slots, by_pod = self._layout[0], self._layout[1]
        named = self.pods.ports
        ing = {}
        if ingress is not None:
            m = selected
            while m:
                low = m & -m
                m ^= low
                for s in by_pod.get(low.bit_length() - 1, ()):
                    d, number, proto = slots[s]
                    acc = 0
                    for r in ingress:
                        if port_matches(r.ports, named[d], number, proto):
                            acc |= r.peers
                    if acc:
                        ing[s] = acc
        eg = {}
        if egress:
            for s, (d, number, proto) in enumerate(slots):
                bit = 1 << d
                for r in egress:
                    if r.peers & bit and port_matches(r.ports, named[d], number, proto):
                        eg[s] = selected
                        break
        return (selected if ingress is not None else 0,
                selected if egress is not None else 0, ing, eg)

    def _outcomes(self) -> np.ndarray:
        _, _, targets, dns_slots, probe_target, probe_src, npods = self._layout
        # per slot s to pod d: the sources admitted, ((ingress union if d is isolated for
        # ingress, else everyone) & (not egress-isolated | egress union) & every pod), in C
        # (map over the slots): -1 | x is -1, so ((in_iso >> d & 1) - 1) | x picks the union
        # for isolated pods and everyone for the others
        vals = list(map(and_, map(and_, map(or_, self._ing_acc, map(
            sub, map(and_, map(rshift, repeat(self._in_iso), self._dsts), repeat(1)), repeat(1))),
            map(or_, repeat(~self._eg_iso), self._eg_acc)), repeat(self.pods.all)))
        val = vals.__getitem__
        dns = reduce(or_, map(val, dns_slots), 0)
        if self._single is not None:
            masks = list(map(and_, map(val, self._single), repeat(dns)))
        else:
            masks = [reduce(and_, map(val, eps), dns) if eps else 0 for eps in targets]
        key = tuple(masks)
        hit = self._by_masks.get(key)
        if hit is not None:
            return hit  # outcomes seen before (arrays are never changed in place)
        if npods < 63:  # masks fit an int64: test each probe's source bit in its target's mask
            rows = self._rows
            rows[:-1] = masks  # the last row (no probe) stays 0
            return self._remember(key, (rows[probe_target] & self._bitsel).astype(bool))
        nbytes = (npods + 8) // 8
        if self._table is None:
            self._table = np.zeros((len(masks) + 1, npods + 1), dtype=bool)  # last row/col: no probe
            old = [None] * len(masks)
        else:
            old = self._masks
        table = self._table
        for t, mask in enumerate(masks):
            if mask != old[t]:
                row = np.unpackbits(np.frombuffer(mask.to_bytes(nbytes, "little"), dtype=np.uint8),
                                    bitorder="little")
                table[t] = row[:npods + 1].view(bool)
        self._masks = masks
        return self._remember(key, table[probe_target, probe_src])

    def _remember(self, key: tuple, out: np.ndarray) -> np.ndarray:
        if len(self._by_masks) >= MEMO_MAX:
            self._by_masks.clear()
        self._by_masks[key] = out
        return out

    def _signature(self) -> tuple:
        """What a policy's contribution depends on besides the policy: the pods (names,
        namespaces, labels, IPs, named ports), the namespaces' labels and the slots."""
        p, n = self.pods, self._nss
        return (self.namespace, tuple(p.names), tuple(p.ns),
                tuple(tuple(x.items()) for x in p.labels), tuple(p.ips),
                tuple(tuple(sorted(x.items())) for x in p.ports), tuple(n.bit_of.items()),
                tuple(sorted(n.label_index.items())), self._layout[0])

    def _build_layout(self, cluster: Cluster) -> tuple:
        return build_layout(self.pods, cluster.services, self.probes, self.namespace,
                            self.dns_labels, self.dns_namespace)


def _shared_memo(signature: tuple) -> dict:
    """The contributions kept for frozen clusters of this world: their keys (namespace,
    name, id of a spec the entry keeps alive) name the same policy in every engine."""
    memo = _SHARED_MEMOS.get(signature)
    if memo is None:
        if len(_SHARED_MEMOS) >= SHARED_WORLDS:
            _SHARED_MEMOS.clear()
        memo = _SHARED_MEMOS[signature] = {}
    return memo


def _services_key(services: list):
    """Services by name and resourceVersion (None: one lacks it, not cacheable)."""
    key = tuple(((sv.get("metadata") or {}).get("namespace"), (sv.get("metadata") or {}).get("name"),
                 (sv.get("metadata") or {}).get("resourceVersion")) for sv in services)
    return None if any(k[2] is None for k in key) else key


def intended(probes: tuple[Probe, ...], allowed: dict) -> np.ndarray:
    return np.array([p.service in allowed.get(p.source, ()) for p in probes], dtype=bool)

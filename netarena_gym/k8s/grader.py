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

Pod sets are Python integers used as bit sets, so one evaluation of the full Online
Boutique probe set is a few hundred integer operations (see benchmarks/bench_k8s.py).
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

import numpy as np

from netarena_gym.k8s.workload import Probe

DNS_PORT = 53


@dataclass
class Cluster:
    """The objects the engine reads: lists of API objects as dicts."""
    namespaces: list
    pods: list
    services: list
    policies: list
    version: object = None  # changes whenever any object changes (None: never cached)


# ----------------------------------------------------------------------------- pods
@dataclass
class _Pods:
    names: list
    ns: list
    labels: list
    ips: list
    ports: list                       # per pod: {(name, proto): number}
    numbers: list                     # per pod: set of (number, proto)
    ns_mask: dict = field(default_factory=dict)
    label_index: dict = field(default_factory=dict)   # (key, value) -> mask
    key_index: dict = field(default_factory=dict)     # key -> mask
    all: int = 0

    @classmethod
    def build(cls, pods: list) -> "_Pods":
        self = cls([], [], [], [], [], [])
        for i, p in enumerate(pods):
            md = p.get("metadata") or {}
            ns = md.get("namespace") or "default"
            labels = md.get("labels") or {}
            bit = 1 << i
            self.names.append(md.get("name", ""))
            self.ns.append(ns)
            self.labels.append(labels)
            self.ips.append(((p.get("status") or {}).get("podIP")) or "")
            named, nums = {}, set()
            for c in (p.get("spec") or {}).get("containers") or ():
                for cp in c.get("ports") or ():
                    proto = cp.get("protocol") or "TCP"
                    num = cp.get("containerPort")
                    if isinstance(num, int):
                        nums.add((num, proto))
                        if cp.get("name"):
                            named.setdefault((cp["name"], proto), num)
            self.ports.append(named)
            self.numbers.append(nums)
            self.ns_mask[ns] = self.ns_mask.get(ns, 0) | bit
            for k, v in labels.items():
                self.label_index[(k, v)] = self.label_index.get((k, v), 0) | bit
                self.key_index[k] = self.key_index.get(k, 0) | bit
            self.all |= bit
        return self


def select_pods(sel: dict | None, universe: int, label_index: dict, key_index: dict) -> int:
    """Members of ``universe`` that a LabelSelector matches ({} or None: all of them)."""
    if not sel:
        return universe
    m = universe
    for k, v in (sel.get("matchLabels") or {}).items():
        m &= label_index.get((k, v), 0)
        if not m:
            return 0
    for e in sel.get("matchExpressions") or ():
        key, op = e.get("key"), e.get("operator")
        vals = e.get("values") or ()
        if op == "In":
            hit = 0
            for v in vals:
                hit |= label_index.get((key, v), 0)
            m &= hit
        elif op == "NotIn":
            hit = 0
            for v in vals:
                hit |= label_index.get((key, v), 0)
            m &= ~hit
        elif op == "Exists":
            m &= key_index.get(key, 0)
        elif op == "DoesNotExist":
            m &= ~key_index.get(key, 0)
        else:  # not a valid operator: selects nothing (the API rejects it anyway)
            return 0
        if not m:
            return 0
    return m


class _Namespaces:
    def __init__(self, namespaces: list, pods: _Pods):
        self.label_index, self.key_index = {}, {}
        self.bit_of, self.all = {}, 0
        names = [((n.get("metadata") or {}).get("name"), (n.get("metadata") or {}).get("labels") or {})
                 for n in namespaces]
        known = {nm for nm, _ in names}
        for nm in pods.ns_mask:  # a pod's namespace exists even if not listed
            if nm not in known:
                names.append((nm, {"kubernetes.io/metadata.name": nm}))
        for i, (nm, labels) in enumerate(names):
            bit = 1 << i
            self.bit_of[nm] = bit
            self.all |= bit
            for k, v in labels.items():
                self.label_index[(k, v)] = self.label_index.get((k, v), 0) | bit
                self.key_index[k] = self.key_index.get(k, 0) | bit
        self.pods_of_bit = {self.bit_of[nm]: pods.ns_mask.get(nm, 0) for nm, _ in names}

    def pods_in(self, sel: dict | None) -> int:
        m = select_pods(sel, self.all, self.label_index, self.key_index)
        out = 0
        while m:
            low = m & -m
            out |= self.pods_of_bit.get(low, 0)
            m ^= low
        return out


# ---------------------------------------------------------------------------- rules
def _ip_in(ip: str, nets) -> bool:
    try:
        a = ipaddress.ip_address(ip)
    except ValueError:
        return False
    return any(a.version == n.version and a in n for n in nets)


def _parse_net(text):
    try:
        return ipaddress.ip_network(str(text), strict=False)
    except ValueError:
        return None


@dataclass
class _Rule:
    peers: int            # pod set admitted (ALL when no peer list)
    ports: tuple | None   # None: every port; else ((proto, kind, a, b), ...)


def _compile_ports(ports) -> tuple | None:
    if not ports:
        return None
    out = []
    for p in ports:
        if not isinstance(p, dict):
            continue
        proto = p.get("protocol") or "TCP"
        port = p.get("port")
        if port is None:
            out.append((proto, "any", None, None))
        elif isinstance(port, str) and not port.isdigit():
            out.append((proto, "name", port, None))
        else:
            lo = int(port)
            end = p.get("endPort")
            out.append((proto, "num", lo, int(end) if isinstance(end, int) else lo))
    return tuple(out)


def _port_matches(ports: tuple | None, named: dict, number: int, proto: str) -> bool:
    if ports is None:
        return True
    for pr, kind, a, b in ports:
        if pr != proto:
            continue
        if kind == "any":
            return True
        if kind == "num":
            if a <= number <= b:
                return True
        elif named.get((a, proto)) == number:
            return True
    return False


def _world(cluster: Cluster):
    pods = _Pods.build(cluster.pods)
    return pods, _Namespaces(cluster.namespaces, pods)


def _world_key(cluster: Cluster):
    """Identifies pods and namespaces by name and resourceVersion (None: not cacheable)."""
    key = []
    for o in cluster.pods:
        md = o.get("metadata") or {}
        rv = md.get("resourceVersion")
        if rv is None and not (md.get("namespace") == "kube-system"):
            return None
        key.append((md.get("namespace"), md.get("name"), rv, id(o) if rv is None else 0))
    for o in cluster.namespaces:
        md = o.get("metadata") or {}
        key.append((md.get("name"), md.get("resourceVersion"), tuple(sorted((md.get("labels") or {}).items()))))
    return tuple(key)


class _Compiled:
    """Policies resolved against the current pods and namespaces."""

    def __init__(self, cluster: Cluster, world=None, memo: dict | None = None):
        """``world``: (pods, namespaces) already built for these objects; ``memo``: compiled
        policies by (namespace, name, resourceVersion), valid for that world."""
        pods, nss = world if world is not None else _world(cluster)
        self.pods = pods
        self.ingress: dict[int, list[_Rule]] = {}   # pod index -> admitting rules
        self.egress_policies: list[tuple[int, list[_Rule]]] = []
        in_iso = eg_iso = 0
        peer_cache: dict = {}
        for pol in cluster.policies:
            md = pol.get("metadata") or {}
            key = (md.get("namespace"), md.get("name"), md.get("resourceVersion"))
            hit = memo.get(key) if (memo is not None and key[2] is not None) else None
            if hit is None:
                hit = self._compile(pol, nss, peer_cache)
                if memo is not None and key[2] is not None:
                    memo[key] = hit
            selected, ingress, egress = hit
            if ingress is not None:
                in_iso |= selected
                m = selected
                while m:
                    low = m & -m
                    self.ingress.setdefault(low.bit_length() - 1, []).extend(ingress)
                    m ^= low
            if egress is not None:
                eg_iso |= selected
                self.egress_policies.append((selected, egress))
        self.in_iso, self.eg_iso = in_iso, eg_iso
        self._cache: dict = {}

    def _compile(self, pol: dict, nss: "_Namespaces", peer_cache: dict):
        """(selected pods, ingress rules or None, egress rules or None) of one policy."""
        pods = self.pods
        ns = (pol.get("metadata") or {}).get("namespace") or "default"
        spec = pol.get("spec") or {}
        selected = select_pods(spec.get("podSelector"), pods.ns_mask.get(ns, 0),
                           pods.label_index, pods.key_index)
        if not selected:
            return 0, None, None
        types = spec.get("policyTypes")
        if not types:
            types = ["Ingress"] + (["Egress"] if spec.get("egress") else [])
        out = []
        for direction, key, peer_key in (("Ingress", "ingress", "from"), ("Egress", "egress", "to")):
            if direction not in types:
                out.append(None)
                continue
            out.append([_Rule(self._peers(r.get(peer_key), ns, nss, peer_cache),
                              _compile_ports(r.get("ports")))
                        for r in spec.get(key) or () if isinstance(r, dict)])
        return selected, out[0], out[1]

    def _peers(self, peers, ns: str, nss: _Namespaces, cache: dict) -> int:
        pods = self.pods
        if not peers:
            return -1  # every pod (and every address)
        out = 0
        for peer in peers:
            if not isinstance(peer, dict):
                continue
            ip = peer.get("ipBlock")
            if ip is not None:
                out |= self._ipblock(ip)
                continue
            ps, nsel = peer.get("podSelector"), peer.get("namespaceSelector")
            if nsel is None and ps is None:
                continue
            key = (repr(ps), repr(nsel), ns)
            hit = cache.get(key)
            if hit is None:
                universe = pods.ns_mask.get(ns, 0) if nsel is None else nss.pods_in(nsel)
                hit = cache[key] = select_pods(ps, universe, pods.label_index, pods.key_index)
            out |= hit
        return out

    def _ipblock(self, ip: dict) -> int:
        net = _parse_net(ip.get("cidr"))
        if net is None:
            return 0
        excepts = [n for n in (_parse_net(e) for e in ip.get("except") or ()) if n is not None]
        out = 0
        for i, addr in enumerate(self.pods.ips):
            if addr and _ip_in(addr, (net,)) and not _ip_in(addr, excepts):
                out |= 1 << i
        return out

    def sources_allowed(self, dst: int, number: int, proto: str) -> int:
        """Pod set that may open a connection to pod ``dst`` on ``number/proto``."""
        key = (dst, number, proto)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        bit = 1 << dst
        named = self.pods.ports[dst]
        if self.in_iso & bit:
            ing = 0
            for r in self.ingress.get(dst, ()):
                if _port_matches(r.ports, named, number, proto):
                    ing |= r.peers
        else:
            ing = -1
        eg = ~self.eg_iso
        for selected, rules in self.egress_policies:
            if eg & selected == selected:
                continue
            for r in rules:
                if r.peers & bit and _port_matches(r.ports, named, number, proto):
                    eg |= selected
                    break
        out = self._cache[key] = ing & eg & self.pods.all
        return out


# --------------------------------------------------------------------------- engine
@dataclass
class Target:
    """A probe destination resolved to pods: [(pod index, port number)]; empty when the
    Service is missing or has no endpoints."""
    endpoints: list


class PolicyEngine:
    """Evaluates a probe set over a cluster. ``evaluate(cluster)`` returns a bool array
    (probe succeeded), cached by ``cluster.version``."""

    def __init__(self, probes: tuple[Probe, ...], namespace: str, *,
                 dns_labels: dict | None = None, dns_namespace: str = "kube-system"):
        self.probes = probes
        self.namespace = namespace
        self.dns_labels = dns_labels or {"k8s-app": "kube-dns"}
        self.dns_namespace = dns_namespace
        self._version = object()
        self._result: np.ndarray | None = None
        self._world_key = None
        self._world = None
        self._layout_key = None
        self._layout_val = None
        self._memo: dict = {}
        self.compiled: _Compiled | None = None

    def evaluate(self, cluster: Cluster) -> np.ndarray:
        if cluster.version is not None and cluster.version == self._version:
            return self._result
        wk = _world_key(cluster)
        if wk is None or wk != self._world_key:
            self._world = _world(cluster)
            self._world_key = wk
            self._memo = {}
        c = self.compiled = _Compiled(cluster, self._world, self._memo)
        layout = self._layout(c, cluster, wk)
        targets, probe_target, probe_src, npods = layout
        dns = self._dns_ok(c)
        # per target, the bit set of sources whose probe succeeds
        masks = []
        for endpoints in targets:
            mask = dns if endpoints else 0
            for d, num in endpoints:
                mask &= c.sources_allowed(d, num, "TCP")
            masks.append(mask)
        table = np.zeros((len(masks) + 1, npods + 1), dtype=bool)  # last row/col: no probe
        for t, mask in enumerate(masks):
            m, i = mask, 0
            while m:
                if m & 1:
                    table[t, i] = True
                m >>= 1
                i += 1
        out = table[probe_target, probe_src]
        self._version = cluster.version
        self._result = out
        return out

    def _layout(self, c: _Compiled, cluster: Cluster, wk):
        """Targets (endpoints of each Service port) and, per probe, its target row and source
        column; cached while pods, namespaces and Services are unchanged."""
        skey = None
        if wk is not None:
            skey = (wk, tuple(((sv.get("metadata") or {}).get("name"),
                               (sv.get("metadata") or {}).get("resourceVersion"))
                              for sv in cluster.services))
            if any(k[1] is None for k in skey[1]):
                skey = None
        if skey is not None and skey == self._layout_key:
            return self._layout_val
        pods = c.pods
        src_of = {name: i for i, (name, ns) in enumerate(zip(pods.names, pods.ns))
                  if ns == self.namespace}
        services = {}
        for sv in cluster.services:
            md = sv.get("metadata") or {}
            if (md.get("namespace") or "default") == self.namespace:
                services[md.get("name")] = sv
        index: dict[tuple[str, int], int] = {}
        targets: list = []
        n = len(pods.names)
        probe_target = np.empty(len(self.probes), dtype=np.intp)
        probe_src = np.empty(len(self.probes), dtype=np.intp)
        for k, pr in enumerate(self.probes):
            key = (pr.service, pr.port)
            if key not in index:
                index[key] = len(targets)
                targets.append(self._target(c, services.get(pr.service), pr.port).endpoints)
            probe_target[k] = index[key]
            probe_src[k] = src_of.get(pr.source, n)
        missing = probe_src == n
        probe_target[missing] = len(targets)  # the all-False row
        val = (targets, probe_target, probe_src, n)
        self._layout_key, self._layout_val = skey, val
        return val

    def _dns_ok(self, c: _Compiled) -> int:
        pods = c.pods
        dns_pods = select_pods({"matchLabels": self.dns_labels}, pods.ns_mask.get(self.dns_namespace, 0),
                           pods.label_index, pods.key_index)
        ok = 0
        while dns_pods:
            low = dns_pods & -dns_pods
            ok |= c.sources_allowed(low.bit_length() - 1, DNS_PORT, "UDP")
            dns_pods ^= low
        return ok

    def _target(self, c: _Compiled, svc: dict | None, port: int) -> Target:
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
        pods = c.pods
        members = select_pods({"matchLabels": sel}, pods.ns_mask.get(self.namespace, 0),
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


def intended(probes: tuple[Probe, ...], allowed: dict) -> np.ndarray:
    return np.array([p.service in allowed.get(p.source, ()) for p in probes], dtype=bool)

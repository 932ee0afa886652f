"""The pieces the NetworkPolicy engine (:mod:`netarena_gym.k8s.grader`) resolves policies
with: pods and namespaces as bit sets (Python integers), LabelSelectors over them, and one
policy compiled to (selected pods, ingress rules, egress rules), each rule a peer bit set and
its ports. Semantics as documented in :mod:`netarena_gym.k8s.grader`."""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field


@dataclass
class Pods:
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
    def build(cls, pods: list) -> "Pods":
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


class Namespaces:
    def __init__(self, namespaces: list, pods: Pods):
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
class Rule:
    peers: int            # pod set admitted (ALL when no peer list)
    ports: tuple | None   # None: every port; else ((proto, kind, a, b), ...)


def compile_ports(ports) -> tuple | None:
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


def port_matches(ports: tuple | None, named: dict, number: int, proto: str) -> bool:
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


def world(cluster):
    pods = Pods.build(cluster.pods)
    return pods, Namespaces(cluster.namespaces, pods)


def world_key(cluster):
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


def compile_policy(pol: dict, pods: Pods, nss: Namespaces, peer_cache: dict):
    """(selected pods, ingress rules or None, egress rules or None) of one policy;
    ``peer_cache`` keeps resolved peers for one world (pods and namespaces)."""
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
        out.append([Rule(_peers(r.get(peer_key), ns, pods, nss, peer_cache),
                         compile_ports(r.get("ports")))
                    for r in spec.get(key) or () if isinstance(r, dict)])
    return selected, out[0], out[1]


def _peers(peers, ns: str, pods: Pods, nss: Namespaces, cache: dict) -> int:
    if not peers:
        return -1  # every pod (and every address)
    out = 0
    for peer in peers:
        if not isinstance(peer, dict):
            continue
        ip = peer.get("ipBlock")
        if ip is not None:
            out |= _ipblock(ip, pods)
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


def _ipblock(ip: dict, pods: Pods) -> int:
    net = _parse_net(ip.get("cidr"))
    if net is None:
        return 0
    excepts = [n for n in (_parse_net(e) for e in ip.get("except") or ()) if n is not None]
    out = 0
    for i, addr in enumerate(pods.ips):
        if addr and _ip_in(addr, (net,)) and not _ip_in(addr, excepts):
            out |= 1 << i
    return out

"""Faults of the Kubernetes task: edits of the baseline NetworkPolicy manifests, each a
JSON-serialisable record with every parameter, applied in order (several may hit the same
policy).

Upstream's five (NetArena ``inject_errors``), with their real effect:

* ``remove_ingress``: pops the policy's first ingress rule (``ingress: []`` with Ingress in
  policyTypes: every connection into the pod is denied);
* ``add_ingress``: appends one rule per app in ``apps`` (a peer, no ports: every port);
* ``change_port``: sets the port of every ingress ports entry to ``port``;
* ``change_protocol``: sets the protocol of every ingress ports entry to ``protocol``;
* ``add_egress``: drops the allow-all egress rules and appends one rule per app in ``apps``
  (the pod is egress-restricted and its DNS lookups are blocked).

Operators' mistakes added here:

* ``wrong_selector``: ``spec.podSelector.matchLabels.app`` becomes ``value`` (a typo or
  another app), so the policy guards the wrong pods;
* ``remove_peer``: the peer of ``app`` is removed from the ingress rule (others remain);
* ``namespace_selector``: the peer of ``app`` also requires a namespace labelled ``labels``,
  which no namespace is;
* ``deny_all``: a new policy ``name`` selecting every pod with ``policyTypes`` ``types`` and
  no rules. Policies add up, so it only bites pods that no other policy opens: it is drawn
  beside a fault that takes a pod's own policy away from it;
* ``policy_types``: ``spec.policyTypes`` becomes ``types`` (Ingress dropped: the pod is open);
* ``wrong_port_name``: the ingress port becomes the name ``name``, which the pod's
  containers do not declare.
"""
from __future__ import annotations

UPSTREAM_TYPES = ("remove_ingress", "add_ingress", "change_port", "change_protocol", "add_egress")
NEW_TYPES = ("wrong_selector", "remove_peer", "namespace_selector", "deny_all", "policy_types",
             "wrong_port_name")
TYPES = UPSTREAM_TYPES + NEW_TYPES
ABBREV = {"remove_ingress": "RI", "add_ingress": "AI", "change_port": "CP",
          "change_protocol": "CPR", "add_egress": "AE", "wrong_selector": "WS",
          "remove_peer": "RP", "namespace_selector": "NS", "deny_all": "DA",
          "policy_types": "PT", "wrong_port_name": "WPN"}


class FaultError(ValueError):
    """A fault record that does not fit the policies it is applied to."""


def _peer_app(peer: dict) -> str | None:
    return ((peer.get("podSelector") or {}).get("matchLabels") or {}).get("app")


def apply_fault(policies: dict[str, dict], f: dict) -> None:
    """Apply one fault record to the manifests (``name -> manifest``) in place."""
    t = f.get("type")
    if t == "deny_all":
        name = f["name"]
        policies[name] = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                          "metadata": {"name": name},
                          "spec": {"podSelector": {}, "policyTypes": list(f["types"])}}
        return
    pol = policies.get(f.get("policy"))
    if pol is None:
        raise FaultError(f"fault {t} targets unknown policy {f.get('policy')!r}")
    spec = pol["spec"]
    ingress = spec.setdefault("ingress", [])
    if t == "remove_ingress":
        if ingress:
            ingress.pop(0)
    elif t == "add_ingress":
        for app in f["apps"]:
            ingress.append({"from": [{"podSelector": {"matchLabels": {"app": app}}}]})
    elif t == "change_port":
        for r in ingress:
            for p in r.get("ports") or ():
                p["port"] = int(f["port"])
    elif t == "change_protocol":
        for r in ingress:
            for p in r.get("ports") or ():
                p["protocol"] = f["protocol"]
    elif t == "add_egress":
        egress = [r for r in spec.get("egress") or () if r]
        for app in f["apps"]:
            egress.append({"to": [{"podSelector": {"matchLabels": {"app": app}}}]})
        spec["egress"] = egress
    elif t == "wrong_selector":
        spec["podSelector"] = {"matchLabels": {"app": f["value"]}}
    elif t in ("remove_peer", "namespace_selector"):
        hit = False
        for r in ingress:
            peers = r.get("from") or []
            for i, peer in enumerate(peers):
                if _peer_app(peer) == f["app"]:
                    hit = True
                    if t == "remove_peer":
                        peers.pop(i)
                    else:
                        peer["namespaceSelector"] = {"matchLabels": dict(f["labels"])}
                    break
        if not hit:
            raise FaultError(f"{t}: policy {f['policy']} has no peer app={f['app']}")
    elif t == "policy_types":
        spec["policyTypes"] = list(f["types"])
    elif t == "wrong_port_name":
        for r in ingress:
            for p in r.get("ports") or ():
                p["port"] = f["name"]
    else:
        raise FaultError(f"unknown fault type {t!r}")
    if not ingress and t not in ("remove_ingress",) and "ingress" in spec and not spec["ingress"]:
        del spec["ingress"]

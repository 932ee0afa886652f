"""kubectl's client-side validation of a NetworkPolicy manifest against the OpenAPI schema
(``kubectl apply`` with the default ``--validate``): unknown fields, wrong JSON types and
missing required fields, with kubectl's messages."""
from __future__ import annotations

from netarena_gym.k8s.state_validation import json_kind

_P = "io.k8s.api.networking.v1."
_M = "io.k8s.apimachinery.pkg.apis.meta.v1."
STR, INT, INTSTR, MAPSTR, ANY = "string", "integer", "int-or-string", "map", "any"

# type name -> {field: type}; a type is a name, a primitive or ("array", item type)
SCHEMA: dict[str, dict] = {
    _P + "NetworkPolicy": {"apiVersion": STR, "kind": STR, "metadata": _M + "ObjectMeta",
                           "spec": _P + "NetworkPolicySpec"},
    _P + "NetworkPolicySpec": {"podSelector": _M + "LabelSelector",
                               "ingress": ("array", _P + "NetworkPolicyIngressRule"),
                               "egress": ("array", _P + "NetworkPolicyEgressRule"),
                               "policyTypes": ("array", STR)},
    _P + "NetworkPolicyIngressRule": {"from": ("array", _P + "NetworkPolicyPeer"),
                                      "ports": ("array", _P + "NetworkPolicyPort")},
    _P + "NetworkPolicyEgressRule": {"to": ("array", _P + "NetworkPolicyPeer"),
                                     "ports": ("array", _P + "NetworkPolicyPort")},
    _P + "NetworkPolicyPeer": {"ipBlock": _P + "IPBlock", "namespaceSelector": _M + "LabelSelector",
                               "podSelector": _M + "LabelSelector"},
    _P + "IPBlock": {"cidr": STR, "except": ("array", STR)},
    _P + "NetworkPolicyPort": {"port": INTSTR, "protocol": STR, "endPort": INT},
    _M + "LabelSelector": {"matchLabels": MAPSTR,
                           "matchExpressions": ("array", _M + "LabelSelectorRequirement")},
    _M + "LabelSelectorRequirement": {"key": STR, "operator": STR, "values": ("array", STR)},
    _M + "ObjectMeta": {"name": STR, "namespace": STR, "labels": MAPSTR, "annotations": MAPSTR,
                        "uid": STR, "resourceVersion": STR, "generation": INT,
                        "creationTimestamp": STR, "generateName": STR, "selfLink": STR,
                        "finalizers": ("array", STR), "ownerReferences": ("array", ANY),
                        "managedFields": ("array", ANY), "deletionTimestamp": STR,
                        "deletionGracePeriodSeconds": INT, "clusterName": STR},
}
REQUIRED = {_P + "IPBlock": ("cidr",), _P + "NetworkPolicySpec": ("podSelector",),
            _M + "LabelSelectorRequirement": ("key", "operator")}


def _jtype(v) -> str:
    return json_kind(v, integer="integer")


def validate_manifest(doc: dict, *, end_port: bool = True) -> list[str]:
    """kubectl's ValidationError lines for one NetworkPolicy manifest (empty: valid)."""
    errs: list[str] = []
    _object(doc, _P + "NetworkPolicy", "NetworkPolicy", errs, end_port)
    return errs


def _object(v, tname: str, path: str, errs: list[str], end_port: bool) -> None:
    fields = SCHEMA[tname]
    if not isinstance(v, dict):
        errs.append(f'ValidationError({path}): invalid type for {tname}: got "{_jtype(v)}", '
                    'expected "map"')
        return
    for k in v:
        if k not in fields or (k == "endPort" and not end_port):
            errs.append(f'ValidationError({path}): unknown field "{k}" in {tname}')
    for k in REQUIRED.get(tname, ()):
        if k not in v:
            errs.append(f'ValidationError({path}): missing required field "{k}" in {tname}')
    for k in sorted(v):
        if k not in fields or v[k] is None or (k == "endPort" and not end_port):
            continue
        _value(v[k], fields[k], f"{path}.{k}", f"{tname}.{k}", errs, end_port)


def _value(v, t, path: str, where: str, errs: list[str], end_port: bool) -> None:
    if isinstance(t, tuple):
        if not isinstance(v, list):
            errs.append(f'ValidationError({path}): invalid type for {where}: got "{_jtype(v)}", '
                        'expected "array"')
            return
        for i, x in enumerate(v):
            if x is not None:
                _value(x, t[1], f"{path}[{i}]", where, errs, end_port)
        return
    if t in SCHEMA:
        _object(v, t, path, errs, end_port)
        return
    if t == ANY or t == INTSTR:
        return
    if t == MAPSTR:
        if not isinstance(v, dict):
            errs.append(f'ValidationError({path}): invalid type for {where}: got "{_jtype(v)}", '
                        'expected "map"')
            return
        for k, x in v.items():
            if not isinstance(x, str):
                errs.append(f'ValidationError({path}.{k}): invalid type for {where}: got '
                            f'"{_jtype(x)}", expected "string"')
        return
    got = _jtype(v)
    if t == INT and got != "integer":
        errs.append(f'ValidationError({path}): invalid type for {where}: got "{got}", expected "integer"')
    elif t == STR and got != "string":
        errs.append(f'ValidationError({path}): invalid type for {where}: got "{got}", expected "string"')

"""What the API server does first with a NetworkPolicy on every write: decode the JSON (or
a strategic merge patch's map) into the typed object, with kube-apiserver 1.20's decode
errors (``runtime.DefaultUnstructuredConverter.FromUnstructured``'s words, fields in Go's
order), unknown fields dropped, empty optional fields omitted. Defaults and validation:
:mod:`netarena_gym.k8s.state_validation`."""
from __future__ import annotations

import operator


class DecodeError(Exception):
    """400: the JSON does not fit the typed object (a wrong type somewhere). The message is
    what ``runtime.DefaultUnstructuredConverter.FromUnstructured`` says, the decoder of a
    strategic merge patch's result ("cannot restore slice from map", "cannot convert int64 to
    string", ...); a JSON or merge patch's result goes through json-iterator, whose messages
    (with the object's bytes around the error) are left out. ``path``: where (for our own
    messages; Go's do not say)."""

    def __init__(self, message: str, path: str = ""):
        super().__init__(message)
        self.path = path


# ---------------------------------------------------------------------------- decoding
# reflect's Kind and Type names of what util/json decodes a JSON value to
def _json_type(v) -> str:
    """The JSON type of a decoded value: bool, int, float, str, list, dict or null."""
    if isinstance(v, bool):
        return "bool"
    for t in (int, float, str, list, dict):
        if isinstance(v, t):
            return t.__name__
    return "null"


_REFLECT_KINDS = {"bool": "bool", "int": "int64", "float": "float64", "str": "string",
                  "list": "slice"}  # anything else decodes to a map


def reflect_kind(v) -> str:
    return _REFLECT_KINDS.get(_json_type(v), "map")


def reflect_type(v) -> str:
    k = reflect_kind(v)
    return {"slice": "[]interface {}", "map": "map[string]interface {}"}.get(k, k)


def _str(v, path: str, gotype: str = "string") -> str:
    if v is None:
        return ""
    if not isinstance(v, str):
        raise DecodeError(not_a_string(v, gotype), path)
    return v


def not_a_string(v, gotype: str = "string") -> str:
    """The converter's error for a value ``v`` (not a string) where a string type is
    expected: Go converts an integer to a string type, so an int64 "cannot convert"; a
    float, a bool, a map or a slice is "unrecognized type" (the kind of the target)."""
    if isinstance(v, int) and not isinstance(v, bool):
        return f"cannot convert int64 to {gotype}"
    return "unrecognized type: string"


def json_kind(v, *, integer: str = "number", boolean: str = "boolean") -> str:
    """The JSON type of a decoded value, named as the caller's tool names it (the API
    server says "number", kubectl's schema check "integer"/"number", Go "bool")."""
    return {"bool": boolean, "int": integer, "float": "number", "str": "string",
            "list": "array", "dict": "object", "null": "null"}[_json_type(v)]


def _map(v, path: str) -> dict | None:
    """A struct (structFromUnstructured)."""
    if v is None:
        return None
    if not isinstance(v, dict):
        raise DecodeError(f"cannot restore struct from: {reflect_kind(v)}", path)
    return v


def _list(v, path: str) -> list:
    if v is None:
        return []
    if not isinstance(v, list):
        raise DecodeError(f"cannot restore slice from {reflect_kind(v)}", path)
    return v


def go_number(v: float) -> str:
    """Go's json.Marshal of a float64 (``strconv.FormatFloat`` 'f' below 1e21, else 'e')."""
    if v.is_integer() and abs(v) < 1e21:
        return str(int(v))
    if abs(v) < 1e21 and (abs(v) >= 1e-6):
        return repr(v)
    return repr(v).replace("e-0", "e-").replace("e+0", "e+")


def _int_or_string(v, path: str):
    """IntOrString: FromUnstructured hands its JSON to IntOrString.UnmarshalJSON."""
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        what = "bool"
    elif isinstance(v, (int, float)):
        text = go_number(float(v)) if isinstance(v, float) else str(v)
        if text.lstrip("-").isdigit() and -2**31 <= int(text) < 2**31:
            return int(text)
        what = "number " + text
    else:
        what = "array" if isinstance(v, list) else "object"
    raise DecodeError(f"json: cannot unmarshal {what} into Go value of type int32", path)


def _int32(v, path: str) -> int:
    """A plain int32 (``endPort``): an integer converts (wrapping as Go's conversion does)."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise DecodeError(f"cannot convert {reflect_type(v)} to int32", path)
    return (v + 2**31) % 2**32 - 2**31


def _string_map(v, path: str) -> dict | None:
    if v is None:
        return None
    if not isinstance(v, dict):
        raise DecodeError(f"cannot restore map from {reflect_kind(v)}", path)
    return {k: _str(x, f"{path}.{k}") for k, x in v.items()}


def decode_selector(v, path: str, keep_empty: bool = False) -> dict | None:
    m = _map(v, path)
    if m is None:
        return None
    out = {}
    ml = _string_map(m.get("matchLabels"), path + ".matchLabels")
    if ml or (keep_empty and ml is not None):
        out["matchLabels"] = ml
    exprs = []
    for i, e in enumerate(_list(m.get("matchExpressions"), path + ".matchExpressions")):
        e = _map(e, f"{path}.matchExpressions[{i}]") or {}
        r = {"key": _str(e.get("key"), f"{path}.matchExpressions[{i}].key"),
             "operator": _str(e.get("operator"), f"{path}.matchExpressions[{i}].operator",
                          "v1.LabelSelectorOperator")}
        vp = f"{path}.matchExpressions[{i}].values"
        vals = [_str(x, vp) for x in _list(e.get("values"), vp)]
        if vals or (keep_empty and e.get("values") is not None):
            r["values"] = vals
        exprs.append(r)
    if exprs or (keep_empty and m.get("matchExpressions") is not None):
        out["matchExpressions"] = exprs
    return out


def _decode_port(p, path: str, end_port: bool = True) -> dict:
    """A NetworkPolicyPort, fields in Go's order (Protocol, Port, EndPort). Without
    ``end_port`` (1.20) the field does not exist: whatever it holds is ignored."""
    p = _map(p, path) or {}
    out = {}
    if p.get("protocol") is not None:
        out["protocol"] = _str(p["protocol"], path + ".protocol", "v1.Protocol")
    port = p.get("port")
    if port is not None:
        out["port"] = _int_or_string(port, path + ".port")
    if end_port and p.get("endPort") is not None:
        out["endPort"] = _int32(p["endPort"], path + ".endPort")
    return out


def _decode_peer(p, path: str, keep_empty: bool = False) -> dict:
    """A NetworkPolicyPeer, decoded in Go's field order (PodSelector, NamespaceSelector,
    IPBlock: the first wrong type is the one reported)."""
    p = _map(p, path) or {}
    got = {}
    for key in ("podSelector", "namespaceSelector", "ipBlock"):
        v = p.get(key)
        if v is None:
            continue
        if key == "ipBlock":
            b = _map(v, path + ".ipBlock")
            blk = {"cidr": _str(b.get("cidr"), path + ".ipBlock.cidr")}
            exc = [_str(x, path + ".ipBlock.except") for x in _list(b.get("except"), path + ".ipBlock.except")]
            if exc or (keep_empty and b.get("except") is not None):
                blk["except"] = exc
            got["ipBlock"] = blk
        else:
            got[key] = decode_selector(v, f"{path}.{key}", keep_empty)
    return {k: got[k] for k in ("ipBlock", "namespaceSelector", "podSelector") if k in got}


def decode_rule(r, path: str, peer_key: str, keep_empty: bool = False,
                end_port: bool = True) -> dict:
    """A rule, decoded in Go's field order (Ports, then From or To)."""
    r = _map(r, path) or {}
    out = {}
    ports = [_decode_port(x, f"{path}.ports[{i}]", end_port)
             for i, x in enumerate(_list(r.get("ports"), path + ".ports"))]
    peers = [_decode_peer(x, f"{path}.{peer_key}[{i}]", keep_empty)
             for i, x in enumerate(_list(r.get(peer_key), f"{path}.{peer_key}"))]
    if peers or (keep_empty and r.get(peer_key) is not None):
        out[peer_key] = peers
    if ports or (keep_empty and r.get("ports") is not None):
        out["ports"] = ports
    return out


def decode_spec(spec, *, end_port: bool = True, keep_empty: bool = False) -> dict:
    """The NetworkPolicySpec as the server stores it (before defaults). ``keep_empty``
    keeps explicitly empty lists and maps, which the server's typed object tells apart from
    missing ones when it decides whether the spec changed (``generation``)."""
    spec = _map(spec, "spec") or {}
    out = {"podSelector": decode_selector(spec.get("podSelector"), "spec.podSelector", keep_empty) or {}}
    for key, peer_key in (("ingress", "from"), ("egress", "to")):
        rules = [decode_rule(x, f"spec.{key}[{i}]", peer_key, keep_empty, end_port)
                 for i, x in enumerate(_list(spec.get(key), "spec." + key))]
        if rules or (keep_empty and spec.get(key) is not None):
            out[key] = rules
    types = [_str(x, "spec.policyTypes", "v1.PolicyType")
             for x in _list(spec.get("policyTypes"), "spec.policyTypes")]
    if types:
        out["policyTypes"] = types
    if not end_port:
        for key in ("ingress", "egress"):
            for r in out.get(key, ()):
                drop_end_ports(r)
    return out


def drop_end_ports(rule: dict) -> None:
    """A decoded rule as a server without the endPort field keeps it (in place)."""
    for p in rule.get("ports", ()):
        p.pop("endPort", None)


_SLICES_AND_MAPS = frozenset({"ingress", "egress", "policyTypes", "from", "to", "ports", "except",
                              "matchLabels", "matchExpressions", "values"})


def drop_empty(v):
    """The stored form of a spec decoded with ``keep_empty``: empty slices and maps are
    omitted (``omitempty``); empty selectors and rules stay (pointers, list elements). A
    part with nothing to drop is returned itself, not copied (the result shares it with
    ``v``: neither may be changed in place afterwards)."""
    if isinstance(v, dict):
        out = {}
        same = True
        for k, x in v.items():
            if k in _SLICES_AND_MAPS and isinstance(x, (list, dict)) and not x:
                same = False
                continue
            y = out[k] = drop_empty(x)
            same = same and y is x
        return v if same else out
    if isinstance(v, list):
        out = [drop_empty(x) for x in v]
        return v if all(map(operator.is_, out, v)) else out
    return v

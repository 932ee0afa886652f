"""What the API server does to a NetworkPolicy on every write: decode into the typed object
(unknown fields dropped, empty optional fields omitted, wrong JSON types rejected), apply
the defaults (``protocol: TCP``; ``policyTypes`` from the rules), then validate with the
server's messages (``pkg/apis/networking/validation``, with the label and name rules of
:mod:`netarena_gym.k8s.state_names`; bad values printed as ``field.Error`` prints them, Go's
``%q``). ``end_port=False`` is kube-apiserver 1.20, which has no ``endPort`` and drops it;
``end_port=True`` checks it as the servers that have it (1.21 on). Also the label checks
``kubectl label`` and ObjectMeta validation use.
"""
from __future__ import annotations

import ipaddress
import operator
from dataclasses import dataclass

from netarena_gym.k8s.state_names import (  # noqa: F401 (label_value_errors re-exported)
    dns1123_subdomain_errors, label_value_errors, port_name_errors, qualified_name_errors)


# ------------------------------------------------------------------------ field errors
@dataclass(frozen=True)
class FieldError:
    field: str
    type: str          # "Invalid value" | "Required value" | "Forbidden" | "Unsupported value"
    value: object = None
    detail: str = ""
    quoted: bool = True  # how Go prints the bad value: %q / %#v of strings, %v of numbers

    def body(self) -> str:
        if self.type in ("Required value", "Forbidden"):
            s = self.type
        else:
            v = self.value
            if v is None:
                shown = "null"
            elif isinstance(v, str) and self.quoted:
                shown = go_quote(v)
            else:
                shown = str(v)
            s = f"{self.type}: {shown}"
        if self.detail:
            s += f": {self.detail}"
        return s

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
               "\t": "\\t", "\v": "\\v", "\\": "\\\\", '"': '\\"'}


def go_quote(s: str) -> str:
    """Go's ``%q`` of a string (``strconv.Quote``): printable characters as they are, the
    C escapes, other control characters as ``\\xNN``, other unprintable ones as ``\\uNNNN``
    / ``\\UNNNNNNNN`` (Go's and Python's "printable" are the same classes)."""
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s:
        return '"' + s + '"'
    out = []
    for ch in s:
        esc = _GO_ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


class Invalid(Exception):
    """422: the object failed validation (kubectl: ``The <Kind> "<name>" is invalid: ...``)."""

    def __init__(self, kind: str, name: str, errors: list[FieldError]):
        self.kind, self.name, self.errors = kind, name, errors
        super().__init__(self.message())

    def message(self) -> str:
        errs = [str(e) for e in self.errors]
        body = errs[0] if len(errs) == 1 else "\n" + "\n".join("* " + e for e in errs)
        return f'The {self.kind} "{self.name}" is invalid: {body}'


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
def reflect_kind(v) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int64"
    if isinstance(v, float):
        return "float64"
    if isinstance(v, str):
        return "string"
    return "slice" if isinstance(v, list) else "map"


def reflect_type(v) -> str:
    k = reflect_kind(v)
    return {"slice": "[]interface {}", "map": "map[string]interface {}"}.get(k, k)


def _str(v, path: str, gotype: str = "string") -> str:
    if v is None:
        return ""
    if not isinstance(v, str):
        raise DecodeError(f"cannot convert {reflect_type(v)} to {gotype}", path)
    return v


def json_kind(v, *, integer: str = "number", boolean: str = "boolean") -> str:
    """The JSON type of a decoded value, named as the caller's tool names it (the API
    server says "number", kubectl's schema check "integer"/"number", Go "bool")."""
    if isinstance(v, bool):
        return boolean
    if isinstance(v, int):
        return integer
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "null"


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


def apply_defaults(spec: dict) -> dict:
    """SetDefaults_NetworkPolicy and SetDefaults_NetworkPolicyPort (in place)."""
    for key in ("ingress", "egress"):
        for r in spec.get(key, ()):
            default_rule(r)
    if not spec.get("policyTypes"):
        spec["policyTypes"] = ["Ingress"] + (["Egress"] if spec.get("egress") else [])
    return spec


def default_rule(rule: dict) -> None:
    """SetDefaults_NetworkPolicyPort on a decoded rule's ports (in place)."""
    for p in rule.get("ports", ()):
        if "protocol" not in p:
            # keep the serialised key order of the server: port, protocol, endPort
            items = list(p.items())
            p.clear()
            p["protocol"] = "TCP"
            p.update(items)


# -------------------------------------------------------------------------- validation
_LABEL_ERRORS: dict = {}  # (path, label items) -> validate_labels' errors


def validate_labels(labels: dict | None, path: str) -> list[FieldError]:
    """The errors of a label map at ``path`` (kept per path and labels: they are few)."""
    key = (path, tuple((labels or {}).items()))
    hit = _LABEL_ERRORS.get(key)
    if hit is None:
        if len(_LABEL_ERRORS) >= 4096:
            _LABEL_ERRORS.clear()
        hit = _LABEL_ERRORS[key] = tuple(_validate_labels(labels or {}, path))
    return list(hit)


def _validate_labels(labels: dict, path: str) -> list[FieldError]:
    errs = []
    for k in sorted(labels):
        v = labels[k]
        errs.extend(FieldError(path, "Invalid value", k, m) for m in qualified_name_errors(k))
        errs.extend(FieldError(path, "Invalid value", v, m) for m in label_value_errors(v))
    return errs


def validate_selector(sel: dict | None, path: str) -> list[FieldError]:
    if sel is None:
        return []
    errs = validate_labels(sel.get("matchLabels"), path + ".matchLabels")
    for i, e in enumerate(sel.get("matchExpressions") or ()):
        p = f"{path}.matchExpressions[{i}]"
        op = e.get("operator", "")
        if op in ("In", "NotIn"):
            if not e.get("values"):
                errs.append(FieldError(p + ".values", "Required value", None,
                                       "must be specified when `operator` is 'In' or 'NotIn'"))
        elif op in ("Exists", "DoesNotExist"):
            if e.get("values"):
                errs.append(FieldError(p + ".values", "Forbidden", None,
                                       "may not be specified when `operator` is 'Exists' or "
                                       "'DoesNotExist'"))
        else:
            errs.append(FieldError(p + ".operator", "Invalid value", op, "not a valid selector operator"))
        errs.extend(FieldError(p + ".key", "Invalid value", e.get("key", ""), m)
                    for m in qualified_name_errors(e.get("key", "")))
    return errs


def _validate_port(p: dict, path: str, end_port: bool) -> list[FieldError]:
    """ValidateNetworkPolicyPort; with ``end_port``, as the servers that have the field
    (1.21 on) check it: the errors, their order and their values are theirs, including
    "must be greater than or equal to `port`" showing the value of ``port``."""
    errs = []
    proto = p.get("protocol")
    if proto is not None and proto not in ("TCP", "UDP", "SCTP"):
        errs.append(FieldError(path + ".protocol", "Unsupported value", proto,
                               'supported values: "TCP", "UDP", "SCTP"'))
    port = p.get("port")
    end = p.get("endPort") if end_port else None
    if port is not None:
        if isinstance(port, int):
            if not 1 <= port <= 65535:
                errs.append(FieldError(path + ".port", "Invalid value", port,
                                       "must be between 1 and 65535, inclusive"))
            if end is not None:
                if end < port:
                    errs.append(FieldError(path + ".endPort", "Invalid value", port,
                                           "must be greater than or equal to `port`"))
                if not 1 <= end <= 65535:
                    errs.append(FieldError(path + ".endPort", "Invalid value", end,
                                           "must be between 1 and 65535, inclusive"))
        else:
            if end is not None:
                errs.append(FieldError(path + ".endPort", "Invalid value", end,
                                       "may not be specified when `port` is non-numeric"))
            errs.extend(FieldError(path + ".port", "Invalid value", port, m)
                        for m in port_name_errors(port))
    elif end is not None:
        errs.append(FieldError(path + ".endPort", "Invalid value", end,
                               "may not be specified when `port` is not specified"))
    return errs


def _parse_cidr(text: str):
    """Go's ``net.ParseCIDR``: an address, ``/`` and a prefix length in decimal digits.
    Python's ``ip_network`` also takes a netmask (``10.0.0.0/255.0.0.0``), a host mask
    and an IPv6 zone (``fe80::1%eth0/64``), which Go refuses: "not a valid CIDR"."""
    addr, slash, bits = text.partition("/")
    if not slash or not (bits.isascii() and bits.isdigit()) or "%" in addr:
        return None
    try:
        return ipaddress.ip_network(text, strict=False)
    except ValueError:
        return None


def _validate_peer(peer: dict, path: str) -> list[FieldError]:
    errs = []
    n = 0
    if "podSelector" in peer:
        n += 1
        errs.extend(validate_selector(peer["podSelector"], path + ".podSelector"))
    if "namespaceSelector" in peer:
        n += 1
        errs.extend(validate_selector(peer["namespaceSelector"], path + ".namespaceSelector"))
    if "ipBlock" in peer:
        n += 1
        errs.extend(_validate_ipblock(peer["ipBlock"], path + ".ipBlock"))
    if n == 0:
        errs.append(FieldError(path, "Required value", None, "must specify a peer"))
    elif n > 1 and "ipBlock" in peer:
        errs.append(FieldError(path, "Forbidden", None, "may not specify both ipBlock and another peer"))
    return errs


def _validate_ipblock(b: dict, path: str) -> list[FieldError]:
    cidr = b.get("cidr", "")
    if not cidr:
        return [FieldError(path + ".cidr", "Required value")]
    net = _parse_cidr(cidr)
    if net is None:
        return [FieldError(path + ".cidr", "Invalid value", cidr, "not a valid CIDR")]
    errs = []
    for i, e in enumerate(b.get("except") or ()):
        p = f"{path}.except[{i}]"
        ex = _parse_cidr(e)
        if ex is None:
            errs.append(FieldError(p, "Invalid value", e, "not a valid CIDR"))
            return errs
        if ex.version != net.version or not (ex.network_address in net) or net.prefixlen >= ex.prefixlen:
            errs.append(FieldError(p, "Invalid value", e, "must be a strict subset of `cidr`"))
    return errs


def validate_spec(spec: dict, *, end_port: bool = True) -> list[FieldError]:
    errs = validate_selector(spec.get("podSelector"), "spec.podSelector")
    for key, peer_key in (("ingress", "from"), ("egress", "to")):
        for i, r in enumerate(spec.get(key, ())):
            errs.extend(validate_rule(r, f"spec.{key}[{i}]", peer_key, end_port))
    types = spec.get("policyTypes") or []
    if len(types) > 2:
        shown = "[]networking.PolicyType{" + ", ".join(f'"{t}"' for t in types) + "}"
        errs.append(FieldError("spec.policyTypes", "Invalid value", shown,
                               "may not specify more than two policyTypes", quoted=False))
        return errs
    for i, t in enumerate(types):
        if t not in ("Ingress", "Egress"):
            errs.append(FieldError(f"spec.policyTypes[{i}]", "Unsupported value", t,
                                   'supported values: "Ingress", "Egress"'))
    return errs


def validate_rule(r: dict, base: str, peer_key: str, end_port: bool = True) -> list[FieldError]:
    """The errors of one stored rule at ``base`` (e.g. ``spec.ingress[0]``); a rule's
    errors depend on nothing else in the spec."""
    errs = []
    for j, p in enumerate(r.get("ports", ())):
        errs.extend(_validate_port(p, f"{base}.ports[{j}]", end_port))
    for j, peer in enumerate(r.get(peer_key, ())):
        errs.extend(_validate_peer(peer, f"{base}.{peer_key}[{j}]"))
    return errs


def validate_name(name: str) -> list[FieldError]:
    if not name:
        return [FieldError("metadata.name", "Required value", None, "name or generateName is required")]
    return [FieldError("metadata.name", "Invalid value", name, m) for m in dns1123_subdomain_errors(name)]


def validate_metadata(md: dict) -> list[FieldError]:
    errs = validate_labels(md.get("labels"), "metadata.labels")
    for k in sorted(md.get("annotations") or {}):
        errs.extend(FieldError("metadata.annotations", "Invalid value", k, m)
                    for m in qualified_name_errors(k.lower()))
    return errs

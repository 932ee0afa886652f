"""What the API server does to a NetworkPolicy on every write: decode into the typed object
(:mod:`netarena_gym.k8s.state_decode`, re-exported here), apply the defaults (``protocol: TCP``; ``policyTypes`` from the rules), then validate with the
server's messages (``pkg/apis/networking/validation``, with the label and name rules of
:mod:`netarena_gym.k8s.state_names`; bad values printed as ``field.Error`` prints them, Go's
``%q``). ``end_port=False`` is kube-apiserver 1.20, which has no ``endPort`` and drops it;
``end_port=True`` checks it as the servers that have it (1.21 on). Also the label checks
``kubectl label`` and ObjectMeta validation use.
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from netarena_gym.k8s.state_decode import (  # noqa: F401 (the decoding, re-exported)
    DecodeError, decode_rule, decode_selector, decode_spec, drop_empty, drop_end_ports, go_number,
    json_kind, not_a_string, reflect_kind, reflect_type)
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


#: the finalizers a name without a domain prefix may be (helper.IsStandardFinalizerName)
STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})
_FIN = "metadata.finalizers"


def validate_metadata(md: dict, old: dict | None = None) -> list[FieldError]:
    """ObjectMeta's errors in the server's order: labels, annotations, each finalizer's
    name (``ValidateFinalizers``); on an update of an object being deleted (``old``'s
    metadata), a finalizer it did not have; then each finalizer without a domain that is
    not a standard one (core's ``validateKubeFinalizerName``, by index)."""
    errs = validate_labels(md.get("labels"), "metadata.labels")
    for k in sorted(md.get("annotations") or {}):
        errs.extend(FieldError("metadata.annotations", "Invalid value", k, m)
                    for m in qualified_name_errors(k.lower()))
    fins = md.get("finalizers") or ()
    if not fins and (old is None or not old.get("deletionTimestamp")):
        return errs
    for f in fins:
        errs.extend(FieldError(_FIN, "Invalid value", f, m) for m in qualified_name_errors(f))
    if {"orphan", "foregroundDeletion"} <= set(fins):
        errs.append(FieldError(_FIN, "Invalid value", _go_strings(fins),
                               "finalizer orphan and foregroundDeletion cannot be both set",
                               quoted=False))
    if old is not None and old.get("deletionTimestamp"):
        new = sorted(set(fins) - set(old.get("finalizers") or ()))
        if new:
            errs.append(FieldError(_FIN, "Forbidden", detail="no new finalizers can be added "
                                   f"if the object is being deleted, found new finalizers "
                                   f"{_go_strings(new)}"))
    errs.extend(FieldError(f"{_FIN}[{i}]", "Invalid value", f,
                           "name is neither a standard finalizer name nor is it fully qualified")
                for i, f in enumerate(fins) if "/" not in f and f not in STANDARD_FINALIZERS)
    return errs


def _go_strings(names) -> str:
    """Go's ``%#v`` of a []string."""
    return "[]string{" + ", ".join(go_quote(n) for n in names) + "}"

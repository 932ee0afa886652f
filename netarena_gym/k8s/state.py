"""An in-memory API server for the simulator: namespaces, pods, services, NetworkPolicies and
the workload's Deployments, ReplicaSets and Endpoints (no events, as on a server without
controllers), as the API server stores and returns them (canonical JSON with metadata,
resourceVersion, generation, uid), with the server's decoding, defaulting, validation and
error replies.

Time is virtual, so outputs (``AGE``) are deterministic: objects are created at
``EPOCH`` and the clock advances by ``TICK`` seconds with every agent command.
"""
from __future__ import annotations

import copy
import json
import time
import uuid
from functools import lru_cache
from netarena_gym.k8s.state_validation import (
    DecodeError, FieldError, Invalid, apply_defaults, decode_rule, decode_selector, decode_spec,
    not_a_string, reflect_kind,
    default_rule, drop_empty, drop_end_ports, validate_metadata, validate_name, validate_rule,
    validate_spec)

EPOCH = 1767225600  # 2026-01-01T00:00:00Z
START_AGE = 600     # the workload is ten minutes old when the episode starts
TICK = 5

KINDS = {  # resource -> (kind, apiVersion, namespaced, group suffix for names)
    "namespaces": ("Namespace", "v1", False, ""),
    "pods": ("Pod", "v1", True, ""),
    "services": ("Service", "v1", True, ""),
    "networkpolicies": ("NetworkPolicy", "networking.k8s.io/v1", True, ".networking.k8s.io"),
    "deployments": ("Deployment", "apps/v1", True, ".apps"),
    "replicasets": ("ReplicaSet", "apps/v1", True, ".apps"),
    "endpoints": ("Endpoints", "v1", True, ""),
    "events": ("Event", "v1", True, ""),
}


class ApiError(Exception):
    """An error reply; ``str()`` is what kubectl prints."""

    def __init__(self, reason: str, message: str, code: int):
        self.reason, self.code = reason, code
        super().__init__(message)

    def kubectl_text(self) -> str:
        msg = str(self)
        if self.reason == "Invalid":
            return msg
        return f"Error from server ({self.reason}): {msg}"


def not_found(resource: str, name: str) -> ApiError:
    return ApiError("NotFound", f'{resource}{KINDS[resource][3]} "{name}" not found', 404)


def timestamp(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def go_json_escapes(text: str) -> str:
    """What Go's JSON encoders (json.Marshal, json-iterator's standard config) escape in
    strings beyond JSON's needs: ``<``, ``>``, ``&``, U+2028 and U+2029 (they occur in a JSON
    text only inside strings)."""
    if not any(c in text for c in "<>&\u2028\u2029"):
        return text
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def compact(obj) -> str:
    """Go's json.Marshal of decoded JSON: sorted keys, no spaces, HTML characters escaped."""
    return go_json_escapes(json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False))


_SPEC_CACHE: dict = {}
#: the metadata a write of a NetworkPolicy sets (the rest is the server's)
_WRITTEN_META = ("labels", "annotations", "finalizers")
_CREATED = timestamp(EPOCH)  # every object's creationTimestamp (the simulated clock's start)


@lru_cache(maxsize=4096)
def _uid_text(n: int) -> str:
    """The uid of the ``n``-th object a store creates (a fixed version-4 UUID)."""
    return str(uuid.UUID(int=(0x5EED << 96) | n, version=4))


def canonical_spec_parts(raw, end_port: bool = True) -> tuple:
    """(shape, spec, validation errors) of a raw NetworkPolicy spec as the server decodes,
    defaults and validates it (``shape`` keeps explicitly empty lists, ``spec`` is the
    stored form), kept per (spec text, ``end_port``) in a process-wide cache (the results
    are shared: stored objects are never changed in place). A spec that does not decode
    raises, uncached."""
    key = (repr(raw), end_port)
    hit = _SPEC_CACHE.get(key)
    if hit is None:
        hit = _parts_by_rule(raw, end_port)
        if hit is None:
            shape = apply_defaults(decode_spec(raw, end_port=end_port, keep_empty=True))
            spec = drop_empty(shape)
            hit = (shape, spec, tuple(validate_spec(spec, end_port=end_port)))
        if len(_SPEC_CACHE) >= 4096:
            _SPEC_CACHE.clear()
        _SPEC_CACHE[key] = hit
    return hit


_RULE_CACHE: dict = {}  # (rule repr, direction, end_port) -> (shape, stored rule) or None
_SPEC_FIELDS = frozenset({"podSelector", "ingress", "egress", "policyTypes"})
_RULES = (("ingress", "from"), ("egress", "to"))


def _parts_by_rule(raw, end_port: bool) -> tuple | None:
    """:func:`canonical_spec_parts`' answer built from rules decoded one at a time and kept
    per rule text (a patch changes one rule and leaves the others as they were stored), or
    None where that does not apply: a raw spec that is not a plain map of the spec's
    fields, a rule that does not decode or has validation errors (the whole spec is then
    decoded as one, for the server's first error). A rule's decoding, defaults and
    validity depend on nothing else in the spec; the answer equals the whole decoding's,
    key order included."""
    if type(raw) is not dict or not raw.keys() <= _SPEC_FIELDS:
        return None
    try:
        shape = {"podSelector": decode_selector(raw.get("podSelector"), "spec.podSelector",
                                                True) or {}}
        stored_rules = {}
        for key, peer_key in _RULES:
            rules = raw.get(key)
            if rules is None:
                continue
            if type(rules) is not list:
                return None
            parts = [_rule_parts(r, i, key, peer_key, end_port) for i, r in enumerate(rules)]
            if None in parts:
                return None
            shape[key] = [p[0] for p in parts]
            stored_rules[key] = [p[1] for p in parts]
        types = raw.get("policyTypes")
        if types is not None:
            if type(types) is not list or not all(type(t) is str for t in types):
                return None
            if types:
                shape["policyTypes"] = list(types)
    except DecodeError:
        return None
    apply_defaults(shape)  # the rules' ports are defaulted already: this sets policyTypes
    spec = {}
    for k, v in shape.items():
        if k == "podSelector":
            spec[k] = drop_empty(v)
        elif v:  # an empty list of rules is omitted
            spec[k] = stored_rules[k] if k in stored_rules else v
    rest = {"podSelector": spec["podSelector"], "policyTypes": spec["policyTypes"]}
    return shape, spec, tuple(validate_spec(rest, end_port=end_port))


def _rule_parts(rule, i: int, key: str, peer_key: str, end_port: bool) -> tuple | None:
    """(shape, stored form) of rule ``i`` of ``key``, kept per rule text; None: the rule has
    validation errors. Raises DecodeError (uncached) when it does not decode."""
    rk = (repr(rule), key, end_port)
    hit = _RULE_CACHE.get(rk, _RULE_CACHE)
    if hit is _RULE_CACHE:
        shape = decode_rule(rule, f"spec.{key}[{i}]", peer_key, keep_empty=True, end_port=end_port)
        if not end_port:
            drop_end_ports(shape)
        default_rule(shape)
        stored = drop_empty(shape)
        hit = None if validate_rule(stored, f"spec.{key}[{i}]", peer_key, end_port) else (shape, stored)
        if len(_RULE_CACHE) >= 4096:
            _RULE_CACHE.clear()
        _RULE_CACHE[rk] = hit
    return hit


class Store:
    """Objects by (resource, namespace, name). ``version`` changes on every write. Writes
    replace objects, never change them in place, so stores may share objects."""

    def __init__(self, *, end_port: bool = True):
        self.objects: dict[str, dict[tuple[str, str], dict]] = {k: {} for k in KINDS}
        self.rv = 100
        self.version = 0
        self.ticks = 0
        self.end_port = end_port
        self._uid = 0
        self.token = object()  # this store's identity: (token, version) names a state
        self.workload_version = 0  # moves on every write of an object but a NetworkPolicy

    # ----------------------------------------------------------------- clock
    @property
    def now(self) -> float:
        return EPOCH + START_AGE + TICK * self.ticks

    def tick(self) -> None:
        self.ticks += 1

    # ----------------------------------------------------------------- reads
    def get(self, resource: str, namespace: str, name: str) -> dict:
        obj = self.objects[resource].get((namespace if KINDS[resource][2] else "", name))
        if obj is None:
            raise not_found(resource, name)
        return obj

    def find(self, resource: str, namespace: str, name: str) -> dict | None:
        return self.objects[resource].get((namespace if KINDS[resource][2] else "", name))

    def list(self, resource: str, namespace: str | None) -> list[dict]:
        """Objects sorted by (namespace, name); ``namespace=None``: every namespace."""
        items = self.objects[resource]
        keys = sorted(k for k in items if namespace is None or not KINDS[resource][2]
                      or k[0] == namespace)
        return [items[k] for k in keys]

    def namespace_exists(self, ns: str) -> bool:
        return ("", ns) in self.objects["namespaces"]

    def snapshot(self) -> tuple:
        """What :meth:`restore` puts back (a dry run: the server checks and stores nothing;
        writes replace objects, so copying the maps keeps every object as it was)."""
        return ({k: dict(v) for k, v in self.objects.items()}, self.rv, self.version, self._uid,
                self.workload_version)

    def restore(self, snap: tuple) -> None:
        objects, self.rv, self.version, self._uid, self.workload_version = snap
        self.objects = {k: dict(v) for k, v in objects.items()}

    # ----------------------------------------------------------------- writes
    def _next_rv(self) -> str:
        self.rv += 1
        self.version += 1
        return str(self.rv)

    def _new_meta(self, resource: str, ns: str, md: dict) -> dict:
        self._uid += 1
        out = {"name": md["name"], "uid": _uid_text(self._uid),
               "resourceVersion": self._next_rv(), "creationTimestamp": _CREATED}
        if KINDS[resource][2]:
            out["namespace"] = ns
        for k in ("labels", "annotations"):
            if md.get(k):
                out[k] = dict(md[k])
        if md.get("finalizers"):
            out["finalizers"] = list(md["finalizers"])
        return out

    def load(self, resource: str, ns: str, manifest: dict, status: dict | None = None) -> dict:
        """Create a workload object (every kind but NetworkPolicies) from a trusted manifest."""
        obj = copy.deepcopy(manifest)
        kind, api, _, _ = KINDS[resource]
        obj["apiVersion"], obj["kind"] = api, kind
        md = obj.get("metadata") or {}
        obj["metadata"] = self._new_meta(resource, ns, md)
        for k in ("ownerReferences",):
            if md.get(k):
                obj["metadata"][k] = copy.deepcopy(md[k])
        if resource in ("deployments", "replicasets"):
            obj["metadata"]["generation"] = 1
        if status is not None:
            obj["status"] = status
        self.objects[resource][(ns if KINDS[resource][2] else "", obj["metadata"]["name"])] = obj
        if resource != "networkpolicies":
            self.workload_version += 1
        return obj

    def delete(self, resource: str, ns: str, name: str) -> bool:
        """Delete an object: True when it is gone, False when finalizers keep it (it is
        marked as being deleted, with the server's ``deletionTimestamp``)."""
        key = (ns if KINDS[resource][2] else "", name)
        if key not in self.objects[resource]:
            raise not_found(resource, name)
        obj = self.objects[resource][key]
        if obj["metadata"].get("finalizers"):
            # kept, being deleted, until its finalizers are removed (none of the simulated
            # controllers removes one); it still selects pods and allows traffic
            if not obj["metadata"].get("deletionTimestamp"):
                md = dict(obj["metadata"], deletionTimestamp=timestamp(self.now),
                          deletionGracePeriodSeconds=0)
                md["generation"] = md.get("generation", 1) + 1
                md["resourceVersion"] = self._next_rv()
                self.objects[resource][key] = {**obj, "metadata": md}
            return False
        self._remove(resource, key)
        return True

    def _remove(self, resource: str, key: tuple) -> None:
        del self.objects[resource][key]
        self.version += 1
        if resource != "networkpolicies":
            self.workload_version += 1

    def set_labels(self, resource: str, namespace: str, name: str, labels: dict, *,
                   client: bool = False) -> bool:
        """Replace an object's labels (validated, as a new object: stored objects are never
        changed in place); True when they changed. ``client``: as kubectl's client dry run
        makes the object, unvalidated and with the resourceVersion it had."""
        obj = self.get(resource, namespace, name)
        errs = [] if client else validate_metadata({"labels": labels})
        if errs:
            raise Invalid(KINDS[resource][0], name, errs)
        old = obj["metadata"].get("labels") or {}
        if old == labels:
            return False
        # copy on write: stores built from one snapshot share the unchanged workload objects
        obj = dict(obj)
        obj["metadata"] = dict(obj["metadata"])
        self.objects[resource][(namespace if KINDS[resource][2] else "", name)] = obj
        if resource != "networkpolicies":
            self.workload_version += 1
        if labels:
            obj["metadata"]["labels"] = dict(labels)
        else:
            obj["metadata"].pop("labels", None)
        if not client:
            obj["metadata"]["resourceVersion"] = self._next_rv()
        return True

    # ------------------------------------------------------- NetworkPolicy writes
    def canonical_policy(self, body, ns: str, *, name: str | None = None,
                         old: dict | None = None) -> dict:
        """Decode, default and validate a NetworkPolicy body as the server does; returns
        the object to store (metadata from ``old`` on update). Raises ApiError/Invalid."""
        if not isinstance(body, dict):
            raise ApiError("BadRequest", "the body of the request was in an unknown format - "
                           "accepted media types include: application/json", 400)
        md = body.get("metadata")
        if md is not None and not isinstance(md, dict):
            raise DecodeError(f"cannot restore struct from: {reflect_kind(md)}", "metadata")
        md = md or {}
        for k in ("name", "namespace"):  # ObjectMeta's fields in Go's order
            if md.get(k) is not None and not isinstance(md[k], str):
                raise DecodeError(not_a_string(md[k]), "metadata." + k)
        meta = {}
        for k in ("labels", "annotations"):
            v = md.get(k)
            if v is None:
                continue
            if not isinstance(v, dict):
                raise DecodeError(f"cannot restore map from {reflect_kind(v)}", "metadata." + k)
            if any(x is not None and not isinstance(x, str) for x in v.values()):
                # ObjectMeta's maps take another path in 1.20's converter than a selector's
                # matchLabels ("cannot convert int64 to string")
                raise DecodeError("unrecognized type: string", "metadata." + k)
            if v:  # a JSON null in a map of strings decodes to ""
                meta[k] = {a: ("" if b is None else b) for a, b in v.items()}
        fins = md.get("finalizers")
        if fins is not None:
            if not isinstance(fins, list):
                raise DecodeError(f"cannot restore slice from {reflect_kind(fins)}",
                                  "metadata.finalizers")
            for f in fins:
                if f is not None and not isinstance(f, str):
                    raise DecodeError(not_a_string(f), "metadata.finalizers")
            if fins:
                meta["finalizers"] = ["" if f is None else f for f in fins]
        shape, spec, spec_errs = self._canonical_spec(body.get("spec"))
        obj_name = md.get("name") if isinstance(md.get("name"), str) else ""
        if old is not None:
            if not obj_name:  # checkName: the namer finds no name in the body
                raise ApiError("BadRequest", f"the name of the object ({old['metadata']['name']} "
                               "based on URL) was undeterminable: name must be provided", 400)
            if obj_name != old["metadata"]["name"]:
                raise ApiError("BadRequest", f"the name of the object ({obj_name}) does not match "
                               f"the name on the URL ({old['metadata']['name']})", 400)
            obj_name = old["metadata"]["name"]
        elif name is not None and obj_name != name:
            raise ApiError("BadRequest", f"the name of the object ({obj_name}) does not match "
                           f"the name on the URL ({name})", 400)
        obj_ns = md.get("namespace") if isinstance(md.get("namespace"), str) else ""
        if obj_ns and obj_ns != ns:  # checkName: after the name, only when the body has one
            raise ApiError("BadRequest", f"the namespace of the object ({obj_ns}) does not match "
                           f"the namespace on the request ({ns})", 400)
        errs: list[FieldError] = []
        if old is None:
            errs.extend(validate_name(obj_name))
        errs.extend(validate_metadata(meta, None if old is None else old["metadata"]))
        errs.extend(spec_errs)
        if errs:
            raise Invalid("NetworkPolicy", obj_name, errs)
        return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                "metadata": {"name": obj_name, **meta}, "spec": spec, "_shape": shape}

    def _canonical_spec(self, raw) -> tuple:
        return canonical_spec_parts(raw, self.end_port)

    def create_policy(self, ns: str, body) -> dict:
        if not self.namespace_exists(ns):
            raise ApiError("NotFound", f'namespaces "{ns}" not found', 404)
        try:
            new = self.canonical_policy(body, ns)
        except DecodeError as e:
            raise ApiError("BadRequest", f'NetworkPolicy in version "v1" cannot be handled as a '
                           f"NetworkPolicy: {e}", 400) from None
        return self.insert_policy(ns, new)

    def insert_policy(self, ns: str, new: dict) -> dict:
        """Store an already canonical policy (from :meth:`canonical_policy`) as created."""
        name = new["metadata"]["name"]
        if (ns, name) in self.objects["networkpolicies"]:
            raise ApiError("AlreadyExists", f'networkpolicies.networking.k8s.io "{name}" already exists', 409)
        new.pop("_shape", None)
        meta = self._new_meta("networkpolicies", ns, new["metadata"])
        meta["generation"] = 1
        new["metadata"] = meta
        self.objects["networkpolicies"][(ns, name)] = new
        return new

    def insert_kept_policy(self, ns: str, canon: dict, kept: dict) -> dict:
        """:meth:`insert_policy` of a copy of ``canon`` (a canonical policy never changed),
        the stored object kept in ``kept`` per (policy, namespace, resourceVersion, uid
        counter) and shared by the stores that insert it in the same state (stores never
        change objects in place)."""
        key = (id(canon), ns, self.rv, self._uid)
        hit = kept.get(key)
        if hit is None or hit[0] is not canon:
            obj = self.insert_policy(ns, dict(canon))
            if len(kept) >= 4096:
                kept.clear()
            kept[key] = (canon, obj)
            return obj
        obj = hit[1]
        name = obj["metadata"]["name"]
        if (ns, name) in self.objects["networkpolicies"]:
            return self.insert_policy(ns, dict(canon))  # raises AlreadyExists
        self._uid += 1
        self._next_rv()
        self.objects["networkpolicies"][(ns, name)] = obj
        return obj

    def update_policy(self, ns: str, name: str, body) -> tuple[dict, bool]:
        """Store the decoded ``body`` as the new state of policy ``name``; returns (object,
        changed). A body that decodes to the same object changes nothing."""
        old = self.get("networkpolicies", ns, name)
        new = self.canonical_policy(body, ns, old=old)
        # the server compares typed specs, where an explicit empty list is not a missing one
        spec_changed = new.pop("_shape") != old["spec"]
        om = old["metadata"]
        same_meta = all(new["metadata"].get(k) == om.get(k) for k in _WRITTEN_META)
        if same_meta and not spec_changed:
            return old, False
        if om.get("deletionTimestamp") and not new["metadata"].get("finalizers"):
            self._remove("networkpolicies", (ns, name))  # its last finalizer went: it goes
            return old, True
        return self._commit_update(ns, name, old, new["metadata"], new["spec"], spec_changed), True

    def set_policy_spec(self, ns: str, name: str, spec: dict, spec_changed: bool) -> dict:
        """Store policy ``name`` with ``spec`` (canonical, from an earlier
        :meth:`update_policy` of a body with this policy's labels and annotations) as that
        update did; ``spec_changed``: what the update found."""
        old = self.get("networkpolicies", ns, name)
        om = old["metadata"]
        meta = {k: type(om[k])(om[k]) for k in _WRITTEN_META if om.get(k)}
        return self._commit_update(ns, name, old, meta, spec, spec_changed)

    def _commit_update(self, ns: str, name: str, old: dict, new_meta: dict, spec: dict,
                       spec_changed: bool) -> dict:
        om = old["metadata"]
        meta = {k: v for k, v in om.items() if k not in _WRITTEN_META}
        meta.update({k: v for k, v in new_meta.items() if k in _WRITTEN_META})
        if spec_changed:
            meta["generation"] = om.get("generation", 1) + 1
        meta["resourceVersion"] = self._next_rv()
        new = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
               "metadata": meta, "spec": spec}
        self.objects["networkpolicies"][(ns, name)] = new
        return new

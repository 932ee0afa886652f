"""Strategic merge patch of a NetworkPolicy, as k8s.io/apimachinery's ``strategicpatch``
applies it with NetworkPolicy's patch metadata: in kube-apiserver 1.20 (``kubectl patch``,
``kubectl apply``) and in kubectl 1.32 (``kubectl patch --dry-run=client``, which merges
locally). No field of a NetworkPolicy has a merge key or a patch strategy, so every list
is replaced whole.

Each map of the patch is merged as ``mergeMap`` does, directives first:

* ``$patch``: ``replace`` (the patch's map replaces the original's, as it is: its nulls and
  directives are kept), ``delete`` (an empty map); another value is an error;
* ``$retainKeys``: a list of the keys the original keeps; every other key of the patch map
  must be in it;
* ``$setElementOrder/<list>``: reorders a list of scalars (the original's, or the patch's
  when it sends the list too): the items it names in its order, the others merged in by
  their place in the original;
* ``$deleteFromPrimitiveList/<list>``: kubectl 1.32 deletes those scalars from the list; the
  1.20 server replaces the list with them (it lacks 1.32's check that skips a value of
  another type), when the original has the list.

Then each key: ``null`` deletes it; a value the original lacks, or of another JSON type,
is taken as it is (its nulls too: the 1.20 server stores ``labels: {x: null}`` sent to a
policy without labels as ``x: ""``); two maps merge; two lists or two scalars: the
patch's. Errors carry the library's words and how the server answers them.
``metadata.finalizers`` has the ``merge`` strategy: the patch's items, and the original's
that it lacks, in the order ``mergeSortedSlice`` gives (``$deleteFromPrimitiveList``
deletes from it on both). Left out: merge keys (``ownerReferences`` is replaced whole
here), ``$setElementOrder`` on a merged list, ``$setElementOrder`` together with
``$deleteFromPrimitiveList`` on one list, and the order in which Go's map iteration meets
two keys that both write one list (here: the patch's order).
"""
from __future__ import annotations

from netarena_gym.k8s.state_patches import PatchMalformed, clone, go_value
from netarena_gym.k8s.state_validation import json_kind

__all__ = ["StrategicError", "StrategicPanic", "strategic_merge_patch"]

PATCH, RETAIN = "$patch", "$retainKeys"
ORDER, DELETE = "$setElementOrder/", "$deleteFromPrimitiveList/"
_MAP, _OBJECTS, _SCALARS, _MERGED = "map", "objects", "scalars", "merged scalars"
#: the structs a map of the patch can merge into (lists are replaced, so nothing inside one
#: is merged), their fields' json names and what each holds
_STRUCTS = {
    "NetworkPolicy": {"apiVersion": None, "kind": None, "metadata": "ObjectMeta",
                      "spec": "NetworkPolicySpec"},
    "ObjectMeta": {**dict.fromkeys(("name", "generateName", "namespace", "selfLink", "uid",
                                    "resourceVersion", "generation", "creationTimestamp",
                                    "deletionTimestamp", "deletionGracePeriodSeconds",
                                    "clusterName")),
                   "labels": _MAP, "annotations": _MAP, "ownerReferences": _OBJECTS,
                   "finalizers": _MERGED, "managedFields": _OBJECTS},
    "NetworkPolicySpec": {"podSelector": "LabelSelector", "ingress": _OBJECTS,
                          "egress": _OBJECTS, "policyTypes": _SCALARS},
    "LabelSelector": {"matchLabels": _MAP, "matchExpressions": _OBJECTS},
}


class StrategicError(Exception):
    """The patch cannot be merged; ``str(e)`` is the library's error. ``bad_request``: the
    server answers 400 (one of ``mergepatch``'s format errors), else 500 with no reason
    (``Error from server: ...``); kubectl prints ``error: ...``."""

    def __init__(self, text: str, bad_request: bool = False):
        super().__init__(text)
        self.bad_request = bad_request


class StrategicPanic(Exception):
    """A Go runtime panic inside ``strategicpatch`` (``str(e)``: its message): the server's
    handler dies and its HTTP/2 stream is reset; kubectl crashes."""


def strategic_merge_patch(doc, patch, *, client: bool = False) -> dict:
    """``doc`` patched by ``patch`` (neither is changed); ``client``: kubectl 1.32's rules,
    else kube-apiserver 1.20's. Raises :class:`PatchMalformed` for a patch that is not a
    map, :class:`StrategicError` and :class:`StrategicPanic`."""
    if not isinstance(patch, dict):
        raise PatchMalformed("json: cannot unmarshal " + json_kind(patch, boolean="bool")
                             + " into Go value of type map[string]interface {}")
    return _merge_map(clone(doc) if isinstance(doc, dict) else {}, patch, "NetworkPolicy", client)


def _merge_map(original: dict, patch: dict, struct: str | None, client: bool) -> dict:
    """``original`` (a private copy, its values taken as they are) merged with ``patch``."""
    if PATCH in patch:
        how = patch[PATCH]
        if how == "replace":
            return {k: clone(v) for k, v in patch.items() if k != PATCH}
        if how == "delete":
            return {}
        raise StrategicError(f"unknown patch type: {_go_s(how)} in map: {go_value(patch)}")
    out, patch = dict(original), dict(patch)
    if RETAIN in patch:
        _retain_keys(out, patch)
    for key in [k for k in patch if k.startswith(ORDER)]:
        _set_element_order(out, patch, key, struct)
    fields = _STRUCTS.get(struct or "", {})
    for k, v in patch.items():
        deleting = k.startswith(DELETE)
        if deleting:
            k = k[len(DELETE):]
        if v is None:
            out.pop(k, None)
        elif k not in out:
            if not deleting:
                out[k] = clone(v)
        elif _go_type(out[k]) != _go_type(v):
            if not (deleting and client):
                out[k] = clone(v)
        elif isinstance(v, dict):
            sub = fields.get(k)
            out[k] = _merge_map(out[k], v, sub if sub in _STRUCTS else None, client)
        elif deleting and (client or fields.get(k) == _MERGED):
            out[k] = _delete_from(out[k], v, fields.get(k))
        elif fields.get(k) == _MERGED and not deleting:  # patchStrategy merge: a union
            sent = {_key(x) for x in v}
            out[k] = _merge_by_place([x for x in out[k] if _key(x) not in sent], clone(v), out[k])
        else:
            out[k] = clone(v)
    return out


def _retain_keys(out: dict, patch: dict) -> None:
    keep = patch.pop(RETAIN)
    if not isinstance(keep, list):
        raise StrategicError("invalid patch format of retainKeys", bad_request=True)
    names = set()
    for name in keep:
        _hashable(name)
        if isinstance(name, str):
            names.add(name)
    for k, v in patch.items():
        if v is not None and not k.startswith((DELETE, ORDER)) and k not in names:
            raise StrategicError("invalid patch format of retainKeys", bad_request=True)
    for k in [k for k in out if k not in names]:
        del out[k]


def _set_element_order(out: dict, patch: dict, key: str, struct: str | None) -> None:
    order = patch.pop(key)
    name = key[len(ORDER):]
    have = out.get(name, []) if name in out else []
    sent = patch.get(name, []) if name in patch else []
    for v in (order, have, sent):
        if not isinstance(v, list):
            raise StrategicError(f"expected a []interface {{}}, but received a {_go_typename(v)}")
    if struct is not None and name not in _STRUCTS[struct]:
        raise StrategicError(f"unable to find api field in struct {struct} for the json field "
                             f'"{name}"')
    if not have and not sent:
        return
    for v in order + have + sent:
        _hashable(v)
    at = {_key(v): i for i, v in reversed(list(enumerate(order)))}
    if name in patch:  # the patch's list replaces the original's, in the order given
        if any(_key(v) not in at for v in sent):
            raise StrategicError("invalid patch format of setElementOrder list", bad_request=True)
        out[name] = sorted(clone(sent), key=lambda v: at[_key(v)])
        del patch[name]
        return
    named = sorted((v for v in have if _key(v) in at), key=lambda v: at[_key(v)])
    rest = [v for v in have if _key(v) not in at]
    out[name] = _merge_by_place(rest, named, have)


def _merge_by_place(left: list, right: list, server: list) -> list:
    """``mergeSortedSlice``: two runs merged by their items' places in ``server``; a tie, or
    an item ``server`` lacks, takes from ``right``."""
    place = {_key(v): i for i, v in reversed(list(enumerate(server)))}
    out, i, j = [], 0, 0
    while i < len(left) or j < len(right):
        if j >= len(right) or (i < len(left) and place.get(_key(left[i]), -1) >= 0
                               and place.get(_key(right[j]), -1) >= 0
                               and place[_key(left[i])] < place[_key(right[j])]):
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out


def _delete_from(have: list, drop: list, field: str | None) -> list:
    """kubectl 1.32's ``$deleteFromPrimitiveList``: the scalars of ``have`` not in ``drop``."""
    if not drop and not have:
        return have
    if field == _OBJECTS or any(isinstance(v, (dict, list)) for v in have + drop):
        raise StrategicError("cannot merge lists without merge key for "
                             + ("struct" if field == _OBJECTS else "map"))
    gone = {_key(v) for v in drop}
    return [v for v in have if _key(v) not in gone]


def _go_type(v) -> str:
    """reflect.TypeOf of what apimachinery's JSON decoding makes of ``v``."""
    return "nil" if v is None else json_kind(v, integer="int64", boolean="bool")


def _go_typename(v) -> str:
    """``%s`` of ``reflect.TypeOf(v)`` (mergepatch.ErrBadArgType)."""
    if v is None:
        return "%!s(<nil>)"
    return {"object": "map[string]interface {}", "array": "[]interface {}",
            "number": "float64"}.get(_go_type(v), _go_type(v))


def _go_s(v) -> str:
    """Go's ``%s`` of a decoded JSON value that may not be a string."""
    if isinstance(v, str):
        return v
    if v is None:
        return "%!s(<nil>)"
    if isinstance(v, (dict, list)):
        return go_value(v)
    return f"%!s({_go_typename(v)}={go_value(v)})"


def _key(v):
    """A scalar as Go's interface comparison sees it: a type and a value (1 and 1.0 and
    true differ)."""
    return (_go_type(v), v)


def _hashable(v) -> None:
    if isinstance(v, (dict, list)):
        raise StrategicPanic("runtime error: hash of unhashable type " + _go_typename(v))

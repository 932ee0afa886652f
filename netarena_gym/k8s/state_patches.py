"""Patch semantics of the API server and kubectl, on JSON-like data.

* :func:`json_patch`: RFC 6902 (add, remove, replace, move, copy, test; JSON pointers with
  ``~0``/``~1`` and ``-``); any failure raises :class:`PatchFailed`, as evanphx/json-patch does.
* :func:`merge_patch`: RFC 7386 (objects merge, ``null`` deletes, everything else replaces).
* Kubernetes' strategic merge is :mod:`netarena_gym.k8s.state_strategic`.
* :func:`three_way_patch`: what ``kubectl apply`` sends: deletions from the last applied
  configuration, additions and changes against the live object.
"""
from __future__ import annotations

from netarena_gym.k8s.state_validation import json_kind


def clone(v):
    """A deep copy of JSON-like data (dicts, lists, scalars), several times faster than
    :func:`copy.deepcopy`."""
    t = type(v)
    if t is dict:
        return {k: clone(x) for k, x in v.items()}
    if t is list:
        return [clone(x) for x in v]
    return v


class PatchFailed(Exception):
    """The patch could not be applied (the server answers 422 with a generic message)."""


class PatchMalformed(Exception):
    """The patch document is not what the patch type expects (the server answers 400)."""


# ------------------------------------------------------------------------- RFC 6902
def _unescape(tok: str) -> str:
    return tok.replace("~1", "/").replace("~0", "~")


def _split(path) -> list[str]:
    if not isinstance(path, str):
        raise PatchFailed("path is not a string")
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchFailed(f"invalid path {path!r}")
    return [_unescape(t) for t in path[1:].split("/")]


def _index(tok: str, n: int, allow_end: bool) -> int:
    if tok == "-" and allow_end:
        return n
    # ASCII digits only: str.isdigit() also takes "²" and "٣", which int() refuses or reads
    if not (tok.isascii() and tok.isdigit()) or (len(tok) > 1 and tok[0] == "0"):
        raise PatchFailed(f"invalid array index {tok!r}")
    if len(tok) > 19:  # past any list (and int() refuses more than 4,300 digits)
        raise PatchFailed("index out of range")
    i = int(tok)
    if i > n or (i == n and not allow_end):
        raise PatchFailed("index out of range")
    return i


def _parent(doc, toks: list[str]):
    cur = doc
    for t in toks[:-1]:
        if isinstance(cur, dict):
            if t not in cur:
                raise PatchFailed("missing path")
            cur = cur[t]
        elif isinstance(cur, list):
            cur = cur[_index(t, len(cur), False)]
        else:
            raise PatchFailed("missing path")
    return cur


def _get(doc, toks: list[str]):
    if not toks:
        return doc
    par = _parent(doc, toks)
    t = toks[-1]
    if isinstance(par, dict):
        if t not in par:
            raise PatchFailed("missing path")
        return par[t]
    if isinstance(par, list):
        return par[_index(t, len(par), False)]
    raise PatchFailed("missing path")


def _add(doc, toks: list[str], value):
    if not toks:
        return value
    par = _parent(doc, toks)
    t = toks[-1]
    if isinstance(par, dict):
        par[t] = value
    elif isinstance(par, list):
        par.insert(_index(t, len(par), True), value)
    else:
        raise PatchFailed("missing path")
    return doc


def _remove(doc, toks: list[str]):
    if not toks:
        raise PatchFailed("cannot remove the root")
    par = _parent(doc, toks)
    t = toks[-1]
    if isinstance(par, dict):
        if t not in par:
            raise PatchFailed("missing path")
        return par.pop(t)
    if isinstance(par, list):
        return par.pop(_index(t, len(par), False))
    raise PatchFailed("missing path")


def _own(doc, toks: list[str], owned: set):
    """Copy-on-write: make the root and every container on the way to ``toks``'s parent
    copies made by this patch (recorded in ``owned``), so that changing the parent never
    changes ``doc``'s original; returns the (possibly new) root. A path that does not
    resolve stops the copying (the operation then fails as before)."""
    if isinstance(doc, (dict, list)) and id(doc) not in owned:
        doc = dict(doc) if isinstance(doc, dict) else list(doc)
        owned.add(id(doc))
    cur = doc
    for t in toks[:-1]:
        if isinstance(cur, dict):
            if t not in cur:
                break
            child, key = cur[t], t
        elif isinstance(cur, list):
            if not t.isdigit() or (len(t) > 1 and t[0] == "0") or int(t) >= len(cur):
                break
            key = int(t)
            child = cur[key]
        else:
            break
        if isinstance(child, (dict, list)) and id(child) not in owned:
            child = dict(child) if isinstance(child, dict) else list(child)
            owned.add(id(child))
            cur[key] = child
        cur = child
    return doc


def json_patch(doc, patch) -> object:
    """Apply an RFC 6902 patch to a copy of ``doc`` (``doc`` is never changed: the
    containers an operation changes are copied first, the rest is shared)."""
    if not isinstance(patch, list):
        raise PatchMalformed("json: cannot unmarshal " + _go_kind(patch)
                             + " into Go value of type jsonpatch.Patch")
    owned: set = set()
    doc = _own(doc, [], owned)
    for op in patch:
        if not isinstance(op, dict):
            raise PatchMalformed("json: cannot unmarshal " + _go_kind(op)
                                 + " into Go value of type jsonpatch.Operation")
        kind = op.get("op")
        toks = _split(op.get("path"))
        if kind == "add":
            if "value" not in op:
                raise PatchFailed("missing value")
            doc = _add(_own(doc, toks, owned), toks, clone(op["value"]))
        elif kind == "remove":
            doc = _own(doc, toks, owned)
            _remove(doc, toks)
        elif kind == "replace":
            if "value" not in op:
                raise PatchFailed("missing value")
            _get(doc, toks)
            if not toks:
                doc = clone(op["value"])
            else:
                doc = _own(doc, toks, owned)
                par = _parent(doc, toks)
                if isinstance(par, dict):
                    par[toks[-1]] = clone(op["value"])
                else:
                    par[_index(toks[-1], len(par), False)] = clone(op["value"])
        elif kind in ("move", "copy"):
            src = _split(op.get("from"))
            value = _get(doc, src)
            if kind == "move":
                if toks[:len(src)] == src and len(toks) > len(src):
                    raise PatchFailed("cannot move a value into itself")
                doc = _own(doc, src, owned)
                _remove(doc, src)
            else:
                value = clone(value)
            doc = _add(_own(doc, toks, owned), toks, value)
        elif kind == "test":
            if "value" not in op:
                raise PatchFailed("missing value")
            if not _equal(_get(doc, toks), op["value"]):
                raise PatchFailed("testing value failed")
        else:
            raise PatchFailed(f"unexpected kind of operation {kind!r}")
    return doc


def _equal(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def _go_kind(v) -> str:
    return json_kind(v, boolean="bool")


# ------------------------------------------------------------------------- RFC 7386
def merge_patch(doc, patch):
    if not isinstance(patch, dict):
        return clone(patch)
    out = clone(doc) if isinstance(doc, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


# ----------------------------------------------------------- kubectl apply (3-way)
def three_way_patch(original: dict | None, modified: dict, current: dict) -> dict:
    """The strategic patch ``kubectl apply`` computes (lists compared whole)."""
    patch = _additions(current, modified)
    if original:
        _merge_into(patch, _deletions(original, modified))
    return patch


def _additions(current, modified) -> dict:
    out = {}
    for k, v in modified.items():
        cur = current.get(k) if isinstance(current, dict) else None
        if isinstance(v, dict) and isinstance(cur, dict):
            sub = _additions(cur, v)
            if sub:
                out[k] = sub
        elif not isinstance(current, dict) or k not in current:
            out[k] = clone(v)
        elif not equal_json(cur, v):
            out[k] = clone(v)
    return out


def _deletions(original: dict, modified: dict) -> dict:
    out = {}
    for k, v in original.items():
        if k not in modified:
            out[k] = None
        elif isinstance(v, dict) and isinstance(modified[k], dict):
            sub = _deletions(v, modified[k])
            if sub:
                out[k] = sub
    return out


def _merge_into(a: dict, b: dict) -> None:
    for k, v in b.items():
        if k in a and isinstance(a[k], dict) and isinstance(v, dict):
            _merge_into(a[k], v)
        elif k not in a:
            a[k] = v


def equal_json(a, b) -> bool:
    """Decoded JSON values equal as JSON: numbers by value (1 and 1.0), a bool only to a
    bool."""
    if type(a) is not type(b):
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) \
                and not isinstance(a, bool) and not isinstance(b, bool):
            return a == b
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(equal_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(equal_json(x, y) for x, y in zip(a, b))
    return a == b


def go_value(v) -> str:
    """Go's ``%v`` of decoded JSON (``map[k:v]``, ``[a b]``, ``<nil>``), for messages."""
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict):
        return "map[" + " ".join(f"{k}:{go_value(v[k])}" for k in sorted(v)) + "]"
    if isinstance(v, list):
        return "[" + " ".join(go_value(x) for x in v) + "]"
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e21:
        return str(int(v))
    return str(v)

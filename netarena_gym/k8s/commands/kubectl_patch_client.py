"""``kubectl patch --dry-run=client``: kubectl 1.32 gets the object from the server and
patches it locally, sending nothing else and validating nothing, so an invalid policy is
``patched`` here where the server would refuse it.

* ``--type=json``: gopkg.in/evanphx/json-patch.v4 v4.12.0 (:func:`json_patch_v4`), with its
  words: a missing map key reads as null (``replace`` and ``copy`` take it), array indexes
  are ``strconv.Atoi``'s (``01``, ``+0``) and may count from the end (``-1``), ``replace`` of
  ``""`` swaps the whole document for an object or an array (any other value does nothing),
  and kubectl rewords "doc is missing key" as ``Object to be patched is missing field``.
* ``--type=merge``: the same library's ``MergePatch`` (RFC 7386; a value that replaces a
  non-map keeps its nulls).
* ``--type=strategic``: apimachinery's strategic merge with kubectl 1.32's rules
  (:mod:`netarena_gym.k8s.state_strategic`); a body that is not one JSON object is
  ``invalid JSON document``.

The result is read as an unstructured object (``Object 'Kind' is missing in '...'``, an
array ``cannot unmarshal array into Go value of type unstructured.detector``) and printed by
its own kind, group and name (``networkpolicy/x`` without an apiVersion, ``<unknown>``
without a name); ``patched (no change)`` when it equals what the server sent, typed as Go
decodes JSON (an int64 is not a float64). Left out: kubectl's own crashes (``test`` of a
missing value with no ``value`` field is a nil dereference: its panic's first lines are
given), and ``-o yaml|json`` (refused as not simulated by
:mod:`~netarena_gym.k8s.commands.kubectl_print`); what the server adds to the object it
sends (``managedFields``) is not simulated, so a dump of the object lacks it.
"""
from __future__ import annotations

import re

from netarena_gym.k8s.commands.go_json import go_quote, syntax_error
from netarena_gym.k8s.commands.kubectl_patch_body import go_numbers, json_prefixed, load_json
from netarena_gym.k8s.state import compact
from netarena_gym.k8s.state_patches import clone, equal_json
from netarena_gym.k8s.state_strategic import StrategicError, StrategicPanic, strategic_merge_patch
from netarena_gym.k8s.state_validation import json_kind

__all__ = ["ClientPatchError", "client_patch", "printed_name", "same_object"]

MISSING = "missing value"  # json-patch's ErrMissing
_INDEX = "invalid index referenced"  # ErrInvalidIndex
_PANIC = ("panic: runtime error: invalid memory address or nil pointer dereference\n"
          "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x161baf7]\n\n"
          "goroutine 1 [running]:\n"
          "gopkg.in/evanphx/json-patch%2ev4.Patch.test(...)\n"
          "\tgopkg.in/evanphx/json-patch.v4@v4.12.0/patch.go:691 +0x477\n")
_ATOI = re.compile(r"[+-]?[0-9]+\Z")
_INT64 = 1 << 63


class ClientPatchError(Exception):
    """kubectl's error (``str(e)``, printed after ``error: ``), or a crash: ``status`` 2 and
    ``str(e)`` the whole output."""

    def __init__(self, text: str, status: int = 1):
        super().__init__(text)
        self.status = status


def client_patch(current: dict, ptype: str, text: str) -> dict:
    """The object kubectl makes from ``current`` and the patch body ``text`` (what kubectl
    sends: JSON after its YAML pass); raises :class:`ClientPatchError`."""
    doc = clone(current)
    try:
        if ptype == "json":
            result = json_patch_v4(doc, _decode_patch(text))
        elif ptype == "merge":
            result = _merge_patch(doc, text)
        else:
            patch = _json_or_none(text)
            if patch is _BAD or not isinstance(patch, (dict, type(None))):
                raise ClientPatchError("invalid JSON document")
            result = doc if patch is None else strategic_merge_patch(doc, patch, client=True)
    except StrategicError as e:
        raise ClientPatchError(str(e)) from None
    except StrategicPanic as e:
        raise ClientPatchError(f"panic: {e}\n\ngoroutine 1 [running]:\n", 2) from None
    if not isinstance(result, dict):
        raise ClientPatchError(f"json: cannot unmarshal {json_kind(result)} into Go value of "
                               "type unstructured.detector")
    if not isinstance(result.get("kind"), str) or not result["kind"]:
        raise ClientPatchError(f"Object 'Kind' is missing in '{compact(result)}'")
    return result


def printed_name(obj: dict) -> str:
    """``kind.group/name`` as kubectl's name printer shows an unstructured object."""
    gv = obj.get("apiVersion")
    group = gv.partition("/")[0] if isinstance(gv, str) and gv.count("/") == 1 else ""
    md = obj.get("metadata")
    name = md.get("name") if isinstance(md, dict) else None
    kind = obj["kind"].lower() + (f".{group}" if group else "")
    return f"{kind}/{name if isinstance(name, str) and name else '<unknown>'}"


def same_object(a, b) -> bool:
    """``reflect.DeepEqual`` of two unstructured objects (an int64 is not a float64)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(
            same_object(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(
            same_object(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


# ----------------------------------------------------------------------- body decoding
_BAD = object()


def _json_or_none(text: str, syntax_raises: bool = False):
    """``json.Unmarshal`` of the whole text: the value, or ``_BAD`` for a syntax error
    (``syntax_raises``: :class:`ClientPatchError` with Go's words). Text that went through
    kubectl's YAML pass holds integral floats as integers (the simulator passes JSON
    through it unchanged)."""
    problem = syntax_error(text)
    if problem is not None:
        if syntax_raises:
            raise ClientPatchError(problem)
        return _BAD
    try:
        value = load_json(text)
        return value if json_prefixed(text) else go_numbers(value)
    except ValueError as e:  # the simulator's own refusal (nesting)
        raise ClientPatchError(str(e)) from None


def _decode_patch(text: str) -> list:
    """``jsonpatch.DecodePatch``: an array of objects (null: no operations)."""
    patch = _json_or_none(text, syntax_raises=True)
    if patch is None:
        return []
    if not isinstance(patch, list):
        raise ClientPatchError(f"json: cannot unmarshal {json_kind(patch)} into Go value of "
                               "type jsonpatch.Patch")
    for op in patch:
        if op is not None and not isinstance(op, dict):
            raise ClientPatchError(f"json: cannot unmarshal {json_kind(op)} into Go value of "
                                   "type jsonpatch.Operation")
    return [op or {} for op in patch]


# ---------------------------------------------------------------------- RFC 7386 (v4)
def _merge_patch(doc: dict, text: str):
    patch = _json_or_none(text)
    if patch is _BAD or patch is None or not isinstance(patch, (dict, list)):
        raise ClientPatchError("Invalid JSON Patch")
    if isinstance(patch, list):  # not a document: the patch, its maps' nulls pruned
        return _pruned(patch)
    _merge_docs(doc, patch)
    return doc


def _merge_docs(doc: dict, patch: dict) -> None:
    for k, v in patch.items():
        if v is None:
            doc.pop(k, None)
        elif doc.get(k) is None:
            doc[k] = _pruned(v)
        elif not isinstance(doc[k], dict):
            doc[k] = _pruned(v)
        elif isinstance(v, dict):
            _merge_docs(doc[k], v)
        else:
            doc[k] = clone(v)


def _pruned(v):
    if isinstance(v, dict):
        return {k: _pruned(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [_pruned(x) for x in v]
    return v


# ---------------------------------------------------------------- RFC 6902 (v4.12.0)
def json_patch_v4(doc: dict, ops: list):
    """``Patch.Apply`` of gopkg.in/evanphx/json-patch.v4 v4.12.0 on a private copy."""
    for op in ops:
        kind = op.get("op")
        step = _OPS.get(kind) if isinstance(kind, str) else None
        if step is None:
            raise ClientPatchError(f"Unexpected kind: {kind if isinstance(kind, str) else 'unknown'}")
        try:
            doc = step(doc, op)
        except ClientPatchError as e:
            text = str(e)
            at = text.find("doc is missing key: ")
            if at >= 0:  # kubectl's rewording (patch.go, getPatchedJSON)
                text = f"Object to be patched is missing field ({text[at + 20:]})"
            raise ClientPatchError(text, e.status) from None
    return doc


def _wrap(text: str, cause: str = MISSING) -> ClientPatchError:
    return ClientPatchError(f"{text}: {cause}")


def _field(op: dict, name: str):
    """(the operation's ``path``/``from`` string, None) or (None, why it could not be read)."""
    if op.get(name) is None:
        return None, (f"operation missing {name} field: {MISSING}" if name == "path"
                      else f"operation, missing from field: {MISSING}")
    if not isinstance(op[name], str):
        return None, f"json: cannot unmarshal {json_kind(op[name])} into Go value of type string"
    return op[name], None


def _find(doc, path: str):
    """``findObject``: (the container of the path's last token, that token) or None."""
    toks = path.split("/")
    if len(toks) < 2:
        return None
    node = doc
    for tok in toks[1:-1]:
        try:
            node = _get(node, _unescape(tok))
        except ClientPatchError:
            return None
        if not isinstance(node, (dict, list)):
            return None
    return node, _unescape(toks[-1])


def _unescape(tok: str) -> str:
    return tok.replace("~1", "/").replace("~0", "~")


def _atoi(key: str) -> int:
    if not _ATOI.match(key):
        raise ClientPatchError(f'strconv.Atoi: parsing "{go_quote(key)}": invalid syntax')
    digits = key.lstrip("+-").lstrip("0") or "0"  # int() takes at most 4,300 digits
    i = int(digits) if len(digits) <= 19 else _INT64
    i = -i if key[0] == "-" else i
    if not -_INT64 <= i < _INT64:
        raise ClientPatchError(f'strconv.Atoi: parsing "{go_quote(key)}": value out of range')
    return i


def _position(ary: list, key: str, extra: int = 0) -> int:
    """An index of ``ary`` (``extra`` 1: one past the end too, for an insertion),
    counted from the end when negative."""
    i = _atoi(key)
    n = len(ary) + extra
    if i >= n or i < -n:
        raise ClientPatchError(f"Unable to access invalid index: {i}: {_INDEX}")
    return i + n if i < 0 else i


def _get(node, key: str):
    if isinstance(node, dict):
        return node.get(key)
    return node[_position(node, key)]


def _add(node, key: str, value) -> None:
    if isinstance(node, dict):
        node[key] = value
    elif key == "-":
        node.append(value)
    else:
        try:
            i = _position(node, key, 1)
        except ClientPatchError as e:
            if "strconv" not in str(e):
                raise
            raise ClientPatchError(f"value was not a proper array index: '{key}': {e}") from None
        node.insert(i, value)


def _remove(node, key: str) -> None:
    if isinstance(node, dict):
        if key not in node:
            raise _wrap(f"Unable to remove nonexistent key: {key}")
        del node[key]
    else:
        del node[_position(node, key)]


def _locate(doc, op, kind: str, name: str, where: str, why_shown: bool = True,
            root: bool = False):
    """(container, token, the field's text) of the operation's ``name`` field (``path`` or
    ``from``), raising with json-patch's words: ``<kind> operation failed to decode
    <name>: <why>`` (``why_shown`` False: ``missing value`` whatever the cause) and
    ``<kind> operation does not apply: <where>: missing value``, ``where`` holding ``{}``
    for the text. ``root``: ``""`` (the whole document) is given back as (None, None, "")."""
    text, why = _field(op, name)
    if why:
        raise ClientPatchError(f"{kind} operation failed to decode {name}: "
                               f"{why if why_shown else MISSING}")
    if root and text == "":
        return None, None, text
    found = _find(doc, text)
    if found is None:
        raise _wrap(f"{kind} operation does not apply: " + where.format(text))
    return found[0], found[1], text


def _wrapped(prefix: str, step, *args):
    """``step(*args)``, its error prefixed (``errors.Wrapf``)."""
    try:
        return step(*args)
    except ClientPatchError as e:
        raise ClientPatchError(f"{prefix}: {e}") from None


def _add_op(doc, op):
    node, key, path = _locate(doc, op, "add", "path", 'doc is missing path: "{}"', False)
    _wrapped(f"error in add for path: '{path}'", _add, node, key, clone(op.get("value")))
    return doc


def _remove_op(doc, op):
    node, key, path = _locate(doc, op, "remove", "path", 'doc is missing path: "{}"', False)
    _wrapped(f"error in remove for path: '{path}'", _remove, node, key)
    return doc


def _replace_op(doc, op):
    node, key, path = _locate(doc, op, "replace", "path", "doc is missing path: {}", root=True)
    if path == "":  # the whole document: an object or an array replaces it
        value = op.get("value")
        return clone(value) if isinstance(value, (dict, list)) else doc
    try:
        _get(node, key)
    except ClientPatchError:
        raise _wrap(f"replace operation does not apply: doc is missing key: {path}") from None
    if isinstance(node, dict):
        node[key] = clone(op.get("value"))
    else:
        node[_position(node, key)] = clone(op.get("value"))
    return doc


def _move_op(doc, op):
    node, key, _ = _locate(doc, op, "move", "from", "doc is missing from path: {}")

    def take():
        value = _get(node, key)
        _remove(node, key)
        return value

    value = _wrapped(f"error in move for path: '{key}'", take)
    node, key, path = _locate(doc, op, "move", "path", "doc is missing destination path: {}")
    _wrapped(f"error in move for path: '{path}'", _add, node, key, value)
    return doc


def _test_op(doc, op):
    node, key, path = _locate(doc, op, "test", "path", "is missing path: {}", root=True)
    if path == "":
        value = doc
    else:
        value = _wrapped(f"error in test for path: '{path}'", _get, node, key)
        if value is None:
            if "value" not in op:
                raise ClientPatchError(_PANIC, 2)
            if op["value"] is None:
                return doc
    if "value" in op and equal_json(value, op["value"]):
        return doc
    raise _wrap(f"testing value {path} failed", "test failed")


def _copy_op(doc, op):
    node, key, src = _locate(doc, op, "copy", "from", "doc is missing from path: {}")
    value = _wrapped(f"error in copy for from: '{src}'", _get, node, key)
    node, key, _ = _locate(doc, op, "copy", "path", "doc is missing destination path: {}",
                           False)
    _wrapped("error while adding value during copy", _add, node, key, clone(value))
    return doc


_OPS = {"add": _add_op, "remove": _remove_op, "replace": _replace_op, "move": _move_op,
        "test": _test_op, "copy": _copy_op}

"""The text of ``kubectl patch -p``: what kubectl 1.32 sends, and what kube-apiserver 1.20
reads of it.

kubectl passes ``-p`` through apimachinery's ``yaml.ToJSON`` whatever the ``--type``: text
that starts with ``{`` (after white space) goes out as it is; anything else is YAML,
converted to JSON by sigs.k8s.io/yaml over go-yaml v2, which reads the first document only
(:func:`client_json`; its errors are ``unable to parse "...": yaml: ...`` with go-yaml's
line numbers, :func:`~netarena_gym.k8s.commands.kubectl_manifests.yaml_problem`). The
server decodes a strategic merge patch's body with a ``json.Decoder`` (its first value)
and the others whole, and words a syntax error as Go's scanner does (:func:`server_patch`,
:mod:`~netarena_gym.k8s.commands.go_json`). Left out: go-yaml's errors for aliases (the
simulator refuses aliases outright) and for YAML it parses where PyYAML does not.
"""
from __future__ import annotations

import json
import math
import re

from netarena_gym.core.actions import depth_ok
from netarena_gym.k8s.commands.go_json import first_value_end, go_quote, syntax_error
from netarena_gym.k8s.commands.kubectl_common import err
from netarena_gym.k8s.commands.kubectl_manifests import (
    MAX_DEPTH, check_yaml_budget, jsonable, yaml_problem)
from netarena_gym.k8s.workload import yaml_module
from netarena_gym.shell.parser import INVALID, CommandResult

__all__ = ["client_json", "server_patch", "load_json", "json_prefixed", "bad_yaml_escape",
           "GoSyntaxError"]


def load_json(text: str):
    """JSON that Go's scanner took (:func:`syntax_error`), as Python values; ValueError
    for what nests deeper than the simulator takes."""
    try:
        v = json.loads(text)
    except RecursionError:  # deeper than Python's stack: no patch of a policy nests so
        raise ValueError("netarena: patch nests too deep") from None
    if not depth_ok(v, MAX_DEPTH):  # parsed under a raised recursion limit: patching recurses
        raise ValueError("netarena: patch nests too deep")
    return v


_DQ_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_YAML_ESCAPES = set("0abt\tnvfre \"'\\N_LPxuU")


def bad_yaml_escape(text: str) -> bool:
    """True when a double-quoted string of ``text`` holds an escape that go-yaml v2 (kubectl's
    YAML-to-JSON) does not know: a backslash-slash is valid JSON but "found unknown escape character"."""
    for m in _DQ_STRING.finditer(text):
        body = m.group(0)[1:-1]
        i = body.find("\\")
        while i >= 0:
            if i + 1 < len(body) and body[i + 1] not in _YAML_ESCAPES:
                return True
            i = body.find("\\", i + 2)
    return False


_GO_SPACE = frozenset("\t\n\v\f\r \x85\xa0")


def json_prefixed(text: str) -> bool:
    """apimachinery's ``yaml.ToJSON`` test: does ``text`` start with ``{`` after white
    space (``unicode.IsSpace``)? Such text is sent as it is, without a YAML pass."""
    for ch in text:
        if ch in _GO_SPACE or (ch > "\xff" and ch.isspace()):
            continue
        return ch == "{"
    return False


def go_numbers(v):
    """A value decoded from YAML as sigs.k8s.io/yaml's ``json.Marshal`` writes it: a float
    with no fraction (below 1e21) as an integer. ValueError for one JSON cannot hold."""
    if isinstance(v, dict):
        return {k: go_numbers(x) for k, x in v.items()}
    if isinstance(v, list):
        return [go_numbers(x) for x in v]
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError("json: unsupported value: " + ("NaN" if v != v else
                                                              "+Inf" if v > 0 else "-Inf"))
        if v.is_integer() and abs(v) < 1e21:
            return int(v)
    return v


def client_json(text: str) -> str | CommandResult:
    """What ``kubectl patch`` sends for ``-p text`` (any ``--type``): its
    ``yaml.ToJSON`` sends text that starts with ``{`` as it is and converts anything else
    from YAML (go-yaml v2, which reads the first document only; JSON converts to itself),
    failing with ``unable to parse "...": yaml: ...``."""
    if json_prefixed(text):
        return text
    quoted = go_quote(text)
    if bad_yaml_escape(text):  # go-yaml v2 rejects escapes JSON has, such as \/
        return err(f'error: unable to parse "{quoted}": yaml: found unknown escape character',
                   INVALID)
    if syntax_error(text) is None:
        return text
    yaml = yaml_module()
    try:
        check_yaml_budget(text)
        docs = yaml.safe_load_all(text)
        try:
            value = next(docs, None)
        except _TAG_ERRORS:  # a tagged scalar its tag cannot hold (!!int x)
            return err(f'error: unable to parse "{quoted}": yaml: {_bad_tag(yaml, text)}',
                       INVALID)
        docs.close()
        return json.dumps(go_numbers(jsonable(value)))
    except yaml.YAMLError as e:
        return err(f'error: unable to parse "{quoted}": yaml: {yaml_problem(e)}', INVALID)
    except ValueError as e:
        if str(e).startswith("json: "):
            return err(f'error: unable to parse "{quoted}": {e}', INVALID)
        return err(f"error: {e}", INVALID)


# what PyYAML's constructors raise for a scalar its tag cannot hold
_TAG_ERRORS = (ValueError, TypeError, KeyError, AttributeError, OverflowError)


def _bad_tag(yaml, text: str) -> str:
    """go-yaml's words for the first scalar of ``text``'s first document that its explicit
    tag cannot hold."""
    loader = yaml.SafeLoader(text)
    try:
        todo = [loader.get_node()] if loader.check_node() else []
        while todo:
            node = todo.pop(0)
            if isinstance(node, yaml.ScalarNode):
                try:
                    loader.construct_object(node, deep=True)
                except _TAG_ERRORS:
                    short = node.tag.rsplit(":", 1)[-1]
                    return f"cannot decode !!str `{node.value}` as a !!{short}"
            elif isinstance(node, yaml.SequenceNode):
                todo.extend(node.value)
            elif isinstance(node, yaml.MappingNode):
                todo.extend(x for pair in node.value for x in pair)
    except yaml.YAMLError:
        pass
    finally:
        loader.dispose()
    return "cannot decode a tagged scalar"


def server_patch(text: str, ptype: str):
    """The patch as kube-apiserver 1.20 decodes the body: a strategic merge patch through
    a ``json.Decoder`` (its first value; what follows is never read), the others whole.
    Raises :class:`GoSyntaxError` with Go's words, or ValueError for what the simulator
    refuses (nesting)."""
    problem = syntax_error(text, stream=ptype == "strategic")
    if problem is not None:
        raise GoSyntaxError(problem)
    if ptype == "strategic":
        text = text[:first_value_end(text)]
    return load_json(text)


class GoSyntaxError(ValueError):
    """A request body that is not JSON, in Go's words."""

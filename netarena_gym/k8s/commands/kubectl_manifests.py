"""Decoding of the manifests ``kubectl apply -f -`` reads (YAML or JSON streams, as
kubectl 1.32's decoder takes them) within a size, depth and alias budget, and the
``last-applied-configuration`` annotation kubectl writes. Shared by the simulated kubectl,
the executor's stdin check and the real backend (which feeds kubectl only the documents
decoded here)."""
from __future__ import annotations

import json

from netarena_gym.core.actions import depth_ok
from netarena_gym.k8s.commands.printers import LAST_APPLIED
from netarena_gym.k8s.state import compact
from netarena_gym.k8s.state_patches import clone
from netarena_gym.k8s.workload import yaml_module


def yaml_problem(e) -> str:
    """go-yaml's wording for the common PyYAML parse errors, with its ``line N:`` prefix.

    go-yaml (v2, kubectl 1.32's YAML-to-JSON) names the line of the problem as its marks
    count them, from 0, and names none for line 0: a parser error gives the problem's
    line as is (the end of the stream, where it ends a line that has text, counts as the
    next line), a scanner error the line after it (it does not step to the next line
    before failing); with the problem on line 0, the line of the context, if any, as is."""
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    mark = getattr(e, "problem_mark", None)
    in_sequence = (getattr(e, "context", None) or "").endswith("block collection")
    for py, go in (("expected ',' or '}'", "did not find expected ',' or '}'"),
                   ("expected ',' or ']'", "did not find expected ',' or ']'"),
                   ("expected the node content", "did not find expected node content"),
                   ("could not find expected ':'", "could not find expected ':'"),
                   ("expected <block end>", "did not find expected '-' indicator" if in_sequence
                    else "did not find expected key"),
                   ("mapping values are not allowed here",
                    "mapping values are not allowed in this context"),
                   ("found character '\\t' that cannot start any token",
                    "found a tab character that violates indentation"),
                   ("found character", "found character that cannot start any token")):
        if problem.startswith(py):
            problem = go
            break
    kind = type(e).__name__
    if mark is None or kind not in ("ScannerError", "ParserError"):
        return f"line {(mark.line + 1) if mark is not None else 1}: {problem}"
    line = mark.line
    if kind == "ParserError" and mark.column and mark.buffer is not None \
            and mark.index >= len(mark.buffer) - 1:
        line += 1  # go-yaml's end of stream starts a line of its own
    if line and kind == "ScannerError":
        line += 1
    if not line:
        ctx = getattr(e, "context_mark", None)
        line = ctx.line if ctx is not None else 0
    return f"line {line}: {problem}" if line else problem


MAX_MANIFEST_BYTES = 256 * 1024
MAX_YAML_EVENTS = 50_000
MAX_DEPTH = 64


def check_yaml_budget(text: str) -> None:
    """Refuse YAML that could expand or nest without bound, before anything is built: the
    event stream (linear in the input) has no aliases, at most MAX_YAML_EVENTS events and
    nests at most MAX_DEPTH deep. Raises ValueError (syntax errors are left to the loader)."""
    yaml = yaml_module()
    if len(text.encode("utf-8", "surrogatepass")) > MAX_MANIFEST_BYTES:
        raise ValueError(f"netarena: manifest larger than {MAX_MANIFEST_BYTES} bytes")
    depth = 0
    try:
        for n, ev in enumerate(yaml.parse(text, Loader=yaml.SafeLoader)):
            if n > MAX_YAML_EVENTS:
                raise ValueError("netarena: manifest has too many YAML nodes")
            if isinstance(ev, yaml.AliasEvent):
                raise ValueError("netarena: YAML aliases (*name) are not allowed in manifests")
            if isinstance(ev, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    raise ValueError("netarena: manifest nests too deep")
            elif isinstance(ev, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    except yaml.YAMLError:
        return  # the loader reports the syntax error in its own words


def _json_stream(text: str) -> list:
    """Every value of a JSON stream (``{...}{...}`` or one per line), as kubectl decodes it."""
    dec, out, i = json.JSONDecoder(), [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        try:
            v, i = dec.raw_decode(text, i)
        except json.JSONDecodeError as e:
            raise ValueError(f"error parsing STDIN: invalid character at offset {e.pos}") from None
        except RecursionError:  # deeper than Python's stack, far beyond MAX_DEPTH
            raise ValueError("netarena: manifest nests too deep") from None
        out.append(v)


def parse_manifests(text: str) -> list:
    """Every document of a YAML (``---``) or JSON stream, strictly (kubectl's decoder applies
    each of them, so each one is returned to be checked); ``List`` items are flattened.
    Raises ValueError on anything undecodable or over the size, depth and alias budget."""
    text = text or ""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_MANIFEST_BYTES:
        raise ValueError(f"netarena: manifest larger than {MAX_MANIFEST_BYTES} bytes")
    if text.lstrip()[:1] in ("{", "["):
        docs = _json_stream(text)
    else:
        check_yaml_budget(text)
        yaml = yaml_module()
        try:
            docs = list(yaml.safe_load_all(text))
        except yaml.YAMLError as e:
            raise ValueError(f"error parsing STDIN: error converting YAML to JSON: yaml: {yaml_problem(e)}") from None
    out = []
    for d in docs:
        if not depth_ok(d, MAX_DEPTH):
            raise ValueError("netarena: manifest nests too deep")
        if isinstance(d, dict) and d.get("kind") == "List":
            items = d.get("items") or []
            out.extend(items if isinstance(items, list) else [items])
        elif d is not None:
            out.append(d)
    return [jsonable(d) for d in out]


def jsonable(v):
    """YAML scalars that JSON lacks (dates) become strings, as kubectl's YAML-to-JSON does."""
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, list):
        return [jsonable(x) for x in v]
    if v is None or isinstance(v, (str, int, float, bool)):
        return v
    return str(v)


def last_applied(doc: dict, ns: str) -> str:
    """The ``last-applied-configuration`` annotation kubectl writes for ``doc``."""
    d = clone(doc)
    md = d.setdefault("metadata", {})
    if not isinstance(md, dict):
        md = d["metadata"] = {}
    ann = dict(md.get("annotations") or {})
    ann.pop(LAST_APPLIED, None)
    md["annotations"] = ann
    md["namespace"] = ns
    return compact(d) + "\n"

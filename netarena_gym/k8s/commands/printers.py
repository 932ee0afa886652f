"""kubectl's output formats for the simulated objects: tables (``get``, ``-o wide``,
``--show-labels``, ``-A``), ``-o name``, ``-o json`` (4-space, sorted keys), ``-o yaml``
(go-yaml v2 style: sorted keys, indentless lists, double quotes for strings that would read
as another type, literal blocks for multi-line strings) and ``describe`` of NetworkPolicies
and namespaces (the workload kinds: :mod:`~netarena_gym.k8s.commands.printers_workloads`)."""
from __future__ import annotations

import functools
import json
import re
import time

from netarena_gym.k8s.state import KINDS, go_json_escapes
from netarena_gym.k8s.state_names import label_value_errors, qualified_name_errors

SINGULAR = {"namespaces": "namespace", "pods": "pod", "services": "service",
            "networkpolicies": "networkpolicy", "deployments": "deployment",
            "replicasets": "replicaset", "endpoints": "endpoints", "events": "event"}


def qualified(resource: str, name: str) -> str:
    return f"{SINGULAR[resource]}{KINDS[resource][3]}/{name}"


# ---------------------------------------------------------------------------- ages
def human_duration(seconds: float) -> str:
    """k8s.io/apimachinery/pkg/util/duration.HumanDuration."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    m = s // 60
    if m < 10:
        return f"{m}m{s % 60}s" if s % 60 else f"{m}m"
    if m < 180:
        return f"{m}m"
    h = m // 60
    if h < 8:
        return f"{h}h{m % 60}m" if m % 60 else f"{h}h"
    if h < 48:
        return f"{h}h"
    if h < 24 * 8:
        return f"{h // 24}d{h % 24}h" if h % 24 else f"{h // 24}d"
    if h < 24 * 365 * 2:
        return f"{h // 24}d"
    return f"{h // (24 * 365)}y{(h // 24) % 365}d"


@functools.lru_cache(maxsize=1024)
def _parse_ts(ts: str) -> float:
    try:
        return float(time.mktime(time.strptime(ts, "%Y-%m-%dT%H:%M:%SZ")) - time.timezone)
    except (TypeError, ValueError):
        return 0.0


parse_ts = _parse_ts


def age(obj: dict, now: float) -> str:
    return human_duration(now - _parse_ts((obj.get("metadata") or {}).get("creationTimestamp")))


# ----------------------------------------------------------------------- selectors
def format_selector(sel: dict | None) -> str:
    """metav1.FormatLabelSelector: each requirement built with labels.NewRequirement, which
    checks the key and every value (a value the API stored unchecked, such as an ``In``
    value ``bad value!``, makes the whole selector ``<error>``); values sorted, duplicates
    kept (``app in (a,a)``)."""
    if sel is None:
        return "<none>"
    reqs = []
    for k, v in (sel.get("matchLabels") or {}).items():
        if qualified_name_errors(k) or label_value_errors(v):
            return "<error>"
        reqs.append((k, f"{k}={v}"))
    for e in sel.get("matchExpressions") or ():
        k, op, vals = e.get("key", ""), e.get("operator", ""), sorted(e.get("values") or ())
        if op not in ("In", "NotIn", "Exists", "DoesNotExist") or qualified_name_errors(k) \
                or any(label_value_errors(v) for v in vals) \
                or (not vals) == (op in ("In", "NotIn")):
            return "<error>"
        if op == "In":
            reqs.append((k, f"{k} in ({','.join(vals)})"))
        elif op == "NotIn":
            reqs.append((k, f"{k} notin ({','.join(vals)})"))
        elif op == "Exists":
            reqs.append((k, k))
        else:
            reqs.append((k, f"!{k}"))
    if not reqs:
        return "<none>"
    return ",".join(t for _, t in sorted(reqs, key=lambda r: r[0]))


def format_labels(labels: dict | None) -> str:
    if not labels:
        return "<none>"
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


# -------------------------------------------------------------------------- tables
def table(rows: list[list[str]]) -> str:
    """text/tabwriter with padding 3, as kubectl prints tables."""
    if not rows:
        return ""
    n = max(len(r) for r in rows)
    widths = [0] * n
    for r in rows:
        for i, c in enumerate(r[:-1]):
            widths[i] = max(widths[i], len(c))
    out = []
    for r in rows:
        cells = [c.ljust(widths[i] + 3) for i, c in enumerate(r[:-1])] + [r[-1]]
        out.append("".join(cells))
    return "\n".join(out) + "\n"


def _columns(resource: str, wide: bool) -> list[str]:
    if resource == "networkpolicies":
        return ["NAME", "POD-SELECTOR", "AGE"]
    if resource == "pods":
        cols = ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
        return cols + (["IP", "NODE", "NOMINATED NODE", "READINESS GATES"] if wide else [])
    if resource == "services":
        cols = ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]
        return cols + (["SELECTOR"] if wide else [])
    return ["NAME", "STATUS", "AGE"]


def _cells(resource: str, obj: dict, now: float, wide: bool) -> list[str]:
    md = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    a = age(obj, now)
    if resource == "networkpolicies":
        return [format_selector(spec.get("podSelector")), a]
    if resource == "pods":
        st = obj.get("status") or {}
        cs = st.get("containerStatuses") or []
        ready = sum(1 for c in cs if c.get("ready"))
        total = len(spec.get("containers") or ())
        restarts = sum(int(c.get("restartCount", 0)) for c in cs)
        cells = [f"{ready}/{total}", st.get("phase", "Pending"), str(restarts), a]
        if wide:
            cells += [st.get("podIP") or "<none>", spec.get("nodeName") or "<none>", "<none>", "<none>"]
        return cells
    if resource == "services":
        ports = []
        for p in spec.get("ports") or ():
            np_ = f":{p['nodePort']}" if p.get("nodePort") else ""
            ports.append(f"{p.get('port')}{np_}/{p.get('protocol', 'TCP')}")
        ext = "<pending>" if spec.get("type") == "LoadBalancer" else "<none>"
        cells = [spec.get("type", "ClusterIP"), spec.get("clusterIP") or "<none>", ext,
                 ",".join(ports) or "<none>", a]
        if wide:
            sel = spec.get("selector")
            cells.append(",".join(f"{k}={v}" for k, v in sorted(sel.items())) if sel else "<none>")
        return cells
    st = obj.get("status") or {}
    return [st.get("phase", "Active"), a]


def get_table(resource: str, objs: list[dict], now: float, *, wide: bool = False,
              all_namespaces: bool = False, show_labels: bool = False,
              prefix: bool = False, headers: bool = True) -> str:
    cols = _columns(resource, wide)
    namespaced = KINDS[resource][2]
    if all_namespaces and namespaced:
        cols = ["NAMESPACE"] + cols
    if show_labels:
        cols = cols + ["LABELS"]
    rows = [cols] if headers else []
    for o in objs:
        md = o.get("metadata") or {}
        name = qualified(resource, md.get("name", "")) if prefix else md.get("name", "")
        row = [name] + _cells(resource, o, now, wide)
        if all_namespaces and namespaced:
            row = [md.get("namespace", "")] + row
        if show_labels:
            row.append(format_labels(md.get("labels")))
        rows.append(row)
    return table(rows)


# ----------------------------------------------------------------------- json/yaml
def to_json(obj) -> str:
    """``-o json``: 4-space indent, sorted keys, Go's escapes of ``<``, ``>``, ``&``."""
    return go_json_escapes(json.dumps(obj, indent=4, sort_keys=True, ensure_ascii=False)) + "\n"


def as_list(items: list[dict]) -> dict:
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


# a List's JSON around its items, as :func:`to_json` prints it, and the items' indent
_ITEM_INDENT = " " * 8
_LIST_HEAD, _LIST_TAIL = to_json(as_list([0])).split(_ITEM_INDENT + "0")


def list_json(item_texts: list[str]) -> str:
    """``to_json(as_list(items))`` made from each item's own :func:`to_json` text, which a
    caller can keep per object: the items, indented to the list's depth. JSON text holds
    no raw newline inside a string, so every newline starts a line to indent."""
    if not item_texts:
        return to_json(as_list([]))
    nl = "\n" + _ITEM_INDENT
    body = ",\n".join(_ITEM_INDENT + t.rstrip("\n").replace("\n", nl) for t in item_texts)
    return _LIST_HEAD + body + _LIST_TAIL


_BOOLISH = {"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE",
            "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", "~", "null",
            "Null", "NULL", ""}
_NUMBER = re.compile(r"^[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?$"
                     r"|^[-+]?0x[0-9a-fA-F_]+$|^[-+]?0b[01_]+$|^[-+]?\.(inf|Inf|INF)$|^\.(nan|NaN|NAN)$"
                     r"|^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?$")
_TIMESTAMP = re.compile(r"^\d{4}-\d{1,2}-\d{1,2}([Tt ]|$)")
_INDICATORS = set("-?:,[]{}#&*!|>'\"%@`")


def _scalar(s: str) -> str:
    if s in _BOOLISH or _NUMBER.match(s) or _TIMESTAMP.match(s):
        return json.dumps(s, ensure_ascii=False)
    plain = (s[0] not in _INDICATORS and s[0] != " " and s[-1] != " " and ": " not in s
             and " #" not in s and not s.endswith(":") and "\t" not in s)
    if s[0] in "-?:" and len(s) > 1 and s[1] != " ":
        plain = plain or (s[0] == "-" and ": " not in s and " #" not in s)
    if plain:
        return s
    if all(ch.isprintable() for ch in s):
        return "'" + s.replace("'", "''") + "'"
    return json.dumps(s, ensure_ascii=False)


def _yaml_scalar(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)
    return _scalar(str(v))


def _block(v: str, pad: str) -> tuple[str, list[str]]:
    chomp = "" if v.endswith("\n") else "-"
    body = v[:-1] if v.endswith("\n") else v
    return f"|{chomp}", [(pad + line) if line else "" for line in body.split("\n")]


def _entry(lead: str, v, indent: int, item: bool) -> list[str]:
    """Lines of one mapping entry (``lead`` = ``"<pad>key:"``) or sequence item
    (``lead`` = ``"<pad>-"``, ``item``) holding ``v``."""
    if isinstance(v, dict) and v:
        lines = _yaml_map(v, indent + 2)
    elif isinstance(v, list) and v:
        lines = _yaml_seq(v, indent + 2 if item else indent)  # lists in maps are indentless
    elif isinstance(v, str) and "\n" in v:
        head, lines = _block(v, " " * (indent + 2))
        return [f"{lead} {head}"] + lines
    else:
        return [f"{lead} " + ("{}" if isinstance(v, dict) else "[]" if isinstance(v, list)
                              else _yaml_scalar(v))]
    if item:
        return [lead + " " + lines[0][indent + 2:]] + lines[1:]
    return [lead] + lines


def _yaml_map(m: dict, indent: int) -> list[str]:
    out = []
    for k in sorted(m):
        out += _entry(f"{' ' * indent}{_scalar(str(k))}:", m[k], indent, False)
    return out


def _yaml_seq(items: list, indent: int) -> list[str]:
    out = []
    for x in items:
        out += _entry(f"{' ' * indent}-", x, indent, True)
    return out


def to_yaml(obj) -> str:
    if isinstance(obj, dict):
        lines = _yaml_map(obj, 0) if obj else ["{}"]
    elif isinstance(obj, list):
        lines = _yaml_seq(obj, 0) if obj else ["[]"]
    else:
        lines = [_yaml_scalar(obj)]
    return "\n".join(lines) + "\n"


# a List's YAML around its items (the items indentless under ``items:``, as kubectl prints)
_YAML_HEAD, _YAML_TAIL = to_yaml(as_list([{"_": 0}])).split("- _: 0\n")


def list_yaml(item_texts: list[str]) -> str:
    """``to_yaml(as_list(items))`` made from each item's own :func:`to_yaml` text: each
    item as a sequence entry, its lines indented by two (the blank lines of a block
    scalar stay blank, as :func:`to_yaml` leaves them)."""
    if not item_texts:
        return to_yaml(as_list([]))
    out = [_YAML_HEAD]
    for t in item_texts:
        lines = t.rstrip("\n").split("\n")
        out.append("- " + lines[0] + "\n")
        out.extend(("  " + x + "\n") if x else "\n" for x in lines[1:])
    out.append(_YAML_TAIL)
    return "".join(out)


# ------------------------------------------------------------------------ describe
def _multiline(title: str, m: dict | None, skip=()) -> list[str]:
    items = [(k, v) for k, v in sorted((m or {}).items()) if k not in skip]
    head = f"{title}:".ljust(14)
    if not items:
        return [head + "<none>"]
    lines = []
    for i, (k, v) in enumerate(items):
        lines.append((head if i == 0 else " " * 14) + f"{k}={v}")
    return lines


def _created(obj: dict) -> str:
    ts = (obj.get("metadata") or {}).get("creationTimestamp", "")
    t = _parse_ts(ts)
    return time.strftime("%Y-%m-%d %H:%M:%S +0000 UTC", time.gmtime(t))


def _rules(rules: list, peer_key: str, indent: str, out: list[str]) -> None:
    word = "From" if peer_key == "from" else "To"
    if not rules:
        iso = "ingress" if peer_key == "from" else "egress"
        out.append(f"{indent}<none> (Selected pods are isolated for {iso} connectivity)")
        return
    for i, r in enumerate(rules):
        ports = r.get("ports") or []
        if not ports:
            out.append(f"{indent}To Port: <any> (traffic allowed to all ports)")
        for p in ports:
            port = p.get("port")
            shown = "<nil>" if port is None else str(port)
            if p.get("endPort") is not None:
                shown = f"{shown}-{p['endPort']}"
            out.append(f"{indent}To Port: {shown}/{p.get('protocol', 'TCP')}")
        peers = r.get(peer_key) or []
        if not peers:
            what = "source" if peer_key == "from" else "destination"
            out.append(f"{indent}{word}: <any> (traffic not restricted by {what})")
        for peer in peers:
            out.append(f"{indent}{word}:")
            ps, ns = peer.get("podSelector"), peer.get("namespaceSelector")
            if ps is not None and ns is not None:
                out.append(f"{indent}  NamespaceSelector: {format_selector(ns)}")
                out.append(f"{indent}  PodSelector: {format_selector(ps)}")
            elif ps is not None:
                out.append(f"{indent}  PodSelector: {format_selector(ps)}")
            elif ns is not None:
                out.append(f"{indent}  NamespaceSelector: {format_selector(ns)}")
            elif peer.get("ipBlock") is not None:
                b = peer["ipBlock"]
                out.append(f"{indent}  IPBlock:")
                out.append(f"{indent}    CIDR: {b.get('cidr', '')}")
                out.append(f"{indent}    Except: {', '.join(b.get('except') or ())}")
        if i != len(rules) - 1:
            out.append(f"{indent}----------")


LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def describe_policy(obj: dict) -> str:
    md, spec = obj.get("metadata") or {}, obj.get("spec") or {}
    out = [f"{'Name:':14s}{md.get('name', '')}", f"{'Namespace:':14s}{md.get('namespace', '')}",
           f"{'Created on:':14s}{_created(obj)}"]
    out += _multiline("Labels", md.get("labels"))
    out += _multiline("Annotations", md.get("annotations"), skip=(LAST_APPLIED,))
    out.append("Spec:")
    sel = spec.get("podSelector") or {}
    shown = format_selector(sel)
    if shown == "<none>":
        shown = "<none> (Allowing the specific traffic to all pods in this namespace)"
    out.append(f"  PodSelector:     {shown}")
    types = spec.get("policyTypes") or []
    if "Ingress" in types:
        out.append("  Allowing ingress traffic:")
        _rules(spec.get("ingress") or [], "from", "    ", out)
    else:
        out.append("  Not affecting ingress traffic")
    if "Egress" in types:
        out.append("  Allowing egress traffic:")
        _rules(spec.get("egress") or [], "to", "    ", out)
    else:
        out.append("  Not affecting egress traffic")
    out.append(f"  Policy Types: {', '.join(types)}")
    return "\n".join(out) + "\n"


def describe_namespace(obj: dict) -> str:
    md = obj.get("metadata") or {}
    out = [f"{'Name:':14s}{md.get('name', '')}"]
    out += _multiline("Labels", md.get("labels"))
    out += _multiline("Annotations", md.get("annotations"))
    out.append(f"{'Status:':14s}{(obj.get('status') or {}).get('phase', 'Active')}")
    out += ["", "No resource quota.", "", "No LimitRange resource."]
    return "\n".join(out) + "\n"

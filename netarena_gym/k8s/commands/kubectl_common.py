"""What the simulated kubectl's verbs share: results, the "not simulated" signal, field
selectors (``--field-selector``, as kube-apiserver 1.20 selects), the 400 of a selector the
server refuses, Invalid status messages and dry runs. Mirrors kubectl 1.32 against
kube-apiserver 1.20; label selectors (``-l``): :mod:`netarena_gym.k8s.commands.labelsel`."""
from __future__ import annotations

import re

from netarena_gym.shell.parser import ERROR, INVALID, OK, CommandResult


def ok(text: str) -> CommandResult:
    return CommandResult(text, 0, OK)


def err(text: str, kind: str = ERROR) -> CommandResult:
    return CommandResult(text if text.endswith("\n") else text + "\n", 1, kind)


def invalid_status_message(name: str, errors) -> str:
    """An Invalid StatusError's message, as kubectl prints it among several errors
    (``MultipleErrors``): ``NewInvalid``'s kind qualified as kube-apiserver 1.20 qualifies
    it, the field errors as ``ErrorList.ToAggregate`` (one alone, several in brackets,
    repeats dropped)."""
    msgs = list(dict.fromkeys(str(x) for x in errors))
    body = msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]"
    return f'NetworkPolicy.extensions "{name}" is invalid: {body}'


class NotSimulated(Exception):
    """A resource kind a real cluster has that the simulator does not model."""


def no_resources(ns: str | None) -> str:
    return "No resources found\n" if ns is None else f"No resources found in {ns} namespace.\n"


# ------------------------------------------------------------------- field selectors
_GVR = {"pods": "/v1, Resource=pods", "services": "/v1, Resource=services",
        "endpoints": "/v1, Resource=endpoints", "events": "/v1, Resource=events",
        "namespaces": "/v1, Resource=namespaces", "deployments": "apps/v1, Resource=deployments",
        "replicasets": "apps/v1, Resource=replicasets",
        "networkpolicies": "networking.k8s.io/v1, Resource=networkpolicies"}
_META = ("metadata.name", "metadata.namespace")
#: the field labels kube-apiserver 1.20 selects on, where a kind has more than the two every
#: kind has (these kinds answer another one with "field label not supported")
_FIELDS = {
    "pods": _META + ("spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
                     "spec.serviceAccountName", "status.phase", "status.podIP", "status.podIPs",
                     "status.nominatedNodeName"),
    "events": _META + ("involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                       "involvedObject.uid", "involvedObject.apiVersion",
                       "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason",
                       "reportingComponent", "source", "type"),
    "namespaces": ("metadata.name", "status.phase"),
}


class SelectorRejected(Exception):
    """The server's 400 for a list whose ``-l`` or ``--field-selector`` it cannot use
    (``str()``: its message)."""


def list_rejection(resource: str, label_text: str, field_text: str, reason: str) -> SelectorRejected:
    return SelectorRejected(f'Unable to find "{_GVR.get(resource, resource)}" that match label '
                            f'selector "{label_text}", field selector "{field_text}": {reason}')


def _unescape(s: str) -> str:
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s):
            i += 1
        out.append(s[i])
        i += 1
    return "".join(out)


def parse_field_selector(resource: str, text: str, label_text: str = "") -> list:
    """``fields.ParseSelector`` and the kind's field label check: [(label, op, value)] with op
    ``=`` or ``!=``; raises :class:`SelectorRejected` with kube-apiserver 1.20's words."""
    text = text.strip()
    terms, cur, i = [], "", 0
    while i < len(text):  # split on commas a backslash does not escape
        if text[i] == "\\" and i + 1 < len(text):
            cur += text[i:i + 2]
            i += 2
            continue
        if text[i] == ",":
            terms.append(cur)
            cur = ""
        else:
            cur += text[i]
        i += 1
    terms.append(cur)
    def rejected(reason: str) -> SelectorRejected:
        return list_rejection(resource, label_text, text, reason)
    out = []
    for term in terms:
        if not term:
            continue
        at = next(((j, op) for j in range(len(term)) for op in ("!=", "==", "=")
                   if term.startswith(op, j)), None)
        if at is None:
            raise rejected(f"invalid selector: '{text}'; can't understand '{term}'")
        j, op = at
        out.append((_unescape(term[:j]), "!=" if op == "!=" else "=", _unescape(term[j + len(op):])))
    for label, _, _ in out:
        known = _FIELDS.get(resource, _META)
        if label not in known:
            if resource in _FIELDS:
                raise rejected(f"field label not supported: {label}")
            raise rejected(f'"{label}" is not a known field selector: only '
                           '"metadata.name", "metadata.namespace"')
    return out


def field_value(obj: dict, label: str) -> str:
    """The value of a selectable field (``*ToSelectableFields``): absent fields are ""."""
    md = obj.get("metadata") or {}
    if label.startswith("metadata."):
        return str(md.get(label[9:]) or "")
    if label.startswith("involvedObject."):
        return str((obj.get("involvedObject") or {}).get(label[15:]) or "")
    if label == "source":
        return str((obj.get("source") or {}).get("component") or "")
    if label in ("reason", "type", "reportingComponent"):
        return str(obj.get(label) or "")
    section, _, name = label.partition(".")
    if label == "status.podIP":
        st = obj.get("status") or {}
        ips = st.get("podIPs") or []
        return str(st.get("podIP") or (ips[0].get("ip") if ips else "") or "")
    if label == "status.podIPs":
        return ""
    return str((obj.get(section) or {}).get(name) or "")


def fields_match(terms: list, obj: dict) -> bool:
    return all((field_value(obj, label) == value) == (op == "=") for label, op, value in terms)


# --------------------------------------------------------------------------- dry run
#: what a dry run adds to each line a verb prints, per --dry-run mode (kubectl 1.32; patch
#: prints as it does without one)
_DRY_SUFFIX = {"client": " (dry run)", "server": " (server dry run)"}
DRY_VERBS = ("apply", "delete", "label", "patch")


def dry_run_mode(inv) -> str | CommandResult:
    """``--dry-run``'s mode ("none", "client", "server"; bare ``--dry-run`` is the
    deprecated "client"), or kubectl's error for another value."""
    v = inv.flags.get("dry-run")
    if v is None or v == "none":
        return "none"
    if v is True:
        return "client"
    if v in ("client", "server"):
        return v
    return err(f'error: Invalid dry-run value ({v}). Must be "none", "server", or "client".',
               INVALID)


def run_dry(store, verb: str, mode: str, run, after=None) -> CommandResult:
    """``run()`` (the verb) with nothing stored: the store is put back as it was; each line it
    printed for an object gets the mode's suffix. A client dry run sends nothing the server
    would check, and the verbs make it so: ``delete`` prints the names given, found or not;
    ``patch`` patches locally (:mod:`~netarena_gym.k8s.commands.kubectl_patch_client`);
    ``label`` and ``apply`` skip the server's validation (apply keeps kubectl's schema check).
    ``after(result)``, when given, makes the output while the objects written are still
    stored (``-o yaml|json`` prints them, without a suffix)."""
    snap = store.snapshot()
    try:
        res = run()
        if after is not None:
            return after(res)
    finally:
        store.restore(snap)
    suffix = "" if verb == "patch" else _DRY_SUFFIX[mode]
    if not suffix:
        return res
    lines = res.output.split("\n")
    out = [ln + suffix if _printed_object(ln) else ln for ln in lines]
    return CommandResult("\n".join(out), res.status, res.kind)


def _printed_object(line: str) -> bool:
    """A success line of apply, delete or label (``kind/name created``, ``kind "name"
    deleted``, ...)."""
    return line.endswith((" created", " configured", " unchanged", " deleted", " labeled",
                          " unlabeled", " not labeled"))


# ---------------------------------------------------------------------------- -o name
#: a write verb's line for an object it wrote: kind.group, name (its action follows)
DONE_LINE = re.compile(r'^(\S+)/(\S+) (?:created|configured|unchanged|patched|patched \(no change\)|'
                   r'labeled|unlabeled|not labeled)(?: \((?:server )?dry run\))?$')
_DELETED = re.compile(r'^(\S+) "([^"]+)" deleted(?: \((?:server )?dry run\))?$')


def as_names(res: CommandResult) -> CommandResult:
    """A write verb's output under ``-o name``: each object it wrote printed as
    ``kind.group/name`` (kubectl's name printer) instead of its action line."""
    out = []
    for line in res.output.split("\n"):
        m = DONE_LINE.match(line) or _DELETED.match(line)
        out.append(f"{m.group(1)}/{m.group(2)}" if m else line)
    return CommandResult("\n".join(out), res.status, res.kind)

"""``kubectl apply -f -`` of the simulated kubectl (client 1.32 against kube-apiserver 1.20):
client-side apply with the ``last-applied-configuration`` annotation (created / configured /
unchanged, three-way deletions) and kubectl's schema validation.

How kubectl goes through a stream of manifests, and what this module does the same way:
each document in turn is checked against the schema (a failure stops the stream: the
documents after it are not read), then mapped to a resource (a group/version that does not
serve ``NetworkPolicy``, such as ``extensions/v1beta1``, which 1.16 stopped serving, is an
error for that document only); the documents read so far are then applied in order. One
error prints as ``cmdutil.CheckErr`` prints it (``error: ...``, or ``The NetworkPolicy "x"
is invalid: ...``); several print one per line as ``MultipleErrors`` does (an API error as
``Error from server (Invalid): error when creating "STDIN": NetworkPolicy.extensions "x" is
invalid: ...``, the kind qualified as the 1.20 server qualifies it).
Left out: a decode failure or another API error among several errors keeps its one-error
text; ``-o yaml|json`` (kubectl then prints the object; ``-o name`` is
:func:`~netarena_gym.k8s.commands.kubectl_common.as_names`).
"""
from __future__ import annotations

import json

from netarena_gym.shell.parser import ERROR, INVALID, OK, REFUSED, CommandResult
from netarena_gym.k8s.commands import printers
from netarena_gym.k8s.commands.allowlist import apply_refusal
from netarena_gym.k8s.commands.cmdline import Invocation
from netarena_gym.k8s.commands.kubectl_common import dry_run_mode, err, invalid_status_message
from netarena_gym.k8s.commands.kubectl_manifests import last_applied, parse_manifests
from netarena_gym.k8s.commands.schema import validate_manifest
from netarena_gym.k8s.state import ApiError, compact
from netarena_gym.k8s.state_patches import clone, go_value, three_way_patch
from netarena_gym.k8s.state_strategic import strategic_merge_patch
from netarena_gym.k8s.state_validation import DecodeError, Invalid

LAST_APPLIED = printers.LAST_APPLIED
GROUP_VERSION = "networking.k8s.io/v1"
_RESOURCE = ('Resource: "networking.k8s.io/v1, Resource=networkpolicies", GroupVersionKind: '
             '"networking.k8s.io/v1, Kind=NetworkPolicy"')
_TURN_OFF = "; if you choose to ignore these errors, turn validation off with --validate=false"


class _Failure:
    """One error of the run: its text alone (``cmdutil.CheckErr``) and among several
    (``MultipleErrors``, one line each)."""

    def __init__(self, alone: str, among: str | None = None):
        self.alone = alone
        self.among = alone if among is None else among


def _schema_failure(body: str) -> _Failure:
    text = f'error validating "STDIN": error validating data: {body}{_TURN_OFF}'
    return _Failure("error: " + text, text)


def _read(k, inv: Invocation, docs: list) -> tuple[list, list]:
    """(the documents kubectl reads and maps, the errors on the way), as the stream visitor."""
    read, failures = [], []
    for d in docs:
        if not isinstance(d, dict):
            failures.append(_schema_failure("invalid object to validate"))
            break
        missing = [f"{f} not set" for f in ("apiVersion", "kind") if not d.get(f)]
        if missing:
            failures.append(_schema_failure(missing[0] if len(missing) == 1
                                            else "[" + ", ".join(missing) + "]"))
            break
        md = d.get("metadata") if isinstance(d.get("metadata"), dict) else {}
        if d.get("apiVersion") != GROUP_VERSION:  # no schema for it, and no mapping
            text = (f'resource mapping not found for name: "{md.get("name") or ""}" namespace: '
                    f'"{md.get("namespace") or ""}" from "STDIN": no matches for kind '
                    f'"{d.get("kind")}" in version "{d.get("apiVersion")}"\n'
                    "ensure CRDs are installed first")
            failures.append(_Failure("error: " + text, text))
            continue
        if inv.flags.get("validate") not in ("false", "ignore"):
            errs = validate_manifest(d, end_port=k.store.end_port)
            if errs:
                failures.append(_schema_failure(errs[0] if len(errs) == 1
                                                else "[" + ", ".join(errs) + "]"))
                break
        read.append(d)
    return read, failures


def apply(k, inv: Invocation, stdin: str) -> CommandResult:
    fn = inv.flags.get("filename")
    if fn is None:
        return err("error: must specify one of -f and -k", INVALID)
    if fn != "-":
        return err(f'error: the path "{fn}" does not exist', INVALID)
    try:
        docs = parse_manifests(stdin)
    except ValueError as e:
        return err(f"error: {e}", INVALID)
    if not docs:
        return err("error: no objects passed to apply", INVALID)
    ns = k.ns(inv)
    why = apply_refusal(docs, ns)
    if why:
        return CommandResult(f"netarena: command refused: {why}\n", 126, REFUSED)
    read, failures = _read(k, inv, docs)
    for d in read:
        md = d.get("metadata") if isinstance(d.get("metadata"), dict) else {}
        dns = md.get("namespace")
        if dns and dns != ns and "namespace" in inv.flags:
            return err(f'error: the namespace from the provided object "{dns}" does not match the '
                        f"namespace \"{ns}\". You must pass '--namespace={dns}' to perform this "
                        "operation.", INVALID)
    out = []
    local = dry_run_mode(inv) == "client"
    for d in read:
        res = _apply_one(k, d, ns, local)
        if isinstance(res, _Failure):
            failures.append(res)
        else:
            out.append(res)
    if not failures:
        return CommandResult("".join(out), 0, OK)
    if len(failures) == 1:
        text = failures[0].alone
    else:
        text = "".join(f.among.rstrip("\n") + "\n" for f in failures)
    kind = INVALID if not out and not read else ERROR
    return CommandResult("".join(out) + text + ("" if text.endswith("\n") else "\n"), 1, kind)


def _apply_one(k, doc: dict, ns: str, local: bool = False):
    """One document: kubectl's output line, or a :class:`_Failure`. ``local``: a client
    dry run, which gets the object and sends nothing: ``created`` when there is none, else
    ``configured`` (kubectl makes no patch, so it never says ``unchanged``)."""
    st = k.store
    md = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    name = md.get("name")
    if not name:
        text = ("error when retrieving current configuration of:\n" + _RESOURCE + '\nName: "", '
                f'Namespace: "{ns}"\nfrom server for: "STDIN": resource name may not be empty')
        return _Failure("error: " + text, text)
    applied = last_applied(doc, ns)
    modified = clone(doc)
    mmd = modified.setdefault("metadata", {})
    mmd["annotations"] = {**(mmd.get("annotations") or {}), LAST_APPLIED: applied}
    mmd["namespace"] = ns
    q = printers.qualified("networkpolicies", name)
    cur = st.find("networkpolicies", ns, name)
    if local:  # kubectl prints the object it got, or the one it would create
        if cur is None:
            k.local_objects[q] = modified
        return f"{q} created\n" if cur is None else f"{q} configured\n"
    if cur is None:
        try:
            st.create_policy(ns, modified)
        except Invalid as e:
            return _Failure(str(e) + "\n", 'Error from server (Invalid): error when creating '
                            f'"STDIN": {invalid_status_message(e.name, e.errors)}\n')
        except ApiError as e:
            return _Failure(f'Error from server ({e.reason}): error when creating "STDIN": {e}\n')
        return f"{q} created\n"
    original = None
    raw = (cur["metadata"].get("annotations") or {}).get(LAST_APPLIED)
    warn = ""
    if raw:
        try:
            original = json.loads(raw)
        except json.JSONDecodeError:
            original = None
    else:
        warn = (f"Warning: resource networkpolicies/{name} is missing the {LAST_APPLIED} "
                "annotation which is required by kubectl apply. kubectl apply should only be used "
                "on resources created declaratively by either kubectl create --save-config or "
                "kubectl apply. The missing annotation will be patched automatically.\n")
    patch = three_way_patch(original, modified, cur)
    if not patch:
        return f"{warn}{q} unchanged\n"
    result = strategic_merge_patch(cur, patch)
    try:
        st.update_policy(ns, name, result)
    except DecodeError as e:
        shown = go_value(patch).replace("\\", "\\\\").replace('"', '\\"')
        return _Failure(f'{warn}The request is invalid: patch: Invalid value: "{shown}": {e}\n')
    except Invalid as e:
        return _Failure(warn + str(e) + "\n", f"{warn}Error from server (Invalid): error when "
                        f"applying patch:\n{compact(patch)}\nto:\n{_RESOURCE}\nName: \"{name}\", "
                        f'Namespace: "{ns}"\nfor: "STDIN": error when patching "STDIN": '
                        f"{invalid_status_message(e.name, e.errors)}\n")
    except ApiError as e:
        return _Failure(warn + f'Error from server ({e.reason}): error when applying patch to '
                        f'"STDIN": {e}\n')
    return f"{warn}{q} configured\n"

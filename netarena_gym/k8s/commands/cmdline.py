"""Parsing of one ``kubectl`` argv as kubectl (cobra/pflag) does: flags anywhere, ``-n x``,
``-nx``, ``--namespace=x``, ``-oyaml``, resource arguments ``TYPE NAME``, ``TYPE1,TYPE2``,
``TYPE/NAME``. Shared by the simulator and by the allow-list of both backends."""
from __future__ import annotations

from dataclasses import dataclass, field

VALUE_FLAGS = {"-n": "namespace", "--namespace": "namespace", "-o": "output", "--output": "output",
               "-l": "selector", "--selector": "selector", "-p": "patch", "--patch": "patch",
               "--type": "type", "-f": "filename", "--filename": "filename",
               "--patch-file": "patch-file", "--context": "context", "--kubeconfig": "kubeconfig",
               "--cluster": "cluster", "--user": "user", "-c": "container",
               "--container": "container", "--field-selector": "field-selector",
               "--sort-by": "sort-by", "-s": "server", "--server": "server", "--token": "token",
               "--as": "as", "--request-timeout": "request-timeout", "--field-manager": "field-manager"}
BOOL_FLAGS = {"-A": "all-namespaces", "--all-namespaces": "all-namespaces",
              "--show-labels": "show-labels", "--overwrite": "overwrite",
              "--no-headers": "no-headers", "-w": "watch", "--watch": "watch", "--all": "all",
              "--local": "local", "--list": "list", "-i": "stdin", "--stdin": "stdin",
              "-t": "tty", "--tty": "tty", "-h": "help", "--help": "help", "--force": "force",
              "-R": "recursive", "--recursive": "recursive", "--wait": "wait",
              "--validate": "validate", "--dry-run": "dry-run", "--server-side": "server-side",
              "-it": "stdin-tty"}
OPTIONAL_VALUE = {"validate", "dry-run", "wait", "server-side", "overwrite", "all", "force"}

RESOURCES = {
    "networkpolicies": ("networkpolicy", "networkpolicies", "netpol", "netpols",
                        "networkpolicy.networking.k8s.io", "networkpolicies.networking.k8s.io",
                        "networkpolicy.networking", "networkpolicies.networking",
                        "networkpolicies.v1.networking.k8s.io"),
    "pods": ("pod", "pods", "po"),
    "services": ("service", "services", "svc"),
    "namespaces": ("namespace", "namespaces", "ns"),
    "deployments": ("deployment", "deployments", "deploy", "deployment.apps", "deployments.apps",
                    "deployments.v1.apps"),
    "replicasets": ("replicaset", "replicasets", "rs", "replicaset.apps", "replicasets.apps",
                    "replicasets.v1.apps"),
    "endpoints": ("endpoints", "ep"),
    "events": ("event", "events", "ev"),
}
RESOURCE_OF = {alias: r for r, aliases in RESOURCES.items() for alias in aliases}
# kinds a cluster has that the simulator does not model (reads answer with a clear message)
OTHER_RESOURCES = {"statefulsets", "sts", "daemonsets", "ds", "configmaps",
                   "cm", "secrets", "secret", "nodes", "node", "no",
                   "serviceaccounts", "sa", "ingresses", "ing", "jobs", "job", "cronjobs", "cj",
                   "endpointslices", "roles", "rolebindings", "clusterroles",
                   "clusterrolebindings", "persistentvolumeclaims", "pvc", "persistentvolumes",
                   "pv", "customresourcedefinitions", "crd", "crds", "storageclasses", "sc",
                   "limitranges", "resourcequotas", "quota", "poddisruptionbudgets", "pdb",
                   "horizontalpodautoscalers", "hpa", "leases", "priorityclasses"}


class UsageError(ValueError):
    """kubectl's own error (``error: ...``), exit status 1."""


@dataclass
class Invocation:
    verb: str | None
    args: list[str]
    flags: dict[str, str | bool] = field(default_factory=dict)
    raw_flags: list[str] = field(default_factory=list)


_PARSED: dict = {}


def parse(argv: list[str]) -> Invocation:
    """argv without the leading ``kubectl`` (memoised: treat the result as read-only)."""
    key = tuple(argv)
    hit = _PARSED.get(key)
    if hit is None:
        if len(_PARSED) > 4096:
            _PARSED.clear()
        try:
            hit = _PARSED[key] = _parse(argv)
        except UsageError as e:
            hit = _PARSED[key] = e
    if isinstance(hit, UsageError):
        raise hit
    return hit


def _parse(argv: list[str]) -> Invocation:
    flags: dict[str, str | bool] = {}
    raw: list[str] = []
    pos: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            pos.extend(argv[i + 1:])
            break
        if a.startswith("--") and len(a) > 2:
            name, eq, val = a.partition("=")
            if name in VALUE_FLAGS:
                if not eq:
                    if i + 1 >= len(argv):
                        raise UsageError(f"flag needs an argument: {name}")
                    val = argv[i + 1]
                    i += 1
                flags[VALUE_FLAGS[name]] = val
            elif name in BOOL_FLAGS:
                flags[BOOL_FLAGS[name]] = val if eq else True
            else:
                raise UsageError(f"unknown flag: {name}")
            raw.append(name)
        elif a.startswith("-") and len(a) > 1 and a != "-":
            if a in BOOL_FLAGS:
                flags[BOOL_FLAGS[a]] = True
                raw.append(a)
            elif a[:2] in VALUE_FLAGS:
                val = a[2:]
                if val.startswith("="):
                    val = val[1:]
                if not val:
                    if i + 1 >= len(argv):
                        raise UsageError(f"flag needs an argument: '{a[1]}' in {a}")
                    val = argv[i + 1]
                    i += 1
                flags[VALUE_FLAGS[a[:2]]] = val
                raw.append(a[:2])
            elif all(f"-{c}" in BOOL_FLAGS for c in a[1:]):
                for c in a[1:]:
                    flags[BOOL_FLAGS[f"-{c}"]] = True
                raw.append(a)
            else:
                bad = next((c for c in a[1:] if f"-{c}" not in BOOL_FLAGS), a[1])
                raise UsageError(f"unknown shorthand flag: '{bad}' in {a}")
        else:
            pos.append(a)
        i += 1
    verb = pos[0] if pos else None
    return Invocation(verb, pos[1:], flags, raw)


def resource_args(args: list[str]) -> list[tuple[str, str | None]]:
    """[(type alias, name or None)] from ``TYPE [NAME...]``, ``T1,T2`` or ``TYPE/NAME ...``."""
    if not args:
        return []
    if "/" in args[0]:
        out = []
        for a in args:
            if "/" not in a:
                raise UsageError("there is no need to specify a resource type as a separate "
                                 "argument when passing arguments in resource/name form "
                                 "(e.g. 'kubectl get resource/<resource_name>' instead of "
                                 "'kubectl get resource resource/<resource_name>'")
            t, _, n = a.partition("/")
            out.append((t, n))
        return out
    types = [t for t in args[0].split(",") if t]
    if len(args) == 1:
        return [(t, None) for t in types]
    return [(t, n) for t in types for n in args[1:]]


def resolve(alias: str) -> str | None:
    return RESOURCE_OF.get(alias.lower())

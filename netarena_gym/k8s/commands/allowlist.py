"""The operator allow-list of the Kubernetes task, shared by the simulator and the real
backend (nothing refused ever reaches a cluster). It is the second line: the first is the
agent's RBAC Role, enforced by the API server (:mod:`netarena_gym.k8s.rbac`).

Default: the agent runs ``kubectl`` (and read-only text filters after a pipe) with the verbs
``get``, ``describe``, ``patch``, ``label``, ``apply`` and ``delete``. Writes (patch, label,
apply, delete) stay in the env's namespace and act on NetworkPolicies only (the Role grants
no other write). Refused, with a message and the
``refused`` penalty: ``exec``, ``edit``, deleting workloads, every other kubectl verb that
changes or reaches into the cluster (``run``, ``create``, ``replace``, ``scale``, ...),
kubeconfig overrides (``--kubeconfig``, ``--context``, ``--server``, ``--token``, ``--as``)
and any program other than kubectl. ``allowed_verbs=`` configures the verb set.
"""
from __future__ import annotations

from netarena_gym.shell import policy
from netarena_gym.shell.filters import FILTER_NAMES
from netarena_gym.shell.parser import CommandLine, SimpleCommand
from netarena_gym.k8s.commands.cmdline import Invocation, UsageError, parse, resolve, resource_args
from netarena_gym.k8s.rbac import api_resource

DEFAULT_VERBS = frozenset({"get", "describe", "patch", "label", "apply", "delete"})
TEXT_FILTERS = FILTER_NAMES
KUBECTL_VERBS = frozenset({
    "get", "describe", "patch", "label", "apply", "delete", "create", "expose", "run", "set",
    "explain", "edit", "rollout", "scale", "autoscale", "certificate", "cluster-info", "top",
    "cordon", "uncordon", "drain", "taint", "logs", "attach", "exec", "port-forward", "proxy",
    "cp", "auth", "debug", "events", "diff", "replace", "wait", "kustomize", "annotate",
    "completion", "alpha", "api-resources", "api-versions", "config", "plugin", "version"})
WRITE_VERBS = frozenset({"patch", "label", "apply", "delete"})
READ_VERBS = frozenset({"get", "describe"})
# kinds whose contents are credentials or cluster access (reads refused, in every namespace)
SECRET_RESOURCES = frozenset({"secret", "secrets", "configmap", "configmaps", "cm",
                              "serviceaccount", "serviceaccounts", "sa", "role", "roles",
                              "rolebinding", "rolebindings", "clusterrole", "clusterroles",
                              "clusterrolebinding", "clusterrolebindings",
                              "certificatesigningrequests", "csr", "tokenreviews",
                              "tokenrequests"})
FORBIDDEN_FLAGS = frozenset({"kubeconfig", "context", "cluster", "user", "server", "token", "as",
                             "as-group", "as-uid", "certificate-authority",
                             "client-certificate", "client-key", "username", "password"})


def refusal(cmd: SimpleCommand, position: int, namespace: str,
            verbs: frozenset[str] = DEFAULT_VERBS) -> str | None:
    """Why this simple command is refused, or None when it may run."""
    prog = cmd.argv[0]
    files = sorted(cmd.targets() - {"/dev/null"})
    if files:
        return f"writing to {files[0]} is not allowed"
    if prog in TEXT_FILTERS:
        return policy.filter_position_refusal(cmd, position, "kubectl")
    if prog != "kubectl":
        return f"'{prog}' is not allowed: this task is operated with kubectl only"
    if _flag_before_verb(cmd.argv[1:]):
        # kubectl's cobra guesses which word is the verb when flags come first (a flag it
        # does not know swallows the next word): only -n NAMESPACE may precede the verb.
        return "kubectl flags go after the verb (kubectl VERB [flags]); only -n may come first"
    try:
        inv = parse(cmd.argv[1:])
    except UsageError:
        verb = _loose_verb(cmd.argv[1:])
        if verb in KUBECTL_VERBS and verb not in verbs:
            return f"kubectl {verb} is not allowed (allowed: {', '.join(sorted(verbs))})"
        return None  # the shared parser reports the usage error; nothing reaches kubectl
    if sum(1 for f in inv.raw_flags if f in ("-f", "--filename")) > 1:
        return "kubectl -f may be given once only (-f -)"
    return invocation_refusal(inv, namespace, verbs)


def _flag_before_verb(argv: list[str]) -> bool:
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        a = argv[i]
        if a in ("-n", "--namespace"):
            i += 2
        elif a.startswith(("--namespace=", "-n")) and a not in ("-n=",):
            i += 1
        else:
            return True
    return False


def _loose_verb(argv: list[str]) -> str | None:
    """The verb of an argv the flag parser rejects (first word that is not a flag)."""
    from netarena_gym.k8s.commands.cmdline import VALUE_FLAGS
    skip = False
    for a in argv:
        if skip:
            skip = False
            continue
        if a.startswith("-"):
            skip = a in VALUE_FLAGS
            continue
        return a
    return None


def invocation_refusal(inv: Invocation, namespace: str, verbs=DEFAULT_VERBS) -> str | None:
    for f in FORBIDDEN_FLAGS:
        if f in inv.flags:
            return f"kubectl --{f} is not allowed (the env's cluster and namespace are fixed)"
    fn = inv.flags.get("filename")
    if fn is not None and fn != "-":
        return "kubectl -f reads manifests from the action's stdin only (-f -)"
    if "patch-file" in inv.flags:
        return "kubectl --patch-file is not allowed (pass the patch with -p)"
    v = inv.verb
    if v is None or v not in KUBECTL_VERBS:
        return None  # kubectl says "unknown command" (the verb is the first word, see refusal)
    if v not in verbs:
        return f"kubectl {v} is not allowed (allowed: {', '.join(sorted(verbs))})"
    if fn is not None and v != "apply":
        return f"kubectl {v} -f is not allowed (only kubectl apply -f - reads manifests)"
    if v in READ_VERBS:
        try:
            targets = resource_args(inv.args)
        except UsageError:
            targets = []
        for t, _ in targets:
            if t.lower().split(".")[0] in SECRET_RESOURCES:
                return f"kubectl {v} {t} is not allowed (the task reads pods, services, deployments, " \
                       "replicasets, endpoints, events, networkpolicies and its namespace)"
    if inv.flags.get("watch"):
        return None
    if v in WRITE_VERBS:
        ns = inv.flags.get("namespace", namespace)
        if inv.flags.get("all-namespaces") or ns != namespace:
            return f"kubectl {v} may only change objects in namespace {namespace}"
        if v == "apply":
            return None  # the manifest is checked by apply_refusal
        args = inv.args
        if v == "label":
            args = [a for a in args if "=" not in a and not a.endswith("-")]
        try:
            targets = resource_args(args)
        except UsageError:
            return None
        for t, _ in targets:
            r = resolve(t) or getattr(api_resource(t), "plural", None)
            if r is None:
                continue
            if r != "networkpolicies":
                return f"kubectl {v} {t} is not allowed (only networkpolicies; workloads stay as they are)"
    return None


def apply_refusal(docs: list, namespace: str) -> str | None:
    """``kubectl apply`` is for NetworkPolicy manifests of the env's namespace only (a
    manifest's own namespace wins over the kubeconfig's when ``-n`` is not given)."""
    for d in docs:
        if not isinstance(d, dict):
            return "kubectl apply takes Kubernetes objects only"
        if d.get("kind") not in (None, "NetworkPolicy"):
            return f"kubectl apply of a {d.get('kind')} is not allowed (only NetworkPolicy manifests)"
        md = d.get("metadata")
        ns = md.get("namespace") if isinstance(md, dict) else None
        if ns not in (None, "", namespace):
            return f"kubectl apply may only change objects in namespace {namespace}"
    return None


def check_command_line(cl: CommandLine, namespace: str, verbs=DEFAULT_VERBS) -> str | None:
    return policy.check_command_line(cl, lambda cmd, pos: refusal(cmd, pos, namespace, verbs))

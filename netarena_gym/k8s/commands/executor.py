"""Runs one agent command line against a kubectl implementation: shell parse (the shared
strict parser, cached), the allow-list, then each simple command: ``kubectl`` to the
backend's runner, text filters in-process (:func:`netarena_gym.shell.policy.run_pipeline`).
Shared by both backends. A kubectl that failed printed its text on stderr (what
``2>/dev/null`` drops and a pipe does not carry), on both backends alike; beside a success,
its ``Warning: ...`` lines and ``get``'s ``No resources found ...`` are stderr too, the
rest stdout (:func:`kubectl_streams`)."""
from __future__ import annotations

from typing import Callable

from netarena_gym.shell.parser import INVALID, REFUSED, TIMEOUT, CommandResult
from netarena_gym.shell.policy import ParseCache, parse as parse_line, refused, run_pipeline
from netarena_gym.k8s.commands.allowlist import DEFAULT_VERBS, apply_refusal, check_command_line
from netarena_gym.k8s.commands.cmdline import UsageError, parse
from netarena_gym.k8s.commands.kubectl import JsonPatchPlan, plan_json_patch

KubectlRunner = Callable[[list, str], CommandResult]
_PARSED = ParseCache(parse_line, 4096)  # command line -> (parsed, early result), read-only

__all__ = ["KubectlRunner", "kubectl_streams", "plan", "refused", "run"]


def run(command: str, stdin: str, namespace: str, kubectl: KubectlRunner,
        verbs=DEFAULT_VERBS) -> CommandResult:
    """``stdin`` feeds the first kubectl of the line (``kubectl apply -f -``)."""
    cl, early = _PARSED(command)
    if early is not None:
        return early
    why = check_command_line(cl, namespace, verbs)
    if why:
        return refused(why)
    why = _stdin_refusal(cl, stdin, namespace)
    if why:
        return refused(why)
    fed = [False]

    def one(cmd, data: str) -> CommandResult:
        prog = cmd.argv[0]
        if prog == "kubectl":
            feed = "" if fed[0] else stdin
            fed[0] = True
            try:  # both backends answer usage errors from the same parser
                verb = parse(cmd.argv[1:]).verb
            except UsageError as e:
                verb = next((a for a in cmd.argv[1:] if not a.startswith("-")), "")
                return CommandResult.stderr(f"error: {e}\nSee 'kubectl {verb + ' ' if verb else ''}"
                                            "--help' for usage.\n", 1, INVALID)
            res = kubectl(list(cmd.argv), feed)
        else:  # the allow-list lets nothing else through
            return CommandResult.stderr(f"bash: {prog}: command not found\n", 127, INVALID)
        return kubectl_streams(res, verb)

    return run_pipeline(cl, one)


def kubectl_streams(res: CommandResult, verb: str | None) -> CommandResult:
    """``res`` with kubectl's stderr marked, by one rule on both backends: all of a failed
    kubectl's text; beside a success, its ``Warning: ...`` lines and ``get``'s ``No
    resources found ...`` (so ``kubectl get networkpolicy | wc -l`` counts 0 lines where
    there are none; ``delete``'s ``No resources found`` is stdout), as kubectl 1.32 prints
    them."""
    if res.kind in (REFUSED, TIMEOUT):
        return res
    if res.status != 0:
        return res.as_stderr()
    found = "No resources found" if verb == "get" else "\0"
    return CommandResult.by_line(res.output, res.status, res.kind,
                                 lambda ln: ln.startswith(("Warning: ", found)))


def plan(command: str, stdin: str, namespace: str, verbs=DEFAULT_VERBS) -> JsonPatchPlan | None:
    """The store-independent part of :func:`run` done once: for a line that is one
    allowed ``kubectl patch networkpolicy NAME --type=json -p TEXT`` (no pipe, connector,
    redirection or stdin) the :class:`JsonPatchPlan` whose :func:`run_json_patch` answers
    what :func:`run` would, else None (run it)."""
    if stdin:
        return None
    cl, early = _PARSED(command)
    if early is not None or len(cl.items) != 1 or len(cl.items[0][1].commands) != 1:
        return None
    cmd = cl.items[0][1].commands[0]
    if (cmd.argv[0] != "kubectl" or cmd.redirect is not None or cmd.stderr is not None
            or cmd.stdout is not None or cmd.redirect_error is not None or cmd.opens
            or check_command_line(cl, namespace, verbs)):
        return None
    try:
        inv = parse(cmd.argv[1:])
    except UsageError:
        return None
    return plan_json_patch(inv, namespace)


def _stdin_refusal(cl, stdin: str, namespace: str) -> str | None:
    """Manifests given to ``kubectl apply -f -`` must be NetworkPolicies of the namespace."""
    from netarena_gym.k8s.commands.kubectl import parse_manifests
    for cmd in cl.simple_commands():
        if cmd.argv[0] == "kubectl" and "apply" in cmd.argv[1:] and stdin:
            try:
                docs = parse_manifests(stdin)
            except ValueError:
                return None  # kubectl reports the parse error
            return apply_refusal(docs, namespace)
    return None

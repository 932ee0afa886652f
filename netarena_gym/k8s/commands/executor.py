"""Runs one agent command line against a kubectl implementation: shell parse (the core's
strict tokenizer), the allow-list, then each simple command: ``kubectl`` to the backend's
runner, text filters to :mod:`netarena_gym.shell.filters`. Shared by both backends."""
from __future__ import annotations

from typing import Callable

from netarena_gym.shell import filters as textfilters
from netarena_gym.shell.parser import (
    INVALID, REFUSED, CommandResult, ShellSyntaxError, parse_command_line, run_command_line)
from netarena_gym.k8s.commands.allowlist import DEFAULT_VERBS, apply_refusal, check_command_line
from netarena_gym.k8s.commands.cmdline import UsageError, parse

KubectlRunner = Callable[[list, str], CommandResult]
_FILTERS = {"grep": textfilters.grep, "head": textfilters.head, "tail": textfilters.tail,
            "wc": textfilters.wc, "sort": textfilters.sort, "uniq": textfilters.uniq}


_PARSED: dict = {}  # command line -> parsed (read-only)


def refused(message: str) -> CommandResult:
    return CommandResult(f"netarena: command refused: {message}\n", 126, REFUSED)


def run(command: str, stdin: str, namespace: str, kubectl: KubectlRunner,
        verbs=DEFAULT_VERBS) -> CommandResult:
    """``stdin`` feeds the first kubectl of the line (``kubectl apply -f -``)."""
    cl = _PARSED.get(command)
    if cl is None:
        try:
            cl = parse_command_line(command)
        except ShellSyntaxError as e:
            if e.refused:
                return refused(str(e).removeprefix("netarena: "))
            return CommandResult(f"{e}\n", 2, INVALID)
        if len(_PARSED) > 4096:
            _PARSED.clear()
        _PARSED[command] = cl
    if not cl.items:
        return CommandResult("netarena: empty command\n", 2, INVALID)
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
                parse(cmd.argv[1:])
            except UsageError as e:
                verb = next((a for a in cmd.argv[1:] if not a.startswith("-")), "")
                return CommandResult(f"error: {e}\nSee 'kubectl {verb + ' ' if verb else ''}--help' "
                                     "for usage.\n", 1, INVALID)
            res = kubectl(list(cmd.argv), feed)
        else:
            res = _FILTERS[prog](list(cmd.argv), data)
        if cmd.stderr == "null" and res.status != 0 and prog == "kubectl":
            return CommandResult("", res.status, res.kind)
        return res

    return run_command_line(cl, one)


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

"""What the simulated kubectl's verbs share: results, label selectors (``-l``) and the
"not simulated" signal. Mirrors kubectl 1.32."""
from __future__ import annotations

from netarena_gym.shell.parser import ERROR, OK, CommandResult
from netarena_gym.k8s.commands.cmdline import UsageError
from netarena_gym.k8s.grader import select_pods


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


def parse_selector(text: str) -> dict:
    """A kubectl ``-l`` selector (``a=b,c!=d,e in (x,y),!f,g``) as a LabelSelector dict with
    an extra ``notEqual`` list."""
    sel = {"matchLabels": {}, "matchExpressions": []}
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    for p in (x.strip() for x in parts):
        if not p:
            raise UsageError(f"unable to parse requirement: found '', expected: identifier")
        low = p.split()
        if len(low) >= 2 and low[1] in ("in", "notin"):
            vals = p.split("(", 1)[1].rstrip(")").split(",") if "(" in p else []
            sel["matchExpressions"].append({"key": low[0], "operator": "In" if low[1] == "in" else "NotIn",
                                            "values": [v.strip() for v in vals if v.strip()]})
        elif "!=" in p:
            k, v = p.split("!=", 1)
            sel["matchExpressions"].append({"key": k.strip(), "operator": "NotIn", "values": [v.strip()]})
        elif "==" in p or "=" in p:
            k, v = p.split("==", 1) if "==" in p else p.split("=", 1)
            sel["matchLabels"][k.strip()] = v.strip()
        elif p.startswith("!"):
            sel["matchExpressions"].append({"key": p[1:].strip(), "operator": "DoesNotExist"})
        else:
            sel["matchExpressions"].append({"key": p, "operator": "Exists"})
    return sel


def matches(sel: dict, labels: dict) -> bool:
    index = {(k, v): 1 for k, v in labels.items()}
    keys = {k: 1 for k in labels}
    return bool(select_pods(sel, 1, index, keys))

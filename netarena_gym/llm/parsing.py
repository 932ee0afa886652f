"""Turn a model's free-form reply into the env's text action (its ``text_keys``).

Models answer in many shapes; all of these parse, for routing's ``("machine", "command")``:

* JSON, bare or in a code fence, possibly after reasoning: ``{"machine": "r0", "command":
  "ip addr show"}`` (the last object holding every key wins; Python-style quotes too);
* labelled lines: ``Machine: r0`` / ``Command: ip addr show`` (markdown bold allowed);
* a fenced or bare command with the machine as a prefix: ``r0: ip addr show``,
  ``r0$ ip route``, ``[r0] ip link``, ``on r0: sysctl ...``, or a ``# machine: r0`` line.

For a single-key env (``("command",)``, ``("code",)``) the content of the last code fence, or
the bare reply, is the value. Reasoning inside ``<think>...</think>`` is ignored. A reply
none of these fit raises :class:`ReplyParseError`; the agent then sends it to the env as
it is, which scores it as an invalid action.
"""
from __future__ import annotations

import ast
import json
import re
from typing import Sequence

_THINK = re.compile(r"<think>.*?(</think>|$)", re.S | re.I)
_FENCE = re.compile(r"```(?:[ \t]*([A-Za-z0-9_+-]+)[ \t]*\n)?(.*?)```", re.S)
_PREFIXES = (
    re.compile(r"^\s*(?:on\s+)?(?P<m>[A-Za-z][\w.-]{0,31})\s*[:$#>]\s+(?P<c>\S.*)$"),
    re.compile(r"^\s*\[(?P<m>[A-Za-z][\w.-]{0,31})\]\s*(?P<c>\S.*)$"),
)
_COMMENT_MACHINE = re.compile(r"^\s*#\s*(?:machine|host|node|router)\s*[:=]\s*(\S+)\s*$", re.I)
_SHELL_TAGS = {"", "bash", "sh", "shell", "console", "text", "zsh"}


class ReplyParseError(ValueError):
    pass


def parse_reply(text: str, keys: Sequence[str]) -> tuple[dict[str, str], str]:
    """``(action, how)`` where ``how`` names the shape that matched. With no ``keys`` (an
    env whose text actions are JSON of varying shape) the last JSON object is the action."""
    if not isinstance(text, str) or not text.strip():
        raise ReplyParseError("empty reply")
    body = _THINK.sub("", text).strip() or text.strip()
    keys = tuple(keys)
    obj = _last_json_object(body, keys)
    if obj is not None:
        return obj, "json"
    if not keys:
        raise ReplyParseError("no JSON object found in the reply")
    lab = _labelled(body, keys)
    if lab is not None:
        return lab, "labels"
    fences = _FENCE.findall(body)
    code = [c for tag, c in fences if tag.lower() not in ("json",)]
    if code:
        act = _from_command_text(code[-1], keys, whole=True)
        if act is not None:
            return act, "fence"
    outside = _FENCE.sub("\n", body) if fences else body
    if outside.strip():
        act = _from_command_text(outside, keys, whole=len(keys) == 1 and "code" in keys)
        if act is not None:
            return act, "bare"
    raise ReplyParseError(f"no action with keys {list(keys)} found in the reply")


# ------------------------------------------------------------------- JSON
def _candidates(s: str):
    """Every balanced ``{...}`` substring (string literals respected), in order of end."""
    stack, out = [], []
    in_str, esc, quote = False, False, ""
    for i, ch in enumerate(s):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == quote:
                in_str = False
            continue
        if ch in "\"'" and stack:
            in_str, quote = True, ch
        elif ch == "{":
            stack.append(i)
        elif ch == "}" and stack:
            start = stack.pop()
            out.append(s[start:i + 1])
    return out


def _load(obj_text: str):
    try:
        return json.loads(obj_text)
    except (json.JSONDecodeError, RecursionError):
        pass
    try:
        v = ast.literal_eval(obj_text)
        return v if isinstance(v, dict) else None
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return None


def _pick(d: dict, keys: Sequence[str]) -> dict | None:
    """The object with ``keys`` normalised to non-empty strings (other fields kept, for
    envs with optional ones such as K8s's ``stdin``); None when a key is missing."""
    low = {str(k).lower(): v for k, v in d.items()}
    out = {k: v for k, v in d.items() if str(k).lower() not in {x.lower() for x in keys}}
    for k in keys:
        v = low.get(k.lower())
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            v = str(v)
        if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
            v = "; ".join(v)
        if not isinstance(v, str) or not v.strip():
            return None
        out[k] = v.strip()
    return out


def _last_json_object(body: str, keys) -> dict[str, str] | None:
    found = None
    for cand in _candidates(body):
        d = _load(cand)
        if isinstance(d, dict):
            act = _pick(d, keys)
            if act is not None:
                found = act
    return found


# ------------------------------------------------------------------ labels
def _labelled(body: str, keys) -> dict[str, str] | None:
    out = {}
    for k in keys:
        pat = re.compile(rf"^[ \t>*_-]*\**{re.escape(k)}\**[ \t]*[:=][ \t]*\**[ \t]*(.+?)[ \t]*$",
                         re.I | re.M)
        hits = pat.findall(body)
        if not hits:
            return None
        v = hits[-1].strip().strip("`").strip("*").strip()
        if not v:
            return None
        out[k] = v
    return out


# ---------------------------------------------------------------- commands
def _from_command_text(text: str, keys, *, whole: bool) -> dict[str, str] | None:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    if not lines:
        return None
    cmd_key = "command" if "command" in keys else keys[-1]
    others = [k for k in keys if k != cmd_key]
    if not others:
        value = "\n".join(lines) if whole else lines[-1].strip()
        return {cmd_key: value.strip()}
    if len(others) > 1:
        return None
    other = others[0]
    machine = None
    body = []
    for ln in lines:
        m = _COMMENT_MACHINE.match(ln)
        if m:
            machine = m.group(1)
            continue
        if ln.lstrip().startswith("#"):
            continue
        body.append(ln)
    if not body:
        return None
    last = body[-1].strip()
    if machine is None:
        for pat in _PREFIXES:
            m = pat.match(last)
            if m and not _looks_like_command_word(m.group("m")):
                return {other: m.group("m"), cmd_key: m.group("c").strip()}
        return None
    return {other: machine, cmd_key: last}


_COMMAND_WORDS = {"ip", "sudo", "ifconfig", "iptables", "route", "sysctl", "tc", "cat", "echo",
                  "ping", "kubectl", "arp", "traceroute", "note", "answer", "command", "output",
                  "step", "thought", "reasoning"}


def _looks_like_command_word(word: str) -> bool:
    return word.lower() in _COMMAND_WORDS

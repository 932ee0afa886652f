"""Interface helpers shared by tasks: text actions (JSON or dict) and discrete catalogues.

A text action is a JSON object (or a dict) with the task's keys, e.g. routing's
``{"machine": "r0", "command": "ip addr show"}``. Anything else is an invalid action with a
clear message, never an exception. A discrete catalogue is a fixed list of atomic commands,
each rendering to exactly the text command an LLM would type, plus a validity mask."""
from __future__ import annotations

import json
import re
import string
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
from gymnasium import spaces

TEXT_CHARSET = frozenset(string.printable)
MAX_ACTION_CHARS = 4096
#: how deep an action's values may nest (what any task's action holds is shallower by far;
#: the bound keeps deep values from the code that copies or prints them recursively, under
#: any recursion limit the process may have)
MAX_ACTION_DEPTH = 32
_INT64 = 1 << 63
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)


class ActionError(ValueError):
    """An action that cannot be interpreted; the message goes into the observation."""


def text_space(max_length: int) -> spaces.Text:
    return spaces.Text(max_length=max_length, min_length=0, charset=string.printable)


def parse_json_action(action: Any, keys: Sequence[str], optional: Sequence[str] = (),
                      max_chars: int = MAX_ACTION_CHARS) -> dict[str, Any]:
    """Decode a text action into a dict holding string values for ``keys``.

    Every string is bounded BEFORE it is parsed: the whole text action, and each value of
    a dict action, is at most ``max_chars`` long (a longer one is an :class:`ActionError`)."""
    if isinstance(action, bytes):
        action = action.decode("utf-8", "replace")
    if isinstance(action, np.str_):
        action = str(action)
    if isinstance(action, str):
        if len(action) > max_chars:
            raise ActionError(f"action too long ({len(action)} characters, at most "
                              f"{max_chars})")
        text = action.strip()
        m = _FENCE.match(text)
        if m:
            text = m.group(1)
        try:
            action = json.loads(text)
        except (ValueError, RecursionError) as e:  # ValueError: JSONDecodeError, or an
            # integer of more digits than int() converts
            want = ", ".join(f'"{k}": "..."' for k in keys)
            why = getattr(e, "msg", "nested too deeply" if isinstance(e, RecursionError)
                          else "a number too long")
            raise ActionError(f"action is not valid JSON ({why}); expected {{{want}}}") from None
    if not isinstance(action, dict):
        raise ActionError(f"action must be a JSON object with keys {list(keys)}, "
                          f"got {type(action).__name__}")
    out = {}
    for k in keys:
        v = action.get(k)
        if isinstance(v, str) and len(v) > max_chars:
            raise ActionError(f'"{k}" too long ({len(v)} characters, at most {max_chars})')
        if not isinstance(v, str) or not v.strip():
            raise ActionError(f'action needs a non-empty string "{k}"')
        out[k] = v.strip()
    for k in optional:
        if k in action:
            if not depth_ok(action[k], MAX_ACTION_DEPTH):
                raise ActionError(f'"{k}" is nested too deeply (at most {MAX_ACTION_DEPTH} '
                                  "levels)")
            out[k] = action_value(action[k], k)
    return out


def action_value(v: Any, name: str) -> Any:
    """A dict action's value ``v`` as plain JSON values: numpy scalars and arrays become
    Python numbers and lists, tuples lists; ActionError names a value JSON cannot hold (an
    object, a set, bytes), whose ``repr`` (a memory address) would otherwise reach the
    observation. ``v`` is at most :data:`MAX_ACTION_DEPTH` deep (checked first)."""
    t = type(v)
    if t is int and not -_INT64 <= v < _INT64:
        raise ActionError(f'"{name}" holds an integer beyond 64 bits; values are int64, '
                          "floats and strings")
    if v is None or t is str or t is int or t is float or t is bool:
        return v
    if isinstance(v, np.ndarray):
        return action_value(v.tolist(), name)
    if isinstance(v, np.generic):
        v = v.item()  # np.bytes_ and np.datetime64 stay non-JSON and are refused below
        if type(v) in (bool, int, float, str):
            return action_value(v, name)
    elif isinstance(v, (str, bool, int, float)):  # subclasses: IntEnum, a str subclass
        return action_value((str if isinstance(v, str) else bool if isinstance(v, bool)
                           else int if isinstance(v, int) else float)(v), name)
    elif isinstance(v, (list, tuple)):
        return [action_value(x, name) for x in v]
    elif isinstance(v, dict):
        bad = next((key for key in v if not isinstance(key, str)), None)
        if bad is None:
            return {str(key): action_value(x, name) for key, x in v.items()}
        raise ActionError(f'"{name}" holds an object key {bad!r} that is not a string')
    raise ActionError(f'"{name}" holds a value of type {type(v).__name__}, which JSON '
                      "cannot hold (use "
                      "strings, numbers, true/false, null, lists and objects)")


def depth_ok(v, limit: int) -> bool:
    """Whether ``v`` (dicts, lists and tuples) nests at most ``limit`` deep; iterative, so
    it holds under any recursion limit."""
    stack = [(v, 0)]
    while stack:
        x, d = stack.pop()
        if d > limit:
            return False
        if isinstance(x, dict):
            stack.extend((y, d + 1) for y in x.values())
        elif isinstance(x, (list, tuple)):
            stack.extend((y, d + 1) for y in x)
    return True


@dataclass(frozen=True)
class CatalogueEntry:
    """One atomic action: a label, the text action it renders to, and its group."""
    label: str
    action: dict[str, str]
    group: str = ""


class Catalogue:
    """A fixed, padded list of atomic actions with a validity mask.

    ``size`` is fixed by the env's maximum dimensions so the action space never changes;
    entries beyond what the current episode has are masked out."""

    def __init__(self, size: int):
        self.size = size
        self.entries: list[CatalogueEntry | None] = [None] * size
        self.mask = np.zeros(size, dtype=np.int8)

    def set(self, index: int, entry: CatalogueEntry | None, valid: bool = True) -> None:
        self.entries[index] = entry
        self.mask[index] = 1 if (entry is not None and valid) else 0

    def set_block(self, start: int, entries: Sequence[CatalogueEntry | None],
                  mask: np.ndarray) -> None:
        """``set(start + j, entries[j], mask[j])`` for every j at once (``mask``: int8,
        0 wherever the entry is None)."""
        self.entries[start:start + len(entries)] = entries
        self.mask[start:start + len(entries)] = mask

    def clear(self) -> None:
        self.entries = [None] * self.size
        self.mask[:] = 0

    def render(self, index: int) -> dict[str, str]:
        if not 0 <= index < self.size:
            raise ActionError(f"action index {index} is outside 0..{self.size - 1}")
        e = self.entries[index]
        if e is None or not self.mask[index]:
            raise ActionError(f"action {index} is not available in this episode (masked)")
        return e.action

    def labels(self) -> list[str]:
        return [e.label if e else "" for e in self.entries]


Renderer = Callable[[dict[str, str]], str]

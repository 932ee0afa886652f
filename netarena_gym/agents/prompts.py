"""System prompts for language agents, per task and style (``zeroshot``, ``fewshot``, ``cot``,
``fewshot_cot``), and the conversation window they see.

This module only dispatches: each task's own text lives in ``netarena_gym/<task>/prompts.py``
as ``SYSTEM`` (the task briefing) and, optionally, ``SHOTS`` (few-shot ``(situation,
answer)`` pairs) and ``NATIVE_KEYS`` (the JSON action keys ``SYSTEM`` already spells out).
A task without such a module gets a generic prompt built from the env's ``text_keys`` and
its class docstring, so new envs work without an entry here.
"""
from __future__ import annotations

import importlib
import json
from types import ModuleType

STYLES = ("zeroshot", "fewshot", "cot", "fewshot_cot")

_GENERIC = """\
You operate a network system through text commands. Each turn you see the current state \
and the output of your last action. Diagnose first, never break what works, and solve the \
task in as few steps as you can."""

#: other names a task goes by (the folder is the task string)
ALIASES = {"malt": "capacity_planning", "k8s_policy": "k8s", "kubernetes": "k8s"}


def task_prompts(task: str) -> ModuleType | None:
    """The ``prompts`` module of ``task``'s folder, or None when it has none."""
    task = ALIASES.get(task, task)
    if not task or not task.isidentifier():
        return None
    try:
        mod = importlib.import_module(f"netarena_gym.{task}.prompts")
    except ModuleNotFoundError as e:
        if e.name in (f"netarena_gym.{task}", f"netarena_gym.{task}.prompts"):
            return None
        raise
    return mod if hasattr(mod, "SYSTEM") else None


_COT = ("Before answering, think step by step inside <think>...</think>: what the matrix "
        "shows, what you have learned so far, which single command helps most now. Then give "
        "the answer in the required format after the </think> tag.")


def action_format(keys) -> str:
    example = {k: f"<{k}>" for k in keys}
    return ("Answer with one JSON object and nothing else: " + json.dumps(example))


def system_prompt(task: str, keys, *, style: str = "zeroshot", doc: str | None = None,
                  raw: bool = False) -> str:
    """``keys``: the env's JSON action keys (none: the observation says what to send);
    ``raw``: the reply itself is the action (e.g. Python source)."""
    if style not in STYLES:
        raise ValueError(f"prompt style must be one of {STYLES}, got {style!r}")
    mod = task_prompts(task)
    base = getattr(mod, "SYSTEM", None)
    native = getattr(mod, "NATIVE_KEYS", None)
    parts = []
    if base is None or native is None or raw or tuple(keys) != tuple(native):
        parts.append(base or _GENERIC)
        if base is None and doc:
            parts.append("About this task:\n" + doc.strip())
        parts.append(action_format(keys) if keys and not raw else
                     "Answer exactly in the format the observation asks for, and nothing else.")
    else:
        parts.append(base)
    if style in ("fewshot", "fewshot_cot"):
        shots = getattr(mod, "SHOTS", ())
        if shots:
            parts.append("Examples of good single steps:")
            for situation, answer in shots:
                parts.append(f"Situation: {situation}\nAnswer: {json.dumps(answer)}")
    if style in ("cot", "fewshot_cot"):
        parts.append(_COT)
    return "\n\n".join(parts)


def user_turn(observation: str, *, first: bool) -> str:
    head = "Here is the current state. Begin." if first else "Result of your command:"
    return f"{head}\n\n{observation.rstrip()}"


class Conversation:
    """The message window an LLM agent sends: the system prompt, the last ``history`` turns
    (observation and reply) and the current observation. Shared by the agent and by the
    demonstrations of ``generate``, so SFT data matches what the agent sees at inference."""

    def __init__(self, system: str, history: int = 6):
        self.system, self.history = system, max(0, int(history))
        self.turns: list[tuple[str, str]] = []

    def reset(self) -> None:
        self.turns = []

    def add(self, observation: str, reply: str) -> None:
        self.turns.append((observation, reply))

    def messages(self, observation: str) -> list[dict]:
        msgs = [{"role": "system", "content": self.system}]
        kept = self.turns[-self.history:] if self.history else []
        for i, (obs, reply) in enumerate(kept):
            first = i == 0 and len(kept) == len(self.turns)
            msgs.append({"role": "user", "content": user_turn(obs, first=first)})
            msgs.append({"role": "assistant", "content": reply})
        msgs.append({"role": "user", "content": user_turn(observation, first=not self.turns)})
        return msgs

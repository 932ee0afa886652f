"""The LLM agent: a chat model playing a NetArena env through its text interface.

The model is reached through a chat backend: any server speaking the OpenAI chat API
(:class:`netarena_gym.llm.client.OpenAIChatClient`, standard library only) or a local
``transformers`` model (:class:`netarena_gym.agents.hf.TransformersChat`).

Each step it sends the system prompt (task + style), the last ``history`` turns (the
observation and its own reply) and the current observation; parses the reply into the
env's ``text_keys`` (:mod:`netarena_gym.llm.parsing`); and records the call
(``last_call``: latency, tokens, attempts, error, the raw reply, whether it parsed) for
the episode record. A failed call or an unparseable reply becomes an invalid action, which
the env penalises: the episode goes on, the run never hangs or crashes on a bad model.
"""
from __future__ import annotations

import json
from typing import Any, Protocol

from netarena_gym.core.actions import MAX_ACTION_CHARS
from netarena_gym.llm.client import ChatResult, OpenAIChatClient
from netarena_gym.llm.parsing import ReplyParseError, parse_reply
from netarena_gym.agents.prompts import Conversation, system_prompt

MAX_REPLY_RECORDED = 8000


def action_format(env) -> tuple[tuple[str, ...], bool]:
    """``(keys, raw)`` of an env's text actions: the JSON keys it needs (``text_keys``; none
    for envs whose JSON actions vary in shape) and whether the reply goes to the env as it
    is (``raw``: free-form submissions such as capacity planning's ``code`` interface, where
    the env extracts what it needs)."""
    base = env.unwrapped
    interface = getattr(base, "interface", "text")
    if interface == "discrete":
        raise ValueError("language agents play a text interface, not 'discrete'; "
                         "use --interface text")
    return tuple(getattr(base, "text_keys", ()) or ()), interface == "code"


def reply_to_action(reply: str, error: str | None, keys, raw: bool, call: dict,
                    source: str = "model"):
    """The env action for a reply, noting in ``call`` how it parsed. A failed call or an
    unparseable reply yields an action the env scores as invalid."""
    if error is not None:
        return f"(no reply from the {source}: {error})"[:MAX_ACTION_CHARS]
    if raw:
        call["parsed"], call["parse"] = bool(reply.strip()), "raw"
        return reply
    try:
        action, call["parse"] = parse_reply(reply, keys)
        call["parsed"] = True
        return action
    except ReplyParseError as e:
        call["parse_error"] = str(e)
        return reply[:MAX_ACTION_CHARS] if reply.strip() else "(empty reply)"


class ChatBackend(Protocol):
    def chat(self, messages: list[dict], *, temperature: float, max_tokens: int,
             seed: int | None = None) -> ChatResult: ...


def make_backend(opts: dict, seed: int | None = None) -> ChatBackend:
    provider = opts.get("provider", "openai")
    if provider == "openai":
        return OpenAIChatClient(opts.get("base_url"), opts.get("model"), opts.get("api_key"),
                                timeout=float(opts.get("timeout", 60.0)),
                                max_retries=int(opts.get("max_retries", 3)),
                                backoff=float(opts.get("backoff", 1.0)),
                                extra_body=opts.get("extra_body"), seed=seed)
    if provider == "transformers":
        from netarena_gym.agents.hf import TransformersChat

        return TransformersChat(opts["model"], device=opts.get("device", "cpu"),
                                dtype=opts.get("dtype"))
    raise ValueError(f"unknown LLM provider {provider!r}: openai or transformers")


class LLMAgent:
    def __init__(self, env, backend: ChatBackend, *, prompt: str = "zeroshot",
                 history: int = 6, temperature: float = 0.0, max_tokens: int = 512,
                 seed: int | None = None):
        base = env.unwrapped
        self.keys, self.raw = action_format(env)
        self.system = system_prompt(getattr(base, "task", ""), self.keys, style=prompt,
                                    doc=type(base).__doc__, raw=self.raw)
        self.conv = Conversation(self.system, history)
        self.backend = backend
        self.temperature, self.max_tokens = float(temperature), int(max_tokens)
        self.seed = seed
        self._episode_seed: int | None = None
        self.reset()

    @classmethod
    def from_options(cls, env, opts: dict, seed: int | None = None) -> "LLMAgent":
        return cls(env, make_backend(opts, seed=seed), prompt=opts.get("prompt", "zeroshot"),
                   history=int(opts.get("history", 6)),
                   temperature=float(opts.get("temperature", 0.0)),
                   max_tokens=int(opts.get("max_tokens", 512)), seed=seed)

    # ---------------------------------------------------------------- protocol
    def reset(self) -> None:
        self.conv.reset()
        self.last_call: dict | None = None
        self._step = 0

    def set_episode_seed(self, seed: int) -> None:
        self._episode_seed = int(seed)

    def messages(self, observation: str) -> list[dict]:
        return self.conv.messages(observation)

    def act(self, observation: Any, info: dict | None = None):
        obs = observation if isinstance(observation, str) else json.dumps(observation, default=str)
        msgs = self.messages(obs)
        seed = None
        if self._episode_seed is not None:
            seed = (self._episode_seed * 1000 + self._step) % (2 ** 31)
        res = self.backend.chat(msgs, temperature=self.temperature, max_tokens=self.max_tokens,
                                seed=seed)
        self._step += 1
        reply = res.text if isinstance(res.text, str) else ""
        call = {"latency_s": res.latency_s, "prompt_tokens": res.prompt_tokens,
                "completion_tokens": res.completion_tokens, "attempts": res.attempts,
                "error": res.error, "finish_reason": res.finish_reason,
                "reply": reply[:MAX_REPLY_RECORDED], "parsed": False, "parse": None}
        if res.attempt_errors:
            call["attempt_errors"] = list(res.attempt_errors)
        action = reply_to_action(reply, res.error, self.keys, self.raw, call)
        self.last_call = call
        self.conv.add(obs, reply or "(no reply)")
        return action

    def episode_stats(self) -> dict:
        return {"turns": len(self.conv.turns)}

    def close(self) -> None:
        close = getattr(self.backend, "close", None)
        if close:
            close()

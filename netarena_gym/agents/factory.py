"""The agent factory for the CLI, the evaluator, the A2A server and scripts.

Specs: ``expert`` (the task's deterministic expert, :mod:`netarena_gym.agents.experts`),
``random`` (uniform over valid catalogue entries), ``llm`` (a chat model: an
OpenAI-compatible server, or a local ``transformers`` model with ``provider=transformers``),
``hf`` (a local model as a tool-calling agent, the conversation of the trainers), ``a2a`` (a
remote agent spoken to over A2A) or any importable ``module:Class`` (built with the env and
the options, or with no arguments). ``options`` are the agent's settings (the CLI's
``--model``, ``--prompt``, ...). Optional agents are imported by path when asked for, so
this package never imports the servers or the trainers.

Agents may define ``set_episode_seed(seed)``: the episode loop calls it before every
episode with the episode's seed, so a stochastic agent's choices depend on the episode only.
"""
from __future__ import annotations

import importlib

from netarena_gym.agents.experts import make_expert
from netarena_gym.agents.random import RandomAgent

#: optional agents: spec -> "module:Class" with a ``from_options(env, options, seed=)``
LAZY = {
    "llm": "netarena_gym.agents.llm:LLMAgent",
    "hf": "netarena_gym.agents.hf:HFToolAgent",
    "a2a": "netarena_gym.a2a.adapter:A2AAgent",
}
AGENTS = ("expert", "random", *LAZY)
_USAGE = "use " + ", ".join(AGENTS) + " or module:Class"


def _import(path: str):
    mod, _, name = path.partition(":")
    if not (mod and name):
        raise ValueError(f"unknown agent {path!r}: {_USAGE}")
    try:
        return getattr(importlib.import_module(mod), name)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"cannot load agent {path!r}: {e}") from e


def check_agent_spec(spec: str) -> None:
    """Reject a malformed agent spec early (before any worker starts)."""
    if spec in AGENTS:
        return
    if ":" in spec:
        _import(spec)
        return
    raise ValueError(f"unknown agent {spec!r}: {_USAGE}")


def make_agent(spec: str, env, *, seed: int | None = None, options: dict | None = None):
    """A fresh agent of kind ``spec`` for ``env``."""
    options = dict(options or {})
    if spec == "random":
        return RandomAgent(env, seed=seed)
    if spec == "expert":
        return make_expert(env)
    if spec in LAZY:
        cls = _import(LAZY[spec])
        if spec == "llm":
            return cls.from_options(env, options, seed=seed)
        return cls.from_options(env, options)
    if ":" in spec:
        obj = _import(spec)
        try:
            return obj(env, **options) if options else obj(env)
        except TypeError:
            return obj()
    raise ValueError(f"unknown agent {spec!r}: {_USAGE}")

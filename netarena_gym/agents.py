"""Agent factory for the CLI, the evaluator and scripts.

``expert`` (the env's deterministic expert), ``random`` (uniform over valid catalogue
entries), ``llm`` (a chat model: an OpenAI-compatible server or a local ``transformers``
model, see :mod:`netarena_gym.llm`), ``a2a`` (a remote agent spoken to over A2A, see
:mod:`netarena_gym.a2a`) or any importable ``module:Class`` (built with the env, or with no
arguments). ``options`` are the agent's settings (the CLI's ``--model``, ``--prompt``, ...).

Agents may define ``set_episode_seed(seed)``: the evaluator calls it before every episode
with the episode's seed, so a stochastic agent's choices depend on the episode only, not on
which worker played it or what it played before.
"""
from __future__ import annotations

import importlib

import numpy as np

from netarena_gym.core.agent import RandomAgent

AGENTS = ("expert", "random", "llm", "a2a")


class EpisodeSeededRandomAgent(RandomAgent):
    """The random baseline, reseeded per episode (``seed`` mixed with the episode's)."""

    def __init__(self, env, seed: int | None = None):
        super().__init__(env, seed=seed)
        self.base_seed = seed

    def set_episode_seed(self, seed: int) -> None:
        self.rng = np.random.default_rng([int(seed), int(self.base_seed or 0)])


def check_agent_spec(spec: str) -> None:
    """Reject a malformed agent spec early (before any worker starts)."""
    if spec in AGENTS:
        return
    if ":" in spec:
        mod, _, cls = spec.partition(":")
        if mod and cls:
            getattr(importlib.import_module(mod), cls)
            return
    raise ValueError(f"unknown agent {spec!r}: use expert, random, llm, a2a or module:Class")


def make_agent(spec: str, env, *, seed: int | None = None, options: dict | None = None):
    base = env.unwrapped
    options = dict(options or {})
    if spec == "random":
        return EpisodeSeededRandomAgent(env, seed=seed)
    if spec == "expert":
        if base.interface == "discrete":
            raise ValueError("the expert acts on text observations; use --interface text")
        expert = getattr(base, "expert_class", None)
        if expert is None:
            raise ValueError(f"{type(base).__name__} has no expert")
        return expert()
    if spec == "llm":
        from netarena_gym.llm.agent import LLMAgent

        return LLMAgent.from_options(env, options, seed=seed)
    if spec == "a2a":
        from netarena_gym.a2a.adapter import A2AAgent

        return A2AAgent.from_options(env, options)
    if ":" in spec:
        mod, _, cls = spec.partition(":")
        obj = getattr(importlib.import_module(mod), cls)
        try:
            return obj(env, **options) if options else obj(env)
        except TypeError:
            return obj()
    raise ValueError(f"unknown agent {spec!r}: use expert, random, llm, a2a or module:Class")

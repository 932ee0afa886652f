"""Agent factory for the CLI and scripts: ``expert``, ``random`` or ``module:Class``."""
from __future__ import annotations

import importlib

from netarena_gym.core.agent import RandomAgent


def make_agent(spec: str, env, *, seed: int | None = None):
    base = env.unwrapped
    if spec == "random":
        return RandomAgent(env, seed=seed)
    if spec == "expert":
        if base.interface != "text":
            raise ValueError("the expert acts on the text interface; use --interface text")
        return base.expert_class()
    if ":" in spec:
        mod, _, cls = spec.partition(":")
        obj = getattr(importlib.import_module(mod), cls)
        try:
            return obj(env)
        except TypeError:
            return obj()
    raise ValueError(f"unknown agent {spec!r}: use expert, random or module:Class")

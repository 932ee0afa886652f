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
import inspect

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
    except Exception as e:  # noqa: BLE001 - the user's module: any failure is a bad spec
        raise ValueError(f"cannot load agent {path!r}: {type(e).__name__}: {e}") from e


def _user_agent_class(path: str):
    """The class (or factory) ``module:Name`` names; ValueError when it is not one."""
    obj = _import(path)
    if not callable(obj):
        raise ValueError(f"agent {path!r} is a {type(obj).__name__}, not a class or a "
                         "factory of agents")
    return obj


def check_agent_spec(spec: str) -> None:
    """Reject a malformed agent spec early (before any worker starts)."""
    if spec in AGENTS:
        return
    if ":" in spec:
        _user_agent_class(spec)
        return
    raise ValueError(f"unknown agent {spec!r}: {_USAGE}")


def _build_user_agent(spec: str, env, options: dict):
    """``Class(env, **options)`` when its signature takes that, else ``Class()``; the
    result must have the Agent protocol's ``reset()`` and ``act(observation, info)``."""
    cls = _user_agent_class(spec)
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):  # a builtin without a signature: try the env form
        sig = None
    calls = [((env,), options), ((), {})]
    for args, kw in calls:
        if sig is None or _binds(sig, args, kw):
            try:
                agent = cls(*args, **kw)
            except Exception as e:  # noqa: BLE001 - the user's code: say where it failed
                raise ValueError(f"building agent {spec!r} failed: {type(e).__name__}: "
                                 f"{e}") from e
            break
    else:
        raise ValueError(f"agent {spec!r} takes neither (env, **options) nor no arguments: "
                         f"{spec.partition(':')[2]}{sig}")
    missing = [m for m in ("reset", "act") if not callable(getattr(agent, m, None))]
    if missing:
        raise ValueError(f"agent {spec!r} built a {type(agent).__name__} without "
                         f"{' and '.join(m + '()' for m in missing)}: an agent has reset() "
                         "and act(observation, info)")
    return agent


def _binds(sig: inspect.Signature, args: tuple, kw: dict) -> bool:
    try:
        sig.bind(*args, **kw)
    except TypeError:
        return False
    return True


def make_agent(spec: str, env, *, seed: int | None = None, options: dict | None = None):
    """A fresh agent of kind ``spec`` for ``env``."""
    options = dict(options or {})
    if spec == "random":
        return RandomAgent(env, seed=seed)
    if spec == "expert":
        return make_expert(env)
    if spec in LAZY:
        cls = _import(LAZY[spec])
        if spec in ("llm", "hf"):
            return cls.from_options(env, options, seed=seed)
        return cls.from_options(env, options)
    if ":" in spec:
        return _build_user_agent(spec, env, options)
    raise ValueError(f"unknown agent {spec!r}: {_USAGE}")

"""The agent options of ``netarena-gym eval`` and ``serve-a2a`` from their command-line
arguments (the LLM, HF and A2A agents' flags), checked before any episode starts."""
from __future__ import annotations

import os


def llm_options(a) -> dict:
    opts = {"provider": a.provider, "prompt": a.prompt, "history": a.history,
            "temperature": a.temperature, "max_tokens": a.max_tokens, "timeout": a.timeout,
            "max_retries": a.max_retries}
    model = a.model or os.environ.get("NETARENA_MODEL")
    if model:
        opts["model"] = model
    if a.base_url:
        opts["base_url"] = a.base_url
    if a.api_key:
        opts["api_key"] = a.api_key
    if getattr(a, "a2a_url", None):
        opts["url"] = a.a2a_url
    return opts


def agent_options(a) -> dict:
    if a.agent == "llm":
        opts = llm_options(a)
        if opts["provider"] == "openai":
            from netarena_gym.llm.client import resolve_settings

            resolve_settings(opts)  # fail fast: no model or base URL
        elif "model" not in opts:
            raise ValueError("--provider transformers needs --model PATH")
        return opts
    if a.agent == "hf":
        model = a.model or os.environ.get("NETARENA_MODEL")
        if not model:
            raise ValueError("--agent hf needs --model PATH")
        return {"model": model, "max_tokens": a.max_tokens, "temperature": a.temperature}
    if a.agent == "a2a":
        if not a.a2a_url:
            raise ValueError("--agent a2a needs --a2a-url URL")
        return {"url": a.a2a_url, "timeout": a.timeout, "prompt": a.prompt}
    return {}

"""Talking to language models: an OpenAI-compatible chat client (standard library only) and
a tolerant parser of replies into env actions. The agents that use them live in
:mod:`netarena_gym.agents` (``agents.llm.LLMAgent``, ``agents.hf``), the prompts in
:mod:`netarena_gym.agents.prompts` and each task's ``prompts.py``.

    from netarena_gym.agents.llm import LLMAgent
    from netarena_gym.llm import OpenAIChatClient
    agent = LLMAgent(env, OpenAIChatClient("http://127.0.0.1:8000/v1", "qwen2.5-7b"),
                     prompt="cot", history=6)
"""
from netarena_gym.llm.client import ChatResult, OpenAIChatClient
from netarena_gym.llm.parsing import ReplyParseError, parse_reply

__all__ = ["ChatResult", "OpenAIChatClient", "ReplyParseError", "parse_reply"]

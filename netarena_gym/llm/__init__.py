"""LLM agents for NetArena envs: an OpenAI-compatible chat client (standard library only), a
local ``transformers`` backend, per-task prompts and a tolerant reply parser.

    from netarena_gym.llm import LLMAgent, OpenAIChatClient
    agent = LLMAgent(env, OpenAIChatClient("http://127.0.0.1:8000/v1", "qwen2.5-7b"),
                     prompt="cot", history=6)
"""
from netarena_gym.llm.agent import LLMAgent, make_backend
from netarena_gym.llm.client import ChatResult, OpenAIChatClient
from netarena_gym.llm.parsing import ReplyParseError, parse_reply
from netarena_gym.llm.prompts import STYLES, system_prompt

__all__ = ["ChatResult", "LLMAgent", "OpenAIChatClient", "ReplyParseError", "STYLES",
           "make_backend", "parse_reply", "system_prompt"]

"""Agents and the one episode loop.

* :mod:`~netarena_gym.agents.random`: the random baseline (every task, every interface);
* :mod:`~netarena_gym.agents.experts`: the expert registry keyed by task;
* :mod:`~netarena_gym.agents.factory`: ``make_agent(spec, env)`` for the CLI and eval;
* :mod:`~netarena_gym.agents.llm`: the chat-model agent (OpenAI-compatible or local);
* :mod:`~netarena_gym.agents.hf`: local ``transformers`` models (tool-calling agent, chat
  backend);
* :mod:`~netarena_gym.agents.prompts`: system prompts, dispatched to ``<task>/prompts.py``;
* :mod:`~netarena_gym.agents.episode`: ``play_episode``, the episode loop;
* :mod:`~netarena_gym.agents.summary`: ``summarize``, the summariser (Wilson intervals).

The :class:`~netarena_gym.core.protocols.Agent` protocol is ``reset()`` and
``act(observation, info)``. ``netarena_gym.llm`` holds only the chat client and the reply
parser.
"""
from netarena_gym.agents.episode import EpisodeRecord, play_episode
from netarena_gym.agents.experts import make_expert, register_expert
from netarena_gym.agents.factory import check_agent_spec, make_agent
from netarena_gym.agents.random import RandomAgent
from netarena_gym.agents.summary import summarize
from netarena_gym.core.protocols import Agent

__all__ = ["Agent", "EpisodeRecord", "RandomAgent", "check_agent_spec", "make_agent",
           "make_expert", "play_episode", "register_expert", "summarize"]

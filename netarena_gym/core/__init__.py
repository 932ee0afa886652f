"""Shared core of netarena_gym: scenarios, seeding, reward, metrics, interface helpers, the
env base class and the protocols (``Agent``, ``Backend``). Every task plugs into these; the
agents, the episode loop and the summariser live in :mod:`netarena_gym.agents`."""

"""Agents for the evaluator's tests, loaded by ``--agent tests.eval.helper_agents:Name``."""
from __future__ import annotations

import time

from netarena_gym.agents.experts import make_expert


class SlowExpert:
    """The env's expert, slowed down so a test can interrupt a run part-way."""

    def __init__(self, env, delay: float = 0.03):
        self.inner = make_expert(env)
        self.delay = delay

    def reset(self):
        self.inner.reset()

    def act(self, observation, info):
        time.sleep(self.delay)
        return self.inner.act(observation, info)


class CrashOnSecondStep:
    """Raises on its second decision of every episode."""

    def __init__(self, env):
        self.inner = make_expert(env)

    def reset(self):
        self.inner.reset()
        self.n = 0

    def act(self, observation, info):
        self.n += 1
        if self.n == 2:
            raise RuntimeError("agent bug on step 2")
        return self.inner.act(observation, info)
